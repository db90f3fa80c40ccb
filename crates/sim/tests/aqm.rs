//! Queue disciplines and ECN end to end: each AQM against the delay and fairness it is designed
//! to deliver, and the transport's ECN responses.
//!
//! Every test states its tolerance and why. Paths are dumbbells built with the `Dumbbell`
//! builder (1448-byte payload, 1500-byte IP packets); statistics skip the first seconds, where
//! slow start overshoots whatever the queue.

#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use cclab_cc::num::{u64_to_f64, usize_to_f64};
use cclab_cc::{CcSpec, Dur, EcnMode};
use cclab_sim::queue::{
    AqmConfig, CodelParams, DualPi2Params, FqCodelParams, PieParams, RedParams,
};
use cclab_sim::topology::Dumbbell;
use cclab_sim::{QueueLimit, QueueResult, Results, Simulation};

mod common;
use common::{goodput_between, jain};

const WIRE_BITS: f64 = 1500.0 * 8.0;

fn run(d: &Dumbbell) -> Results {
    Simulation::new(d.build()).expect("valid config").run()
}

fn cc(name: &str) -> CcSpec {
    CcSpec::default_for(name).unwrap_or_else(|| panic!("{name} exists"))
}

/// A dumbbell of `mbit` Mbit/s and `rtt_ms` base RTT with `aqm` at the bottleneck (a 5-BDP
/// FIFO if `None`), `secs` long, sampled every 100 ms.
fn path(mbit: u64, rtt_ms: u64, aqm: Option<AqmConfig>, secs: u64) -> Dumbbell {
    let rate = mbit * 1_000_000;
    let rtt = Dur::from_millis(rtt_ms);
    let bdp = Dumbbell::bdp_bytes(rate, rtt);
    let mut d = Dumbbell::new(rate, Dur(rtt.0 / 2), QueueLimit::Bytes(5 * bdp));
    d.aqm = aqm;
    d.duration = Dur::from_secs(secs);
    d.sample_interval = Dur::from_millis(100);
    d
}

/// Mean of the per-interval values of `col` with t in (from, to].
fn mean_between(q: &QueueResult, col: &[f64], from: f64) -> f64 {
    let v: Vec<f64> = q
        .series
        .t_s
        .iter()
        .zip(col)
        .filter(|(t, _)| **t > from + 1e-9)
        .map(|(_, x)| *x)
        .collect();
    v.iter().sum::<f64>() / usize_to_f64(v.len())
}

/// Link utilisation after `from` s: departures over capacity.
fn utilisation(q: &QueueResult, rate_bps: u64, from: f64) -> f64 {
    mean_between(q, &q.series.throughput_bps, from) / u64_to_f64(rate_bps)
}

/// Mean sojourn after `from` s, weighting each interval by its departures (ms).
fn sojourn_mean_after(q: &QueueResult, from: f64) -> f64 {
    let (mut sum, mut n) = (0.0, 0.0);
    for ((t, m), tp) in q
        .series
        .t_s
        .iter()
        .zip(&q.series.sojourn_mean_ms)
        .zip(&q.series.throughput_bps)
    {
        if *t > from + 1e-9
            && let Some(m) = m
        {
            sum += m * tp;
            n += tp;
        }
    }
    sum / n
}

/// CoDel keeps a CUBIC flow's standing queue near its 5 ms target where a 5-BDP FIFO fills to
/// hundreds of ms, and loses little throughput (RFC 8289 §1: "good utilization"). Path: 20
/// Mbit/s, 80 ms RTT (a 5-BDP FIFO holds 400 ms). Bounds from the issue: p50 sojourn ≤ 10 ms
/// (twice the target: CoDel tolerates bursts below one interval), utilisation ≥ 90 %.
#[test]
fn codel_holds_cubic_near_target_at_high_utilisation() {
    let mut fifo = path(20, 80, None, 40);
    fifo.add_flow(cc("cubic"), Dur::ZERO);
    let f = run(&fifo);
    let fq = &f.queues[0];
    let fifo_mean = sojourn_mean_after(fq, 10.0);
    eprintln!(
        "fifo: mean sojourn after 10 s {fifo_mean:.1} ms, p50 {:?}",
        fq.summary.delay_p50_ms
    );
    assert!(fifo_mean > 150.0, "the FIFO reference should bloat");

    let mut d = path(20, 80, Some(AqmConfig::Codel(CodelParams::default())), 40);
    d.add_flow(cc("cubic"), Dur::ZERO);
    let r = run(&d);
    let q = &r.queues[0];
    let util = utilisation(q, 20_000_000, 10.0);
    let p50 = q.summary.delay_p50_ms.unwrap();
    eprintln!(
        "codel: p50 {p50:.2} ms, mean {:.2} ms, util {util:.3}, aqm drops {}",
        q.summary.delay_mean_ms.unwrap(),
        q.summary.aqm_drops
    );
    assert!(p50 <= 10.0, "p50 sojourn {p50:.2} ms");
    assert!(util >= 0.90, "utilisation {util:.3}");
    assert!(q.summary.aqm_drops > 0, "CoDel must have acted");
    assert_eq!(q.summary.drops, q.summary.aqm_drops, "no overflow");
}

/// FQ-CoDel isolates a sparse flow: a ping sharing the bottleneck with 8 CUBIC flows waits at
/// most for the packet in service and one quantum (RFC 8290 §1.2, "sparse flows" get priority),
/// 0.6 ms at 20 Mbit/s; the issue bounds the added delay at p95 by 2 ms. DRR gives the bulk
/// flows equal shares: Jain ≥ 0.98 over 10–40 s.
#[test]
fn fq_codel_isolates_a_ping_and_shares_fairly() {
    let mut d = path(
        20,
        40,
        Some(AqmConfig::FqCodel(FqCodelParams::default())),
        40,
    );
    for _ in 0..8 {
        d.add_flow(cc("cubic"), Dur::ZERO);
    }
    d.add_ping(Dur::from_millis(100));
    let r = run(&d);
    let p = &r.probes[0];
    let mut rtts: Vec<f64> = p
        .t_s
        .iter()
        .zip(&p.rtt_ms)
        .filter(|(t, _)| **t > 10.0)
        .map(|(_, r)| *r)
        .collect();
    rtts.sort_by(f64::total_cmp);
    let p95 = rtts[(rtts.len() * 95).div_ceil(100) - 1];
    // Base RTT of the ping: 40 ms plus its own serialisation on each hop (≪ 0.1 ms).
    let added = p95 - 40.0;
    let shares: Vec<f64> = r
        .flows
        .iter()
        .map(|f| goodput_between(f, 10.0, 40.0))
        .collect();
    let j = jain(&shares);
    eprintln!("fq_codel: ping p95 +{added:.3} ms, Jain {j:.4}, shares {shares:.0?}");
    assert!(added <= 2.0, "ping p95 added delay {added:.3} ms");
    assert!(j >= 0.98, "Jain {j:.4}");
    let util = utilisation(&r.queues[0], 20_000_000, 10.0);
    assert!(util >= 0.95, "8 flows fill the link: {util:.3}");
}

/// PIE steers the queueing delay to its 15 ms reference (RFC 8033 §4.2, Linux 15 ms) with 4
/// CUBIC flows; the issue accepts a mean in 10–25 ms (the PI controller oscillates around
/// the target with CUBIC's sawtooth; the mean is taken after 10 s).
#[test]
fn pie_holds_four_cubic_flows_near_fifteen_ms() {
    let mut d = path(20, 40, Some(AqmConfig::Pie(PieParams::default())), 40);
    for _ in 0..4 {
        d.add_flow(cc("cubic"), Dur::ZERO);
    }
    let r = run(&d);
    let q = &r.queues[0];
    let mean = sojourn_mean_after(q, 10.0);
    let util = utilisation(q, 20_000_000, 10.0);
    eprintln!("pie: mean sojourn {mean:.2} ms, util {util:.3}");
    assert!((10.0..=25.0).contains(&mean), "mean sojourn {mean:.2} ms");
    assert!(util >= 0.9, "utilisation {util:.3}");
}

/// RED with ECN marks classic-ECN CUBIC instead of dropping, and keeps the average queue
/// between its thresholds (Floyd & Jacobson 1993): 30–90 kB at 20 Mbit/s = 12–36 ms.
#[test]
fn red_marks_ecn_cubic_and_holds_the_queue_between_thresholds() {
    let red = RedParams {
        ecn: true,
        ..RedParams::default()
    };
    let mut d = path(20, 40, Some(AqmConfig::Red(red)), 40);
    for _ in 0..2 {
        d.add_flow(cc("cubic"), Dur::ZERO).ecn = EcnMode::Classic;
    }
    let r = run(&d);
    let q = &r.queues[0];
    let mean = sojourn_mean_after(q, 10.0);
    eprintln!(
        "red: mean sojourn {mean:.2} ms, marks {}, drops {}",
        q.summary.ce_marks, q.summary.drops
    );
    assert!(q.summary.ce_marks > 0);
    // The average follows the instantaneous queue with a lag, so the mean sojourn may sit a
    // little outside the band the average is held in: allow 6–40 ms.
    assert!((6.0..=40.0).contains(&mean), "mean sojourn {mean:.2} ms");
}

/// TCP Prague alone through DualPI2 keeps the L queue shallow: the 1 ms step marks every packet
/// above 1 ms, so the p99 sojourn stays ≤ 2 ms (issue bound; RFC 9332 §1: "L4S ... sub-ms
/// queuing delay"), at ≥ 90 % utilisation. 40 Mbit/s, 20 ms RTT.
#[test]
fn dualpi2_keeps_prague_alone_below_two_ms() {
    let mut d = path(
        40,
        20,
        Some(AqmConfig::DualPi2(DualPi2Params::default())),
        30,
    );
    d.add_flow(cc("prague"), Dur::ZERO);
    let r = run(&d);
    let q = &r.queues[0];
    let l = q.summary.classes.iter().find(|c| c.name == "l").unwrap();
    let util = utilisation(q, 40_000_000, 5.0);
    let f = &r.flows[0].summary;
    eprintln!(
        "dualpi2 prague: L p99 {:?} ms, util {util:.3}, marks {}, retransmits {}",
        l.delay_p99_ms, l.ce_marks, f.retransmits
    );
    assert_eq!(f.ecn, "l4s");
    assert!(l.enqueued > 0 && l.ce_marks > 0);
    // Per-class reporting: the classes add up to the queue, and the per-class series (C then
    // L) have one value per sample. Only Prague's ECT(1) data crosses this link, so the C
    // queue stays empty.
    let c = q.summary.classes.iter().find(|c| c.name == "c").unwrap();
    assert_eq!(c.enqueued + l.enqueued, q.summary.enqueued);
    assert_eq!((c.enqueued, c.ce_marks), (0, 0));
    assert_eq!(l.ce_marks, q.summary.ce_marks);
    let n = q.series.t_s.len();
    assert_eq!(q.series.class_sojourn_mean_ms.len(), 2);
    assert_eq!(q.series.class_backlog_packets.len(), 2);
    assert!(
        q.series
            .class_sojourn_mean_ms
            .iter()
            .all(|col| col.len() == n)
    );
    assert!(
        q.series
            .class_backlog_packets
            .iter()
            .all(|col| col.len() == n)
    );
    assert!(q.series.class_backlog_packets[0].iter().all(|&b| b == 0));
    assert!(
        q.series.class_sojourn_mean_ms[1]
            .iter()
            .any(Option::is_some)
    );
    assert_eq!(
        q.series.ce_marks.iter().map(|&m| u64::from(m)).sum::<u64>(),
        q.summary.ce_marks
    );
    assert!(
        l.delay_p99_ms.unwrap() <= 2.0,
        "L p99 {:?} ms",
        l.delay_p99_ms
    );
    assert!(util >= 0.9, "utilisation {util:.3}");
}

/// Prague and CUBIC share DualPI2: the coupling (p_L = 2·√p_C, RFC 9332 §2.1) balances their
/// rates — the issue asks for a ratio within [0.5, 2] — while the C queue sits near the PI2
/// target of 15 ms (accepted: 8–25 ms, the PI2 loop oscillates with CUBIC's sawtooth) and the
/// L queue's p99 stays ≤ 2 ms. 40 Mbit/s, 40 ms base RTT. The coupling equalises windows per
/// RTT, and the classic flow's RTT includes the C queue's 15 ms while Prague's does not, so
/// rates balance only where 15 ms is small against the base RTT: at 20 ms base RTT the ratio is
/// about 2.4 (Prague v0.6's RTT independence, (srtt/25 ms)² on its increase after 500 rounds,
/// compensates only part of it), at 40 ms about 1.6 (RFC 9332 §2.1 and Appendix A.1 discuss this
/// RTT dependence of the balance).
#[test]
fn dualpi2_couples_prague_and_cubic() {
    let mut d = path(
        40,
        40,
        Some(AqmConfig::DualPi2(DualPi2Params::default())),
        70,
    );
    d.add_flow(cc("prague"), Dur::ZERO);
    d.add_flow(cc("cubic"), Dur::ZERO);
    let r = run(&d);
    let q = &r.queues[0];
    let c = q.summary.classes.iter().find(|c| c.name == "c").unwrap();
    let l = q.summary.classes.iter().find(|c| c.name == "l").unwrap();
    // CUBIC sees a drop only every few seconds here, so its share swings over 10 s windows;
    // a 60 s window averages several of its epochs.
    let prague = goodput_between(&r.flows[0], 10.0, 70.0);
    let cubic = goodput_between(&r.flows[1], 10.0, 70.0);
    let ratio = prague / cubic;
    eprintln!(
        "dualpi2 prague+cubic: C mean {:?} ms, L p99 {:?} ms, prague {prague:.0} cubic {cubic:.0} \
         (ratio {ratio:.2})",
        c.delay_mean_ms, l.delay_p99_ms
    );
    let c_mean = c.delay_mean_ms.unwrap();
    assert!((8.0..=25.0).contains(&c_mean), "C mean {c_mean:.2} ms");
    assert!(
        l.delay_p99_ms.unwrap() <= 2.0,
        "L p99 {:?} ms",
        l.delay_p99_ms
    );
    assert!((0.5..=2.0).contains(&ratio), "rate ratio {ratio:.2}");
}

/// Vegas keeps between α = 2 and β = 4 packets queued (Linux `tcp_vegas.c`); the issue allows
/// ±1 packet around that band for the estimate's granularity. Large FIFO, 10 Mbit/s, 40 ms.
#[test]
fn vegas_keeps_two_to_four_packets_queued() {
    let mut d = path(10, 40, None, 40);
    d.add_flow(cc("vegas"), Dur::ZERO);
    let r = run(&d);
    let q = &r.queues[0];
    let mean_ms = sojourn_mean_after(q, 10.0);
    let packets = mean_ms * 1e-3 * 10e6 / WIRE_BITS;
    let util = utilisation(q, 10_000_000, 10.0);
    eprintln!("vegas: mean queue {packets:.2} packets ({mean_ms:.2} ms), util {util:.3}");
    assert!(
        (1.0..=5.0).contains(&packets),
        "{packets:.2} packets queued"
    );
    assert!(
        util >= 0.9,
        "a queue that never empties keeps the link busy: {util:.3}"
    );
}

/// Classic ECN through CoDel with ECN: the AQM marks instead of dropping, the sender reduces on
/// ECE without a single retransmission (RFC 3168 §6.1.2), and the same run without ECN drops.
#[test]
fn classic_ecn_cubic_through_codel_is_marked_not_dropped() {
    let codel = |ecn| {
        AqmConfig::Codel(CodelParams {
            ecn,
            ..CodelParams::default()
        })
    };
    let mut d = path(20, 40, Some(codel(true)), 30);
    d.add_flow(cc("cubic"), Dur::ZERO).ecn = EcnMode::Classic;
    let r = run(&d);
    let q = &r.queues[0].summary;
    let f = &r.flows[0].summary;
    eprintln!(
        "ecn codel: marks {}, drops {}, retransmits {}, reductions {}",
        q.ce_marks, q.drops, f.retransmits, f.ecn_reductions
    );
    assert!(q.ce_marks > 0);
    assert_eq!(q.drops, 0);
    assert_eq!(f.retransmits, 0);
    assert!(f.ecn_reductions > 0);
    assert_eq!(f.ecn, "classic");

    let mut plain = path(20, 40, Some(codel(true)), 30);
    plain.add_flow(cc("cubic"), Dur::ZERO);
    let p = run(&plain);
    assert!(p.queues[0].summary.drops > 0, "Not-ECT packets are dropped");
    assert_eq!(p.queues[0].summary.ce_marks, 0);
}

/// RFC 3168 §6.1.2: the sender reduces at most once per window of data. CoDel's `ce_threshold`
/// of 0 marks every ECT packet that waited at all (at cwnd 2–3, the second of two segments
/// sent back to back), so ECE ACKs keep coming; a new CWR episode may only start once the segment sent at the start of the
/// previous one is acknowledged, at least one base RTT (40 ms) later. The receiver acknowledges
/// every segment, so no delayed-ACK timer hides the rule. Checked on the sender's trace: every
/// gap between episode starts is ≥ 40 ms, and many ECE ACKs were absorbed within episodes.
#[test]
fn classic_ecn_reduces_once_per_round_trip() {
    let aqm = AqmConfig::Codel(CodelParams {
        ecn: true,
        ce_threshold: Some(Dur::ZERO),
        ..CodelParams::default()
    });
    let mut d = path(20, 40, Some(aqm), 20);
    let flow = d.add_flow(cc("reno"), Dur::ZERO);
    flow.ecn = EcnMode::Classic;
    flow.ack_every = 1;
    flow.trace = true;
    let r = run(&d);
    let f = &r.flows[0];
    let trace: &[cclab_sim::TracePoint] = &f.trace;
    let starts: Vec<f64> = trace
        .windows(2)
        .filter(|w| w[0].ca_state != "cwr" && w[1].ca_state == "cwr")
        .map(|w| w[1].t_s)
        .collect();
    let min_gap = starts
        .windows(2)
        .map(|w| w[1] - w[0])
        .fold(f64::INFINITY, f64::min);
    let s = &f.summary;
    eprintln!(
        "always-CE: {} reductions, {} ECE ACKs, smallest gap {:.2} ms, min cwnd {}",
        s.ecn_reductions,
        s.ce_echoes,
        min_gap * 1e3,
        s.min_cwnd
    );
    assert!(s.ecn_reductions >= 100, "marks must keep coming");
    // An ACK that ends an episode and starts the next shows as `cwr` → `cwr` in the trace.
    assert!(starts.len() as u64 <= s.ecn_reductions && starts.len() >= 100);
    assert!(
        min_gap >= 0.040,
        "two reductions {:.2} ms apart",
        min_gap * 1e3
    );
    assert!(
        s.ce_echoes >= 2 * s.ecn_reductions,
        "echoes within an episode are absorbed"
    );
    assert_eq!(s.min_cwnd, 2, "halving every few RTTs ends at the floor");
    assert_eq!(s.retransmits, 0);
}

/// BBRv3 in ECN mode (L4S, min RTT ≤ 5 ms: Linux `bbr_ecn_max_rtt_us`) answers CE (its
/// inflight_lo cut by α·ecn_factor each marked round, and the Startup exit after 2 rounds with
/// a CE ratio ≥ 0.5): through a queue that marks ECT packets above 200 µs (CoDel's Linux
/// `ce_threshold`, the DCTCP-style shallow marking the `ecn_low` route feature promises), the
/// queue's median sojourn stays near the threshold, where plain BBRv3 keeps the ~1 ms of queue
/// its own model allows (CoDel's 5 ms target never acts on it). 100 Mbit/s, 4 ms RTT.
#[test]
fn ecn_bbr3_responds_to_l4s_marks() {
    let run_bbr = |ecn| {
        let aqm = AqmConfig::Codel(CodelParams {
            ecn: true,
            ce_threshold: Some(Dur::from_micros(200)),
            ..CodelParams::default()
        });
        let mut d = path(100, 4, Some(aqm), 10);
        d.add_flow(cc("bbr3"), Dur::ZERO).ecn = ecn;
        run(&d)
    };
    let with = run_bbr(EcnMode::L4s);
    let without = run_bbr(EcnMode::Off);
    let (w, o) = (&with.queues[0].summary, &without.queues[0].summary);
    eprintln!(
        "bbr3 l4s: p50 {:?} ms, mean {:?}, max {:?}, marks {}, goodput {:.1} Mbit/s; \
         bbr3 off: p50 {:?} ms, mean {:?}, max {:?}, goodput {:.1} Mbit/s",
        w.delay_p50_ms,
        w.delay_mean_ms,
        w.delay_max_ms,
        w.ce_marks,
        with.flows[0].summary.goodput_bps / 1e6,
        o.delay_p50_ms,
        o.delay_mean_ms,
        o.delay_max_ms,
        without.flows[0].summary.goodput_bps / 1e6,
    );
    assert!(w.ce_marks > 0 && with.flows[0].summary.ce_delivered > 0);
    assert_eq!(o.ce_marks, 0, "Not-ECT packets are never marked");
    assert!(
        w.delay_p50_ms.unwrap() < 0.5 * o.delay_p50_ms.unwrap(),
        "ECN mode must keep the queue shallower"
    );
}

/// TCP Prague alone through PIE (ECN on, Linux defaults: 1000-packet limit) at 40 Mbit/s and
/// 20 ms RTT loses most of what it sends for seconds after slow start; the run is as Linux's
/// code would have it, and each mechanism is shown by an ablation (6 s runs):
/// 1. Slow start overshoots into a full 1000-packet queue (300 ms) before PIE's first update
///    (500 ms, `pie_init`); qdelay > 250 ms then adds 2 % to p per 15 ms update on top of the
///    capped 2 % step, and p passes 1, where Linux's u64 probability does not stop
///    (`pie_calculate_probability` only guards against wrap-around). Above 10 % ECN-capable
///    packets are dropped, not marked (`MAX_PROB / 10` in `pie_qdisc_enqueue`), and above 1
///    every arrival beyond two queued MTUs is dropped; while a backlog remains p falls only
///    by α·(target − qdelay) ≈ 0.2 % per update.
/// 2. Prague owns cwnd (`.cong_control`), so Linux's `tcp_cong_control` returns before PRR
///    (`tcp_cwnd_reduction`): in Recovery the sender refills cwnd − in_flight whatever was
///    delivered, and v0.6/v0.7 halve `frac_cwnd` once per episode (`prague_enter_loss`). With
///    the queue drained, srtt falls to the base RTT and the pacing rate, `frac_cwnd`·MSS/srtt
///    (`prague_update_pacing_rate`), is cwnd/BDP times the link rate: ~15× here.
///
/// Ablations: Reno through the same PIE (PRR ties sending to deliveries) and Prague through
/// a 1000-packet FIFO (same overshoot, no p above 1) each drop at least 20× less; Prague
/// through PIE without ECN drops about as much (ECN is not the cause: p is above 10 %).
#[test]
fn prague_through_pie_floods_after_slow_start_as_linux_would() {
    let drops = |name: &str, aqm: Option<AqmConfig>| {
        let mut d = path(40, 20, aqm, 6);
        if d.aqm.is_none() {
            d.queue = QueueLimit::Packets(1000);
        }
        d.add_flow(cc(name), Dur::ZERO);
        run(&d).queues[0].summary.drops
    };
    let pie = |ecn: bool| {
        Some(AqmConfig::Pie(PieParams {
            ecn,
            ..PieParams::default()
        }))
    };
    let prague_pie = drops("prague", pie(true));
    let reno_pie = drops("reno", pie(true));
    let prague_fifo = drops("prague", None);
    let prague_pie_no_ecn = drops("prague", pie(false));
    eprintln!(
        "drops: prague/pie {prague_pie}, reno/pie {reno_pie}, prague/fifo {prague_fifo}, \
         prague/pie without ECN {prague_pie_no_ecn}"
    );
    // 6 s at 40 Mbit/s is 20 000 packets: most of what Prague sends is dropped.
    assert!(prague_pie > 20_000, "{prague_pie}");
    assert!(prague_pie > 20 * reno_pie, "{prague_pie} vs {reno_pie}");
    assert!(
        prague_pie > 20 * prague_fifo,
        "{prague_pie} vs {prague_fifo}"
    );
    let ratio = u64_to_f64(prague_pie_no_ecn) / u64_to_f64(prague_pie);
    assert!((0.8..1.25).contains(&ratio), "{ratio}");
}
