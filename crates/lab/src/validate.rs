//! Side-by-side validation: the kernel's TCP (through the emulator) and the simulator on the
//! same reference scenarios.
//!
//! Contract: [`cases`] are the reference scenarios (dumbbell, 40 ms base RTT): one flow at 20
//! and at 50 Mbit/s with a 1-BDP drop-tail buffer for CUBIC, NewReno (the kernel's `reno`) and
//! BBRv1 (the kernel's `bbr`); two flows sharing 20 Mbit/s; 1 % random loss; BBR (and CUBIC)
//! over an 8-BDP buffer; CUBIC through FQ-CoDel. `--quick` keeps three short ones. [`run_case`]
//! runs one both ways, `reps` times (the simulator with seeds 1, 2, …, the emulator as often),
//! and compares the medians over the repetitions: the simulator with the scenario's
//! controller, the emulator with the kernel's of the same name. [`metrics`] reads the same figures from both results, by the
//! same definitions (both from the per-sample series where a figure is sampled): goodput, the
//! sampled srtt's mean, p50 and p95, the bottleneck's mean queue delay, retransmissions per
//! second, cwnd min/mean/max, the period of multiplicative decreases, BBR's ProbeRTT interval
//! and duration, data segments per ACK, the slow-start exit and retransmissions per reduction.
//! [`compare`] gives each the ratio
//! kernel/simulator and whether it is within the target: 10 % for goodput, RTT and queue delay,
//! 15 % for the rest.

use std::fmt::Write as _;

use cclab_cc::{CcSpec, Dur};
use cclab_sim::host::timing::{HostTiming, MAX_STALL_RATE};
use cclab_sim::queue::{AqmConfig, FqCodelParams};
use cclab_sim::topology::Dumbbell;
use cclab_sim::{LossConfig, NodeKind, QueueLimit, Results, SimConfig, Simulation};

/// Sample interval of the validation runs: fine enough to see BBR's ProbeRTT (≥ 200 ms).
pub const SAMPLE: Dur = Dur::from_millis(50);

/// The cwnd figures leave out the first seconds (slow start), s.
pub const STEADY: f64 = 2.0;

/// One reference scenario.
#[derive(Clone, Debug)]
pub struct Case {
    /// Short name.
    pub name: String,
    /// What it is.
    pub description: String,
    /// The scenario.
    pub cfg: SimConfig,
    /// Whether its flows run BBR (ProbeRTT figures apply).
    pub bbr: bool,
}

/// The base RTT of every case.
pub const BASE_RTT: Dur = Dur::from_millis(40);

/// The target of the RTT figures: within 10 % of the simulator's.
pub const RTT_TARGET: f64 = 0.10;

/// The highest p99 lateness of the emulator's forwarder (ms) at which a case's kernel run still
/// saw the scenario's path: a round trip crosses the forwarder twice (data and ACK), so at
/// this lateness 1 % of the packets alone move a round trip by half the RTT target
/// ([`RTT_TARGET`] × [`BASE_RTT`] / 2 = 2 ms), and the kernel's controller (BBR's min_rtt and
/// pacing, CUBIC's ACK clock) reacts to a path the simulator does not have. Above it the case
/// is marked, whatever its ratios.
#[expect(
    clippy::cast_precision_loss,
    reason = "40 ms in ns is exact in a double"
)]
pub const MAX_LATENESS_P99_MS: f64 = RTT_TARGET * (BASE_RTT.0 as f64 / 1e6) / 2.0;

/// A dumbbell with `flows` of `cc`, 20 ms one way, a buffer of `bdps` BDPs.
fn dumbbell(rate_bps: u64, cc: &str, flows: usize, bdps: u64, secs: u64) -> (Dumbbell, SimConfig) {
    let rtt = BASE_RTT;
    let bdp_packets = Dumbbell::bdp_bytes(rate_bps, rtt).div_ceil(1500);
    let limit = u32::try_from(bdp_packets * bdps).unwrap_or(u32::MAX);
    let mut d = Dumbbell::new(rate_bps, Dur(rtt.0 / 2), QueueLimit::Packets(limit));
    for i in 0..flows {
        let f = d.add_flow(
            CcSpec::default_for(cc).expect("a shipped controller"),
            Dur::ZERO,
        );
        f.start = cclab_cc::Time::ZERO + Dur::from_secs(2 * i as u64);
        // The kernel's connection opens with a handshake: so does the simulated one.
        f.handshake = true;
        f.trace = true;
    }
    d.sample_interval = SAMPLE;
    let mut cfg = d.build();
    cfg.duration = Dur::from_secs(secs);
    cfg.sample_interval = SAMPLE;
    (d, cfg)
}

fn case(name: &str, description: &str, cfg: SimConfig, bbr: bool) -> Case {
    Case {
        name: name.to_owned(),
        description: description.to_owned(),
        cfg,
        bbr,
    }
}

/// The reference scenarios; `quick`: three of 10 s (CUBIC and BBR at 20 Mbit/s, CUBIC through
/// FQ-CoDel), else all of 30 s.
#[must_use]
pub fn cases(quick: bool) -> Vec<Case> {
    let secs = if quick { 10 } else { 30 };
    let mut out = Vec::new();
    let rates: &[u64] = if quick { &[20] } else { &[20, 50] };
    let ccs: &[&str] = if quick {
        &["cubic", "bbr1"]
    } else {
        &["cubic", "newreno", "bbr1"]
    };
    for &mbit in rates {
        for &cc in ccs {
            let (_, cfg) = dumbbell(mbit * 1_000_000, cc, 1, 1, secs);
            out.push(case(
                &format!("{cc}_{mbit}mbit"),
                &format!("one {cc} flow, {mbit} Mbit/s, 40 ms RTT, 1-BDP drop-tail buffer"),
                cfg,
                cc == "bbr1",
            ));
        }
    }
    if !quick {
        for cc in ["cubic", "bbr1"] {
            let (_, cfg) = dumbbell(20_000_000, cc, 2, 1, secs);
            out.push(case(
                &format!("{cc}_x2"),
                &format!("two {cc} flows (the second from 2 s), 20 Mbit/s, 1 BDP"),
                cfg,
                cc == "bbr1",
            ));
        }
        for cc in ["cubic", "newreno", "bbr1"] {
            let (mut d, _) = dumbbell(20_000_000, cc, 1, 1, secs);
            d.loss = LossConfig::Bernoulli { p: 0.01 };
            let mut cfg = d.build();
            cfg.duration = Dur::from_secs(secs);
            out.push(case(
                &format!("{cc}_loss1"),
                &format!("one {cc} flow, 20 Mbit/s, 1 BDP, 1 % random loss"),
                cfg,
                cc == "bbr1",
            ));
        }
        for cc in ["bbr1", "cubic"] {
            let (_, cfg) = dumbbell(20_000_000, cc, 1, 8, secs);
            out.push(case(
                &format!("{cc}_deep"),
                &format!("one {cc} flow, 20 Mbit/s, 8-BDP drop-tail buffer"),
                cfg,
                cc == "bbr1",
            ));
        }
    }
    let (mut d, _) = dumbbell(20_000_000, "cubic", 1, 1, secs);
    d.aqm = Some(AqmConfig::FqCodel(FqCodelParams::default()));
    let mut cfg = d.build();
    cfg.duration = Dur::from_secs(secs);
    out.push(case(
        "cubic_fq_codel",
        "one cubic flow, 20 Mbit/s, FQ-CoDel (Linux defaults)",
        cfg,
        false,
    ));
    out
}

/// The figures compared.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Metrics {
    /// Goodput of all flows, Mbit/s.
    pub goodput_mbps: f64,
    /// Sampled srtt of flow 0: mean, p50, p95, ms.
    pub srtt_ms: [Option<f64>; 3],
    /// Mean sojourn in the bottleneck queue, ms.
    pub queue_delay_ms: Option<f64>,
    /// Retransmitted segments per second, all flows.
    pub retrans_per_s: f64,
    /// Flow 0's cwnd (segments) over its samples from [`STEADY`] on: min, mean, max.
    pub cwnd: [Option<f64>; 3],
    /// Mean time between flow 0's multiplicative decreases (cwnd falling by more than 15 %
    /// between samples after slow start), s.
    pub reduction_period_s: Option<f64>,
    /// Flow 0's retransmissions per multiplicative decrease (loss-based controllers): the
    /// retransmissions from one sample before its second decrease after slow start to the end,
    /// over the decreases from the second on (the first can still belong to slow start's exit,
    /// whose overshoot loses many packets); how many packets each congestion episode lost.
    pub retrans_per_reduction: Option<f64>,
    /// Mean time between flow 0's ProbeRTT episodes (cwnd at 4 segments or less), s.
    pub probe_rtt_interval_s: Option<f64>,
    /// Mean length of a ProbeRTT episode (consecutive samples at ≤ 4 segments), ms.
    pub probe_rtt_ms: Option<f64>,
    /// Data segments sent per ACK received, flow 0.
    pub segs_per_ack: Option<f64>,
    /// When flow 0 left slow start (ssthresh first set; for BBR: pacing gain first below 2), s.
    pub ss_exit_s: Option<f64>,
}

fn mean(v: &[f64]) -> Option<f64> {
    #[expect(clippy::cast_precision_loss, reason = "short vectors")]
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn quantile(v: &[f64], q: f64) -> Option<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into a short vector"
    )]
    s.get(((s.len().max(1) - 1) as f64 * q).round() as usize)
        .copied()
}

/// Groups of consecutive sample indices where `pred` holds: (first time, number of samples).
fn episodes(t: &[f64], pred: impl Fn(usize) -> bool) -> Vec<(f64, usize)> {
    let mut out: Vec<(f64, usize)> = Vec::new();
    let mut prev = false;
    for (i, &ti) in t.iter().enumerate() {
        let now = pred(i);
        if now && !prev {
            out.push((ti, 1));
        } else if now && let Some(last) = out.last_mut() {
            last.1 += 1;
        }
        prev = now;
    }
    out
}

/// The figures of `results`; `segs_per_ack` comes from the caller (the simulator's trace or the
/// kernel's counters).
#[must_use]
pub fn metrics(results: &Results, segs_per_ack: Option<f64>, bbr: bool) -> Metrics {
    let goodput: f64 = results.flows.iter().map(|f| f.summary.goodput_bps).sum();
    let retrans: u64 = results.flows.iter().map(|f| f.summary.retransmits).sum();
    let Some(f) = results.flows.first() else {
        return Metrics::default();
    };
    let s = &f.series;
    let srtt: Vec<f64> = s.srtt_ms.iter().flatten().copied().collect();
    let cwnd: Vec<f64> = s
        .cwnd
        .iter()
        .zip(&s.t_s)
        .filter(|&(&c, &t)| c > 0 && t >= STEADY)
        .map(|(&c, _)| f64::from(c))
        .collect();
    let after_ss = s.ssthresh.iter().position(Option::is_some);
    let cuts = episodes(&s.t_s, |i| {
        i > 0
            && after_ss.is_some_and(|a| i > a)
            && s.cwnd[i] > 0
            && f64::from(s.cwnd[i]) < 0.85 * f64::from(s.cwnd[i - 1])
    });
    let period = |e: &[(f64, usize)]| {
        let gaps: Vec<f64> = e.windows(2).map(|w| w[1].0 - w[0].0).collect();
        mean(&gaps)
    };
    let probe = if bbr {
        episodes(&s.t_s, |i| s.cwnd[i] > 0 && s.cwnd[i] <= 4)
    } else {
        Vec::new()
    };
    let sample_ms = results
        .flows
        .first()
        .and_then(|f| f.series.t_s.get(1).zip(f.series.t_s.first()))
        .map_or(0.0, |(b, a)| (b - a) * 1e3);
    #[expect(clippy::cast_precision_loss, reason = "small counts")]
    let probe_ms: Vec<f64> = probe.iter().map(|p| p.1 as f64 * sample_ms).collect();
    let ss_exit = if bbr {
        // The first sample below a gain of 2 after one above it: Startup's 2.89 gives way to
        // Drain's 0.35.
        s.cc_stats.get("pacing_gain").and_then(|g| {
            let up = g.iter().position(|v| v.is_some_and(|v| v > 2.0))?;
            g.iter()
                .skip(up)
                .position(|v| v.is_some_and(|v| v < 2.0))
                .map(|i| s.t_s[up + i])
        })
    } else {
        after_ss.map(|i| s.t_s[i])
    };
    Metrics {
        goodput_mbps: goodput / 1e6,
        srtt_ms: [mean(&srtt), quantile(&srtt, 0.5), quantile(&srtt, 0.95)],
        queue_delay_ms: results.queues.first().and_then(|q| q.summary.delay_mean_ms),
        #[expect(clippy::cast_precision_loss, reason = "small counts")]
        retrans_per_s: if results.duration_s > 0.0 {
            retrans as f64 / results.duration_s
        } else {
            0.0
        },
        cwnd: [
            cwnd.iter().copied().reduce(f64::min),
            mean(&cwnd),
            cwnd.iter().copied().reduce(f64::max),
        ],
        reduction_period_s: if bbr { None } else { period(&cuts) },
        retrans_per_reduction: match cuts.get(1) {
            Some(&(first, _)) if !bbr => {
                let from = first - sample_ms * 1e-3 - 1e-9;
                let n: u64 = s
                    .t_s
                    .iter()
                    .zip(&s.retransmits)
                    .filter(|&(&t, _)| t >= from)
                    .map(|(_, &r)| u64::from(r))
                    .sum();
                #[expect(clippy::cast_precision_loss, reason = "small counts")]
                Some(n as f64 / (cuts.len() - 1) as f64)
            }
            _ => None,
        },
        probe_rtt_interval_s: period(&probe),
        probe_rtt_ms: mean(&probe_ms),
        segs_per_ack,
        ss_exit_s: ss_exit,
    }
}

/// One compared figure.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Row {
    /// The figure.
    pub metric: &'static str,
    /// The simulator's value.
    pub sim: Option<f64>,
    /// The kernel's (emulated) value.
    pub kernel: Option<f64>,
    /// kernel / simulator.
    pub ratio: Option<f64>,
    /// The target: |ratio − 1| at most this.
    pub target: f64,
    /// Whether the ratio is within the target (`None`: a value is missing or both are ~0).
    pub within: Option<bool>,
}

/// Each figure of `sim` against `kernel`.
#[must_use]
pub fn compare(sim: &Metrics, kernel: &Metrics) -> Vec<Row> {
    let pairs: [(&'static str, Option<f64>, Option<f64>, f64); 15] = [
        (
            "goodput, Mbit/s",
            Some(sim.goodput_mbps),
            Some(kernel.goodput_mbps),
            0.10,
        ),
        (
            "srtt mean, ms",
            sim.srtt_ms[0],
            kernel.srtt_ms[0],
            RTT_TARGET,
        ),
        (
            "srtt p50, ms",
            sim.srtt_ms[1],
            kernel.srtt_ms[1],
            RTT_TARGET,
        ),
        (
            "srtt p95, ms",
            sim.srtt_ms[2],
            kernel.srtt_ms[2],
            RTT_TARGET,
        ),
        (
            "queue delay mean, ms",
            sim.queue_delay_ms,
            kernel.queue_delay_ms,
            0.10,
        ),
        (
            "retransmits/s",
            Some(sim.retrans_per_s),
            Some(kernel.retrans_per_s),
            0.15,
        ),
        ("cwnd min", sim.cwnd[0], kernel.cwnd[0], 0.15),
        ("cwnd mean", sim.cwnd[1], kernel.cwnd[1], 0.15),
        ("cwnd max", sim.cwnd[2], kernel.cwnd[2], 0.15),
        (
            "reduction period, s",
            sim.reduction_period_s,
            kernel.reduction_period_s,
            0.15,
        ),
        (
            "ProbeRTT interval, s",
            sim.probe_rtt_interval_s,
            kernel.probe_rtt_interval_s,
            0.15,
        ),
        (
            "ProbeRTT duration, ms",
            sim.probe_rtt_ms,
            kernel.probe_rtt_ms,
            0.15,
        ),
        (
            "data segments per ACK",
            sim.segs_per_ack,
            kernel.segs_per_ack,
            0.15,
        ),
        ("slow-start exit, s", sim.ss_exit_s, kernel.ss_exit_s, 0.15),
        (
            "retransmits per reduction",
            sim.retrans_per_reduction,
            kernel.retrans_per_reduction,
            0.15,
        ),
    ];
    pairs
        .into_iter()
        .filter(|p| p.1.is_some() || p.2.is_some())
        .map(|(metric, sim, kernel, target)| {
            let ratio = match (sim, kernel) {
                (Some(s), Some(k)) if s.abs() > 1e-9 => Some(k / s),
                _ => None,
            };
            let within = match (sim, kernel, ratio) {
                (Some(s), Some(k), _) if s.abs() < 1e-9 && k.abs() < 1e-9 => Some(true),
                (_, _, Some(r)) => Some((r - 1.0).abs() <= target),
                _ => None,
            };
            Row {
                metric,
                sim,
                kernel,
                ratio,
                target,
                within,
            }
        })
        .collect()
}

/// A case's result.
#[derive(Clone, Debug, serde::Serialize)]
pub struct CaseResult {
    /// The case's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// The simulator's figures.
    pub sim: Metrics,
    /// The kernel's figures.
    pub kernel: Metrics,
    /// Compared.
    pub rows: Vec<Row>,
    /// Repetitions (the figures are medians over them).
    pub reps: usize,
    /// The simulated hosts' packet (softirq) latency, if they had a timing model.
    pub sim_latency: Option<SimLatency>,
    /// The emulator's figures of each repetition.
    pub emulator: Vec<cclab_emu::EmuReport>,
    /// Why the kernel's runs may not have seen the scenario's path ([`timing_warnings`]): the
    /// comparison of such a case is not evidence either way.
    pub warnings: Vec<String>,
}

/// What in the emulator's figures of a case's kernel runs invalidates the comparison: a p99
/// lateness above [`MAX_LATENESS_P99_MS`], packets dropped at the TUN devices or by the
/// forwarder (losses the scenario does not have).
#[must_use]
pub fn timing_warnings(runs: &[cclab_emu::EmuReport]) -> Vec<String> {
    let mut out = Vec::new();
    let worst = runs.iter().map(|r| r.lateness_ms[1]).fold(0.0, f64::max);
    if worst > MAX_LATENESS_P99_MS {
        out.push(format!(
            "the emulator's p99 lateness reached {worst:.2} ms, above {MAX_LATENESS_P99_MS:.1} ms              (half the {:.0} % RTT target of the {:.0} ms base RTT): the kernel ran on a path              the scenario does not describe, so this case's figures are not comparable (run on              an idle machine)",
            RTT_TARGET * 100.0,
            BASE_RTT.as_secs_f64() * 1e3
        ));
    }
    let drops: u64 = runs.iter().map(|r| r.tun_drops + r.self_drops).sum();
    if drops > 0 {
        out.push(format!(
            "the emulator lost {drops} packets itself (TUN devices or forwarder): the kernel              saw losses the scenario does not have, so this case's figures are not comparable"
        ));
    }
    out
}

/// The simulated hosts' packet latency as reported: the wake-up latency's log-normal, the
/// stalls, and the lateness quantiles they give together.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct SimLatency {
    /// Median, µs.
    pub median_us: f64,
    /// Shape σ.
    pub sigma: f64,
    /// Stalls per second.
    pub stall_rate: f64,
    /// Longest stall, ms.
    pub stall_max_ms: f64,
    /// The model's lateness quantiles, ms: p50, p99, p99.9 ([`HostTiming::lateness_quantile`]).
    pub quantiles_ms: [f64; 3],
}

/// The median of each figure over `runs` (each over the runs that have it).
#[must_use]
pub fn median(runs: &[Metrics]) -> Metrics {
    let med = |f: &dyn Fn(&Metrics) -> Option<f64>| {
        let v: Vec<f64> = runs.iter().filter_map(f).collect();
        quantile(&v, 0.5)
    };
    Metrics {
        goodput_mbps: med(&|m| Some(m.goodput_mbps)).unwrap_or(0.0),
        srtt_ms: [
            med(&|m| m.srtt_ms[0]),
            med(&|m| m.srtt_ms[1]),
            med(&|m| m.srtt_ms[2]),
        ],
        queue_delay_ms: med(&|m| m.queue_delay_ms),
        retrans_per_s: med(&|m| Some(m.retrans_per_s)).unwrap_or(0.0),
        cwnd: [
            med(&|m| m.cwnd[0]),
            med(&|m| m.cwnd[1]),
            med(&|m| m.cwnd[2]),
        ],
        reduction_period_s: med(&|m| m.reduction_period_s),
        retrans_per_reduction: med(&|m| m.retrans_per_reduction),
        probe_rtt_interval_s: med(&|m| m.probe_rtt_interval_s),
        probe_rtt_ms: med(&|m| m.probe_rtt_ms),
        segs_per_ack: med(&|m| m.segs_per_ack),
        ss_exit_s: med(&|m| m.ss_exit_s),
    }
}

/// The simulated hosts' timing in a validation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SimTiming {
    /// This model (`None`: ideal hosts).
    Model(Option<HostTiming>),
    /// [`HostTiming::emulated`] with the packet latency the emulator measured in the case's
    /// kernel runs ([`matched_latency`]): both sides see the same timing noise.
    Measured,
}

/// `base` with the packet latency the emulator measured over `reports`: the median over the
/// runs of their p50 lateness as the log-normal's median (σ and the cap as in `base`), and the
/// stall rate that puts the model's 99th percentile ([`HostTiming::lateness_quantile`]) at
/// the median of their p99, stalls lasting up to `base`'s longest (one tick). Solving
/// `P(late > p99) = 1 %` for the rate: `rate = 2T · (1 % − body tail) / (T − p99)²`, at
/// least 0 (a p99 within the log-normal needs no stalls) and within the scenario key's range.
/// The kernel timers' latency is left as it is: the forwarder's lateness is not theirs
/// ([`HostTiming::emulated`]).
#[must_use]
pub fn matched_latency(base: HostTiming, reports: &[cclab_emu::EmuReport]) -> HostTiming {
    let med = |i: usize| {
        let v: Vec<f64> = reports
            .iter()
            .map(|r| r.lateness_ms[i])
            .filter(|x| x.is_finite() && *x > 0.0)
            .collect();
        quantile(&v, 0.5)
    };
    let (Some(p50), Some(p99)) = (med(0), med(1)) else {
        return base;
    };
    let median = Dur::from_secs_f64(p50 / 1e3);
    let body = HostTiming {
        softirq_median: median,
        softirq_max: base.softirq_max.max(median),
        stall_rate: 0.0,
        ..base
    };
    let t_ms = base.stall_max.as_secs_f64() * 1e3;
    // A p99 at or beyond the longest stall: stalls as often as the key allows.
    let room = (t_ms - p99).max(t_ms * 1e-3);
    let want = 0.01 - body.lateness_exceeds(Dur::from_secs_f64(p99 / 1e3));
    let rate_per_ms = (2.0 * t_ms * want / (room * room)).max(0.0);
    HostTiming {
        stall_rate: (rate_per_ms * 1e3).min(MAX_STALL_RATE),
        ..body
    }
}

/// Run `case` both ways, `reps` times each (at least once): the kernel's runs first, then the
/// simulator's with hosts of `timing`. `stop` set (Ctrl-C) ends the kernel's run under way
/// and the case with an error: a case is compared whole or not at all.
///
/// # Errors
/// The simulator's or the emulator's refusal, as text; "interrupted" when `stop` was set.
pub fn run_case(
    case: &Case,
    reps: usize,
    timing: SimTiming,
    stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Result<CaseResult, String> {
    let interrupted = || {
        stop.load(std::sync::atomic::Ordering::Relaxed)
            .then(|| format!("{}: interrupted", case.name))
    };
    if let Some(e) = interrupted() {
        return Err(e);
    }
    let opts = cclab_emu::EmuOptions {
        stop: std::sync::Arc::clone(stop),
        ..cclab_emu::EmuOptions::default()
    };
    let mut sims = Vec::new();
    let mut kernels = Vec::new();
    let mut emulator = Vec::new();
    for rep in 0..reps.max(1) {
        let mut cfg = case.cfg.clone();
        cfg.seed = case.cfg.seed + rep as u64;
        for f in &mut cfg.flows {
            f.trace = false;
        }
        let emu = cclab_emu::emulate(&cfg, &opts).map_err(|e| format!("{}: {e}", case.name))?;
        if let Some(e) = interrupted() {
            return Err(e);
        }
        let emu_spa = emu
            .report
            .last_stats
            .first()
            .and_then(Option::as_ref)
            .and_then(|s| match (s.data_segs_out, s.segs_in) {
                #[expect(clippy::cast_precision_loss, reason = "segment counts fit a double")]
                (Some(d), Some(a)) if a > 0 => Some(d as f64 / a as f64),
                _ => None,
            });
        kernels.push(metrics(&emu.results, emu_spa, case.bbr));
        emulator.push(emu.report);
    }
    let host_timing = match timing {
        SimTiming::Model(t) => t,
        SimTiming::Measured => Some(matched_latency(HostTiming::emulated(), &emulator)),
    };
    for rep in 0..reps.max(1) {
        let mut sim_cfg = case.cfg.clone();
        sim_cfg.seed = case.cfg.seed + rep as u64;
        for n in sim_cfg
            .nodes
            .iter_mut()
            .filter(|n| n.kind == NodeKind::Host)
        {
            n.host.timing = host_timing;
        }
        let sim = Simulation::new(sim_cfg)
            .map_err(|e| format!("{}: the simulator refused: {e}", case.name))?
            .run();
        let sim_spa = sim.flows.first().and_then(|f| {
            #[expect(clippy::cast_precision_loss, reason = "segment counts fit a double")]
            let acks = f.trace.iter().filter(|p| p.event == "ack").count() as f64;
            #[expect(clippy::cast_precision_loss, reason = "segment counts fit a double")]
            (acks > 0.0).then(|| f.summary.segments_sent as f64 / acks)
        });
        sims.push(metrics(&sim, sim_spa, case.bbr));
    }
    if let Some(e) = interrupted() {
        return Err(e);
    }
    let (sim_m, kernel_m) = (median(&sims), median(&kernels));
    Ok(CaseResult {
        name: case.name.clone(),
        description: case.description.clone(),
        rows: compare(&sim_m, &kernel_m),
        sim: sim_m,
        kernel: kernel_m,
        reps: reps.max(1),
        sim_latency: host_timing.map(|t| SimLatency {
            median_us: t.softirq_median.as_nanos() as f64 / 1e3,
            sigma: t.softirq_sigma,
            stall_rate: t.stall_rate,
            stall_max_ms: t.stall_max.as_secs_f64() * 1e3,
            quantiles_ms: [0.5, 0.99, 0.999].map(|q| t.lateness_quantile(q).as_secs_f64() * 1e3),
        }),
        warnings: timing_warnings(&emulator),
        emulator,
    })
}

fn cell(v: Option<f64>) -> String {
    v.map_or_else(|| "—".to_owned(), |v| format!("{v:.2}"))
}

/// The results as Markdown: a table per case, then the emulator's timing per case.
#[must_use]
pub fn render(results: &[CaseResult]) -> String {
    let mut s = String::new();
    let (mut ok, mut total) = (0, 0);
    for r in results {
        let _ = writeln!(
            s,
            "### {} — {} (median of {} run{} each way)\n",
            r.name,
            r.description,
            r.reps,
            if r.reps == 1 { "" } else { "s" }
        );
        let _ = writeln!(s, "| figure | simulator | kernel | kernel/sim | target | |");
        let _ = writeln!(s, "|---|---|---|---|---|---|");
        for row in &r.rows {
            let mark = match row.within {
                Some(true) => {
                    ok += 1;
                    total += 1;
                    "ok"
                }
                Some(false) => {
                    total += 1;
                    "**off**"
                }
                None => "",
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | ±{:.0} % | {mark} |",
                row.metric,
                cell(row.sim),
                cell(row.kernel),
                cell(row.ratio),
                row.target * 100.0
            );
        }
        for e in &r.emulator {
            let _ = writeln!(
                s,
                "\nemulator: lateness p50 {:.3} / p99 {:.3} / p99.9 {:.3} ms, {} packets, {} lost \
                 by the emulator, {} at the TUN devices, forwarder CPU {:.0} %",
                e.lateness_ms[0],
                e.lateness_ms[1],
                e.lateness_ms[2],
                e.packets,
                e.self_drops,
                e.tun_drops,
                e.forwarder_cpu_share * 100.0
            );
        }
        for w in &r.warnings {
            let _ = writeln!(s, "\n**warning**: {w}");
        }
        if let Some(l) = r.sim_latency {
            let _ = writeln!(
                s,
                "\nsimulated hosts: packet latency median {:.1} µs, σ {:.2}, {:.1} stalls/s of up \
                 to {:.0} ms (lateness p50 {:.3} / p99 {:.3} / p99.9 {:.3} ms)",
                l.median_us,
                l.sigma,
                l.stall_rate,
                l.stall_max_ms,
                l.quantiles_ms[0],
                l.quantiles_ms[1],
                l.quantiles_ms[2],
            );
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s, "{ok} of {total} compared figures within their targets.");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn episodes_group_consecutive_samples() {
        let t = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5];
        let v = [false, true, true, false, true, false];
        assert_eq!(episodes(&t, |i| v[i]), vec![(0.1, 2), (0.4, 1)]);
    }

    #[test]
    fn ratios_and_targets() {
        let a = Metrics {
            goodput_mbps: 10.0,
            retrans_per_s: 0.0,
            ..Metrics::default()
        };
        let b = Metrics {
            goodput_mbps: 10.5,
            retrans_per_s: 0.0,
            ..Metrics::default()
        };
        let rows = compare(&a, &b);
        assert_eq!(rows[0].within, Some(true));
        assert!((rows[0].ratio.unwrap() - 1.05).abs() < 1e-12);
        // Both zero: agreed.
        assert_eq!(rows[1].metric, "retransmits/s");
        assert_eq!(rows[1].within, Some(true));
        let c = Metrics {
            goodput_mbps: 12.0,
            ..Metrics::default()
        };
        assert_eq!(compare(&a, &c)[0].within, Some(false));
    }

    #[test]
    fn medians_per_figure() {
        let m = |g: f64, q: Option<f64>| Metrics {
            goodput_mbps: g,
            queue_delay_ms: q,
            ..Metrics::default()
        };
        let med = median(&[m(1.0, None), m(3.0, Some(5.0)), m(2.0, Some(7.0))]);
        assert!((med.goodput_mbps - 2.0).abs() < 1e-12);
        // Over the runs that have the figure: [5, 7] → the upper middle.
        assert_eq!(med.queue_delay_ms, Some(7.0));
        assert_eq!(med.probe_rtt_ms, None);
    }

    /// A single NewReno flow at a drop-tail queue (the simulated `newreno_20mbit` case): its
    /// window grows by one segment per RTT, so an episode overflows the buffer by one segment,
    /// plus at most the growth of the RTT or so before the loss is detected: 1 to 3 packets lost
    /// per reduction, and the figure is there only for loss-based controllers.
    #[test]
    fn retransmits_per_reduction_of_a_single_newreno_flow() {
        let all = cases(false);
        let c = all.iter().find(|c| c.name == "newreno_20mbit").unwrap();
        let r = Simulation::new(c.cfg.clone()).unwrap().run();
        let m = metrics(&r, None, false);
        let x = m.retrans_per_reduction.unwrap();
        assert!((1.0..=3.0).contains(&x), "{x} retransmits per reduction");
        let b = all.iter().find(|c| c.name == "bbr1_20mbit").unwrap();
        let r = Simulation::new(b.cfg.clone()).unwrap().run();
        assert_eq!(metrics(&r, None, true).retrans_per_reduction, None);
    }

    /// The measured lateness becomes the hosts' packet latency: the median of the runs' p50 as
    /// the median, and a stall rate that puts the model's p99 at the median p99: about 5.5
    /// stalls a second for a single flow's 0.2 ms, about 20 for two flows' 2 ms (the
    /// emulated model's documentation works both out by hand); timers and the rest of the
    /// emulated model unchanged; no measurement, no change.
    #[test]
    fn the_measured_lateness_sets_the_packet_latency() {
        let report = |p50: f64, p99: f64| cclab_emu::EmuReport {
            lateness_ms: [p50, p99, 3.0, 5.0],
            ..cclab_emu::EmuReport::default()
        };
        let base = HostTiming::emulated();
        let runs = [
            report(0.030, 0.10),
            report(0.040, 0.25),
            report(0.035, 0.20),
        ];
        let t = matched_latency(base, &runs);
        assert_eq!(t.softirq_median, Dur::from_micros(35));
        let p99 = t.lateness_quantile(0.99).as_secs_f64() * 1e3;
        assert!((p99 / 0.20 - 1.0).abs() < 1e-3, "{p99}");
        assert!((5.0..6.0).contains(&t.stall_rate), "{}", t.stall_rate);
        let two = matched_latency(base, &[report(0.035, 2.0)]);
        assert!((19.0..21.0).contains(&two.stall_rate), "{}", two.stall_rate);
        assert_eq!(t.softirq_sigma.to_bits(), base.softirq_sigma.to_bits());
        assert_eq!(t.stall_max, base.stall_max);
        assert_eq!(t.timer_median, base.timer_median);
        assert_eq!(t.timer_sigma.to_bits(), base.timer_sigma.to_bits());
        assert_eq!(t.tx_completion, base.tx_completion);
        assert_eq!(matched_latency(base, &[]), base);
        assert_eq!(matched_latency(base, &[report(0.0, 0.0)]), base);
        // A p99 inside the log-normal: no stalls. One beyond the longest stall: the key's
        // limit. A median above the cap raises the cap.
        assert!(matched_latency(base, &[report(0.035, 0.05)]).stall_rate == 0.0);
        let wild = matched_latency(base, &[report(0.035, 1e6)]);
        assert!(wild.stall_rate == MAX_STALL_RATE, "{wild:?}");
        let slow = matched_latency(base, &[report(8.0, 9.0)]);
        assert_eq!(slow.softirq_median, Dur::from_millis(8));
        assert_eq!(slow.softirq_max, Dur::from_millis(8));
    }

    /// A case whose kernel runs had a p99 lateness above 2 ms (half the 10 % RTT target of the
    /// 40 ms base RTT) or lost packets in the emulator is marked, in the result and in the
    /// Markdown; one on time is not.
    #[test]
    fn late_or_lossy_kernel_runs_invalidate_a_case() {
        assert!((MAX_LATENESS_P99_MS - 2.0).abs() < 1e-12);
        let report = |p99: f64, tun_drops: u64| cclab_emu::EmuReport {
            lateness_ms: [0.05, p99, 3.0, 5.0],
            tun_drops,
            ..cclab_emu::EmuReport::default()
        };
        assert!(timing_warnings(&[report(0.3, 0), report(1.9, 0)]).is_empty());
        let w = timing_warnings(&[report(0.3, 0), report(7.5, 0)]);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("7.50 ms, above 2.0 ms"), "{w:?}");
        let w = timing_warnings(&[report(0.3, 12)]);
        assert!(w[0].contains("lost 12 packets"), "{w:?}");
        let m = Metrics::default();
        let r = CaseResult {
            name: "c".into(),
            description: "d".into(),
            rows: compare(&m, &m),
            sim: m.clone(),
            kernel: m,
            reps: 1,
            sim_latency: None,
            warnings: timing_warnings(&[report(7.5, 0)]),
            emulator: vec![report(7.5, 0)],
        };
        let md = render(&[r]);
        assert!(
            md.contains("**warning**: the emulator's p99 lateness"),
            "{md}"
        );
    }

    #[test]
    fn quick_cases_are_three_short_ones() {
        let q = cases(true);
        assert_eq!(q.len(), 3);
        assert!(q.iter().all(|c| c.cfg.duration == Dur::from_secs(10)));
        assert!(cases(false).len() >= 12);
    }
}
