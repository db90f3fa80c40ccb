//! The access-network topology of Flent-style tests: one client behind a bidirectional access
//! bottleneck, one or more servers behind it at their own delays (the `rtt_fair` layout when
//! there are several).
//!
//! Contract: [`Access::build`] turns the description into a [`SimConfig`] with this fixed layout:
//!
//! - nodes: routers `cpe` = [`CPE`] (0, the client's side of the access line) and `isp` =
//!   [`ISP`] (1), host `client` = [`CLIENT`] (2), then hosts `server0`, `server1`, … (3, 4, …);
//! - links: `uplink` `cpe→isp` = [`UPLINK`] (link 0: upload rate, delay, queue, loss) and
//!   `downlink` `isp→cpe` = [`DOWNLINK`] (link 1: download rate, the same delay, its own queue
//!   and loss), both monitored; then `client->cpe` (the client's NIC: NIC rate, driver queue,
//!   no delay) and `cpe->client` (infinitely fast); then per server `i` `isp->server{i}` (the
//!   server rate, or infinitely fast, uncongested queue) and `server{i}->isp` (the server's NIC:
//!   the lower of NIC and server rate, driver queue), both with the server's one-way delay;
//! - uploads run `client → server{i}` and downloads `server{i} → client`, so the ACKs of the
//!   uploads queue in the downlink behind the download data and the ACKs of the downloads queue
//!   in the uplink behind the upload data, as on a real access line; probes run from the client
//!   to their server and are echoed back;
//! - the client runs [`Access::client_host`], every server [`Access::server_host`];
//! - flows and probes keep their order and every field except `src`/`dst`.
//!
//! So server `i` has base (propagation) RTT `2·(delay + server_delays[i])`, plus serialisation.
//!
//! With [`Access::wifi`] set, the client is a Wi-Fi station and `cpe` its access point: the
//! links `client->cpe` and `cpe->client` are the hops of a one-station BSS (named `wifi`) with
//! that MAC configuration, so the client's NIC is the MAC (its TX completions come with the
//! Block Ack) and both directions share the channel. The access line behind the AP is then the
//! AP's Ethernet port or the ISP uplink, as the caller sets its rates.

use cclab_cc::Dur;

use crate::config::{
    ConfigError, FlowConfig, HostConfig, LinkConfig, LinkId, LossConfig, NodeConfig, NodeId,
    NodeKind, ProbeConfig, QueueConfig, QueueLimit, SimConfig, WifiConfig, WifiStation,
};
use crate::queue::AqmConfig;
use crate::topology::{DRIVER_QUEUE_PACKETS, NIC_RATE_BPS, UNCONGESTED_QUEUE_PACKETS};
use crate::wifi::mac::MacConfig;

/// The router on the client's side of the access line.
pub const CPE: NodeId = NodeId(0);
/// The router on the network side of the access line.
pub const ISP: NodeId = NodeId(1);
/// The client host.
pub const CLIENT: NodeId = NodeId(2);
/// The upload direction of the access line (`cpe→isp`).
pub const UPLINK: LinkId = LinkId(0);
/// The download direction of the access line (`isp→cpe`).
pub const DOWNLINK: LinkId = LinkId(1);
/// The client's NIC (`client→cpe`; the Wi-Fi uplink with [`Access::wifi`]).
pub const CLIENT_NIC: LinkId = LinkId(2);
/// The last hop to the client (`cpe→client`; the Wi-Fi downlink with [`Access::wifi`]).
pub const TO_CLIENT: LinkId = LinkId(3);

/// The node of server `i`.
#[must_use]
pub fn server_node(i: usize) -> NodeId {
    NodeId(3 + u32::try_from(i).expect("server index beyond the u32 node ids"))
}

/// Which way a flow's data goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Client → server (Flent `TCP_STREAM`).
    Upload,
    /// Server → client (Flent `TCP_MAERTS`).
    Download,
}

/// A flow between the client and one server.
#[derive(Clone, Debug)]
pub struct AccessFlow {
    /// The flow (`src`/`dst` are set by [`Access::build`]).
    pub flow: FlowConfig,
    /// Index into [`Access::server_delays`].
    pub server: usize,
    /// Which way the data goes.
    pub direction: Direction,
}

/// A latency probe from the client to one server.
#[derive(Clone, Debug)]
pub struct AccessProbe {
    /// The probe (`src`/`dst` are set by [`Access::build`]).
    pub probe: ProbeConfig,
    /// Index into [`Access::server_delays`].
    pub server: usize,
}

/// A client behind an access bottleneck, and its servers.
#[derive(Clone, Debug)]
pub struct Access {
    /// Master seed.
    pub seed: u64,
    /// Simulated time.
    pub duration: Dur,
    /// Sampling interval.
    pub sample_interval: Dur,
    /// Upload rate of the access line, bit/s.
    pub up_rate_bps: u64,
    /// Download rate of the access line, bit/s.
    pub down_rate_bps: u64,
    /// One-way propagation delay of the access line (both directions).
    pub delay: Dur,
    /// Queue in front of the uplink.
    pub up_queue: QueueLimit,
    /// An AQM on the uplink instead of the drop-tail FIFO (e.g. a CPE running FQ-CoDel).
    pub up_aqm: Option<AqmConfig>,
    /// Queue in front of the downlink.
    pub down_queue: QueueLimit,
    /// An AQM on the downlink instead of the drop-tail FIFO.
    pub down_aqm: Option<AqmConfig>,
    /// Random loss on the uplink.
    pub up_loss: LossConfig,
    /// Random loss on the downlink.
    pub down_loss: LossConfig,
    /// One-way delay between the `isp` router and each server (at least one server).
    pub server_delays: Vec<Dur>,
    /// Rate of the servers' links, bit/s (`None`: only the servers' NICs limit them).
    pub server_rate_bps: Option<u64>,
    /// Line rate of every host's NIC (default [`NIC_RATE_BPS`]); `None` = infinitely fast.
    pub nic_rate_bps: Option<u64>,
    /// Driver queue of every host's NIC (default [`DRIVER_QUEUE_PACKETS`]).
    pub driver_queue: QueueLimit,
    /// Queue of the links that are not meant to be bottlenecks.
    pub uncongested_queue: QueueLimit,
    /// Host model of the client.
    pub client_host: HostConfig,
    /// Host model of every server.
    pub server_host: HostConfig,
    /// Flows.
    pub flows: Vec<AccessFlow>,
    /// Probes.
    pub probes: Vec<AccessProbe>,
    /// The client on Wi-Fi: the BSS of the client (its only station) and the `cpe` (its AP);
    /// `mac.stations` must hold exactly one station. `None`: the client's NIC is a wired link.
    pub wifi: Option<MacConfig>,
}

impl Access {
    /// An access line of `up_rate_bps` / `down_rate_bps` with one-way delay `delay` and the
    /// given queues, one server at zero extra delay, Linux hosts, 30 s, 0.2 s samples, seed 1.
    #[must_use]
    pub fn new(
        up_rate_bps: u64,
        down_rate_bps: u64,
        delay: Dur,
        up_queue: QueueLimit,
        down_queue: QueueLimit,
    ) -> Self {
        Access {
            seed: 1,
            duration: Dur::from_secs(30),
            sample_interval: Dur::from_millis(200),
            up_rate_bps,
            down_rate_bps,
            delay,
            up_queue,
            up_aqm: None,
            down_queue,
            down_aqm: None,
            up_loss: LossConfig::None,
            down_loss: LossConfig::None,
            server_delays: vec![Dur::ZERO],
            server_rate_bps: None,
            nic_rate_bps: Some(NIC_RATE_BPS),
            driver_queue: QueueLimit::Packets(DRIVER_QUEUE_PACKETS),
            uncongested_queue: QueueLimit::Packets(UNCONGESTED_QUEUE_PACKETS),
            client_host: HostConfig::default(),
            server_host: HostConfig::default(),
            flows: Vec::new(),
            probes: Vec::new(),
            wifi: None,
        }
    }

    /// Base (propagation) RTT between the client and server `i`.
    #[must_use]
    pub fn base_rtt(&self, server: usize) -> Dur {
        let extra = self.server_delays.get(server).copied().unwrap_or(Dur::ZERO);
        Dur(2 * (self.delay.as_nanos() + extra.as_nanos()))
    }

    /// Add a flow to `server` in `direction`; returns it for further settings.
    pub fn add_flow(
        &mut self,
        flow: FlowConfig,
        server: usize,
        direction: Direction,
    ) -> &mut FlowConfig {
        self.flows.push(AccessFlow {
            flow,
            server,
            direction,
        });
        &mut self.flows.last_mut().expect("just pushed").flow
    }

    /// Add a probe to `server`; returns it for further settings.
    pub fn add_probe(&mut self, probe: ProbeConfig, server: usize) -> &mut ProbeConfig {
        self.probes.push(AccessProbe { probe, server });
        &mut self.probes.last_mut().expect("just pushed").probe
    }

    /// The simulator configuration, laid out as the module documentation states.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] when there is no server or a flow or probe names a server that
    /// does not exist.
    pub fn build(&self) -> Result<SimConfig, ConfigError> {
        let n = self.server_delays.len();
        if n == 0 {
            return Err(ConfigError::Invalid {
                what: "access topology".into(),
                problem: "needs at least one server".into(),
            });
        }
        let check = |what: String, server: usize| {
            if server < n {
                Ok(())
            } else {
                Err(ConfigError::Invalid {
                    what,
                    problem: format!("names server {server}, but only {n} servers exist"),
                })
            }
        };
        for f in &self.flows {
            check(format!("flow `{}`", f.flow.name), f.server)?;
        }
        for p in &self.probes {
            check(format!("probe `{}`", p.probe.name), p.server)?;
        }
        let router = |name: &str| NodeConfig {
            name: name.into(),
            kind: NodeKind::Router,
            host: HostConfig::default(),
        };
        let host = |name: String, host: &HostConfig| NodeConfig {
            name,
            kind: NodeKind::Host,
            host: host.clone(),
        };
        let mut nodes = vec![
            router("cpe"),
            router("isp"),
            host("client".into(), &self.client_host),
        ];
        for i in 0..n {
            nodes.push(host(format!("server{i}"), &self.server_host));
        }
        let uncongested = QueueConfig::DropTail {
            limit: self.uncongested_queue,
        };
        let driver = QueueConfig::DropTail {
            limit: self.driver_queue,
        };
        let link = |name: String, from, to, rate_bps, delay, queue: &QueueConfig| {
            LinkConfig::plain(name, from, to, rate_bps, delay, queue.clone())
        };
        let mut links = vec![
            LinkConfig {
                loss: self.up_loss.clone(),
                monitor: true,
                ..link(
                    "uplink".into(),
                    CPE,
                    ISP,
                    Some(self.up_rate_bps),
                    self.delay,
                    &self.up_aqm.clone().map_or(
                        QueueConfig::DropTail {
                            limit: self.up_queue,
                        },
                        QueueConfig::Aqm,
                    ),
                )
            },
            LinkConfig {
                loss: self.down_loss.clone(),
                monitor: true,
                ..link(
                    "downlink".into(),
                    ISP,
                    CPE,
                    Some(self.down_rate_bps),
                    self.delay,
                    &self.down_aqm.clone().map_or(
                        QueueConfig::DropTail {
                            limit: self.down_queue,
                        },
                        QueueConfig::Aqm,
                    ),
                )
            },
            link(
                "client->cpe".into(),
                CLIENT,
                CPE,
                if self.wifi.is_some() {
                    None
                } else {
                    self.nic_rate_bps
                },
                Dur::ZERO,
                &driver,
            ),
            link(
                "cpe->client".into(),
                CPE,
                CLIENT,
                None,
                Dur::ZERO,
                &uncongested,
            ),
        ];
        let server_nic = match (self.nic_rate_bps, self.server_rate_bps) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        for (i, &d) in self.server_delays.iter().enumerate() {
            let s = server_node(i);
            links.push(link(
                format!("isp->server{i}"),
                ISP,
                s,
                self.server_rate_bps,
                d,
                &uncongested,
            ));
            links.push(link(
                format!("server{i}->isp"),
                s,
                ISP,
                server_nic,
                d,
                &driver,
            ));
        }
        let flows = self
            .flows
            .iter()
            .map(|f| {
                let s = server_node(f.server);
                let (src, dst) = match f.direction {
                    Direction::Upload => (CLIENT, s),
                    Direction::Download => (s, CLIENT),
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
                src: CLIENT,
                dst: server_node(p.server),
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
            wifi: self
                .wifi
                .iter()
                .map(|mac| WifiConfig {
                    name: "wifi".into(),
                    mac: mac.clone(),
                    ap: CPE,
                    stations: vec![WifiStation {
                        node: CLIENT,
                        uplink: CLIENT_NIC,
                        downlink: TO_CLIENT,
                    }],
                })
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Simulation;
    use crate::config::ProbeKind;
    use cclab_cc::{CcSpec, Time};

    fn median(xs: &[f64]) -> f64 {
        let mut v = xs.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    /// Alone on the path, a probe's RTT to server `i` is its base RTT plus the serialisation of
    /// request and reply on every rated link it crosses: client NIC, uplink, server link and
    /// server NIC back, downlink. Computed here independently for three servers.
    #[test]
    fn probe_rtt_is_base_rtt_plus_serialisation() {
        let mut a = Access::new(
            20_000_000,
            100_000_000,
            Dur::from_millis(5),
            QueueLimit::Packets(100),
            QueueLimit::Packets(100),
        );
        a.duration = Dur::from_secs(2);
        a.server_delays = vec![Dur::ZERO, Dur::from_millis(10), Dur::from_millis(40)];
        for i in 0..3 {
            let mut p = ProbeConfig::ping("p", NodeId(0), NodeId(0), Dur::from_millis(100));
            p.kind = ProbeKind::Udp;
            p.dscp = 46;
            // Staggered so that no two packets ever meet in a queue (replies at 10, 33 and
            // 97 ms after each 100 ms tick).
            p.start = Time::ZERO + Dur::from_millis([0, 3, 7][i]);
            a.add_probe(p, i);
        }
        let r = Simulation::new(a.build().unwrap()).unwrap().run();
        let bits = 84.0 * 8.0;
        for (i, p) in r.probes.iter().enumerate() {
            assert_eq!(p.kind, "udp");
            assert_eq!(p.dscp, 46);
            assert_eq!(p.summary.answered, 20);
            let ser_s = bits / 10e9 + bits / 20e6 + bits / 10e9 + bits / 100e6;
            let want = a.base_rtt(i).as_millis_f64() + ser_s * 1e3;
            // Each of the four serialisations is rounded up to whole nanoseconds.
            for &rtt in &p.rtt_ms {
                assert!(
                    (rtt - want).abs() < 4e-6,
                    "server {i}: {rtt} ms, want {want} ms"
                );
            }
        }
    }

    /// A download filling a deep downlink buffer delays the ACKs of an upload that shares the
    /// line: the upload's smoothed RTT rises by about the downlink's queueing delay, which the
    /// downlink's sojourn measures. Without the download the upload's RTT stays near its base.
    #[test]
    fn upload_acks_queue_behind_download_data() {
        let run = |with_download: bool| {
            let mut a = Access::new(
                10_000_000,
                10_000_000,
                Dur::from_millis(10),
                QueueLimit::Packets(40),
                QueueLimit::Packets(400),
            );
            a.duration = Dur::from_secs(20);
            a.add_flow(
                FlowConfig::bulk(
                    "up",
                    NodeId(0),
                    NodeId(0),
                    CcSpec::default_for("cubic").unwrap(),
                ),
                0,
                Direction::Upload,
            );
            if with_download {
                a.add_flow(
                    FlowConfig::bulk(
                        "down",
                        NodeId(0),
                        NodeId(0),
                        CcSpec::default_for("cubic").unwrap(),
                    ),
                    0,
                    Direction::Download,
                );
            }
            let mut p = ProbeConfig::ping(
                "Ping (ms) ICMP",
                NodeId(0),
                NodeId(0),
                Dur::from_millis(200),
            );
            p.start = Time::ZERO;
            a.add_probe(p, 0);
            Simulation::new(a.build().unwrap()).unwrap().run()
        };
        let alone = run(false);
        let both = run(true);
        let srtt = |r: &crate::Results, f: usize| {
            let s = &r.flows[f].series;
            let v: Vec<f64> = s
                .t_s
                .iter()
                .zip(&s.srtt_ms)
                .filter(|(t, _)| **t >= 10.0)
                .filter_map(|(_, x)| *x)
                .collect();
            median(&v)
        };
        let down_sojourn = {
            let q = &both.queues[1];
            assert_eq!(q.name, "downlink");
            let v: Vec<f64> = q
                .series
                .t_s
                .iter()
                .zip(&q.series.sojourn_mean_ms)
                .filter(|(t, _)| **t >= 10.0)
                .filter_map(|(_, x)| *x)
                .collect();
            median(&v)
        };
        let up_alone = srtt(&alone, 0);
        let up_both = srtt(&both, 0);
        // 400 packets at 10 Mbit/s is up to 485 ms: a loss-based download keeps it well filled.
        assert!(down_sojourn > 100.0, "downlink sojourn {down_sojourn} ms");
        let rise = up_both - up_alone;
        assert!(
            (rise - down_sojourn).abs() < 0.35 * down_sojourn,
            "upload srtt rose by {rise} ms, downlink sojourn {down_sojourn} ms"
        );
        // The download still fills its line; the upload, whose RTT is now ~0.5 s, gets less
        // (the rrul bufferbloat effect) but keeps going.
        assert!(both.flows[1].summary.goodput_bps > 8e6);
        assert!(both.flows[0].summary.goodput_bps > 1e6);
    }

    #[test]
    fn a_missing_server_is_an_error() {
        let mut a = Access::new(
            1,
            1,
            Dur::ZERO,
            QueueLimit::Packets(1),
            QueueLimit::Packets(1),
        );
        a.add_probe(
            ProbeConfig::ping("p", NodeId(0), NodeId(0), Dur::from_millis(1)),
            1,
        );
        assert!(matches!(a.build(), Err(ConfigError::Invalid { .. })));
        a.server_delays.clear();
        a.probes.clear();
        assert!(a.build().is_err());
    }
}
