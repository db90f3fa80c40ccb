//! Tests of the Linux sender host model (`host/`, `tcp/output.rs`, the sender's TSQ/TSO/EDT
//! code and the engine's NIC, fq and CPU schedule): TCP Small Queues, TSO autosizing, the fq
//! qdisc, and hypervisor CPU scheduling, in whole runs.
//!
//! Every test states its tolerance and why; most checks are exact, because the quantities are
//! integers the model computes by the Linux rule (bytes, segments, nanoseconds). Controllers
//! are CUBIC and NewReno (paced flows use `PacingMode::On`), never BBR.

#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use cclab_cc::num::{f64_to_u64, u64_to_f64, usize_to_f64};
use cclab_cc::{CcSpec, Dur, Time};
use cclab_sim::topology::Dumbbell;
use cclab_sim::{
    ConfigError, CpuSchedule, FlowConfig, FlowResult, FqConfig, HostConfig, HostQdisc, LinkConfig,
    LossConfig, NodeConfig, NodeId, NodeKind, PacingMode, QueueConfig, QueueLimit, Results,
    SimConfig, Simulation, TracePoint, TsoRule,
};

mod common;
use common::jain;

/// Wire bytes of a full segment: 1448 payload + 52 header.
const WIRE: u64 = 1500;
const MSS: u64 = 1448;

fn cubic() -> CcSpec {
    CcSpec::default_for("cubic").expect("cubic exists")
}

fn run(cfg: SimConfig) -> Results {
    Simulation::new(cfg).expect("valid config").run()
}

/// Rows of one event kind.
fn rows<'a>(tr: &'a [TracePoint], event: &'a str) -> impl Iterator<Item = &'a TracePoint> + 'a {
    tr.iter().filter(move |p| p.event == event)
}

/// The skbs a traced sender handed below TCP, as (row, segments): an `xmit` row follows every
/// skb; new data advances SND.NXT by the skb's segments, a retransmission (0 advance) is one
/// segment.
fn skbs(tr: &[TracePoint]) -> Vec<(&TracePoint, u64)> {
    let mut nxt = 0;
    let mut out = Vec::new();
    for p in rows(tr, "xmit") {
        out.push((p, (p.snd_nxt - nxt).max(1)));
        nxt = p.snd_nxt;
    }
    out
}

/// The TSQ limit by the Linux rule for a full-size skb of `segs` segments (what the model
/// reports as `tsq_budget`): max(2 · skb, rate >> shift), capped for unpaced sockets.
fn budget(p: &TracePoint, shift: u32, unpaced_cap: Option<u64>) -> u64 {
    let rate = p.sk_pacing_rate.unwrap_or(u64::MAX) >> shift;
    let b = (2 * u64::from(p.tso_segs) * WIRE).max(rate);
    unpaced_cap.map_or(b, |c| b.min(c))
}

/// A 100 Mbit/s, 40 ms dumbbell (500-packet buffer) with one CUBIC flow whose sending host has
/// a `nic_bps` NIC, traced with every skb and TX completion.
fn one_flow(nic_bps: u64, secs: u64, pacing: PacingMode, host: HostConfig) -> Dumbbell {
    let mut d = Dumbbell::new(100_000_000, Dur::from_millis(20), QueueLimit::Packets(500));
    d.duration = Dur::from_secs(secs);
    d.nic_rate_bps = Some(nic_bps);
    d.sender_host = host;
    let f = d.add_flow(cubic(), Dur::ZERO);
    f.pacing = pacing;
    f.trace = true;
    f.trace_tx = true;
    d
}

/// The NIC-bound stress case: a 100 Mbit/s NIC in front of a 1 Gbit/s path, so the host's own
/// driver queue is the bottleneck and only TSQ keeps data in the socket.
fn nic_bound(host: HostConfig) -> Dumbbell {
    let mut d = one_flow(100_000_000, 10, PacingMode::Auto, host);
    d.rate_bps = 1_000_000_000;
    d
}

// ----- TSQ -----

/// `tcp_small_queue_check` lets an skb go only while the bytes below TCP are within the limit,
/// so right after any skb is handed down (an `xmit` row, where `below_tcp` includes it) the
/// bytes below TCP are at most the limit plus that skb. The reported budget is the limit of a
/// full-size skb, which no smaller skb's limit exceeds; retransmissions have twice the limit.
/// Checked exactly at every skb of: unpaced CUBIC at 100 Mbit/s behind a 1 Gbit/s NIC, the
/// same flow paced (`PacingMode::On`), and the NIC-bound case where TSQ throttles all the time.
/// The NIC-bound case must throttle and stay near line rate; with TSQ off the same run must
/// break the bound by far (the whole window queues in the host), so the check can fail.
#[test]
fn below_tcp_never_exceeds_the_budget_plus_one_skb() {
    let linux = HostConfig::default();
    let cases = [
        (
            "cubic, 1G NIC",
            one_flow(1_000_000_000, 10, PacingMode::Auto, linux.clone()),
        ),
        (
            "paced, 1G NIC",
            one_flow(1_000_000_000, 10, PacingMode::On, linux.clone()),
        ),
        ("cubic, NIC-bound", nic_bound(linux.clone())),
    ];
    for (name, d) in cases {
        let r = run(d.build());
        let tr = &r.flows[0].trace;
        let sk = skbs(tr);
        assert!(sk.len() > 1000, "{name}: {} skbs", sk.len());
        let mut prev_nxt = 0;
        for &(p, segs) in &sk {
            let b = p.tsq_budget.expect("TSQ is on");
            let retrans = p.snd_nxt == prev_nxt;
            prev_nxt = p.snd_nxt;
            let limit = if retrans { 2 * b } else { b };
            assert!(
                p.below_tcp <= limit + segs * WIRE,
                "{name}: {} bytes below TCP > {limit} + {segs} segments at {p:?}",
                p.below_tcp
            );
        }
        let max = sk.iter().map(|(p, _)| p.below_tcp).max().unwrap();
        eprintln!(
            "{name}: {} skbs, {} throttles, max below TCP {max} B, goodput {:.1} Mbit/s",
            sk.len(),
            r.engine.tsq_throttles,
            r.flows[0].summary.goodput_bps / 1e6
        );
        if name.contains("NIC-bound") {
            assert!(r.engine.tsq_throttles > 1000, "TSQ must bind");
            // 100 Mbit/s of 1500-byte packets is 96.5 Mbit/s of goodput; TSQ keeps the NIC
            // busy: ≥ 85 % of that over a run that includes slow start (the first second).
            assert!(r.flows[0].summary.goodput_bps > 0.85 * 96.5e6);
        }
    }
    // Without TSQ the socket fills the driver queue: far beyond what TSQ would allow.
    let r = run(nic_bound(HostConfig {
        tsq: false,
        ..HostConfig::default()
    })
    .build());
    let worst = skbs(&r.flows[0].trace)
        .iter()
        .map(|&(p, segs)| {
            u64_to_f64(p.below_tcp) / u64_to_f64(budget(p, 10, Some(1 << 20)) + segs * WIRE)
        })
        .fold(0.0, f64::max);
    eprintln!("TSQ off: below TCP reaches {worst:.1}× the bound");
    assert!(worst > 5.0, "{worst}");
}

/// The budget in force is Linux's `max(2 · skb, pacing_rate >> shift)`, at every trace row,
/// exactly: with TSO off an skb is one packet (the two-packet floor); with TSO on it is the
/// autosized skb of `tso_segs` segments. A paced socket is not capped.
#[test]
fn the_budget_is_two_skbs_or_the_shifted_pacing_rate() {
    for tso in [false, true] {
        let mut host = HostConfig::default();
        host.tso.enabled = tso;
        let r = run(one_flow(1_000_000_000, 5, PacingMode::On, host).build());
        let tr = &r.flows[0].trace;
        let (mut by_rate, mut by_floor) = (0, 0);
        for p in rows(tr, "ack") {
            let want = budget(p, 10, None);
            assert_eq!(p.tsq_budget, Some(want), "TSO {tso}: {p:?}");
            if tso {
                assert!(p.tso_segs >= 2);
            } else {
                assert_eq!(p.tso_segs, 1);
            }
            if p.sk_pacing_rate
                .is_some_and(|r| r >> 10 > 2 * u64::from(p.tso_segs) * WIRE)
            {
                by_rate += 1;
            } else {
                by_floor += 1;
            }
        }
        eprintln!("TSO {tso}: budget set by the rate at {by_rate} ACKs, by 2 skbs at {by_floor}");
        // Without TSO the rate term rules once the window has grown (1 ms of 100 Mbit/s is 8
        // packets); with TSO the autosized skb is ≈ rate >> shift, so two of them rule.
        if tso {
            assert!(by_floor > 10 * by_rate);
        } else {
            assert!(by_rate > 10 * by_floor);
        }
    }
}

/// `tcp_limit_output_bytes` caps the budget of an unpaced socket only (Linux since 4.20). With
/// the cap lowered to 4000 bytes, below 2 skbs and the rate term once the flow runs, an unpaced
/// CUBIC flow's budget is exactly 4000 at every ACK with a rate sample, and its bytes below TCP
/// stay within 4000 + one skb; the same flow paced keeps the uncapped budget.
#[test]
fn an_unpaced_budget_is_capped_by_limit_output_bytes() {
    let host = HostConfig {
        limit_output_bytes: 4000,
        ..HostConfig::default()
    };
    let r = run(nic_bound(host.clone()).build());
    let tr = &r.flows[0].trace;
    let acks: Vec<_> = rows(tr, "ack")
        .filter(|p| p.sk_pacing_rate.is_some())
        .collect();
    assert!(acks.len() > 1000);
    for p in &acks {
        assert_eq!(p.tsq_budget, Some(budget(p, 10, Some(4000))), "{p:?}");
        assert_eq!(p.tsq_budget, Some(4000), "{p:?}");
    }
    for (p, segs) in skbs(tr) {
        if p.snd_nxt > 0 {
            assert!(p.below_tcp <= 2 * 4000 + segs * WIRE, "{p:?}");
        }
    }
    let mut paced = nic_bound(host);
    paced.flows[0].flow.pacing = PacingMode::On;
    let r = run(paced.build());
    let uncapped = rows(&r.flows[0].trace, "ack")
        .filter(|p| p.sk_pacing_rate.is_some())
        .all(|p| p.tsq_budget == Some(budget(p, 10, None)) && p.tsq_budget > Some(4000));
    assert!(uncapped, "a paced socket is not capped");
}

/// The shift sets the rate term: 2^-shift s of data. With TSO off (so the floor is two
/// packets) and a paced flow, every ACK row's budget is max(3000, rate >> shift) for shift 6,
/// 8 and 10, and the series report the shift. Comparing the runs on equal rates: the budget is
/// 2^(10 − shift) times the shift-10 budget, up to the truncation of each shift (< 2^(10 −
/// shift) bytes).
#[test]
fn the_pacing_shift_scales_the_budget_by_powers_of_two() {
    let mut medians = Vec::new();
    for shift in [6u8, 8, 10] {
        let mut host = HostConfig::default();
        host.tso.enabled = false;
        host.pacing_shift = shift;
        let r = run(one_flow(1_000_000_000, 5, PacingMode::On, host).build());
        let f = &r.flows[0];
        assert!(f.series.tsq_shift.iter().all(|&s| s == shift));
        let mut ratios = Vec::new();
        for p in rows(&f.trace, "ack") {
            let Some(rate) = p.sk_pacing_rate else {
                continue;
            };
            assert_eq!(p.tsq_budget, Some((rate >> shift).max(2 * WIRE)), "{p:?}");
            if rate >> 10 > 2 * WIRE {
                // Same rate, shift 10: rate >> 10; the ratio is 2^(10 − shift) exactly up to
                // the bits shifted out.
                let b10 = rate >> 10;
                let b = p.tsq_budget.unwrap();
                let k = 1u64 << (10 - shift);
                assert!(b >= k * b10 && b < k * (b10 + 1), "{b} vs {k} × {b10}");
                ratios.push(u64_to_f64(b) * 2f64.powi(i32::from(shift)) / u64_to_f64(rate));
            }
        }
        ratios.sort_by(f64::total_cmp);
        medians.push(ratios[ratios.len() / 2]);
    }
    // budget · 2^shift / rate ≈ 1 whatever the shift.
    for m in medians {
        assert!((m - 1.0).abs() < 1e-3, "{m}");
    }
}

// ----- TSO -----

/// `tcp_tso_autosize`: the TSO goal at every ACK row (with an RTT sample) is exactly
/// max(min(rate >> 10 + extra, 65536 − 1 − 320) / 1448, 2) where `extra` is, since 5.18,
/// 65215 >> ⌊min_rtt_µs / 512⌋ (absent before 5.18 and when that shift is ≥ 32). Three paths:
/// a LAN (0.2 ms base RTT: extra = 65215, so every skb may be 45 segments = 64 KB), 1.2 ms
/// (extra = 65215 >> 2) and a WAN (40 ms: no extra term). The host's 1 Gbit/s NIC is the
/// bottleneck of a 10 Gbit/s path, so TSQ holds the socket back and each wakeup sends as
/// large an skb as the goal allows (this model has no `tcp_tso_should_defer`, so an
/// ACK-clocked flow would otherwise send skbs of the ACKed size). The largest skb actually
/// sent must reach the goal on the LAN (45 segments) and never exceed the largest goal.
#[test]
fn tso_bursts_follow_both_autosizing_rules() {
    for (rule, one_way_us, extra) in [
        (TsoRule::Post518, 100u64, Some(65_215u64)),
        (TsoRule::Pre518, 100, None),
        (TsoRule::Post518, 600, Some(65_215 >> 2)),
        (TsoRule::Post518, 20_000, None),
    ] {
        let mut host = HostConfig::default();
        host.tso.rule = rule;
        let mut d = Dumbbell::new(
            10_000_000_000,
            Dur::from_micros(one_way_us),
            QueueLimit::Packets(1000),
        );
        d.duration = Dur::from_secs(2);
        d.nic_rate_bps = Some(1_000_000_000);
        d.sender_host = host;
        let f = d.add_flow(cubic(), Dur::ZERO);
        f.trace = true;
        f.trace_tx = true;
        let r = run(d.build());
        let tr = &r.flows[0].trace;
        let mut checked = 0;
        for p in rows(tr, "ack").filter(|p| p.srtt_ms.is_some()) {
            let rate = p.sk_pacing_rate.expect("rate after an RTT sample") >> 10;
            let bytes = (rate + extra.unwrap_or(0)).min(65_536 - 1 - 320);
            let want = (bytes / MSS).max(2) as u32;
            assert_eq!(p.tso_segs, want, "{rule:?} {one_way_us} µs: {p:?}");
            checked += 1;
        }
        assert!(checked > 100);
        let sk = skbs(tr);
        let largest = sk.iter().map(|&(_, s)| s).max().unwrap();
        let goal_max = tr.iter().map(|p| p.tso_segs).max().unwrap();
        eprintln!(
            "{rule:?}, {one_way_us} µs one way: largest skb {largest} segments, goal ≤ {goal_max}"
        );
        assert!(largest <= u64::from(goal_max), "{largest} > {goal_max}");
        if rule == TsoRule::Post518 && one_way_us == 100 {
            assert_eq!(largest, 45, "64 KB TSO bursts on a LAN");
        }
    }
}

/// With TSO off every skb is one segment: no `xmit` row advances SND.NXT by more than one, and
/// the engine counts as many skbs as data segments.
#[test]
fn disabled_tso_sends_single_segments() {
    let mut host = HostConfig::default();
    host.tso.enabled = false;
    let r = run(one_flow(1_000_000_000, 3, PacingMode::Auto, host).build());
    assert!(skbs(&r.flows[0].trace).iter().all(|&(_, s)| s == 1));
    assert_eq!(r.engine.skbs_sent, r.engine.data_packets_sent);
    let r = run(one_flow(1_000_000_000, 3, PacingMode::Auto, HostConfig::default()).build());
    assert!(
        r.engine.skbs_sent < r.engine.data_packets_sent,
        "TSO on builds bursts"
    );
}

// ----- fq -----

/// Inter-completion gaps (one TX completion per skb) of the first flow, in ns.
fn completion_gaps(f: &FlowResult, from_s: f64) -> Vec<u64> {
    let t: Vec<u64> = rows(&f.trace, "tx_done")
        .filter(|p| p.t_s > from_s)
        .map(|p| f64_to_u64((p.t_s * 1e9).round()))
        .collect();
    t.windows(2).map(|w| w[1] - w[0]).collect()
}

fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// A paced flow through fq leaves the wire as a flow paced inside TCP does: fq releases each
/// skb at the EDT stamp TCP gave it, which is the moment internal pacing would have sent it.
/// The receiver sends stretch ACKs (one per 16 segments, as with GRO), so every ACK frees a
/// burst that only pacing spreads, and TSO is off, so every TX completion is one packet's
/// departure. After slow start (1–6 s) the median gap between departures agrees within one
/// packet time at the 1 Gbit/s NIC (12 µs) and is the pacing interval (≈ 100 µs: 1500 bytes at
/// 120 % of 100 Mbit/s). Unpaced, the bursts leave back to back (12 µs apart), so the
/// comparison can fail.
#[test]
fn fq_paces_like_internal_pacing() {
    let flow = |pacing, qdisc| {
        let mut host = HostConfig {
            qdisc,
            ..HostConfig::default()
        };
        host.tso.enabled = false;
        let mut d = one_flow(1_000_000_000, 6, pacing, host);
        d.flows[0].flow.ack_every = 16;
        run(d.build())
    };
    let internal = flow(PacingMode::On, HostQdisc::PfifoFast);
    let through_fq = flow(PacingMode::On, HostQdisc::Fq(FqConfig::default()));
    let unpaced = flow(PacingMode::Off, HostQdisc::PfifoFast);
    let packet_time = 12_000;
    let m_int = median(&mut completion_gaps(&internal.flows[0], 1.0));
    let m_fq = median(&mut completion_gaps(&through_fq.flows[0], 1.0));
    let m_off = median(&mut completion_gaps(&unpaced.flows[0], 1.0));
    eprintln!("median departure gap: internal pacing {m_int} ns, fq {m_fq} ns, unpaced {m_off} ns");
    assert!(m_int.abs_diff(m_fq) <= packet_time, "{m_int} vs {m_fq}");
    assert!((90_000..=110_000).contains(&m_int), "{m_int}");
    assert!(
        m_int.abs_diff(m_off) > 4 * packet_time,
        "{m_int} vs {m_off}"
    );
    // About the same throughput: within 3 %. Under fq TCP builds each packet when the ACK
    // comes (stamped for later), inside TCP when the pacing timer fires, so the flows' windows
    // and loss episodes drift apart a little (measured: 1.2 %).
    let (a, b) = (
        internal.flows[0].summary.goodput_bps,
        through_fq.flows[0].summary.goodput_bps,
    );
    assert!((a / b - 1.0).abs() < 0.03, "{a} vs {b}");
}

/// Two hosts, one link each way: host `a` (fq or pfifo_fast, a 100 Mbit/s NIC that is the
/// bottleneck) sends two CUBIC flows to host `b` over 5 ms and 30 ms one-way paths.
fn shared_nic(qdisc: HostQdisc) -> SimConfig {
    let node = |name: &str, host: HostConfig| NodeConfig {
        name: name.into(),
        kind: NodeKind::Host,
        host,
    };
    let router = NodeConfig {
        name: "r".into(),
        kind: NodeKind::Router,
        host: HostConfig::default(),
    };
    let link = |name: &str, from, to, rate, delay_ms, queue| LinkConfig {
        name: name.into(),
        from: NodeId(from),
        to: NodeId(to),
        rate_bps: Some(rate),
        rate_shape: None,
        delay: Dur::from_millis(delay_ms),
        delay_changes: Vec::new(),
        jitter: None,
        queue: QueueConfig::DropTail {
            limit: QueueLimit::Packets(queue),
        },
        loss: LossConfig::None,
        monitor: false,
    };
    let host_a = HostConfig {
        qdisc,
        ..HostConfig::default()
    };
    // a → r is the NIC; r → b1 / r → b2 give the two path delays.
    let nodes = vec![
        node("a", host_a),
        router,
        node("b1", HostConfig::default()),
        node("b2", HostConfig::default()),
    ];
    let links = vec![
        link("a->r", 0, 1, 100_000_000, 0, 1000),
        link("r->a", 1, 0, 1_000_000_000, 0, 100_000),
        link("r->b1", 1, 2, 1_000_000_000, 5, 100_000),
        link("b1->r", 2, 1, 1_000_000_000, 5, 100_000),
        link("r->b2", 1, 3, 1_000_000_000, 30, 100_000),
        link("b2->r", 3, 1, 1_000_000_000, 30, 100_000),
    ];
    let flows = vec![
        FlowConfig::bulk("near", NodeId(0), NodeId(2), cubic()),
        FlowConfig::bulk("far", NodeId(0), NodeId(3), cubic()),
    ];
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
        wifi: Vec::new(),
    }
}

/// Mean goodput over samples after `from_s`, bit/s.
fn goodput_after(f: &FlowResult, from_s: f64) -> f64 {
    let v: Vec<f64> = f
        .series
        .t_s
        .iter()
        .zip(&f.series.goodput_bps)
        .filter(|(t, _)| **t > from_s)
        .map(|(_, g)| *g)
        .collect();
    v.iter().sum::<f64>() / usize_to_f64(v.len())
}

/// fq's deficit round robin shares a host's NIC between its flows whatever their RTTs: two
/// CUBIC flows (10 ms and 60 ms RTT) from one host whose 100 Mbit/s NIC is the bottleneck get
/// Jain's index ≥ 0.99 over the last 20 s of 30 s, and together fill the NIC (≥ 90 % of its
/// 96.5 Mbit/s of goodput).
#[test]
fn fq_shares_the_nic_fairly_between_flows_of_one_host() {
    let r = run(shared_nic(HostQdisc::Fq(FqConfig::default())));
    let x: Vec<f64> = r.flows.iter().map(|f| goodput_after(f, 10.0)).collect();
    let j = jain(&x);
    let pf = run(shared_nic(HostQdisc::PfifoFast));
    let y: Vec<f64> = pf.flows.iter().map(|f| goodput_after(f, 10.0)).collect();
    eprintln!(
        "fq: {:.1} / {:.1} Mbit/s, Jain {j:.4}; pfifo_fast: {:.1} / {:.1} Mbit/s, Jain {:.4}",
        x[0] / 1e6,
        x[1] / 1e6,
        y[0] / 1e6,
        y[1] / 1e6,
        jain(&y)
    );
    assert!(j >= 0.99, "Jain {j} for {x:?}");
    assert!(x.iter().sum::<f64>() > 0.9 * 96.5e6, "{x:?}");
}

/// fq's `flow_limit` refuses a flow's skbs beyond the limit. TSO and TSQ are off, so an skb is
/// one packet and nothing holds the socket back, and the receiver ACKs every 16 segments, so
/// each ACK hands fq a burst of ≈ 16–24 packets stamped over the next ≈ 2 ms. With the default
/// limit (100 packets) nothing is dropped and the 5 MB transfer completes; with 5, fq drops
/// and the flow, which can never leave a burst of more than 5 packets, keeps losing and
/// recovering (and still delivers). Packet accounting stays exact: every segment sent is
/// delivered, dropped (fq included) or still in the network.
#[test]
fn fq_flow_limit_drops() {
    for flow_limit in [100, 5] {
        let mut host = HostConfig {
            tsq: false,
            qdisc: HostQdisc::Fq(FqConfig {
                flow_limit,
                ..FqConfig::default()
            }),
            ..HostConfig::default()
        };
        host.tso.enabled = false;
        let mut d = one_flow(1_000_000_000, 10, PacingMode::On, host);
        d.flows[0].flow.size = Some(5_000_000);
        d.flows[0].flow.ack_every = 16;
        let r = run(d.build());
        let e = &r.engine;
        eprintln!(
            "flow_limit {flow_limit}: fq drops {}, {:?}",
            e.fq_drops, r.flows[0].summary
        );
        assert_eq!(
            e.data_packets_sent,
            e.data_packets_delivered + e.data_packets_dropped + e.data_packets_in_network
        );
        if flow_limit == 100 {
            assert!(r.flows[0].summary.complete);
            assert_eq!(e.fq_drops, 0);
        } else {
            assert!(r.flows[0].summary.bytes_delivered > 500_000);
            assert!(e.fq_drops > 0);
            assert!(e.data_packets_dropped >= e.fq_drops);
            assert!(r.flows[0].summary.retransmits > 0);
        }
    }
}

/// A flow that has not started has no TSQ budget in its samples (a paced BBR sender with no
/// rate yet would show 2^54, its unset pacing rate shifted); from its start on it has one.
#[test]
fn no_tsq_budget_before_a_flow_starts() {
    let mut d = Dumbbell::new(10_000_000, Dur::from_millis(5), QueueLimit::Packets(100));
    d.duration = Dur::from_secs(2);
    d.sample_interval = Dur::from_millis(100);
    let f = d.add_flow(CcSpec::default_for("bbr3").unwrap(), Dur::ZERO);
    f.start = Time::ZERO + Dur::from_secs(1);
    f.pacing = PacingMode::On;
    let r = run(d.build());
    let s = &r.flows[0].series;
    for (i, (&t, b)) in s.t_s.iter().zip(&s.tsq_budget).enumerate() {
        if t < 1.0 {
            assert_eq!((s.state[i], *b), ("not_started", None), "at {t} s");
        } else if t > 1.0 {
            assert!(b.is_some_and(|b| b < 1 << 30), "at {t} s: {b:?}");
        }
    }
}

// ----- CPU schedule -----

fn two_flows_and_a_ping(cpu: Option<CpuSchedule>) -> SimConfig {
    let mut d = Dumbbell::new(50_000_000, Dur::from_millis(10), QueueLimit::Packets(200));
    d.duration = Dur::from_secs(10);
    d.sender_host.cpu = cpu;
    d.receiver_host.cpu = cpu;
    d.add_flow(cubic(), Dur::ZERO);
    let f = d.add_flow(CcSpec::default_for("newreno").unwrap(), Dur::from_millis(5));
    f.start = Time::ZERO + Dur::from_millis(700);
    f.trace = true;
    d.add_ping(Dur::from_millis(100));
    d.build()
}

/// A host that always runs is the same host: with share 1.0 (period = timeslice) the whole
/// `Results` (summaries, series, traces, probes, engine counters) is bit-identical to a run
/// without a schedule, whatever the timeslice and offset. Compared through `Debug`, which
/// prints every field (and NaN equal to itself).
#[test]
fn a_full_cpu_share_is_bit_identical_to_no_schedule() {
    let none = run(two_flows_and_a_ping(None));
    for (ts, off) in [(10, 0), (1, 3), (20, 13)] {
        let full = run(two_flows_and_a_ping(Some(CpuSchedule {
            timeslice: Dur::from_millis(ts),
            share: 1.0,
            offset: Dur::from_millis(off),
        })));
        assert_eq!(
            format!("{none:?}"),
            format!("{full:?}"),
            "timeslice {ts} ms"
        );
    }
    assert_eq!(none.engine.cpu_deferred, 0);
}

/// Share 0.3 in 10 ms timeslices (period round(10 ms / 0.3) = 33,333,333 ns): the sender does
/// nothing while descheduled. Every row of its trace that is its own work (ACK processing,
/// timers, TSQ wakeups, skbs handed to the NIC) lies in a running phase, computed here from the
/// schedule; only `tx_done` rows (the NIC finishing a transmission) may fall outside. And the
/// host did have to wait (deferred work, resumes).
#[test]
fn a_descheduled_host_hands_nothing_to_its_nic() {
    let cpu = CpuSchedule {
        timeslice: Dur::from_millis(10),
        share: 0.3,
        offset: Dur::from_millis(4),
    };
    let period: u64 = 33_333_333;
    assert_eq!(cpu.period(), Dur(period));
    let mut d = one_flow(1_000_000_000, 10, PacingMode::Auto, HostConfig::default());
    d.sender_host.cpu = Some(cpu);
    let r = run(d.build());
    let tr = &r.flows[0].trace;
    let running = |t_s: f64| {
        let t = f64_to_u64((t_s * 1e9).round());
        (t + 4_000_000) % period < 10_000_000
    };
    let mut own = 0;
    for p in tr.iter().filter(|p| p.event != "tx_done") {
        assert!(
            running(p.t_s),
            "{} at {} s while descheduled",
            p.event,
            p.t_s
        );
        own += 1;
    }
    assert!(own > 1000 && rows(tr, "xmit").count() > 1000);
    assert!(r.engine.cpu_deferred > 1000 && r.engine.cpu_resumes > 100);
    eprintln!("{own} rows of sender work, {:?}", r.engine);
}

/// As measured in the 2BRobust paper (Elmenhorst & Aschenbruck, arXiv:2601.05665): the less
/// CPU a sending VM gets, the less a CUBIC flow delivers. One
/// CUBIC flow on 100 Mbit/s, 40 ms, 1 BDP buffer, 10 ms timeslices, 20 s: goodput strictly
/// falls over shares 1.0, 0.3, 0.15 (deterministic runs, so strict inequality is exact). The
/// response is not monotone at every share: at 0.25 the period (40 ms) equals the RTT, the
/// ACKs of a burst come back while the host runs, and the flow does better than at 0.3.
#[test]
fn cubic_throughput_falls_with_the_cpu_share() {
    let goodput = |share: f64| {
        let mut d = Dumbbell::new(100_000_000, Dur::from_millis(20), QueueLimit::Packets(333));
        d.duration = Dur::from_secs(20);
        d.sender_host.cpu = Some(CpuSchedule {
            timeslice: Dur::from_millis(10),
            share,
            offset: Dur::ZERO,
        });
        d.add_flow(cubic(), Dur::ZERO);
        run(d.build()).flows[0].summary.goodput_bps
    };
    let g: Vec<f64> = [1.0, 0.3, 0.15].into_iter().map(goodput).collect();
    eprintln!("goodput at shares 1.0 / 0.3 / 0.15: {g:?}");
    assert!(g[0] > g[1] && g[1] > g[2], "{g:?}");
    assert!(g[0] > 0.9 * 96.5e6);
}

// ----- engine modes and configuration -----

/// The evented FIFO reports TX completions at the end of each transmission instead of at
/// enqueue; TSQ must see the same completions. In the NIC-bound case (TSQ throttles all the
/// time) the two engine modes agree on goodput within 0.5 % (the modes may order a departure
/// and an arrival at the same nanosecond differently, which changes a handful of packets;
/// `link.rs`), and on the number of throttles within 2 %: a count of ≈ 46,000 discrete events
/// each of which a one-nanosecond reordering can split or merge (measured: 0.6 %).
#[test]
fn tsq_works_alike_with_the_evented_fifo() {
    let cfg = nic_bound(HostConfig::default()).build();
    let modes = [true, false].map(|analytic| {
        Simulation::with_options(
            cfg.clone(),
            cclab_sim::EngineOptions {
                analytic_fifo: analytic,
                ..cclab_sim::EngineOptions::default()
            },
        )
        .unwrap()
        .run()
    });
    let (a, e) = (&modes[0], &modes[1]);
    let close = |x: f64, y: f64| (x / y - 1.0).abs() <= 0.005;
    eprintln!("analytic {:?}\nevented {:?}", a.engine, e.engine);
    assert!(close(
        a.flows[0].summary.goodput_bps,
        e.flows[0].summary.goodput_bps
    ));
    let (ta, te) = (
        u64_to_f64(a.engine.tsq_throttles),
        u64_to_f64(e.engine.tsq_throttles),
    );
    assert!((ta / te - 1.0).abs() <= 0.02, "{ta} vs {te}");
    assert!(a.engine.tsq_throttles > 1000);
    // fq feeds the NIC when its transmitter drains, which both modes know: an unpaced and a
    // paced flow through fq on NIC-bound hosts, and a ping, agree within 0.5 % too.
    let mut d = nic_bound(HostConfig {
        qdisc: HostQdisc::Fq(FqConfig::default()),
        ..HostConfig::default()
    });
    d.add_flow(cubic(), Dur::from_millis(5)).pacing = PacingMode::On;
    d.add_ping(Dur::from_millis(100));
    let cfg = d.build();
    let modes = [true, false].map(|analytic| {
        Simulation::with_options(
            cfg.clone(),
            cclab_sim::EngineOptions {
                analytic_fifo: analytic,
                ..cclab_sim::EngineOptions::default()
            },
        )
        .unwrap()
        .run()
    });
    for (fa, fe) in modes[0].flows.iter().zip(&modes[1].flows) {
        let (x, y) = (fa.summary.goodput_bps, fe.summary.goodput_bps);
        assert!(close(x, y), "{}: {x} vs {y}", fa.name);
    }
    assert_eq!(
        modes[0].probes[0].summary.answered,
        modes[1].probes[0].summary.answered
    );
}

/// Out-of-range host settings are `ConfigError`s, never panics.
#[test]
fn bad_host_configs_are_errors() {
    let cpu = |timeslice_ms: u64, share: f64| CpuSchedule {
        timeslice: Dur::from_millis(timeslice_ms),
        share,
        offset: Dur::ZERO,
    };
    let fq = |c: FqConfig| HostQdisc::Fq(c);
    let bad: Vec<(&str, HostConfig)> = vec![
        (
            "shift 32",
            HostConfig {
                pacing_shift: 32,
                ..HostConfig::default()
            },
        ),
        (
            "shift 255",
            HostConfig {
                pacing_shift: 255,
                ..HostConfig::default()
            },
        ),
        (
            "limit 0",
            HostConfig {
                limit_output_bytes: 0,
                ..HostConfig::default()
            },
        ),
        (
            "share 0",
            HostConfig {
                cpu: Some(cpu(10, 0.0)),
                ..HostConfig::default()
            },
        ),
        (
            "share > 1",
            HostConfig {
                cpu: Some(cpu(10, 1.5)),
                ..HostConfig::default()
            },
        ),
        (
            "share NaN",
            HostConfig {
                cpu: Some(cpu(10, f64::NAN)),
                ..HostConfig::default()
            },
        ),
        (
            "share < 0",
            HostConfig {
                cpu: Some(cpu(10, -0.3)),
                ..HostConfig::default()
            },
        ),
        (
            "share tiny",
            HostConfig {
                cpu: Some(cpu(10, 1e-300)),
                ..HostConfig::default()
            },
        ),
        (
            "timeslice 0",
            HostConfig {
                cpu: Some(cpu(0, 0.5)),
                ..HostConfig::default()
            },
        ),
        (
            "fq limit 0",
            HostConfig {
                qdisc: fq(FqConfig {
                    limit: 0,
                    ..FqConfig::default()
                }),
                ..HostConfig::default()
            },
        ),
        (
            "fq flow_limit 0",
            HostConfig {
                qdisc: fq(FqConfig {
                    flow_limit: 0,
                    ..FqConfig::default()
                }),
                ..HostConfig::default()
            },
        ),
        (
            "fq quantum 0",
            HostConfig {
                qdisc: fq(FqConfig {
                    quantum: 0,
                    ..FqConfig::default()
                }),
                ..HostConfig::default()
            },
        ),
        (
            "fq horizon 0",
            HostConfig {
                qdisc: fq(FqConfig {
                    horizon: Dur::ZERO,
                    ..FqConfig::default()
                }),
                ..HostConfig::default()
            },
        ),
    ];
    let mut tso_small = HostConfig::default();
    tso_small.tso.gso_max_size = 300;
    let mut tso_floor = HostConfig::default();
    tso_floor.tso.min_tso_segs = 0;
    let bad = bad.into_iter().chain([
        ("gso_max_size 300", tso_small),
        ("min_tso_segs 0", tso_floor),
    ]);
    for (what, host) in bad {
        let mut d = Dumbbell::new(10_000_000, Dur::from_millis(10), QueueLimit::Packets(100));
        d.sender_host = host;
        d.add_flow(cubic(), Dur::ZERO);
        match Simulation::new(d.build()) {
            Err(ConfigError::Invalid { what: w, problem }) => {
                assert!(w.contains("host"), "{what}: {w}: {problem}");
            }
            other => panic!("{what}: expected an error, got {:?}", other.map(|_| ())),
        }
    }
    // fq needs one egress link: a host with two ways out, used by different routes.
    let mut cfg = shared_nic(HostQdisc::Fq(FqConfig::default()));
    cfg.links.push(LinkConfig {
        name: "a->b2".into(),
        from: NodeId(0),
        to: NodeId(3),
        rate_bps: Some(10_000_000),
        rate_shape: None,
        delay: Dur::from_millis(1),
        delay_changes: Vec::new(),
        jitter: None,
        queue: QueueConfig::DropTail {
            limit: QueueLimit::Packets(10),
        },
        loss: LossConfig::None,
        monitor: false,
    });
    assert!(matches!(
        Simulation::new(cfg),
        Err(ConfigError::Invalid { .. })
    ));
}
