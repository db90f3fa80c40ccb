//! Behavioural tests of the whole simulator against theory and RFC rules.
//!
//! Every test states its tolerance and why. Paths are built with the `Dumbbell` builder; packet
//! sizes are the defaults (1448-byte payload, 1500-byte IP packet).

#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use cclab_cc::num::{f64_to_u64, u64_to_f64, usize_to_f64};
use cclab_cc::{CcSpec, CubicConfig, Dur, SlowStartKind, Time};
use cclab_sim::topology::Dumbbell;
use cclab_sim::{FlowId, FlowResult, LossConfig, QueueLimit, Results, ScriptedDrop, Simulation};

mod common;
use common::{goodput_between, jain};

const MSS: f64 = 1448.0;
const WIRE: u64 = 1500;

fn run(d: &Dumbbell) -> Results {
    Simulation::new(d.build()).expect("valid config").run()
}

fn cubic() -> CcSpec {
    CcSpec::default_for("cubic").unwrap()
}

fn cubic_with(ss: SlowStartKind) -> CcSpec {
    CcSpec::Cubic(CubicConfig {
        slow_start: ss,
        ..CubicConfig::default()
    })
}

fn newreno() -> CcSpec {
    CcSpec::default_for("newreno").unwrap()
}

fn reno() -> CcSpec {
    CcSpec::default_for("reno").unwrap()
}

/// Goodput after `warmup` s of one bulk flow on a path of `rtt` with Bernoulli loss `p` and a
/// buffer far larger than the window (so the RTT stays the base RTT).
fn lossy_goodput(cc: CcSpec, rate: u64, rtt: Dur, p: f64, secs: u64, warmup: f64) -> f64 {
    let mut d = Dumbbell::new(rate, Dur(rtt.0 / 2), QueueLimit::Packets(100_000));
    d.duration = Dur::from_secs(secs);
    d.loss = LossConfig::Bernoulli { p };
    d.add_flow(cc, Dur::ZERO);
    let r = run(&d);
    goodput_between(&r.flows[0], warmup, u64_to_f64(secs))
}

/// Relative error of `got` against `model`, printed, and checked against `tolerance`.
fn check_model(label: &str, got: f64, model: f64, tolerance: f64) {
    let err = got / model - 1.0;
    eprintln!("{label}: {got:.0} bit/s vs model {model:.0} ({err:+.3})");
    assert!(
        err.abs() <= tolerance,
        "{label}: {got:.0} bit/s vs model {model:.0} ({err:+.3})"
    );
}

fn bdp_packets(rate: u64, rtt: Dur) -> u32 {
    u32::try_from(Dumbbell::bdp_bytes(rate, rtt) / WIRE).expect("a queue in packets")
}

#[test]
fn same_seed_is_bit_identical_and_another_seed_differs() {
    let mut d = Dumbbell::new(20_000_000, Dur::from_millis(10), QueueLimit::Packets(100));
    d.duration = Dur::from_secs(10);
    d.loss = LossConfig::Bernoulli { p: 0.005 };
    d.add_flow(cubic(), Dur::from_millis(5));
    d.add_flow(newreno(), Dur::from_millis(15));
    d.add_ping(Dur::from_millis(200));
    let a = run(&d);
    let b = run(&d);
    assert_eq!(a, b, "same seed must reproduce exactly");
    d.seed = 2;
    let c = run(&d);
    assert_ne!(
        a.flows[0].summary, c.flows[0].summary,
        "loss draws depend on the seed"
    );
}

/// RFC 9438 §4.2 / Linux `bictcp_update`: after a reduction from W_max the window returns to
/// W_max after K = ∛(W_max·(1−β)/C) seconds; a single flow through a drop-tail FIFO loses again
/// there, so the loss period is close to K. Fast convergence is off for the period check: with
/// it, a loss at a window a few segments below the previous W_max (the window keeps growing for
/// the RTT it takes to detect a drop) lowers W_max to 0.85·cwnd, and single-flow loss periods
/// alternate between ≈K and ≈2K (`fast_convergence_makes_single_flow_periods_alternate` below).
#[test]
fn single_cubic_flow_fills_the_link_and_its_loss_period_matches_k() {
    let rate = 100_000_000;
    let rtt = Dur::from_millis(40);
    let bdp = bdp_packets(rate, rtt);
    assert_eq!(bdp, 333);
    let mut d = Dumbbell::new(rate, Dur::from_millis(20), QueueLimit::Packets(bdp));
    d.duration = Dur::from_secs(30);
    d.add_flow(
        CcSpec::Cubic(CubicConfig {
            slow_start: SlowStartKind::HyStart,
            fast_convergence: false,
            ..CubicConfig::default()
        }),
        Dur::ZERO,
    );
    let r = run(&d);
    let q = &r.queues[0];
    // Utilisation over the run after slow start (from 2 s): with a 1-BDP buffer and β = 0.7 the
    // queue never drains, so the link should be essentially always busy; 95 % per the issue.
    let util = q
        .series
        .t_s
        .iter()
        .zip(&q.series.throughput_bps)
        .filter(|(t, _)| **t > 2.0)
        .map(|(_, b)| *b)
        .sum::<f64>()
        / usize_to_f64(q.series.t_s.iter().filter(|t| **t > 2.0).count())
        / u64_to_f64(rate);
    eprintln!("single CUBIC: utilisation {util:.4}");
    assert!(util >= 0.95, "utilisation {util}");
    // Queue delay within [0, buffer]: 333 packets of 1500 B at 100 Mbit/s = 39.96 ms.
    let max_delay = q.summary.delay_max_ms.unwrap();
    let buffer_ms = f64::from(bdp) * 1500.0 * 8.0 / u64_to_f64(rate) * 1e3;
    assert!(
        max_delay <= buffer_ms + 1e-6,
        "max sojourn {max_delay} ms > buffer {buffer_ms} ms"
    );
    assert!(
        q.summary.drops > 0,
        "CUBIC must probe until the buffer overflows"
    );

    // Loss epochs: samples where cwnd fell by more than 20 % (β = 0.7 cuts it by 30 %).
    let f = &r.flows[0];
    let cw = &f.series.cwnd;
    let t = &f.series.t_s;
    let epochs: Vec<usize> = (1..cw.len())
        .filter(|&i| f64::from(cw[i]) < 0.8 * f64::from(cw[i - 1]) && t[i] > 2.0)
        .collect();
    assert!(
        epochs.len() >= 3,
        "need at least three loss epochs, got {epochs:?}"
    );
    let c = 0.4;
    let beta = 717.0 / 1024.0;
    for w in epochs.windows(2) {
        let (a, b) = (w[0], w[1]);
        // W_max of epoch a is the window at the loss that started it (fast convergence is off).
        let w_max = f64::from(cw[a - 1]);
        let k = (w_max * (1.0 - beta) / c).cbrt();
        // Loss detected somewhere in (t[a-1], t[a]]: take the middle.
        let epoch_start = t[a] - 0.1;
        // Invert W(t) = C·(t − K)³ + W_max on the concave part, away from the flat plateau
        // (W_max − W ≥ 20 segments) where a one-segment error moves the estimate by seconds.
        let ks: Vec<f64> = (a..b)
            .filter(|&i| w_max - f64::from(cw[i]) >= 20.0)
            .map(|i| (t[i] - epoch_start) + ((w_max - f64::from(cw[i])) / c).cbrt())
            .collect();
        assert!(
            ks.len() >= 5,
            "too few concave samples in epoch at {}",
            t[a]
        );
        let k_fit = ks.iter().sum::<f64>() / usize_to_f64(ks.len());
        eprintln!(
            "CUBIC epoch at {:.1} s: W_max {w_max}, K {k:.2} s, fitted K {k_fit:.2} s, period {:.2} s",
            t[a],
            t[b] - t[a]
        );
        // ±15 % per the issue; the fit itself has ±0.1 s of epoch-start uncertainty (1.3 %).
        assert!(
            (k_fit / k - 1.0).abs() <= 0.15,
            "epoch at {}: fitted K {k_fit:.2} s vs {k:.2} s",
            t[a]
        );
        // The loss period is K shortened by the plateau: the buffer overflows at the pipe
        // capacity, a few segments below the W_max recorded one RTT after the drop, and the cubic
        // is flat there (W_max − 4 segments is reached ≈ 2 s before K at K ≈ 8 s). So the period
        // lies in [0.7·K, 1.15·K].
        let period = t[b] - t[a];
        assert!(
            (0.7..=1.15).contains(&(period / k)),
            "period {period:.2} s vs K {k:.2} s"
        );
        // Concave then convex: growth in the first quarter of the epoch exceeds growth around K.
        let n = b - a;
        let early = f64::from(cw[a + n / 4]) - f64::from(cw[a]);
        let ik = a + usize::try_from(f64_to_u64(k / 0.2))
            .expect("an index")
            .min(n - 2);
        let around_k =
            f64::from(cw[(ik + 2).min(b - 1)]) - f64::from(cw[ik.saturating_sub(2).max(a)]);
        assert!(
            early > 2.0 * around_k,
            "concave: early growth {early} vs growth around K {around_k}"
        );
    }
}

/// Mathis, Semke, Mahdavi, Ott (1997): throughput = MSS/RTT · C/√p with C = √(3/(2b)). Linux
/// counts acknowledged segments (not ACKs) when growing cwnd (`tcp_cong_avoid_ai` with `acked`),
/// so delayed ACKs do not slow growth: b = 1, C = √1.5 ≈ 1.22. The base RTT is used: the buffer
/// is far larger than the window, and the window far smaller than the BDP, so no queue forms.
#[test]
fn reno_throughput_follows_mathis() {
    for (p, secs) in [(1e-3, 1200), (1e-2, 600)] {
        let got = lossy_goodput(reno(), 100_000_000, Dur::from_millis(100), p, secs, 20.0);
        let model = MSS * 8.0 / 0.1 * (1.5f64).sqrt() / p.sqrt();
        // ±20 % per the issue: the model ignores timeouts and several losses per window.
        check_model(&format!("Reno p={p}"), got, model, 0.20);
    }
}

/// RFC 9438 §5.1: CUBIC's average window is 1.054·RTT^0.75/p^0.75 segments (C = 0.4, β = 0.7)
/// where it exceeds the Reno-friendly window 1.22/√p. At RTT 0.1 s that needs p < 5.6e-4.
#[test]
fn cubic_throughput_follows_the_rfc9438_response_function() {
    for (p, rtt_ms, secs) in [(1e-4, 100u64, 900u64), (2e-5, 200, 900)] {
        let rtt = Dur::from_millis(rtt_ms);
        let got = lossy_goodput(cubic(), 1_000_000_000, rtt, p, secs, 30.0);
        let rtt_s = rtt.as_secs_f64();
        let w = 1.054 * rtt_s.powf(0.75) / p.powf(0.75);
        assert!(w > 1.22 / p.sqrt(), "test point must lie in CUBIC's region");
        // ±20 % per the issue: the formula assumes periodic (deterministic) loss.
        check_model(
            &format!("CUBIC p={p} rtt={rtt_ms}ms"),
            got,
            w * MSS * 8.0 / rtt_s,
            0.20,
        );
    }
}

/// Two equal-RTT CUBIC flows, the second starting 0.5 s after the first (inside the first one's
/// slow-start overshoot, the hardest case), 20 Mbit/s, 40 ms, 1 BDP. At this BDP CUBIC's epochs
/// are short (K ≈ 3.6 s) and fast convergence equalises the windows within 20 s. At 100 Mbit/s
/// (K ≈ 8 s, a loss event every few seconds hitting one flow at a time) the same pair needs
/// longer than 20 s: Jain over 20–60 s is ≈ 0.92 there (README, Tests).
#[test]
fn two_cubic_flows_share_fairly() {
    let rate = 20_000_000;
    let bdp = bdp_packets(rate, Dur::from_millis(40));
    let mut d = Dumbbell::new(rate, Dur::from_millis(20), QueueLimit::Packets(bdp));
    d.duration = Dur::from_secs(60);
    d.add_flow(cubic(), Dur::ZERO);
    d.add_flow(cubic(), Dur::ZERO).start = Time::ZERO + Dur::from_millis(500);
    let r = run(&d);
    let x: Vec<f64> = r
        .flows
        .iter()
        .map(|f| goodput_between(f, 20.0, 60.0))
        .collect();
    let j = jain(&x);
    eprintln!("two CUBIC: Jain {j:.4} for {x:?}");
    // 0.95 per the issue (equal-RTT CUBIC converges through fast convergence).
    assert!(j >= 0.95, "Jain {j} for {x:?}");
    // Together they fill the link: payload efficiency is 1448/1500 = 96.5 %.
    assert!(x.iter().sum::<f64>() > 0.9 * u64_to_f64(rate), "{x:?}");
}

/// A sized NewReno transfer over a clean 10 Mbit/s, 40 ms path with a deep buffer, with
/// scripted drops and the per-event sender trace on.
fn scripted(drops: &[(u64, u32)], segments: u64) -> FlowResult {
    let mut d = Dumbbell::new(
        10_000_000,
        Dur::from_millis(20),
        QueueLimit::Packets(10_000),
    );
    d.duration = Dur::from_secs(30);
    d.loss = LossConfig::Scripted {
        drops: drops
            .iter()
            .map(|&(seq, nth)| ScriptedDrop {
                flow: FlowId(0),
                seq,
                nth,
            })
            .collect(),
    };
    let f = d.add_flow(newreno(), Dur::ZERO);
    f.size = Some(segments * 1448);
    f.trace = true;
    let r = run(&d);
    let f = r.flows.into_iter().next().unwrap();
    assert!(
        f.summary.complete,
        "every byte must arrive in order: {:?}",
        f.summary
    );
    assert_eq!(f.summary.bytes_delivered, segments * 1448);
    f
}

#[test]
fn one_drop_gives_one_fast_retransmit_and_one_reduction() {
    let f = scripted(&[(60, 0)], 400);
    assert_eq!(f.summary.retransmits, 1);
    assert_eq!(f.summary.fast_recoveries, 1);
    assert_eq!(f.summary.rto_count, 0);
    assert_eq!(f.summary.segments_lost, 1);
}

/// Linux `tcp_may_raise_cwnd`: without reordering, cwnd grows only on ACKs that advance SND.UNA,
/// so the duplicate ACKs (SACKs) that precede fast recovery leave cwnd unchanged.
#[test]
fn duplicate_acks_do_not_grow_cwnd() {
    let f = scripted(&[(60, 0)], 400);
    let tr = &f.trace;
    let first_dup = tr
        .iter()
        .position(|p| p.ca_state == "disorder")
        .expect("SACKs before recovery");
    let entry = tr
        .iter()
        .position(|p| p.ca_state == "recovery")
        .expect("recovery");
    assert!(first_dup < entry);
    let before = tr[first_dup - 1].cwnd;
    for p in &tr[first_dup..entry] {
        assert_eq!(p.cwnd, before, "cwnd moved on a duplicate ACK: {p:?}");
    }
}

/// RFC 6937 (PRR) as Linux `tcp_cwnd_reduction` runs it: one loss in a window of W segments;
/// NewReno's ssthresh is max(W/2, 2) (`tcp_reno_ssthresh`); during recovery the sender sends
/// about ssthresh/W segments per segment delivered, so no burst leaves and, when the recovery
/// point is acknowledged, the flight has shrunk to ssthresh and cwnd = ssthresh
/// (`tcp_end_cwnd_reduction`). Tolerance ±2 segments: PRR rounds up per ACK and the receiver
/// ACKs every second segment.
#[test]
fn prr_brings_the_flight_down_to_ssthresh_during_recovery() {
    let f = scripted(&[(200, 0)], 600);
    let tr = &f.trace;
    let entry = tr
        .iter()
        .position(|p| p.ca_state == "recovery")
        .expect("enters recovery");
    let exit = entry
        + tr[entry..]
            .iter()
            .position(|p| p.ca_state != "recovery")
            .expect("leaves");
    let w = tr[entry - 1].cwnd;
    let ssthresh = tr[entry].ssthresh.expect("finite ssthresh in recovery");
    eprintln!("PRR: W {w}, ssthresh {ssthresh}, recovery rows {entry}..{exit}");
    assert_eq!(ssthresh, (w / 2).max(2), "tcp_reno_ssthresh");
    for p in &tr[entry..exit] {
        // Never more than a couple of segments beyond what is in flight: no burst.
        assert!(
            p.cwnd <= p.in_flight + 2,
            "burst during recovery at {}: {p:?}",
            p.t_s
        );
    }
    let last = &tr[exit - 1];
    assert!(
        last.in_flight.abs_diff(ssthresh) <= 2,
        "flight at the end of recovery {last:?}"
    );
    assert_eq!(tr[exit].cwnd, ssthresh, "cwnd = ssthresh at exit");
    // Sending rate inside recovery ≈ ssthresh / W of the delivery rate.
    let sent = tr[exit - 1].snd_nxt - tr[entry].snd_nxt;
    let delivered = tr[exit].snd_una - tr[entry].snd_una;
    let ratio = u64_to_f64(sent) / u64_to_f64(delivered);
    let expected = f64::from(ssthresh) / f64::from(w);
    eprintln!("PRR: sent/delivered in recovery {ratio:.3} vs ssthresh/W {expected:.3}");
    assert!(
        (ratio - expected).abs() < 0.05,
        "sent/delivered {ratio:.3} vs ssthresh/W {expected:.3}"
    );
}

#[test]
fn a_tail_drop_is_repaired_by_tlp_without_rto() {
    let f = scripted(&[(399, 0)], 400);
    assert_eq!(f.summary.rto_count, 0);
    assert!(f.summary.tlp_count >= 1);
    assert_eq!(f.summary.retransmits, 1);
    // Three tail segments: the probe retransmits the last, its SACK lets RACK mark the others.
    let f = scripted(&[(397, 0), (398, 0), (399, 0)], 400);
    assert_eq!(f.summary.rto_count, 0);
    assert_eq!(f.summary.retransmits, 3);
}

/// Linux `tcp_init_cwnd_reduction` ends a TLP episode: when the probe's SACK triggers fast
/// recovery, the end of that recovery must not count as a second, TLP-repaired loss. Two tail
/// drops, one congestion response.
#[test]
fn a_tlp_that_triggers_recovery_reduces_cwnd_once() {
    let f = scripted(&[(198, 0), (199, 0)], 200);
    assert_eq!(f.summary.rto_count, 0);
    assert!(f.summary.tlp_count >= 1);
    assert_eq!(f.summary.fast_recoveries, 1, "{:?}", f.summary);
}

/// Linux `tcp_enter_loss` takes a new ssthresh only for a new congestion event: an RTO that
/// fires during fast recovery (here the retransmission of a tail segment is lost too, and
/// nothing sent after it can reveal that) keeps the recovery's ssthresh instead of halving the
/// PRR-shrunk window again.
#[test]
fn an_rto_inside_recovery_keeps_the_recovery_ssthresh() {
    let f = scripted(&[(380, 0), (380, 1)], 400);
    let s = &f.summary;
    assert!(s.rto_count == 1 && s.fast_recoveries == 1, "{s:?}");
    let tr = &f.trace;
    let entry = tr
        .iter()
        .find(|p| p.ca_state == "recovery")
        .expect("recovery");
    let rto = tr.iter().find(|p| p.event == "rto").expect("rto");
    assert_eq!(
        rto.ssthresh, entry.ssthresh,
        "RTO in recovery: {rto:?} vs {entry:?}"
    );
    assert_eq!(rto.cwnd, 1);
}

#[test]
fn a_lost_window_needs_rtos_with_exponential_backoff() {
    // Drop segments 100..140 (the whole flight at that point), the probe's retransmission of the
    // last one, and the first RTO retransmission of 100: two RTOs, the second after twice the
    // first's timeout.
    let mut drops: Vec<(u64, u32)> = (100..140).map(|s| (s, 0)).collect();
    drops.push((139, 1));
    drops.push((100, 1));
    let f = scripted(&drops, 140);
    assert_eq!(f.summary.rto_count, 2, "{:?}", f.summary);
    let t = &f.summary.rto_times_s;
    // RTO ≈ SRTT (≈ 40 ms) + max(4·RTTVAR, 200 ms) ≈ 240–300 ms; the second waits twice that.
    let gap = t[1] - t[0];
    eprintln!("RTO times {t:?}: backoff gap {gap:.3} s");
    assert!((0.4..=0.7).contains(&gap), "backoff gap {gap} s");
}

/// The initial window is the first flight (RFC 6928 / Linux `initcwnd`): 30 segments over an
/// empty 100 Mbit/s, 40 ms path arrive within half an RTT plus their serialisation (30 × 0.12 ms)
/// when IW = 32, but need a second round trip (ACK clock) when IW = 10.
#[test]
fn the_initial_window_sets_the_first_flight() {
    let fct = |iw: u32| {
        let mut d = Dumbbell::new(100_000_000, Dur::from_millis(20), QueueLimit::Packets(1000));
        d.duration = Dur::from_secs(2);
        let f = d.add_flow(newreno(), Dur::ZERO);
        f.size = Some(30 * 1448);
        f.initial_window = iw;
        run(&d).flows[0].summary.fct_s.expect("completes")
    };
    let (big, small) = (fct(32), fct(10));
    eprintln!("FCT of 30 segments: IW 32 {big:.4} s, IW 10 {small:.4} s");
    assert!(
        (big - (0.020 + 30.0 * 0.00012)).abs() < 0.001,
        "IW 32: {big}"
    );
    assert!(small > 0.060 && small < 0.070, "IW 10: {small}");
}

/// RFC 9406: HyStart++ leaves slow start on an RTT increase, before the buffer overflows; plain
/// slow start only leaves on loss. The buffer is 10 BDP: CSS still grows the window by
/// (1 + 1/4)^5 ≈ 3× over its 5 rounds after an exit at about 2 BDP (the round in which the
/// queue appears), so the window reaches ≈ 6–7 BDP before congestion avoidance; a shallower
/// buffer overflows during CSS, as RFC 9406 §4.3 accepts.
#[test]
fn hystart_pp_exits_slow_start_before_the_first_loss_and_standard_does_not() {
    let rate = 100_000_000;
    let first = |ss| {
        let mut d = Dumbbell::new(rate, Dur::from_millis(20), QueueLimit::Packets(10 * 333));
        d.duration = Dur::from_secs(20);
        d.add_flow(cubic_with(ss), Dur::ZERO);
        let r = run(&d);
        let s = &r.flows[0].series;
        let exit = s.ssthresh.iter().position(Option::is_some);
        let loss = s.losses.iter().position(|l| *l > 0);
        let css = s.state.iter().position(|st| *st == "css");
        (exit, loss, css)
    };
    let (exit, loss, css) = first(SlowStartKind::HyStartPlusPlus);
    let exit = exit.expect("HyStart++ must leave slow start");
    let css = css.expect("HyStart++ passes through CSS");
    assert!(css < exit, "CSS at {css} before CA at {exit}");
    assert!(
        loss.is_none_or(|l| exit < l),
        "HyStart++ exit {exit:?} vs first loss {loss:?}"
    );
    let (exit, loss, _) = first(SlowStartKind::Standard);
    let loss = loss.expect("standard slow start overflows a 5-BDP buffer");
    assert!(
        exit.is_some_and(|e| e >= loss),
        "standard exit {exit:?} vs first loss {loss:?}"
    );
}
