//! Tests of how a descheduled host works off what waited for it when it runs again
//! (`HostConfig::resume`, the engine's `drain_step`): at one instant (the default), or as
//! Linux's softirqs do, one packet after another at its CPU cost, in NET_RX rounds of at most
//! `netdev_budget` packets, with an ACK's sends right after it, each sent segment taking the
//! same CPU time, the timer wheel's timers before the first round and the other timers that
//! waited at the end of a round.
//!
//! The checks are exact: the schedule, the cost and the round size are integers of
//! nanoseconds and packets, and a run is deterministic.

use cclab_cc::num::f64_to_u64;
use cclab_cc::{CcSpec, Dur};
use cclab_sim::topology::Dumbbell;
use cclab_sim::{
    CpuSchedule, HostConfig, NETDEV_BUDGET, PacingMode, QueueLimit, Results, ResumeWork,
    Simulation, TracePoint,
};

/// 10 ms of every 33,333,333 ns (30 % of a CPU).
const PERIOD: u64 = 33_333_333;
const SLICE: u64 = 10_000_000;

fn run(d: &Dumbbell) -> Results {
    Simulation::new(d.build()).expect("valid config").run()
}

fn ns(p: &TracePoint) -> u64 {
    f64_to_u64((p.t_s * 1e9).round())
}

/// One paced CUBIC flow (pacing through the sender's own timer, so a pacing send is a timer
/// event) from a host with 30 % of a CPU in 10 ms slices, 100 Mbit/s, 20 ms, 1 BDP, 3 s.
fn path(resume: ResumeWork) -> Dumbbell {
    path_over(resume, Dur::from_millis(10), 167)
}

/// [`path`] over a path of `delay` one way and a bottleneck queue of `queue` packets.
fn path_over(resume: ResumeWork, delay: Dur, queue: u32) -> Dumbbell {
    let mut d = Dumbbell::new(100_000_000, delay, QueueLimit::Packets(queue));
    d.duration = Dur::from_secs(3);
    d.sender_host = HostConfig {
        cpu: Some(CpuSchedule {
            timeslice: Dur(SLICE),
            share: 0.3,
            offset: Dur::ZERO,
        }),
        resume,
        ..HostConfig::default()
    };
    let f = d.add_flow(
        CcSpec::default_for("cubic").expect("cubic exists"),
        Dur::ZERO,
    );
    f.pacing = PacingMode::On;
    f.trace = true;
    f.trace_tx = true;
    d
}

/// The sender's `ack` rows of each resume: rows from the start of a running phase on, while
/// they follow each other a multiple of `gap` apart, at most 64 (`gap` 0: at the same
/// instant; with `softirq` the next ACK comes the ACK's cost and that of the segments sent in
/// between later).
fn backlogs(tr: &[TracePoint], gap: u64) -> Vec<Vec<u64>> {
    let acks: Vec<u64> = tr.iter().filter(|p| p.event == "ack").map(ns).collect();
    let next = |a: u64, b: u64| {
        if gap == 0 {
            b == a
        } else {
            b > a && (b - a).is_multiple_of(gap) && b - a <= 64 * gap
        }
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < acks.len() {
        if acks[i].is_multiple_of(PERIOD) && acks[i] > 0 {
            let mut b = vec![acks[i]];
            while i + 1 < acks.len() && next(b[b.len() - 1], acks[i + 1]) {
                i += 1;
                b.push(acks[i]);
            }
            out.push(b);
        }
        i += 1;
    }
    out
}

#[test]
fn the_round_is_the_budget_or_its_time_limit() {
    // net_rx_action: 300 packets or 2 ms, whichever comes first.
    assert_eq!(NETDEV_BUDGET, 300);
    assert_eq!(ResumeWork::round_packets(Dur::from_micros(4)), 300);
    assert_eq!(ResumeWork::round_packets(Dur::from_micros(10)), 200);
    assert_eq!(ResumeWork::round_packets(Dur::from_micros(100)), 20);
    assert_eq!(ResumeWork::round_packets(Dur::from_millis(5)), 1);
}

/// Today's model: every ACK that waited is processed at the instant the host runs again.
/// With `softirq` at 4 µs a packet, the k-th waiting ACK is processed 4k µs after it: the
/// same backlogs, spread out.
#[test]
fn each_waiting_ack_takes_its_cpu_time() {
    let instant = run(&path(ResumeWork::Instant));
    let b0 = backlogs(&instant.flows[0].trace, 0);
    assert!(b0.len() > 50, "{} resumes", b0.len());
    assert!(b0.iter().filter(|b| b.len() >= 10).count() > 50);
    let cost = 4_000;
    let soft = run(&path(ResumeWork::Softirq { cost: Dur(cost) }));
    let b1 = backlogs(&soft.flows[0].trace, cost);
    assert!(b1.len() > 50, "{} resumes", b1.len());
    assert!(b1.iter().filter(|b| b.len() >= 10).count() > 50);
    // No two ACKs of a backlog at one instant any more.
    assert!(
        backlogs(&soft.flows[0].trace, 0)
            .iter()
            .all(|b| b.len() == 1)
    );
    // The host did the same kind of work: it waited as often.
    assert!(soft.engine.cpu_deferred > 1000 && soft.engine.cpu_resumes > 50);
}

/// An ACK's sends follow it (`tcp_data_snd_check` after `tcp_ack`): in a backlog worked off
/// over time, skbs are handed over between its ACKs, at the instant of the ACK that allowed
/// them. The pacing timer's sends wait for the end of a NET_RX round (the HRTIMER softirq
/// runs after NET_RX): at 100 µs a packet a round is 20 packets, 2 ms (or fewer, when no
/// packet waits), so within a backlog every hand-off is at an ACK's instant or between two
/// steps, on the grid of the CPU cost from the resume on.
#[test]
fn sends_interleave_with_the_backlog_and_timers_wait_for_the_round() {
    let cost = 100_000;
    let round = ResumeWork::round_packets(Dur(cost));
    assert_eq!(round, 20);
    let soft = run(&path(ResumeWork::Softirq { cost: Dur(cost) }));
    let tr = &soft.flows[0].trace;
    let b = backlogs(tr, cost);
    let long: Vec<_> = b.iter().filter(|b| b.len() > 20).collect();
    assert!(long.len() > 10, "{} long backlogs", long.len());
    let (mut inside, mut at_round_ends) = (0, 0);
    for b in long {
        let (t0, t1) = (b[0], b[b.len() - 1]);
        for x in tr
            .iter()
            .filter(|p| p.event == "xmit")
            .map(ns)
            .filter(|&t| t > t0 && t < t1)
        {
            inside += 1;
            let at_ack = b.contains(&x);
            let between_steps = (x - t0).is_multiple_of(cost);
            at_round_ends += u32::from(!at_ack);
            assert!(
                at_ack || between_steps,
                "a send at {x} ns inside the backlog {t0}..{t1} ns"
            );
        }
        assert!(t1 - t0 < SLICE, "a backlog outlasting the slice");
    }
    assert!(inside > 10, "{inside} sends inside backlogs");
    assert!(at_round_ends > 0, "no timer sends between the steps");
}

/// A host that never stops never resumes, but with `softirq` it still pays for its sends: the
/// ACKs that arrive while it spends a send's CPU time wait for it (they are deferred), so at a
/// full share the run is no longer bit-identical to `instant`, only close to it at a small cost.
#[test]
fn a_full_share_never_resumes_but_pays_for_its_sends() {
    let full = |resume| {
        let mut d = path(resume);
        d.sender_host.cpu = Some(CpuSchedule {
            timeslice: Dur(SLICE),
            share: 1.0,
            offset: Dur::ZERO,
        });
        run(&d)
    };
    let a = full(ResumeWork::Instant);
    let b = full(ResumeWork::Softirq {
        cost: Dur::from_micros(4),
    });
    assert_eq!(a.engine.cpu_deferred, 0);
    assert_eq!((a.engine.cpu_resumes, b.engine.cpu_resumes), (0, 0));
    assert!(b.engine.cpu_deferred > 0, "{:?}", b.engine);
    let (ga, gb) = (
        a.flows[0].summary.goodput_bps,
        b.flows[0].summary.goodput_bps,
    );
    assert!((gb - ga).abs() < 0.05 * ga, "{ga} vs {gb}");
}

/// CPU time of [`path`]'s host (10 ms from the start of every period) in `[a, b)`.
fn running_between(a: u64, b: u64) -> u64 {
    let upto = |t: u64| t / PERIOD * SLICE + (t % PERIOD).min(SLICE);
    upto(b) - upto(a)
}

/// Every data segment the host sends takes its CPU time too: after the host handed over
/// segments at an instant (an ACK's sends, `tcp_data_snd_check`, or a timer's), the next ACK
/// it processes comes at least their CPU time later, and inside a backlog exactly the ACK's
/// cost plus theirs; CPU time, counted only while the host runs: work that does not fit in a
/// timeslice goes on in the next. Without the send's cost, the ACKs of a backlog follow each
/// other one cost apart however many segments each released; without the carry-over, work
/// begun at a slice's end would be done while the host is descheduled.
#[test]
fn each_segment_sent_takes_its_cpu_time_too() {
    let cost = 100_000;
    let soft = run(&path(ResumeWork::Softirq { cost: Dur(cost) }));
    let rows: Vec<(u64, u64, bool)> = soft.flows[0]
        .trace
        .iter()
        .filter(|p| p.event == "ack" || p.event == "xmit")
        .map(|p| (ns(p), p.snd_nxt, p.event == "ack"))
        .collect();
    let (mut checked, mut exact, mut straddles) = (0, 0, 0);
    let mut before = 0; // SND.NXT before the instant
    let mut i = 0;
    while i < rows.len() {
        let t = rows[i].0;
        let mut j = i;
        let mut nxt = before;
        let mut acked_here = false;
        while j < rows.len() && rows[j].0 == t {
            nxt = nxt.max(rows[j].1);
            acked_here |= rows[j].2;
            j += 1;
        }
        let sent = nxt - before;
        if let Some(&(next_ack, _, _)) = rows[j..].iter().find(|r| r.2)
            && sent > 0
        {
            checked += 1;
            let ran = running_between(t, next_ack);
            assert!(
                ran >= cost * sent,
                "the next ACK after {ran} ns of CPU time, {sent} segments sent at {t} ns"
            );
            exact += u32::from(acked_here && sent >= 2 && ran == cost * (1 + sent));
            straddles += u32::from(next_ack / PERIOD > t / PERIOD && ran < SLICE);
        }
        before = nxt;
        i = j;
    }
    assert!(
        checked > 1000 && exact > 100 && straddles > 10,
        "{checked} checked, {exact} exact, {straddles} across a slice's end"
    );
    assert!(soft.flows[0].summary.goodput_bps > 1e6);
}

/// The timer wheel's softirq runs before NET_RX when a host runs again (`__do_softirq`: TIMER
/// is softirq 1, NET_RX 3). A sender on a 2 ms path descheduled for 490 ms of every 500 ms
/// (2 % in 10 ms slices) finds its retransmission timer (here the loss probe's, 2 SRTT)
/// expired when it first runs again, behind the ACKs that came in the first round trip of the
/// gap: Linux fires it first (a spurious probe: the ACKs that would have re-armed it are still
/// in the backlog), so its row is at the resume instant, before the resume's first ACK. Were
/// the ACKs processed first, they would re-arm the timer and the first row would be an ACK.
#[test]
fn an_expired_retransmission_timer_runs_before_the_backlog() {
    let period: u64 = 500_000_000;
    let mut d = path_over(
        ResumeWork::Softirq {
            cost: Dur::from_micros(4),
        },
        Dur::from_millis(1),
        17,
    );
    d.sender_host.cpu = Some(CpuSchedule {
        timeslice: Dur(SLICE),
        share: 0.02,
        offset: Dur::ZERO,
    });
    let r = run(&d);
    let mut first_at_resume = Vec::new();
    let mut last = None;
    for p in r.flows[0]
        .trace
        .iter()
        .filter(|p| matches!(p.event, "ack" | "rto" | "probe"))
    {
        let t = ns(p);
        if t.is_multiple_of(period) && t > 0 && last != Some(t) {
            first_at_resume.push(p.event);
            last = Some(t);
        }
    }
    // The first resume: the loss probe (armed at 2 SRTT on the same timer) fires before the
    // backlog. Its RTT samples then take the gap in, and the timer no longer expires unseen.
    assert!(first_at_resume.len() >= 4, "{first_at_resume:?}");
    assert!(
        matches!(first_at_resume[0], "probe" | "rto"),
        "{first_at_resume:?}"
    );
}

/// Validation: `softirq` needs a CPU cap and a cost below its timeslice.
#[test]
fn softirq_resume_needs_a_cap_and_a_cost_below_the_slice() {
    let mut d = path(ResumeWork::Softirq {
        cost: Dur::from_micros(4),
    });
    d.sender_host.cpu = None;
    assert!(Simulation::new(d.build()).is_err());
    let d = path(ResumeWork::Softirq { cost: Dur(SLICE) });
    assert!(Simulation::new(d.build()).is_err());
    let d = path(ResumeWork::Softirq { cost: Dur::ZERO });
    assert!(Simulation::new(d.build()).is_err());
}

/// In flight as Linux's controller reads it through a batch (`tcp_ack` → `bbr_main` per ACK,
/// `tcp_packets_in_flight` after each): each ACK of a backlog lowers in flight, and only a send
/// between two ACKs (the first ACK's `tcp_data_snd_check`) raises it again. With `instant`
/// the same holds at one instant; with `softirq` the sends land between the ACKs in time.
#[test]
fn in_flight_falls_through_the_batch_and_rises_only_with_sends() {
    for resume in [
        ResumeWork::Instant,
        ResumeWork::Softirq {
            cost: Dur::from_micros(4),
        },
    ] {
        let r = run(&path(resume));
        let tr = &r.flows[0].trace;
        let (mut falls, mut rises) = (0, 0);
        let mut prev: Option<(u32, bool)> = None; // in flight at the last ACK, a send since
        for p in tr {
            match p.event {
                "ack" => {
                    let at_resume = ns(p) % PERIOD < 100_000;
                    if let (Some((before, sent)), true) = (prev, at_resume) {
                        if sent {
                            rises += u32::from(p.in_flight > before);
                        } else {
                            assert!(
                                p.in_flight <= before,
                                "{resume:?}: rose without a send at {}",
                                p.t_s
                            );
                            falls += u32::from(p.in_flight < before);
                        }
                    }
                    prev = at_resume.then_some((p.in_flight, false));
                }
                "xmit" => {
                    if let Some((f, _)) = prev {
                        prev = Some((f, true));
                    }
                }
                _ => {}
            }
        }
        assert!(
            falls > 500 && rises > 10,
            "{resume:?}: {falls} falls, {rises} rises"
        );
    }
}

/// A guest under a CFS quota that its own packets spend (`cfs`) works off its backlog the same
/// way; when the backlog's work spends the quota the rest waits for the next period. The run
/// ends, the guest was throttled, and the backlog's ACKs are a packet's cost apart.
#[test]
fn a_quota_guest_works_off_its_backlog_until_the_quota_is_spent() {
    let cost = 40_000;
    let mut d = path(ResumeWork::Softirq { cost: Dur(cost) });
    d.sender_host.cpu = None;
    d.sender_host.cfs = Some(cclab_sim::CfsBandwidth {
        quota: Dur::from_millis(1),
        period: Dur(3_330_000),
        cost: Dur(cost),
    });
    let r = run(&d);
    let tr = &r.flows[0].trace;
    let acks: Vec<u64> = tr.iter().filter(|p| p.event == "ack").map(ns).collect();
    let spaced = acks.windows(2).filter(|w| w[1] - w[0] == cost).count();
    assert!(spaced > 100, "{spaced} ACKs a cost apart");
    assert!(
        r.engine.cpu_deferred > 100 && r.engine.cfs_throttles > 100,
        "{:?}",
        r.engine
    );
    assert!(r.flows[0].summary.goodput_bps > 1e6);
}
