//! The Wi-Fi network topology: N stations and an access point in one BSS, the AP wired to one
//! server.
//!
//! Contract: [`WifiNet::build`] turns the description into a [`SimConfig`] with this fixed
//! layout:
//!
//! - nodes: router `ap` = [`AP`] (0), host `server` = [`SERVER`] (1), then hosts `sta0`, `sta1`,
//!   … = [`station_node`]`(i)` (2, 3, …);
//! - links: `ap->server` = [`TO_SERVER`] (link 0: the wired rate, delay, queue; monitored) and
//!   `server->ap` = [`FROM_SERVER`] (link 1: the server's NIC, the lower of NIC and wired rate,
//!   the same delay, the driver queue; monitored); then per station `i` `sta{i}->ap` =
//!   [`station_uplink`]`(i)` and `ap->sta{i}` = [`station_downlink`]`(i)`: the hops of the BSS
//!   `wifi` (no rate, delay, loss or monitor of their own: the MAC carries them);
//! - the BSS has the AP at `ap` and station `i` of [`WifiNet::mac`] at `sta{i}`, so a station's
//!   NIC is the MAC (its TX completions come with the Block Ack) and every station and the AP
//!   share one channel;
//! - uploads run `sta{i} → server`, downloads `server → sta{i}`; probes run from their station
//!   to the server and are echoed back;
//! - every station runs [`WifiNet::station_hosts`]`[i]` (default: Linux with the mac80211
//!   driver's pacing shift [`MAC80211_PACING_SHIFT`]), the server [`WifiNet::server_host`];
//! - flows and probes keep their order and every field except `src`/`dst`.
//!
//! So station `i`'s base (propagation) RTT to the server is `2·delay`, plus the airtime of its
//! exchanges and the serialisation on the wired link.

use cclab_cc::Dur;

use crate::access::Direction;
use crate::config::{
    ConfigError, FlowConfig, HostConfig, LinkConfig, LinkId, NodeConfig, NodeId, NodeKind,
    ProbeConfig, QueueConfig, QueueLimit, SimConfig, WifiConfig, WifiStation,
};
use crate::topology::{DRIVER_QUEUE_PACKETS, NIC_RATE_BPS, UNCONGESTED_QUEUE_PACKETS};
use crate::wifi::mac::MacConfig;

/// The access point (a router: it forwards between the BSS and the wire).
pub const AP: NodeId = NodeId(0);
/// The wired server.
pub const SERVER: NodeId = NodeId(1);
/// The wired link toward the server (`ap→server`).
pub const TO_SERVER: LinkId = LinkId(0);
/// The server's NIC (`server→ap`).
pub const FROM_SERVER: LinkId = LinkId(1);

/// mac80211's default `sk_pacing_shift` for the sockets sending through a Wi-Fi device:
/// `local->hw.tx_sk_pacing_shift = 7` in `ieee80211_alloc_hw_nm` (`net/mac80211/main.c`, "7 is
/// ~8ms of queued data"); mac80211 applies it to each local TCP socket it transmits for
/// (`sk_pacing_shift_update` in `ieee80211_tx_skb_tid`/`__ieee80211_subif_start_xmit`,
/// `net/mac80211/tx.c`). Drivers may override it (ath10k uses 8 on some chips).
pub const MAC80211_PACING_SHIFT: u8 = 7;

/// The node of station `i`.
#[must_use]
pub fn station_node(i: usize) -> NodeId {
    NodeId(2 + u32::try_from(i).expect("station index beyond the u32 node ids"))
}

/// Station `i`'s link to the AP.
#[must_use]
pub fn station_uplink(i: usize) -> LinkId {
    LinkId(2 + 2 * u32::try_from(i).expect("station index beyond the u32 link ids"))
}

/// The AP's link to station `i`.
#[must_use]
pub fn station_downlink(i: usize) -> LinkId {
    LinkId(3 + 2 * u32::try_from(i).expect("station index beyond the u32 link ids"))
}

/// A flow between one station and the server.
#[derive(Clone, Debug)]
pub struct WifiFlow {
    /// The flow (`src`/`dst` are set by [`WifiNet::build`]).
    pub flow: FlowConfig,
    /// Index into [`MacConfig::stations`].
    pub station: usize,
    /// Upload (station → server) or download (server → station).
    pub direction: Direction,
}

/// A latency probe from one station to the server.
#[derive(Clone, Debug)]
pub struct WifiProbe {
    /// The probe (`src`/`dst` are set by [`WifiNet::build`]).
    pub probe: ProbeConfig,
    /// Index into [`MacConfig::stations`].
    pub station: usize,
}

/// N stations and an AP in one BSS, the AP wired to a server.
#[derive(Clone, Debug)]
pub struct WifiNet {
    /// Master seed.
    pub seed: u64,
    /// Simulated time.
    pub duration: Dur,
    /// Sampling interval.
    pub sample_interval: Dur,
    /// The BSS: channel, MAC parameters and one [`crate::wifi::mac::StationConfig`] per station.
    pub mac: MacConfig,
    /// Rate of the wired link between the AP and the server, bit/s.
    pub wired_rate_bps: u64,
    /// One-way delay of the wired link.
    pub wired_delay: Dur,
    /// Queue in front of the wired link toward the server.
    pub wired_queue: QueueLimit,
    /// The server's NIC line rate (default [`NIC_RATE_BPS`]).
    pub nic_rate_bps: u64,
    /// The server's driver queue (default [`DRIVER_QUEUE_PACKETS`]).
    pub driver_queue: QueueLimit,
    /// Host model of each station (one per station).
    pub station_hosts: Vec<HostConfig>,
    /// Host model of the server.
    pub server_host: HostConfig,
    /// Flows.
    pub flows: Vec<WifiFlow>,
    /// Probes.
    pub probes: Vec<WifiProbe>,
}

impl WifiNet {
    /// A BSS `mac` wired to a server over `wired_rate_bps` with one-way `wired_delay` and
    /// `wired_queue`; stations on Linux hosts with the mac80211 pacing shift, a Linux server,
    /// 30 s, 0.2 s samples, seed 1, no flows.
    #[must_use]
    pub fn new(
        mac: MacConfig,
        wired_rate_bps: u64,
        wired_delay: Dur,
        wired_queue: QueueLimit,
    ) -> Self {
        let station = HostConfig {
            pacing_shift: MAC80211_PACING_SHIFT,
            ..HostConfig::default()
        };
        WifiNet {
            seed: 1,
            duration: Dur::from_secs(30),
            sample_interval: Dur::from_millis(200),
            station_hosts: vec![station; mac.stations.len()],
            mac,
            wired_rate_bps,
            wired_delay,
            wired_queue,
            nic_rate_bps: NIC_RATE_BPS,
            driver_queue: QueueLimit::Packets(DRIVER_QUEUE_PACKETS),
            server_host: HostConfig::default(),
            flows: Vec::new(),
            probes: Vec::new(),
        }
    }

    /// Base (propagation) RTT between any station and the server.
    #[must_use]
    pub fn base_rtt(&self) -> Dur {
        self.wired_delay + self.wired_delay
    }

    /// Add a flow on `station` in `direction`; returns it for further settings.
    pub fn add_flow(
        &mut self,
        flow: FlowConfig,
        station: usize,
        direction: Direction,
    ) -> &mut FlowConfig {
        self.flows.push(WifiFlow {
            flow,
            station,
            direction,
        });
        &mut self.flows.last_mut().expect("just pushed").flow
    }

    /// Add a probe from `station`; returns it for further settings.
    pub fn add_probe(&mut self, probe: ProbeConfig, station: usize) -> &mut ProbeConfig {
        self.probes.push(WifiProbe { probe, station });
        &mut self.probes.last_mut().expect("just pushed").probe
    }

    /// The simulator configuration, laid out as the module documentation states.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] when the BSS has no station, `station_hosts` does not hold one
    /// host per station, or a flow or probe names a station that does not exist.
    pub fn build(&self) -> Result<SimConfig, ConfigError> {
        let n = self.mac.stations.len();
        let invalid = |what: String, problem: String| ConfigError::Invalid { what, problem };
        if n == 0 {
            return Err(invalid(
                "wifi topology".into(),
                "needs at least one station".into(),
            ));
        }
        if self.station_hosts.len() != n {
            return Err(invalid(
                "wifi topology".into(),
                format!(
                    "{} station hosts for {n} stations: give one per station",
                    self.station_hosts.len()
                ),
            ));
        }
        let check = |what: String, station: usize| {
            if station < n {
                Ok(())
            } else {
                Err(invalid(
                    what,
                    format!("names station {station}, but only {n} stations exist"),
                ))
            }
        };
        for f in &self.flows {
            check(format!("flow `{}`", f.flow.name), f.station)?;
        }
        for p in &self.probes {
            check(format!("probe `{}`", p.probe.name), p.station)?;
        }
        let mut nodes = vec![
            NodeConfig {
                name: "ap".into(),
                kind: NodeKind::Router,
                host: HostConfig::default(),
            },
            NodeConfig {
                name: "server".into(),
                kind: NodeKind::Host,
                host: self.server_host.clone(),
            },
        ];
        for (i, h) in self.station_hosts.iter().enumerate() {
            nodes.push(NodeConfig {
                name: format!("sta{i}"),
                kind: NodeKind::Host,
                host: h.clone(),
            });
        }
        let link = |name: String, from, to, rate_bps, delay, queue: QueueLimit| {
            LinkConfig::plain(
                name,
                from,
                to,
                rate_bps,
                delay,
                QueueConfig::DropTail { limit: queue },
            )
        };
        let mut links = vec![
            LinkConfig {
                monitor: true,
                ..link(
                    "ap->server".into(),
                    AP,
                    SERVER,
                    Some(self.wired_rate_bps),
                    self.wired_delay,
                    self.wired_queue,
                )
            },
            LinkConfig {
                monitor: true,
                ..link(
                    "server->ap".into(),
                    SERVER,
                    AP,
                    Some(self.nic_rate_bps.min(self.wired_rate_bps)),
                    self.wired_delay,
                    self.driver_queue,
                )
            },
        ];
        let uncongested = QueueLimit::Packets(UNCONGESTED_QUEUE_PACKETS);
        let mut stations = Vec::with_capacity(n);
        for i in 0..n {
            let s = station_node(i);
            links.push(link(
                format!("sta{i}->ap"),
                s,
                AP,
                None,
                Dur::ZERO,
                uncongested,
            ));
            links.push(link(
                format!("ap->sta{i}"),
                AP,
                s,
                None,
                Dur::ZERO,
                uncongested,
            ));
            stations.push(WifiStation {
                node: s,
                uplink: station_uplink(i),
                downlink: station_downlink(i),
            });
        }
        let flows = self
            .flows
            .iter()
            .map(|f| {
                let s = station_node(f.station);
                let (src, dst) = match f.direction {
                    Direction::Upload => (s, SERVER),
                    Direction::Download => (SERVER, s),
                };
                FlowConfig {
                    src,
                    dst,
                    ..f.flow.clone()
                }
            })
            .collect();
        let probes = self
            .probes
            .iter()
            .map(|p| ProbeConfig {
                src: station_node(p.station),
                dst: SERVER,
                ..p.probe.clone()
            })
            .collect();
        Ok(SimConfig {
            seed: self.seed,
            duration: self.duration,
            sample_interval: self.sample_interval,
            nodes,
            links,
            flows,
            probes,
            udp: Vec::new(),
            elements: Vec::new(),
            wifi: vec![WifiConfig {
                name: "wifi".into(),
                mac: self.mac.clone(),
                ap: AP,
                stations,
            }],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Simulation;
    use crate::wifi::mac::StationConfig;
    use crate::wifi::phy::{Band, Phy, Standard};
    use cclab_cc::CcSpec;

    fn he(mcs: u8) -> StationConfig {
        StationConfig::new(Phy::new(Standard::He, Band::Ghz5, mcs, 2, 80, 800).expect("valid"))
    }

    fn net(mcs: &[u8]) -> WifiNet {
        WifiNet::new(
            MacConfig::new(mcs.iter().map(|&m| he(m)).collect()),
            1_000_000_000,
            Dur::from_millis(1),
            QueueLimit::Packets(100),
        )
    }

    /// The layout the module documentation states: node and link ids, names, the BSS's hops,
    /// the flows' ends per direction, the stations' pacing shift.
    #[test]
    fn layout_is_as_documented() {
        let mut w = net(&[9, 5, 3]);
        let cc = || CcSpec::default_for("cubic").expect("known");
        w.add_flow(
            FlowConfig::bulk("up", NodeId(9), NodeId(9), cc()),
            2,
            Direction::Upload,
        );
        w.add_flow(
            FlowConfig::bulk("down", NodeId(9), NodeId(9), cc()),
            1,
            Direction::Download,
        );
        w.add_probe(
            ProbeConfig::ping("p", NodeId(9), NodeId(9), Dur::from_millis(100)),
            0,
        );
        let c = w.build().expect("builds");
        let names: Vec<&str> = c.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["ap", "server", "sta0", "sta1", "sta2"]);
        assert_eq!(c.nodes[AP.0 as usize].kind, NodeKind::Router);
        let links: Vec<(&str, NodeId, NodeId)> = c
            .links
            .iter()
            .map(|l| (l.name.as_str(), l.from, l.to))
            .collect();
        assert_eq!(links[TO_SERVER.0 as usize], ("ap->server", AP, SERVER));
        assert_eq!(links[FROM_SERVER.0 as usize], ("server->ap", SERVER, AP));
        for i in 0..3 {
            let s = station_node(i);
            assert_eq!(links[station_uplink(i).0 as usize].1, s);
            assert_eq!(links[station_uplink(i).0 as usize].2, AP);
            assert_eq!(links[station_downlink(i).0 as usize].1, AP);
            assert_eq!(links[station_downlink(i).0 as usize].2, s);
            let l = &c.links[station_uplink(i).0 as usize];
            assert!(l.rate_bps.is_none() && l.delay == Dur::ZERO && !l.monitor);
            assert_eq!(
                c.nodes[s.0 as usize].host.pacing_shift,
                MAC80211_PACING_SHIFT
            );
        }
        assert_eq!(c.links.len(), 2 + 2 * 3);
        assert_eq!(c.links[0].rate_bps, Some(1_000_000_000));
        assert_eq!(c.links[1].rate_bps, Some(1_000_000_000));
        assert_eq!(c.wifi.len(), 1);
        assert_eq!(c.wifi[0].ap, AP);
        assert_eq!(c.wifi[0].stations.len(), 3);
        assert_eq!(c.wifi[0].mac.stations[2].uplink_phy.mcs(), 3);
        assert_eq!((c.flows[0].src, c.flows[0].dst), (station_node(2), SERVER));
        assert_eq!((c.flows[1].src, c.flows[1].dst), (SERVER, station_node(1)));
        assert_eq!(
            (c.probes[0].src, c.probes[0].dst),
            (station_node(0), SERVER)
        );
        Simulation::check(&c).expect("the simulator accepts the layout");
    }

    #[test]
    fn bad_descriptions_are_errors() {
        let mut w = net(&[9]);
        w.add_probe(
            ProbeConfig::ping("p", NodeId(0), NodeId(0), Dur::from_millis(1)),
            1,
        );
        assert!(matches!(w.build(), Err(ConfigError::Invalid { .. })));
        let mut w = net(&[9, 9]);
        w.station_hosts.pop();
        assert!(w.build().is_err());
        assert!(net(&[]).build().is_err());
    }

    /// One probe alone from each station: its RTT is the base RTT plus two exchanges on the
    /// channel (request up, reply down) plus the wired serialisation, so at least the base RTT
    /// plus two PPDUs of one MPDU, and below it plus two worst-case exchanges with an idle
    /// channel (AIFS + the largest first backoff of AC_BE, 15 slots, PPDU, SIFS, Block Ack:
    /// well under 1 ms each at HE 80 MHz).
    #[test]
    fn a_lone_probe_crosses_the_bss_twice() {
        let mut w = net(&[9, 0]);
        w.duration = Dur::from_secs(1);
        for i in 0..2 {
            let mut p = ProbeConfig::ping("p", NodeId(0), NodeId(0), Dur::from_millis(100));
            p.start = cclab_cc::Time::ZERO + Dur::from_millis(10 + 37 * u64::try_from(i).unwrap());
            w.add_probe(p, i);
        }
        let r = Simulation::new(w.build().expect("builds"))
            .expect("valid")
            .run();
        for (i, p) in r.probes.iter().enumerate() {
            assert!(
                p.summary.answered >= 9,
                "station {i}: {}",
                p.summary.answered
            );
            let phy = w.mac.stations[i].uplink_phy;
            let floor = w.base_rtt().as_millis_f64() + 2.0 * phy.ppdu_airtime(100).as_millis_f64();
            for &rtt in &p.rtt_ms {
                assert!(
                    rtt > floor && rtt < floor + 2.0,
                    "station {i}: {rtt} ms, floor {floor}"
                );
            }
        }
        assert_eq!(r.wifi.len(), 1);
        assert_eq!(r.wifi[0].nodes.len(), 3);
    }
}
