//! Speed benchmarks of the simulator on fixed scenarios (`cclab bench`).
//!
//! Contract: [`scenarios`] lists the fixed benchmark scenarios (the numbers recorded in
//! `BENCHMARKS.md` come from these and nothing else); [`run`] simulates each one, measuring the
//! process CPU time consumed by the simulation (from `/proc/self/stat` where available, else wall
//! time) and the peak resident memory (`VmHWM` from `/proc/self/status`), and reports delivered
//! data packets and events per CPU-second.

use std::time::Instant;

use cclab_cc::{CcSpec, Dur};
use cclab_sim::access::{Access, Direction};
use cclab_sim::topology::Dumbbell;
use cclab_sim::wifi::mac::{MacConfig, StationConfig};
use cclab_sim::wifi::phy::{Band, Phy, Standard};
use cclab_sim::{
    AqmConfig, FlowConfig, FqConfig, HostConfig, HostQdisc, LinkConfig, LinkId, LossConfig,
    NodeConfig, NodeId, NodeKind, QueueConfig, QueueLimit, QuicConfig, SimConfig, Simulation,
    Transport, WifiConfig, WifiStation,
};

/// One benchmark scenario.
#[derive(Clone, Debug)]
pub struct BenchScenario {
    /// Short id (`a`, `b`, …).
    pub id: &'static str,
    /// What it is.
    pub description: &'static str,
    /// The simulator input.
    pub cfg: SimConfig,
}

/// The fixed benchmark scenarios.
#[must_use]
pub fn scenarios() -> Vec<BenchScenario> {
    let newreno = CcSpec::default_for("newreno").expect("newreno exists");
    let cubic = CcSpec::default_for("cubic").expect("cubic exists");
    // (a) 8 NewReno flows, 100 Mbit/s, 20 ms one-way (40 ms RTT), 1-BDP FIFO = 333 packets, 60 s.
    let mut a = Dumbbell::new(100_000_000, Dur::from_millis(20), QueueLimit::Packets(333));
    a.duration = Dur::from_secs(60);
    for _ in 0..8 {
        a.add_flow(newreno.clone(), Dur::ZERO);
    }
    // (b) 1 CUBIC flow, 1 Gbit/s, 40 ms RTT, 1-BDP FIFO = 3333 packets, 30 s.
    let mut b = Dumbbell::new(
        1_000_000_000,
        Dur::from_millis(20),
        QueueLimit::Packets(3333),
    );
    b.duration = Dur::from_secs(30);
    b.add_flow(cubic.clone(), Dur::ZERO);
    // (c) scenario (a) with 8 BBRv3 flows, and (e) with 8 CUBIC flows: the per-packet cost of
    // BBRv3 against CUBIC's on the same path.
    let mut c = a.clone();
    let mut e = a.clone();
    for f in &mut c.flows {
        f.flow.cc = CcSpec::default_for("bbr3").expect("bbr3 exists");
    }
    for f in &mut e.flows {
        f.flow.cc = cubic.clone();
    }
    // (d) scenario (b) with one BBRv3 flow whose host has the fq qdisc (EDT pacing) and TSO.
    let mut d = b.clone();
    d.flows[0].flow.cc = CcSpec::default_for("bbr3").expect("bbr3 exists");
    d.sender_host.qdisc = HostQdisc::Fq(FqConfig::default());
    d.sender_host.tso.enabled = true;
    // (f) scenario (e) through FQ-CoDel and (g) through DualPI2, Linux defaults: the per-packet
    // cost of an AQM (evented link, per-packet classification and control law) against the
    // analytic FIFO of (e).
    let mut f = e.clone();
    f.aqm = AqmConfig::default_for("fq_codel");
    let mut g = e.clone();
    g.aqm = AqmConfig::default_for("dualpi2");
    // (q) scenario (a) with QUIC flows (1280-byte datagrams, quicly's defaults): the
    // per-packet cost of the QUIC transport against TCP's on the same path.
    let mut q = a.clone();
    for f in &mut q.flows {
        f.flow.transport = Transport::Quic(QuicConfig::default());
    }
    // (n) scenario (e) under the ns-3 stack profile (`stack = "ns3"`): the per-packet cost of
    // the ns-3 rules against the Linux stack's on the same path.
    let mut n = e.clone();
    for f in &mut n.flows {
        let stack = crate::scenario::stack::Stack::Ns3;
        f.flow.cc = stack.controller(&f.flow.cc, &[]);
        f.flow.tcp = stack.rules();
        f.flow.undo = stack.undo();
        f.flow.frto = stack.undo();
        f.flow.delack_timeout = stack.delayed_ack();
    }
    vec![
        BenchScenario {
            id: "a",
            description: "8 NewReno flows, 100 Mbit/s, 40 ms RTT, 333-packet FIFO, 60 s",
            cfg: a.build(),
        },
        BenchScenario {
            id: "t",
            description: "scenario (a) with the Linux host timing model on every host (interrupt throttling, softirq latency, GRO, timer slack, TX completion polls)",
            cfg: timed(a.build()),
        },
        BenchScenario {
            id: "q",
            description: "8 NewReno QUIC flows (1280-byte datagrams), 100 Mbit/s, 40 ms RTT, 333-packet FIFO, 60 s",
            cfg: q.build(),
        },
        BenchScenario {
            id: "b",
            description: "1 CUBIC flow, 1 Gbit/s, 40 ms RTT, 3333-packet FIFO, 30 s",
            cfg: b.build(),
        },
        BenchScenario {
            id: "c",
            description: "8 BBRv3 flows, 100 Mbit/s, 40 ms RTT, 333-packet FIFO, 60 s",
            cfg: c.build(),
        },
        BenchScenario {
            id: "d",
            description: "1 BBRv3 flow, fq + TSO host, 1 Gbit/s, 40 ms RTT, 3333-packet FIFO, 30 s",
            cfg: d.build(),
        },
        BenchScenario {
            id: "e",
            description: "8 CUBIC flows, 100 Mbit/s, 40 ms RTT, 333-packet FIFO, 60 s",
            cfg: e.build(),
        },
        BenchScenario {
            id: "n",
            description: "scenario (e) under the ns-3 stack profile (stack = \"ns3\")",
            cfg: n.build(),
        },
        BenchScenario {
            id: "f",
            description: "8 CUBIC flows, 100 Mbit/s, 40 ms RTT, FQ-CoDel (Linux defaults), 60 s",
            cfg: f.build(),
        },
        BenchScenario {
            id: "g",
            description: "8 CUBIC flows, 100 Mbit/s, 40 ms RTT, DualPI2 (Linux defaults), 60 s",
            cfg: g.build(),
        },
        BenchScenario {
            id: "w1",
            description: "1 CUBIC upload from a Wi-Fi 6 client (HE80 2SS MCS11) over 1 Gbit/s Ethernet, 1 ms RTT, 30 s",
            cfg: wifi_one(&cubic),
        },
        BenchScenario {
            id: "w8",
            description: "8 Wi-Fi 6 stations (HE80 2SS MCS11) contending, one CUBIC upload each, 10 ms RTT, 30 s",
            cfg: wifi_eight(&cubic),
        },
    ]
}

/// `cfg` with [`HostTiming::linux`] on every host: (t), the per-packet cost of the host timing
/// model against (a).
fn timed(mut cfg: SimConfig) -> SimConfig {
    for n in cfg.nodes.iter_mut().filter(|n| n.kind == NodeKind::Host) {
        n.host.timing = Some(cclab_sim::host::timing::HostTiming::linux());
    }
    cfg
}

/// HE80, 2 spatial streams, MCS 11, 800 ns guard interval: a Wi-Fi 6 client at its top rate.
fn he80() -> Phy {
    Phy::new(Standard::He, Band::Ghz5, 11, 2, 80, 800).expect("a valid HE PHY")
}

/// (w1) The client of the access topology on Wi-Fi, the AP on 1 Gbit/s Ethernet.
fn wifi_one(cc: &CcSpec) -> SimConfig {
    let mut a = Access::new(
        1_000_000_000,
        1_000_000_000,
        Dur::from_micros(500),
        QueueLimit::Packets(1000),
        QueueLimit::Packets(1000),
    );
    a.duration = Dur::from_secs(30);
    a.wifi = Some(MacConfig::new(vec![StationConfig::new(he80())]));
    a.add_flow(
        FlowConfig::bulk("f", NodeId(0), NodeId(0), cc.clone()),
        0,
        Direction::Upload,
    );
    a.build().expect("a valid access topology")
}

/// (w8) Eight stations of one BSS each upload to a server behind the AP (10 Gbit/s, 5 ms
/// one-way): nodes `ap` (0), `server` (1), `sta0..7` (2..); links `ap->server`, `server->ap`,
/// then per station its uplink and downlink (Wi-Fi hops).
fn wifi_eight(cc: &CcSpec) -> SimConfig {
    let n = 8u32;
    let node = |name: String, kind| NodeConfig {
        name,
        kind,
        host: HostConfig::default(),
    };
    let link = |name: String, from, to, rate_bps| LinkConfig {
        name,
        from,
        to,
        rate_bps,
        rate_shape: None,
        delay: if rate_bps.is_some() {
            Dur::from_millis(5)
        } else {
            Dur::ZERO
        },
        delay_changes: Vec::new(),
        jitter: None,
        queue: QueueConfig::DropTail {
            limit: QueueLimit::Packets(1000),
        },
        loss: LossConfig::None,
        monitor: false,
    };
    let (ap, server) = (NodeId(0), NodeId(1));
    let mut nodes = vec![
        node("ap".into(), NodeKind::Router),
        node("server".into(), NodeKind::Host),
    ];
    let mut links = vec![
        link("ap->server".into(), ap, server, Some(10_000_000_000)),
        link("server->ap".into(), server, ap, Some(10_000_000_000)),
    ];
    let mut stations = Vec::new();
    let mut flows = Vec::new();
    for i in 0..n {
        let sta = NodeId(2 + i);
        nodes.push(node(format!("sta{i}"), NodeKind::Host));
        let up = LinkId(2 + 2 * i);
        links.push(link(format!("sta{i}->ap"), sta, ap, None));
        links.push(link(format!("ap->sta{i}"), ap, sta, None));
        stations.push(WifiStation {
            node: sta,
            uplink: up,
            downlink: LinkId(up.0 + 1),
        });
        flows.push(FlowConfig::bulk(&format!("f{i}"), sta, server, cc.clone()));
    }
    SimConfig {
        seed: 1,
        duration: Dur::from_secs(30),
        sample_interval: Dur::from_millis(200),
        nodes,
        links,
        flows,
        probes: Vec::new(),
        udp: Vec::new(),
        elements: Vec::new(),
        wifi: vec![WifiConfig {
            name: "bss".into(),
            mac: MacConfig::new(vec![StationConfig::new(he80()); n as usize]),
            ap,
            stations,
        }],
    }
}

/// Result of one benchmark scenario.
#[derive(Clone, Debug)]
pub struct BenchResult {
    /// Scenario id.
    pub id: &'static str,
    /// Scenario description.
    pub description: &'static str,
    /// CPU seconds spent simulating.
    pub cpu_s: f64,
    /// Data packets delivered to receivers.
    pub packets: u64,
    /// Events processed.
    pub events: u64,
    /// The engine's peak number of pending events (stays small: it does not grow with the
    /// number of packets in flight).
    pub peak_events: u64,
    /// Peak resident memory of the process after the run, KiB (None when unavailable).
    pub peak_rss_kib: Option<u64>,
    /// Whether the CPU time came from the kernel (true) or the wall clock (false).
    pub cpu_clock: bool,
}

impl BenchResult {
    /// Delivered data packets per CPU-second.
    #[must_use]
    pub fn packets_per_cpu_s(&self) -> f64 {
        self.packets as f64 / self.cpu_s
    }
    /// Events per CPU-second.
    #[must_use]
    pub fn events_per_cpu_s(&self) -> f64 {
        self.events as f64 / self.cpu_s
    }
    /// CPU nanoseconds per delivered data packet.
    #[must_use]
    pub fn ns_per_packet(&self) -> f64 {
        self.cpu_s * 1e9 / self.packets as f64
    }
}

/// Process CPU time (user + system) in seconds, from `/proc/self/stat` (fields 14 and 15, in clock
/// ticks of 1/100 s, the Linux `USER_HZ` on every mainstream architecture).
fn cpu_time() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// Peak resident set size in KiB (`VmHWM`).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Run one scenario at least `repeat` times and until at least one CPU-second has been spent
/// (the kernel clock ticks every 10 ms, so this bounds the clock error to 1 %); report the mean
/// CPU time per run. Without `/proc`, the wall clock is used.
#[must_use]
pub fn run_one(s: &BenchScenario, repeat: u32) -> BenchResult {
    let cfg = &s.cfg;
    let mut runs = 0u32;
    let c0 = cpu_time();
    let w0 = Instant::now();
    let r = loop {
        let sim = Simulation::new(cfg.clone()).expect("benchmark scenarios are valid");
        let r = sim.run();
        runs += 1;
        let spent = match (c0, cpu_time()) {
            (Some(a), Some(b)) => b - a,
            _ => w0.elapsed().as_secs_f64(),
        };
        if runs >= repeat.max(1) && spent >= 1.0 {
            break r;
        }
    };
    let wall = w0.elapsed().as_secs_f64();
    let (total, cpu_clock) = match (c0, cpu_time()) {
        (Some(a), Some(b)) => (b - a, true),
        _ => (wall, false),
    };
    BenchResult {
        id: s.id,
        description: s.description,
        cpu_s: (total / f64::from(runs)).max(1e-9),
        packets: r.engine.data_packets_delivered,
        events: r.engine.events,
        peak_events: r.engine.peak_pending_events,
        peak_rss_kib: peak_rss_kib(),
        cpu_clock,
    }
}

/// Run every scenario (optionally only `only`), `repeat` times each.
#[must_use]
pub fn run(only: Option<&str>, repeat: u32) -> Vec<BenchResult> {
    scenarios()
        .iter()
        .filter(|s| only.is_none_or(|o| o == s.id))
        .map(|s| run_one(s, repeat))
        .collect()
}

/// Render results as a table.
#[must_use]
pub fn render(results: &[BenchResult]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<3} {:>9} {:>12} {:>14} {:>14} {:>10} {:>11}  scenario",
        "id", "cpu s/run", "packets", "pkts/cpu-s", "events/cpu-s", "ns/pkt", "peak RSS"
    );
    for r in results {
        let rss = r.peak_rss_kib.map_or_else(
            || "n/a".to_owned(),
            |k| format!("{:.1} MiB", k as f64 / 1024.0),
        );
        let _ = writeln!(
            out,
            "{:<3} {:>9.3} {:>12} {:>14.0} {:>14.0} {:>10.1} {:>11}  {}{}",
            r.id,
            r.cpu_s,
            r.packets,
            r.packets_per_cpu_s(),
            r.events_per_cpu_s(),
            r.ns_per_packet(),
            rss,
            r.description,
            if r.cpu_clock { "" } else { " (wall clock)" }
        );
    }
    out
}
