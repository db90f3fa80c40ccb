//! 2BRobust must not false-activate (Elmenhorst & Aschenbruck, "2BRobust — Overcoming TCP BBR
//! Performance Degradation in Virtual Machines under CPU Contention", arXiv:2601.05665): the
//! pacing-gain boost is meant for a sender starved of CPU, so without CPU contention (no `cpu`
//! schedule on the sending host) it must never switch on — alone, against a competing flow that
//! starts and stops, through RTT changes, and on an app-limited socket. The counter it is judged
//! by, the cumulative `robust_activations` stat of `bbr3_2brobust` and `bbr1_2brobust`, is shown to
//! count under CPU contention, and a robust flow that never activates is shown to be bit-for-bit
//! plain BBR.
//!
//! The boost acts on an ACK in ProbeBW when the flow is not app-limited, at least r = 2 round
//! trips have passed since ProbeRTT ended and in-flight < α·BDP with α = 0.84 and BDP = bw ·
//! min_rtt of the controller's model (`v3.rs` `robust_wanted`, `v1.rs` `update_robust`).
//!
//! Every run: a dumbbell of 100 Mbit/s, 20 ms base RTT, a 1-BDP bottleneck buffer (250 kB = 167
//! 1500-byte packets), 30 s, Linux host defaults (TSQ, TSO, pfifo_fast, 10 Gbit/s NICs), the
//! robust flow as flow 0 on its own host pair, any competitor on its own host pair.

#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use cclab_cc::num::{f64_to_u32, f64_to_u64, u64_to_f64, usize_to_f64};
use cclab_cc::{CcSpec, Dur, Time};
use cclab_sim::topology::Dumbbell;
use cclab_sim::{CpuSchedule, FlowResult, HostConfig, QueueLimit, Results, Simulation};

mod common;
use common::goodput_between;

const RATE: u64 = 100_000_000;
/// Both 2BRobust controllers.
const ROBUST: [&str; 2] = ["bbr3_2brobust", "bbr1_2brobust"];

fn spec(name: &str) -> CcSpec {
    CcSpec::default_for(name).expect("listed controller")
}

/// The common path with flow 0 = `cc`.
fn path(cc: &str) -> Dumbbell {
    let bdp = Dumbbell::bdp_bytes(RATE, Dur::from_millis(20));
    let packets = f64_to_u32((u64_to_f64(bdp) / 1500.0).round());
    let mut d = Dumbbell::new(RATE, Dur::from_millis(10), QueueLimit::Packets(packets));
    d.duration = Dur::from_secs(30);
    d.add_flow(spec(cc), Dur::ZERO);
    d
}

fn run(d: &Dumbbell) -> Results {
    Simulation::new(d.build()).expect("valid config").run()
}

/// The last value of a cumulative controller stat; panics if the controller does not export
/// it (so a renamed stat cannot pass as "zero").
fn last_stat(f: &FlowResult, key: &str) -> u64 {
    let col = f
        .series
        .cc_stats
        .get(key)
        .unwrap_or_else(|| panic!("{}: no `{key}` stat", f.controller));
    f64_to_u64(
        col.iter()
            .rev()
            .find_map(|v| *v)
            .unwrap_or_else(|| panic!("{}: `{key}` never reported", f.controller)),
    )
}

/// The value of counter `key` in the last sample at or before `t` (0 before any).
fn stat_at(f: &FlowResult, key: &str, t: f64) -> u64 {
    let col = &f.series.cc_stats[key];
    f64_to_u64(
        f.series
            .t_s
            .iter()
            .zip(col)
            .filter(|(ts, _)| **ts <= t + 1e-9)
            .filter_map(|(_, v)| *v)
            .next_back()
            .unwrap_or(0.0),
    )
}

fn activations(f: &FlowResult) -> u64 {
    last_stat(f, "robust_activations")
}

/// Where the counter first rose: (sample time, controller state), for failure messages.
fn first_activation(f: &FlowResult) -> Option<(f64, &'static str)> {
    let col = &f.series.cc_stats["robust_activations"];
    col.iter()
        .position(|v| v.is_some_and(|x| x > 0.0))
        .map(|i| (f.series.t_s[i], f.series.state[i]))
}

fn assert_never_activates(f: &FlowResult, what: &str) {
    assert_eq!(
        (activations(f), last_stat(f, "robust_acks")),
        (0, 0),
        "{what}: {} activated, first in the sample ending at {:?}",
        f.controller,
        first_activation(f)
    );
}

/// Fraction of the samples with `t` in (from, to] in which the controller is in ProbeBW, the
/// only state where 2BRobust is evaluated.
fn probe_bw_share(f: &FlowResult, from: f64, to: f64) -> f64 {
    let s = &f.series;
    let (mut n, mut pbw) = (0, 0);
    for (t, st) in s.t_s.iter().zip(&s.state) {
        if *t > from + 1e-9 && *t <= to + 1e-9 {
            n += 1;
            pbw += usize::from(st.starts_with("ProbeBW"));
        }
    }
    usize_to_f64(pbw) / usize_to_f64(n)
}

/// Competitor flows of controller `cc`, each on its own host pair, running 5–10 s, 15–20 s and
/// 25–30 s.
fn add_on_off(d: &mut Dumbbell, cc: &str) {
    for (a, b) in [(5.0, 10.0), (15.0, 20.0), (25.0, 30.0)] {
        let f = d.add_flow(spec(cc), Dur::ZERO);
        f.start = Time::from_secs_f64(a);
        f.stop = Some(Time::from_secs_f64(b));
    }
}

/// The competitors really took bandwidth (> 5 Mbit/s each over its 5 s; measured 6.8–44
/// Mbit/s), and the robust flow took it back in between (> 92 Mbit/s in 12–15 s and 22–25 s;
/// measured 95.7–97.4).
fn assert_competed(r: &Results) {
    for c in &r.flows[1..] {
        let g = c.summary.goodput_bps;
        assert!(
            g > 5e6,
            "{}: competitor {} got {g} bit/s",
            r.flows[0].controller,
            c.name
        );
    }
    for (from, to) in [(12.0, 15.0), (22.0, 25.0)] {
        let g = goodput_between(&r.flows[0], from, to);
        assert!(g > 92e6, "{g} bit/s in {from}–{to} s, alone again");
    }
}

/// Check 1: alone. Why zero: a lone flow on a lossless path keeps no lower bound (v3 `bw_lo` is
/// never set), so its model bandwidth is the link rate, and in ProbeBW it keeps about a BDP or more
/// in flight: cwnd is 2·BDP, the pacing gain is ≥ 1 except in the drain phase (v3 DOWN 0.9, v1
/// 0.75), which ends as soon as in-flight is down to the BDP. In-flight only falls below α·BDP in
/// ProbeRTT (v3: BDP/2, v1: 4 packets) and while it refills afterwards, which the r = 2 rounds rule
/// excludes. Measured with 1-ms samples: in ProbeBW, from 3 rounds after ProbeRTT, in-flight never
/// fell below 0.98·BDP (both versions), against α = 0.84. The flow must spend most of the run in
/// ProbeBW at full rate, or the zero would prove nothing.
#[test]
fn alone_never_activates() {
    for cc in ROBUST {
        let r = run(&path(cc));
        let f = &r.flows[0];
        assert_never_activates(f, "alone");
        assert!(
            f.summary.goodput_bps > 90e6,
            "{cc}: {}",
            f.summary.goodput_bps
        );
        assert!(probe_bw_share(f, 2.0, 30.0) > 0.9, "{cc} mostly in ProbeBW");
    }
}

/// Check 2: a CUBIC competitor that comes and goes (5–10 s, 15–20 s, 25–30 s, three flows with
/// start and stop). Why zero: the competition does set v3's lower bounds (`bw_lo` down to ≈ 70–85 %
/// of `max_bw`), and each REFILL phase resets them, which raises the model BDP at once; but CUBIC
/// keeps the 1-BDP buffer full, so the robust flow's RTT is inflated and its in-flight at those
/// moments was 1.26–1.52 BDP (measured at every REFILL start), above α·BDP; with 1-ms samples, in
/// ProbeBW from 3 rounds after ProbeRTT, in-flight never fell below 0.98·BDP (both versions). The
/// competitor must really take bandwidth, and the robust flow must take it back, or the test shows
/// nothing.
#[test]
fn competing_cubic_on_off_never_activates() {
    for cc in ROBUST {
        let mut d = path(cc);
        add_on_off(&mut d, "cubic");
        let r = run(&d);
        let f = &r.flows[0];
        assert_never_activates(f, "CUBIC on/off");
        assert_competed(&r);
    }
}

/// Check 2b: the same with a BBRv3 competitor, robust BBRv1. Why zero: v1 has no lower bounds that
/// a phase resets at once (the way v3's REFILL does, see the next test): its model bandwidth is a
/// max filter over 10 rounds and its cwnd 2·BDP, so a competitor leaving or arriving changes the
/// model BDP gradually while in-flight follows. Measured with 1-ms samples: in ProbeBW, from 3
/// rounds after ProbeRTT, in-flight never fell below 0.98·BDP.
#[test]
fn competing_bbr3_on_off_never_activates_bbr1_robust() {
    let mut d = path("bbr1_2brobust");
    add_on_off(&mut d, "bbr3");
    let r = run(&d);
    assert_never_activates(&r.flows[0], "BBRv3 on/off");
    assert_competed(&r);
}

/// Check 2b: the same with a BBRv3 competitor, robust BBRv3. This failed with the source's gate
/// (rounds after ProbeRTT only) and is why v3's gate also restarts at a REFILL that resets the
/// lower bounds (`robust_gate_round`, v3.rs module doc). While the competitor runs, both BBRv3 flows keep the
/// queue short and the robust flow's loss response sets `bw_lo` to its share; in-flight is then
/// about `bw_lo`·min_rtt. A REFILL phase resets `bw_lo` (`bbr_reset_lower_bounds`), so `bw` jumps
/// to `max_bw` (96.5 Mbit/s) on that ACK while in-flight is still the old level: at t ≈ 10.070 s
/// (bw_lo 65.1 Mbit/s, in-flight 114–115 < α·BDP = 0.84 · 167.7 = 140.9 packets) and t ≈ 19.490 s
/// (bw_lo 60.2 Mbit/s, in-flight 122–123), in ProbeBW_REFILL, not app-limited (paced), ≥ 2 rounds
/// after ProbeRTT: 2 activations, 10 boosted ACKs, each lasting ≈ 2 ms until in-flight reaches
/// α·BDP (found with 1-ms samples of the stats). With the REFILL gate: none.
#[test]
fn competing_bbr3_on_off_never_activates_bbr3_robust() {
    let mut d = path("bbr3_2brobust");
    add_on_off(&mut d, "bbr3");
    let r = run(&d);
    assert_never_activates(&r.flows[0], "BBRv3 on/off");
}

/// The RTT-change path: the bottleneck one-way delay steps 5 → 15 → 5 → 10 ms (RTT 10 → 30 →
/// 10 → 20 ms) at 8, 16 and 24 s, on both directions; the buffer stays 1 BDP at 20 ms.
fn rtt_change_path(cc: &str) -> Dumbbell {
    let mut d = path(cc);
    d.delay = Dur::from_millis(5);
    d.bottleneck_delay_changes = vec![
        (Time::from_secs_f64(8.0), Dur::from_millis(15)),
        (Time::from_secs_f64(16.0), Dur::from_millis(5)),
        (Time::from_secs_f64(24.0), Dur::from_millis(10)),
    ];
    d
}

/// The smoothed RTT follows the steps (so the changes did reach the flow).
fn assert_rtt_followed(f: &FlowResult) {
    let srtt_at = |t: f64| {
        let i = f.series.t_s.iter().position(|&x| x >= t - 1e-9).unwrap();
        f.series.srtt_ms[i].unwrap()
    };
    for (t, base) in [(7.0, 10.0), (15.0, 30.0), (23.0, 10.0), (29.0, 20.0)] {
        let s = srtt_at(t);
        assert!(s >= base && s < base * 2.0 + 1.0, "srtt {s} ms at {t} s");
    }
}

/// Check 3: RTT changes, robust BBRv1. Why zero: when v1's 10-s min_rtt filter expires, the same
/// ACK replaces min_rtt by the current RTT and enters ProbeRTT (`bbr_update_min_rtt`), where
/// 2BRobust does not act, and the r = 2 rounds rule covers the refill after it; an RTT drop lowers
/// min_rtt at once (a smaller BDP, in-flight above it); an RTT rise with the old min_rtt only keeps
/// the model BDP low. Measured with 1-ms samples: in ProbeBW, from 3 rounds after ProbeRTT,
/// in-flight never fell below 0.98·BDP.
#[test]
fn rtt_changes_never_activate_bbr1_robust() {
    let r = run(&rtt_change_path("bbr1_2brobust"));
    assert_never_activates(&r.flows[0], "RTT changes");
    assert_rtt_followed(&r.flows[0]);
}

/// Check 3: RTT changes, robust BBRv3. This failed with the source's gate and is why v3's gate also
/// restarts when min_rtt rises. Without it: after the rise to 30 ms at 8 s, v3 keeps min_rtt = 10.125 ms (its 10-s window)
/// while ProbeRTT (every 5 s) only refreshes `probe_rtt_min_us`. cwnd ≈ 2·bw·min_rtt = 125 packets
/// then caps the flow below the real BDP (≈ 70 Mbit/s). When the min_rtt window expires, at t ≈
/// 15.219 s (10 s after the ProbeRTT at ≈ 5.2 s), in ProbeBW_DOWN, min_rtt jumps to 30.125 ms: the
/// model BDP triples (61 → 183 packets at bw 70.3 Mbit/s) on that ACK while in-flight is 125–127 <
/// α·BDP = 154, cwnd-limited (not app-limited), and no ProbeRTT intervenes (v3 decouples the
/// min_rtt expiry from ProbeRTT), so the rounds rule did not hold it back: 1 activation, 16
/// boosted ACKs, ≈ 6 ms until in-flight reaches α·BDP. With the min_rtt gate: none.
#[test]
fn rtt_changes_never_activate_bbr3_robust() {
    let r = run(&rtt_change_path("bbr3_2brobust"));
    assert_never_activates(&r.flows[0], "RTT changes");
}

/// Check 4: an app-limited sender: the application writes 20 Mbit/s (`app_rate_bps`, iperf3 `-b`).
/// Why zero: every rate sample is app-limited, so neither version ever detects full bandwidth
/// (`bbr_check_full_bw_reached` ignores app-limited samples) and the flow stays in Startup (and
/// ProbeRTT), where 2BRobust is not evaluated; in ProbeBW the boost would also need the flow not to
/// be app-limited, which the next test exercises. The flow must be app-limited at 20 Mbit/s and
/// never in ProbeBW, or the test would show something else.
#[test]
fn app_limited_never_activates() {
    for cc in ROBUST {
        let mut d = path(cc);
        d.flows[0].flow.app_rate_bps = Some(20_000_000);
        let r = run(&d);
        let f = &r.flows[0];
        assert_never_activates(f, "app-limited");
        let g = f.summary.goodput_bps;
        assert!((g / 20e6 - 1.0).abs() < 0.01, "{cc}: {g} bit/s");
        assert_eq!(probe_bw_share(f, 0.0, 30.0), 0.0, "{cc} never in ProbeBW");
    }
}

/// Check 4b: an app-limited sender in ProbeBW, where only the app-limited condition can hold the
/// boost back: a 50 Mbit/s application shares the link with bulk CUBIC for the first 10 s (the
/// competition ends Startup), then is alone and app-limited. From 12 s on it is in ProbeBW in more
/// than 90 % of the samples, and in-flight is below α·BDP in most of them (measured with 1-ms
/// samples: 67 % for v3, 98 % for v1, whose bandwidth model remembers more than the application
/// writes), yet it never activates: the sender marks the flow app-limited
/// (`tcp_rate_check_app_limited`) whenever it has sent all the application wrote with in-flight
/// below cwnd, and the rate samples of those segments are app-limited. (While CUBIC competes,
/// the flow is not app-limited and may activate: BBRv1 + 2BRobust does once, at 0.4 s, when the
/// receiver's SACK compression releases held SACKs together and in-flight dips below α·BDP; the
/// check is on the app-limited phase, from the end of the competition on.)
#[test]
fn app_limited_in_probe_bw_never_activates() {
    for cc in ROBUST {
        let mut d = path(cc);
        d.flows[0].flow.app_rate_bps = Some(50_000_000);
        d.add_flow(spec("cubic"), Dur::ZERO).stop = Some(Time::from_secs_f64(10.0));
        let r = run(&d);
        let f = &r.flows[0];
        for key in ["robust_activations", "robust_acks"] {
            assert_eq!(
                stat_at(f, key, 10.0),
                last_stat(f, key),
                "{cc}: `{key}` rose in the app-limited phase, first at {:?}",
                first_activation(f)
            );
        }
        assert!(probe_bw_share(f, 12.0, 30.0) > 0.9, "{cc} in ProbeBW");
        let g = goodput_between(f, 12.0, 30.0);
        assert!((g / 50e6 - 1.0).abs() < 0.02, "{cc}: {g} bit/s");
    }
}

/// Check 5: the counter counts: the same flow on a host that runs 10 ms out of every 20 ms (CPU
/// share 0.5). Descheduled half the time, the sender leaves gaps that pacing cannot fill, so
/// in-flight falls below α·BDP in ProbeBW over and over: the boost must switch on.
#[test]
fn cpu_contention_activates() {
    for cc in ROBUST {
        let mut d = path(cc);
        d.set_flow_host(
            0,
            HostConfig {
                cpu: Some(CpuSchedule {
                    timeslice: Dur::from_millis(10),
                    share: 0.5,
                    offset: Dur::ZERO,
                }),
                ..HostConfig::default()
            },
        );
        let r = run(&d);
        let f = &r.flows[0];
        let n = activations(f);
        assert!(n > 0, "{cc}: no activation under CPU contention");
        assert!(last_stat(f, "robust_acks") >= n, "{cc}");
    }
}

/// Check 6: transparency: a robust flow that never activates is plain BBR, bit for bit (the boost
/// is the only difference and it never acts; the stats it adds are not part of the results
/// compared). The alone case of test 1, against `bbr3` and `bbr1`.
#[test]
fn never_activated_robust_is_plain_bbr() {
    for (robust, plain) in [("bbr3_2brobust", "bbr3"), ("bbr1_2brobust", "bbr1")] {
        let (r, p) = (run(&path(robust)), run(&path(plain)));
        let (fr, fp) = (&r.flows[0], &p.flows[0]);
        assert_never_activates(fr, "alone");
        assert_eq!(fr.summary, fp.summary, "{robust} vs {plain}: summary");
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&fr.series.goodput_bps),
            bits(&fp.series.goodput_bps),
            "{robust} vs {plain}: goodput series"
        );
        assert_eq!(fr.series.cwnd, fp.series.cwnd, "{robust} vs {plain}: cwnd");
        assert_eq!(r.queues[0].summary, p.queues[0].summary);
    }
}
