//! Time to fill freed capacity (`suite::fill_time_s`): exact on a synthetic series, and within
//! the bounds that additive increase of one segment per RTT (RFC 5681 §3.1) puts on NewReno
//! when one of four flows leaves a saturated link.

use cclab_lab::suite::{self, Departure, FILL_FRACTION, FILL_WINDOW_S};
use cclab_lab::{Overrides, parse};
use cclab_sim::Simulation;

/// Samples every 0.1 s; all flows carry 100 up to the departure at 5 s; the remaining ones
/// carry 75 until 7.3 s and 100 after. The reference is 100 (the 1 s before 5 s); a 10-sample
/// window averages at least 95 when at most two of its samples are 75, i.e. from the window
/// that starts at 7.1 s (samples ending 7.2 … 8.1 s: 7.2 and 7.3 are 75): 2.1 s exactly.
#[test]
fn synthetic_step_gives_the_exact_fill_time() {
    let t: Vec<f64> = (1..=150).map(|i| f64::from(i) * 0.1).collect();
    let all: Vec<f64> = t
        .iter()
        .map(|&t| if t <= 5.0 + 1e-9 { 100.0 } else { 0.0 })
        .collect();
    let rem: Vec<f64> = t
        .iter()
        .map(|&t| if t <= 7.3 + 1e-9 { 75.0 } else { 100.0 })
        .collect();
    let f = suite::fill_time_s(&t, &all, &rem, 0.1, 5.0).unwrap();
    assert!((f - 2.1).abs() < 1e-9, "{f}");
    // Refilled at once: 0. Never refilled (94 is below 95 % of 100): none.
    let full = vec![100.0; t.len()];
    assert_eq!(suite::fill_time_s(&t, &all, &full, 0.1, 5.0), Some(0.0));
    let short = vec![94.0; t.len()];
    assert_eq!(suite::fill_time_s(&t, &all, &short, 0.1, 5.0), None);
    // No full window before the departure: none.
    assert_eq!(suite::fill_time_s(&t, &all, &full, 0.1, 0.5), None);
}

/// Four NewReno flows on 100 Mbit/s with about 100 ms base RTT and a 5 ms buffer; flow 0 stops
/// at 30 s. Let `P = G·R₀/(8·MSS)` segments be the path's pipe at the reference goodput `G`
/// (what all four carried in the second before 30 s), `S₀` the three remaining flows' summed
/// cwnd at 30 s and `n = 3`. Without a queue a flow's goodput is cwnd·MSS/R₀, so the remaining
/// flows carry `FILL_FRACTION·G` once their summed window reaches `F·P`; in congestion
/// avoidance each grows by at most one segment per RTT (`tcp_cong_avoid_ai`), and the RTT is at
/// least R₀, so that takes at least `T* = (F·P − S₀)·R₀/n`. A window that averages `F·G` must
/// end after that: fill ≥ T* − W. They grow by one segment per RTT as long as they are
/// cwnd-limited and lose nothing, which holds while their window is below the pipe plus the
/// buffer; the RTT is then at most R₀ + B/C, the departed flow's queued data leaves within B/C,
/// the ACK clock lags by one R₀ and a flow may finish a recovery of one R₀: fill ≤
/// T*·(1 + B/(C·R₀)) + B/C + 2R₀ + Δ (the sampling step).
#[test]
fn newreno_fills_within_the_additive_increase_bounds() {
    let text = "name = \"fill\"\nduration = \"45s\"\nsample_interval = \"100ms\"\n\
                [topology]\npreset = \"dumbbell\"\nrate = \"100Mbit\"\ndelay = \"50ms\"\n\
                buffer = \"5ms\"\n\
                [[flows]]\ncontroller = \"newreno\"\nstop = \"30s\"\n\
                [[flows]]\ncontroller = \"newreno\"\nstart = \"0.1s\"\n\
                [[flows]]\ncontroller = \"newreno\"\nstart = \"0.2s\"\n\
                [[flows]]\ncontroller = \"newreno\"\nstart = \"0.3s\"\n\
                [[probes]]\ninterval = \"100ms\"\n";
    let sc = parse(text, "fill.toml", &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
    let cfg = sc.to_sim_config();
    let dep = Departure::of(&cfg.flows, cfg.duration).expect("flow 0 leaves");
    assert_eq!(dep.remaining, vec![1, 2, 3]);
    assert!((dep.at_s - 30.0).abs() < 1e-12);
    let mss = f64::from(cfg.flows[1].mss);
    // The buffer, as a time at the link's rate: B/C.
    let b_s = 0.005;
    let r = Simulation::new(cfg).unwrap().run();
    let metrics = suite::metrics(&[], &r, Some(&dep));
    let fill = *metrics
        .get("fill_time_s")
        .expect("the remaining flows refill");

    let r0 = r.probes[0]
        .rtt_ms
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        * 1e-3;
    let t = &r.flows[0].series.t_s;
    let dt = t[1] - t[0];
    let at = t.iter().position(|&x| (x - 30.0).abs() < 1e-9).unwrap();
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "10"
    )]
    let k = (FILL_WINDOW_S / dt).round() as usize;
    let g = (at + 1 - k..=at)
        .map(|i| r.flows.iter().map(|f| f.series.goodput_bps[i]).sum::<f64>())
        .sum::<f64>()
        / k as f64;
    let p = g * r0 / (8.0 * mss);
    let s0: f64 = (1..4).map(|f| f64::from(r.flows[f].series.cwnd[at])).sum();
    let t_star = (FILL_FRACTION * p - s0) * r0 / 3.0;
    let lower = t_star - FILL_WINDOW_S;
    let upper = t_star.max(0.0) * (1.0 + b_s / r0) + b_s + 2.0 * r0 + dt;
    eprintln!(
        "R0 {r0:.4} s, G {:.2} Mbit/s, P {p:.1}, S0 {s0}, T* {t_star:.3} s: fill {fill:.2} s in [{lower:.3}, {upper:.3}]",
        g / 1e6
    );
    assert!(
        t_star > FILL_WINDOW_S,
        "the departure must leave room to fill: T* {t_star}"
    );
    assert!(
        fill >= lower && fill <= upper,
        "fill {fill} outside [{lower}, {upper}]"
    );
}
