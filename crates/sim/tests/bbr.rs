//! Behavioural tests of BBRv1 and BBRv3 in the whole simulator, against the Linux rules and the
//! BBR draft (draft-ietf-ccwg-bbr) and the properties the BBR issue requires.
//!
//! Every test states its tolerance and why. Paths are dumbbells with the default 1448-byte
//! payload (1500-byte packets) and Linux host defaults (TSQ, TSO, pfifo_fast, 10 Gbit/s NIC).

#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use cclab_cc::num::{f64_to_u32, u64_to_f64};
use cclab_cc::{Bbr3Config, CcSpec, Dur, Tas};
use cclab_sim::topology::Dumbbell;
use cclab_sim::{CpuSchedule, FlowResult, LossConfig, QueueLimit, Results, Simulation, TracePoint};

mod common;
use common::{goodput_between, jain};

const WIRE: u64 = 1500;

fn run(d: &Dumbbell) -> Results {
    Simulation::new(d.build()).expect("valid config").run()
}

fn spec(name: &str) -> CcSpec {
    CcSpec::default_for(name).expect("listed controller")
}

fn bdp_packets(rate: u64, rtt: Dur) -> f64 {
    u64_to_f64(Dumbbell::bdp_bytes(rate, rtt)) / u64_to_f64(WIRE)
}

/// The controller states of a trace with consecutive repeats removed, each with the time it was
/// entered.
fn state_runs(trace: &[TracePoint]) -> Vec<(&'static str, f64)> {
    let mut out: Vec<(&'static str, f64)> = Vec::new();
    for p in trace {
        if out.last().is_none_or(|(s, _)| *s != p.cc_state) {
            out.push((p.cc_state, p.t_s));
        }
    }
    out
}

/// Packet-timed round trips (BBR's definition: a round ends when a segment sent after the
/// previous round ended is acknowledged), counted on the trace up to time `t`.
fn rounds_until(trace: &[TracePoint], t: f64) -> u32 {
    let mut rounds = 0;
    let mut round_end = None;
    for p in trace.iter().take_while(|p| p.t_s <= t) {
        match round_end {
            None => round_end = Some(p.snd_nxt),
            Some(end) if p.snd_una >= end => {
                rounds += 1;
                round_end = Some(p.snd_nxt);
            }
            _ => {}
        }
    }
    rounds
}

/// One traced BBR flow alone on 100 Mbit/s with a base RTT of 40 ms and a 1-BDP buffer.
fn single(cc: CcSpec, secs: u64) -> (Results, f64) {
    let rate = 100_000_000;
    let rtt = Dur::from_millis(40);
    let bdp = bdp_packets(rate, rtt);
    let mut d = Dumbbell::new(
        rate,
        Dur::from_millis(20),
        QueueLimit::Packets(f64_to_u32(bdp)),
    );
    d.duration = Dur::from_secs(secs);
    d.add_flow(cc, Dur::ZERO).trace = true;
    (run(&d), bdp)
}

#[test]
fn bbr3_startup_and_drain_follow_the_spec() {
    let (r, bdp) = single(spec("bbr3"), 4);
    let trace = &r.flows[0].trace;
    let runs = state_runs(trace);
    eprintln!("{runs:?}");
    assert_eq!(runs[0].0, "Startup");
    assert_eq!(runs[1].0, "Drain", "Startup must end in Drain: {runs:?}");
    // Startup leaves within ⌈log2(BDP/IW)⌉ + 4 rounds (the bound): doubling from IW 10
    // reaches the BDP in ⌈log2(333/10)⌉ = 6 rounds, then 3 rounds without 25 % growth are
    // needed to detect the plateau, plus one for the packet-timed round boundary.
    let bound = f64_to_u32((bdp / 10.0).log2().ceil()) + 4;
    let startup_rounds = rounds_until(trace, runs[1].1);
    eprintln!(
        "Startup: {startup_rounds} rounds (bound {bound}), left at {:.3} s",
        runs[1].1
    );
    assert!(startup_rounds <= bound, "{startup_rounds} rounds > {bound}");
    // Drain ends (Linux `bbr_check_drain`) once the packets in the network at the next departure
    // are at most inflight(max_bw, 1.0): the BDP plus the quantization budget of 3 TSO goals
    // (Linux `bbr_quantization_budget`, `bbr_tso_segs_goal`: ≈ 1 ms of data each at 100 Mbit/s
    // ≈ 8 segments), so at most BDP + 3·9 + 2 segments. At the first ProbeBW ACK in flight may
    // have grown by the segments that ACK released (≤ 2 per ACK with delayed ACKs) on top of that.
    assert!(runs[2].0.starts_with("ProbeBW"), "{runs:?}");
    let first_probe_bw = trace
        .iter()
        .find(|p| p.cc_state.starts_with("ProbeBW"))
        .unwrap();
    let limit = bdp + 3.0 * 9.0 + 2.0 + 2.0;
    eprintln!(
        "in flight at Drain exit: {} (BDP {bdp:.0}, limit {limit:.0})",
        first_probe_bw.in_flight
    );
    assert!(f64::from(first_probe_bw.in_flight) <= limit);
    // Drain itself is short: it only has to empty the queue Startup built (≤ 1 BDP at gain 2.89,
    // drained at 1 − 0.35 of the rate): well under 3 rounds of 40 ms.
    let drain = runs[2].1 - runs[1].1;
    assert!(drain < 0.12 + 1e-9, "Drain lasted {drain:.3} s");
}

/// ProbeRTT entries of a trace: (start, end, largest cwnd while in ProbeRTT).
fn probe_rtt_episodes(trace: &[TracePoint]) -> Vec<(f64, f64, u32)> {
    let mut out = Vec::new();
    let mut cur: Option<(f64, u32)> = None;
    for p in trace {
        match (&mut cur, p.cc_state == "ProbeRTT") {
            (None, true) => cur = Some((p.t_s, p.cwnd)),
            (Some((_, max_cwnd)), true) => *max_cwnd = (*max_cwnd).max(p.cwnd),
            (Some((start, max_cwnd)), false) => {
                out.push((*start, p.t_s, *max_cwnd));
                cur = None;
            }
            (None, false) => {}
        }
    }
    out
}

#[test]
fn bbr3_probe_rtt_every_five_seconds_at_half_the_bdp() {
    let (r, bdp) = single(spec("bbr3"), 22);
    let eps = probe_rtt_episodes(&r.flows[0].trace);
    eprintln!("ProbeRTT episodes (start, end, max cwnd): {eps:?}");
    // Linux v3 enters ProbeRTT when `probe_rtt_min_us` has not been refreshed for 5 s
    // (`bbr_probe_rtt_win_ms` = 5000); the window restarts when ProbeRTT ends, and a strictly
    // lower RTT sample also restarts it (`bbr_update_min_rtt`), which can postpone an episode.
    // So: the first entry 5 s after the first RTT sample (≈ 40 ms in), each later entry at least
    // 5 s after the previous exit, and at least 3 episodes in 22 s (a postponed window can cost
    // at most one episode in this span).
    assert!((3..=4).contains(&eps.len()), "{eps:?}");
    assert!(
        (5.0..=5.1).contains(&eps[0].0),
        "first ProbeRTT at {:.3} s",
        eps[0].0
    );
    for w in eps.windows(2) {
        let gap = w[1].0 - w[0].1;
        assert!(
            gap >= 5.0 - 1e-3,
            "ProbeRTT {gap:.3} s after the previous one ended"
        );
    }
    // cwnd cap: max(4, BBRv3 `probe_rtt_cwnd_gain` 0.5 · BDP), within 2 % + 1 packet (the bw
    // estimate may exceed the bottleneck rate by the filter's max over noisy samples).
    let cap = (bdp / 2.0).max(4.0);
    assert_episodes_capped(&eps, cap * 1.02 + 1.0);
}

/// Every ProbeRTT episode lasts ≥ 200 ms (`bbr_probe_rtt_mode_ms`) once in flight has fallen to
/// the cap, and not much longer: the fall takes ≤ 1 RTT and the final round ≤ 1 RTT (40 ms
/// each, + 10 ms slack); its largest cwnd is at most `cap`.
fn assert_episodes_capped(eps: &[(f64, f64, u32)], cap: f64) {
    for &(start, end, max_cwnd) in eps {
        let dur = end - start;
        assert!((0.2..=0.29).contains(&dur), "ProbeRTT lasted {dur:.3} s");
        assert!(
            f64::from(max_cwnd) <= cap,
            "ProbeRTT cwnd {max_cwnd} > cap {cap:.1}"
        );
    }
}

#[test]
fn bbr1_probe_rtt_every_ten_seconds_at_four_packets() {
    let (r, _) = single(spec("bbr1"), 32);
    let eps = probe_rtt_episodes(&r.flows[0].trace);
    eprintln!("ProbeRTT episodes (start, end, max cwnd): {eps:?}");
    // BBRv1 enters ProbeRTT when min_rtt has not been refreshed for 10 s (`bbr_min_rtt_win_sec`).
    // A flow keeping no standing queue may refresh min_rtt with an equal-or-lower sample, which
    // postpones the next episode; at most one per 10 s, and at least one in 32 s.
    assert!((1..=3).contains(&eps.len()), "{eps:?}");
    for w in eps.windows(2) {
        let gap = w[1].0 - w[0].0;
        assert!(gap >= 10.0, "ProbeRTT gap {gap:.3} s");
    }
    // BBRv1 `bbr_cwnd_min_target` = 4 packets, exactly.
    assert_episodes_capped(&eps, 4.0);
}

#[test]
fn bbr3_state_sequence_snapshot() {
    let (r, _) = single(spec("bbr3"), 14);
    let runs: Vec<&str> = state_runs(&r.flows[0].trace)
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    eprintln!("{runs:?}");
    // The draft's state machine (§5.1.1) and Linux v3: Startup → Drain → ProbeBW_DOWN →
    // CRUISE → REFILL (one round) → UP → DOWN …, with ProbeRTT every 5 s from wherever the flow
    // is, returning to ProbeBW_DOWN (then immediately CRUISE) since full bandwidth was reached.
    let expected = SNAPSHOT;
    assert_eq!(runs, expected);
}

/// State sequence of one BBRv3 flow over 14 s (100 Mbit/s, 40 ms, 1 BDP). Checked against the
/// spec: REFILL always follows CRUISE and precedes UP; ProbeRTT returns to DOWN. The second
/// ProbeRTT comes at 12.98 s, not 10.26 s: with the receiver's SACK compression an RTT sample
/// near 7.9 s equals the minimum and refreshes the ProbeRTT stamp, which the 5 s interval
/// counts from (so the run is 14 s, no longer 12 s, to include it).
const SNAPSHOT: &[&str] = &[
    "Startup",
    "Drain",
    "ProbeBW_DOWN",
    "ProbeBW_CRUISE",
    "ProbeBW_REFILL",
    "ProbeBW_UP",
    "ProbeBW_DOWN",
    "ProbeBW_CRUISE",
    "ProbeRTT",
    // `bbr_exit_probe_rtt`: DOWN and CRUISE are entered in the same call, so no ACK sees DOWN.
    "ProbeBW_CRUISE",
    "ProbeBW_REFILL",
    "ProbeBW_UP",
    "ProbeBW_DOWN",
    "ProbeBW_CRUISE",
    "ProbeBW_REFILL",
    "ProbeBW_UP",
    "ProbeBW_DOWN",
    "ProbeBW_CRUISE",
    "ProbeBW_REFILL",
    "ProbeBW_UP",
    "ProbeBW_DOWN",
    "ProbeRTT",
    "ProbeBW_CRUISE",
];

/// Median queueing delay seen by a ping with 5-BDP buffer, ms, and the flow's utilisation.
fn deep_buffer(cc: CcSpec) -> (f64, f64) {
    let rate = 50_000_000;
    let rtt = Dur::from_millis(40);
    let bdp = bdp_packets(rate, rtt);
    let mut d = Dumbbell::new(
        rate,
        Dur::from_millis(20),
        QueueLimit::Packets(f64_to_u32(5.0 * bdp)),
    );
    d.duration = Dur::from_secs(30);
    d.add_flow(cc, Dur::ZERO);
    d.add_ping(Dur::from_millis(100)).start = cclab_cc::Time(Dur::from_secs(5).as_nanos());
    let r = run(&d);
    let ping = &r.probes[0].summary;
    let queueing = ping.rtt_p50_ms.unwrap() - 40.0;
    let util = goodput_between(&r.flows[0], 5.0, 30.0) / u64_to_f64(rate);
    (queueing, util)
}

#[test]
fn bbr_keeps_a_deep_buffer_nearly_empty_where_cubic_fills_it() {
    let (cubic_q, cubic_u) = deep_buffer(spec("cubic"));
    let (v1_q, v1_u) = deep_buffer(spec("bbr1"));
    let (v3_q, v3_u) = deep_buffer(spec("bbr3"));
    eprintln!(
        "median queueing delay / utilisation: cubic {cubic_q:.1} ms {cubic_u:.3}, bbr1 {v1_q:.1} \
         ms {v1_u:.3}, bbr3 {v3_q:.1} ms {v3_u:.3}"
    );
    // The criterion: BBR's median queueing delay below one base RTT (40 ms) while CUBIC
    // fills the buffer (5 BDP = 200 ms of queue; CUBIC sawtooths between 0.7·W and W with
    // W ≈ 6 BDP, so its median queue is above 2 BDP = 80 ms).
    assert!(v1_q < 40.0 && v3_q < 40.0);
    assert!(cubic_q > 80.0);
    // And both BBRs still fill the pipe (ProbeRTT costs ≈ 2–4 %).
    assert!(v1_u > 0.9 && v3_u > 0.9, "bbr1 {v1_u:.3}, bbr3 {v3_u:.3}");
}

/// Utilisation of one flow on 50 Mbit/s, 40 ms, 1 BDP, with Bernoulli loss `p` on the
/// bottleneck, over 10–40 s.
fn lossy_utilisation(cc: CcSpec, p: f64) -> f64 {
    let rate = 50_000_000;
    let mut d = Dumbbell::new(
        rate,
        Dur::from_millis(20),
        QueueLimit::Packets(f64_to_u32(bdp_packets(rate, Dur::from_millis(40)))),
    );
    d.duration = Dur::from_secs(40);
    d.loss = LossConfig::Bernoulli { p };
    d.add_flow(cc, Dur::ZERO);
    goodput_between(&run(&d).flows[0], 10.0, 40.0) / u64_to_f64(rate)
}

#[test]
fn random_loss_one_percent_orders_bbr1_above_bbr3_above_cubic() {
    let cubic = lossy_utilisation(spec("cubic"), 0.01);
    let v1 = lossy_utilisation(spec("bbr1"), 0.01);
    let v3 = lossy_utilisation(spec("bbr3"), 0.01);
    eprintln!("utilisation at 1 % loss: cubic {cubic:.3}, bbr3 {v3:.3}, bbr1 {v1:.3}");
    // BBRv1 has no loss response outside recovery's packet conservation: ≥ 90 % (issue).
    assert!(v1 >= 0.9, "bbr1 {v1:.3}");
    // BBRv3 responds to loss rates above 2 % only, but 1 % random loss still cuts its short-term
    // bounds in lossy rounds: it sits between CUBIC (Mathis: ≈ 1.2·MSS/(RTT·√p) ≈ 3.5 Mbit/s,
    // 7 %) and BBRv1.
    assert!(
        cubic < v3 && v3 <= v1 + 0.01,
        "cubic {cubic:.3} bbr3 {v3:.3} bbr1 {v1:.3}"
    );
}

#[test]
fn two_bbr3_flows_converge_within_thirty_seconds() {
    let rate = 50_000_000;
    let mut d = Dumbbell::new(
        rate,
        Dur::from_millis(20),
        QueueLimit::Packets(f64_to_u32(bdp_packets(rate, Dur::from_millis(40)))),
    );
    d.duration = Dur::from_secs(40);
    d.add_flow(spec("bbr3"), Dur::ZERO);
    d.add_flow(spec("bbr3"), Dur::ZERO).start = cclab_cc::Time(Dur::from_secs(2).as_nanos());
    let r = run(&d);
    let g: Vec<f64> = r
        .flows
        .iter()
        .map(|f| goodput_between(f, 30.0, 40.0))
        .collect();
    let j = jain(&g);
    eprintln!("goodputs over 30–40 s: {g:?}, Jain {j:.4}");
    // The criterion: Jain ≥ 0.9 within 30 s.
    assert!(j >= 0.9, "Jain {j:.4}");
    // And together they fill the link (≥ 90 %: ProbeRTT and DOWN phases cost a few percent).
    assert!(g.iter().sum::<f64>() > 0.9 * u64_to_f64(rate));
}

#[test]
fn bbr_tas_changes_only_the_pacing_shift() {
    // With TAS shifts equal to the host's shift (10/10) BBR-TAS is BBRv3 bit for bit.
    let tas = CcSpec::Bbr3(Bbr3Config {
        tas: Some(Tas {
            startup_shift: 10,
            steady_shift: 10,
        }),
        ..Bbr3Config::default()
    });
    let (a, _) = single(spec("bbr3"), 6);
    let (b, _) = single(tas, 6);
    assert_eq!(a.flows[0].summary, b.flows[0].summary);
    assert_eq!(a.flows[0].trace, b.flows[0].trace);
}

/// Last value of a controller statistic in a flow's series.
fn last_stat(f: &FlowResult, key: &str) -> f64 {
    f.series
        .cc_stats
        .get(key)
        .and_then(|v| v.iter().rev().find_map(|x| *x))
        .unwrap_or_else(|| panic!("{} reports no `{key}`", f.controller))
}

/// Utilisation over 5–20 s of one flow on 100 Mbit/s, 20 ms RTT, 1 BDP, from a sender that
/// runs `timeslice` out of every `timeslice / share` (the CPU-contention model of the 2BRobust
/// paper, Elmenhorst & Aschenbruck, arXiv:2601.05665), and the flow.
fn cpu_limited(cc: CcSpec, share: f64, timeslice: Dur) -> (f64, FlowResult) {
    let rate = 100_000_000;
    let mut d = Dumbbell::new(
        rate,
        Dur::from_millis(10),
        QueueLimit::Packets(f64_to_u32(bdp_packets(rate, Dur::from_millis(20)))),
    );
    d.duration = Dur::from_secs(20);
    d.add_flow(cc, Dur::ZERO);
    let mut host = d.sender_host.clone();
    host.cpu = Some(CpuSchedule {
        timeslice,
        share,
        offset: Dur::ZERO,
    });
    d.set_flow_host(0, host);
    let r = run(&d);
    let f = r.flows[0].clone();
    (goodput_between(&f, 5.0, 20.0) / u64_to_f64(rate), f)
}

#[test]
fn cpu_contention_spirals_bbr_down_and_2brobust_holds_above_its_gain_limit() {
    let slice = Dur::from_millis(10);
    let u = |cc: &str, share: f64| cpu_limited(spec(cc), share, slice);
    // 30 % share, the case.
    let (cubic30, _) = u("cubic", 0.3);
    let (v3_30, f3) = u("bbr3", 0.3);
    let (r3_30, fr3) = u("bbr3_2brobust", 0.3);
    // 40 % share: above 1/2.77 = 36 %, the share at which Startup-gain pacing can still send in
    // the host's timeslices what the path delivers in a whole period.
    let (cubic40, _) = u("cubic", 0.4);
    let (v3_40, _) = u("bbr3", 0.4);
    let (r3_40, fr3_40) = u("bbr3_2brobust", 0.4);
    // BBRv1 at 60 %: plain v1 collapses below ≈ 70 %, the published threshold.
    let (v1_60, _) = u("bbr1", 0.6);
    let (r1_60, _) = u("bbr1_2brobust", 0.6);
    eprintln!(
        "utilisation, 10 ms slices: 30 %: cubic {cubic30:.3} bbr3 {v3_30:.3} bbr3+2BRobust \
         {r3_30:.3} ({} activations); 40 %: cubic {cubic40:.3} bbr3 {v3_40:.3} bbr3+2BRobust \
         {r3_40:.3} ({} activations); 60 %: bbr1 {v1_60:.3} bbr1+2BRobust {r1_60:.3}",
        last_stat(&fr3, "robust_activations"),
        last_stat(&fr3_40, "robust_activations"),
    );
    // The downward spiral (2BRobust paper): while descheduled nothing is sent, so a sender
    // pacing at gain g for a fraction s of the time delivers g·s of its estimate; every
    // delivery-rate sample spans whole periods (ACKs wait in the NIC), so with g·s < 1 the
    // estimate, and the pacing rate with it, fall round after round. At 30 % BBRv3 ends far below
    // CUBIC (unpaced, it sends its whole window in each timeslice): under a fifth of it.
    assert!(
        v3_30 < 0.2 * cubic30,
        "bbr3 {v3_30:.3} vs cubic {cubic30:.3}"
    );
    assert_eq!(last_stat(&f3, "robust_activations"), 0.0);
    // 2BRobust boosts (it activates), but at 30 % even the Startup gain gives 2.77·0.3 < 1: it
    // cannot hold the rate either. This is the published limit of the patch ("robust for CPU
    // time shares of 35 % and higher" with 10 ms timeslices); it must not do worse than BBRv3.
    assert!(last_stat(&fr3, "robust_activations") > 0.0);
    assert!(
        r3_30 >= v3_30,
        "2BRobust {r3_30:.3} below bbr3 {v3_30:.3} at 30 %"
    );
    // Above that limit it recovers a large part of what BBRv3 loses: BBRv3 stays collapsed
    // (under a tenth of CUBIC) while 2BRobust reaches at least 40 % of CUBIC's throughput and at
    // least ten times BBRv3's.
    assert!(
        v3_40 < 0.1 * cubic40,
        "bbr3 {v3_40:.3} vs cubic {cubic40:.3} at 40 %"
    );
    assert!(
        r3_40 >= 0.4 * cubic40 && r3_40 >= 10.0 * v3_40,
        "2BRobust {r3_40:.3} vs bbr3 {v3_40:.3}, cubic {cubic40:.3} at 40 %"
    );
    // On BBRv1 (boost gain 2.885): plain v1 collapses at 60 % (< 0.2), 2BRobust holds ≥ 0.7.
    assert!(
        v1_60 < 0.2 && r1_60 >= 0.7,
        "bbr1 {v1_60:.3}, bbr1+2BRobust {r1_60:.3} at 60 %"
    );
}

#[test]
fn bbr_tas_shift_in_force_follows_the_state() {
    let tas = CcSpec::Bbr3(Bbr3Config {
        tas: Some(Tas {
            startup_shift: 7,
            steady_shift: 9,
        }),
        ..Bbr3Config::default()
    });
    let (r, _) = single(tas, 12);
    // Results name the variant as the scenario does.
    assert_eq!(r.flows[0].controller, "bbr_tas");
    let trace = &r.flows[0].trace;
    let mut seen = std::collections::BTreeSet::new();
    for p in trace {
        // BBR-TAS: startup_shift in Startup and Drain, steady_shift in ProbeBW and ProbeRTT, at
        // every event, exactly.
        let want = if matches!(p.cc_state, "Startup" | "Drain") {
            7
        } else {
            9
        };
        assert_eq!(p.tsq_shift, want, "{} at {:.6} s", p.cc_state, p.t_s);
        // The budget in force follows: max(2 skbs, pacing_rate >> shift).
        if let (Some(budget), Some(rate)) = (p.tsq_budget, p.sk_pacing_rate) {
            assert!(
                budget >= rate >> want,
                "budget {budget} < rate {rate} >> {want}"
            );
        }
        seen.insert(p.cc_state);
    }
    assert!(seen.contains("Startup") && seen.contains("Drain") && seen.contains("ProbeRTT"));
    // With TSO, an autosized skb is ≈ pacing_rate >> shift bytes (BBRv3's `tso_segs` uses the
    // shift in force), so the 2-skb floor of `tcp_small_queue_check` usually sets the budget.
    // With startup_shift 7 BBRv3's TSO goal is capped at 64 KB (gso_max_size) while
    // rate >> 7 keeps growing, so in Startup the rate term takes over; at shift 10 (plain BBRv3)
    // it never does on this path. So the smaller shift really enlarges the budget.
    let (plain, _) = single(spec("bbr3"), 1);
    let startup_rate_term = |tr: &[TracePoint], shift: u8| {
        tr.iter()
            .filter(|p| p.cc_state == "Startup")
            .filter_map(|p| Some((p.sk_pacing_rate? >> shift, p.tsq_budget?)))
            .find(|(term, budget)| term == budget)
    };
    let a = startup_rate_term(trace, 7);
    let b = startup_rate_term(&plain.flows[0].trace, 10);
    eprintln!("first Startup budgets set by the rate term: TAS {a:?}, BBRv3 {b:?}");
    assert!(
        b.is_none(),
        "at shift 10 the 2-skb floor should dominate: {b:?}"
    );
    assert!(
        a.is_some(),
        "the rate term never sets the TAS budget in Startup"
    );
}

#[test]
fn a_full_cpu_share_is_the_unscheduled_host_bit_for_bit() {
    let rate = 100_000_000;
    let mut d = Dumbbell::new(rate, Dur::from_millis(10), QueueLimit::Packets(166));
    d.duration = Dur::from_secs(8);
    d.add_flow(spec("bbr3"), Dur::ZERO).trace = true;
    let plain = run(&d);
    let mut host = d.sender_host.clone();
    host.cpu = Some(CpuSchedule {
        timeslice: Dur::from_millis(10),
        share: 1.0,
        offset: Dur::ZERO,
    });
    d.set_flow_host(0, host);
    let scheduled = run(&d);
    assert_eq!(plain.flows, scheduled.flows);
    assert_eq!(plain.queues, scheduled.queues);
}
