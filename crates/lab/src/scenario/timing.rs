//! The `[timing]` table: the host timing model of every host of a scenario
//! ([`cclab_sim::host::timing`]).
//!
//! Contract: [`resolve`] reads the table (absent: the `linux` model, [`HostTiming::linux`];
//! `model = "ideal"`: no model, every packet processed the instant it arrives) into an
//! optional [`HostTiming`], starting from the named `model` and
//! overriding the keys given; every error names the file, line and key and lists the valid
//! choices. [`attach`] gives every host node of a [`SimConfig`] that model, each with its own
//! random stream.
//!
//! ```toml
//! [timing]
//! model = "linux"            # ideal | linux | emulated
//! rx_usecs = "50us"          # minimum time between RX interrupts (i40e default 50 µs)
//! softirq_median = "10us"    # median latency from the interrupt to the NAPI poll
//! softirq_sigma = 1.0        # log-normal shape of that latency (0 = fixed)
//! softirq_max = "2ms"        # cap of the latency
//! napi_budget = 64           # packets per NAPI poll
//! gro = true                 # merge in-order segments of a flow polled together
//! timer_slack = true         # TCP timers fire on the jiffies tick / after a timer latency
//! timer_median = "10us"      # median latency from a timer's expiry to its handler (softirq)
//! timer_sigma = 1.0          # log-normal shape of that latency (0 = fixed)
//! timer_max = "2ms"          # cap of the timer latency
//! tick = "4ms"               # one jiffy, 1 / CONFIG_HZ (Kconfig default HZ_250)
//! tx_completion = "napi"     # tx-end | napi | orphan: when TSQ learns an skb has left
//! tx_usecs = "50us"          # with napi: minimum time between TX interrupts (i40e 50 µs)
//! stall_rate = 0.0           # stalls per second of the receive path (emulated: 5.5)
//! stall_max = "4ms"          # longest stall; each is uniform between 0 and this
//! ```

use cclab_sim::host::timing::{HostTiming, ITR_20K, MAX_STALL_RATE, TxCompletion};
use cclab_sim::{Dur, NodeKind, SimConfig};
use serde::Deserialize;
use toml::Spanned;

use super::ScenarioError;
use super::error::{Source, unknown_choice};
use crate::units::TimeValue;

/// `model` values.
pub const MODELS: &[&str] = &["ideal", "linux", "emulated"];
/// `tx_completion` values.
pub const TX_COMPLETIONS: &[&str] = &["tx-end", "napi", "orphan"];

#[derive(Debug, Deserialize)]
struct TimingOnly {
    timing: Option<Spanned<RawTiming>>,
}

/// The `[timing]` table's keys, whatever they are.
#[derive(Debug, Deserialize)]
struct TimingKeys {
    timing: Option<toml::Table>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTiming {
    model: Option<Spanned<String>>,
    rx_usecs: Option<Spanned<TimeValue>>,
    softirq_median: Option<Spanned<TimeValue>>,
    softirq_sigma: Option<Spanned<f64>>,
    softirq_max: Option<Spanned<TimeValue>>,
    napi_budget: Option<Spanned<i64>>,
    gro: Option<Spanned<bool>>,
    timer_slack: Option<Spanned<bool>>,
    timer_median: Option<Spanned<TimeValue>>,
    timer_sigma: Option<Spanned<f64>>,
    timer_max: Option<Spanned<TimeValue>>,
    tick: Option<Spanned<TimeValue>>,
    tx_completion: Option<Spanned<String>>,
    tx_usecs: Option<Spanned<TimeValue>>,
    stall_rate: Option<Spanned<f64>>,
    stall_max: Option<Spanned<TimeValue>>,
}

/// Longest interrupt moderation or softirq latency accepted: far beyond any driver's setting
/// (i40e's ITR register holds at most 8.16 ms), and a typo such as `"50ms"` for `"50us"` is
/// still caught by the message naming what it would mean.
const MAX_DELAY: Dur = Dur::from_millis(100);
/// Longest jiffy accepted: `CONFIG_HZ` = 100, the lowest the kernel offers.
const MAX_TICK: Dur = Dur::from_millis(10);

/// The `[timing]` table of scenario `src`.
///
/// # Errors
/// A located [`ScenarioError`] for an unknown model or key, or a value out of range.
pub(crate) fn resolve(src: &Source<'_>) -> Result<Option<HostTiming>, ScenarioError> {
    let raw: TimingOnly = toml::from_str(src.text).map_err(|e| src.toml_error(&e))?;
    let Some(table) = raw.timing else {
        // On by default: a simulated host behaves like a Linux host unless the scenario asks
        // for ideal timing (README, "Host timing").
        return Ok(Some(HostTiming::linux()));
    };
    let r = table.get_ref();
    let base = match r.model.as_ref().map(|m| (m.get_ref().as_str(), m.span())) {
        None | Some(("linux", _)) => HostTiming::linux(),
        Some(("emulated", _)) => HostTiming::emulated(),
        Some(("ideal", span)) => {
            // Any key besides `model` would be ignored: refuse it.
            let keys: TimingKeys = toml::from_str(src.text).map_err(|e| src.toml_error(&e))?;
            if keys.timing.is_some_and(|t| t.len() > 1) {
                return Err(src.error(
                    Some(span),
                    "timing.model",
                    "ideal timing has no parameters: remove them, or choose `linux` or `emulated`",
                ));
            }
            return Ok(None);
        }
        Some((other, span)) => {
            return Err(src.error(
                Some(span),
                "timing.model",
                unknown_choice("timing model", other, MODELS),
            ));
        }
    };
    let mut t = base;
    delay(src, &r.rx_usecs, "rx_usecs", &mut t.rx_usecs)?;
    latency(
        src,
        "softirq",
        (&r.softirq_median, &r.softirq_sigma, &r.softirq_max),
        (
            &mut t.softirq_median,
            &mut t.softirq_sigma,
            &mut t.softirq_max,
        ),
    )?;
    latency(
        src,
        "timer",
        (&r.timer_median, &r.timer_sigma, &r.timer_max),
        (&mut t.timer_median, &mut t.timer_sigma, &mut t.timer_max),
    )?;
    t.napi_budget = src.ranged_u32(
        r.napi_budget.as_ref(),
        "timing.napi_budget".into(),
        1..=65_536,
        "packets",
        t.napi_budget,
    )?;
    if let Some(g) = &r.gro {
        t.gro = *g.get_ref();
    }
    if let Some(b) = &r.timer_slack {
        t.timer_slack = *b.get_ref();
    }
    if let Some(v) = &r.tick {
        let d = v.get_ref().0;
        if d == Dur::ZERO || d > MAX_TICK {
            return Err(src.error(
                Some(v.span()),
                "timing.tick",
                "must be above 0 and at most 10 ms (one jiffy: CONFIG_HZ 100 to 1000 gives \
                 10 ms to 1 ms)",
            ));
        }
        t.tick = d;
    }
    resolve_tx(src, r, &mut t)?;
    resolve_stalls(src, r, &mut t)?;
    Ok(Some(t))
}

/// A latency's `_median`, `_sigma` and `_max` keys as read.
type LatencyKeys<'a> = (
    &'a Option<Spanned<TimeValue>>,
    &'a Option<Spanned<f64>>,
    &'a Option<Spanned<TimeValue>>,
);

/// The keys `{name}_median`, `{name}_sigma` and `{name}_max` of a log-normal latency into
/// `slots` (absent keys leave theirs unchanged); the cap may not be below the median.
fn latency(
    src: &Source<'_>,
    name: &str,
    keys: LatencyKeys<'_>,
    slots: (&mut Dur, &mut f64, &mut Dur),
) -> Result<(), ScenarioError> {
    let (median, sigma, max) = keys;
    delay(src, median, &format!("{name}_median"), slots.0)?;
    delay(src, max, &format!("{name}_max"), slots.2)?;
    if let Some(s) = sigma {
        let v = *s.get_ref();
        if !(0.0..=5.0).contains(&v) {
            return Err(src.error(
                Some(s.span()),
                format!("timing.{name}_sigma"),
                format!("must be between 0 and 5 (a log-normal's shape), got {v}"),
            ));
        }
        *slots.1 = v;
    }
    if *slots.2 < *slots.0 {
        let span = max.as_ref().or(median.as_ref()).map(Spanned::span);
        return Err(src.error(
            span,
            format!("timing.{name}_max"),
            format!("must not be below {name}_median"),
        ));
    }
    Ok(())
}

/// A latency or interval key (`key`, absent: `slot` unchanged), at most [`MAX_DELAY`].
fn delay(
    src: &Source<'_>,
    v: &Option<Spanned<TimeValue>>,
    key: &str,
    slot: &mut Dur,
) -> Result<(), ScenarioError> {
    if let Some(v) = v {
        let d = v.get_ref().0;
        if d > MAX_DELAY {
            return Err(src.error(
                Some(v.span()),
                format!("timing.{key}"),
                format!(
                    "must be at most {} ms (host timing is microseconds to milliseconds)",
                    MAX_DELAY.as_nanos() / 1_000_000
                ),
            ));
        }
        *slot = d;
    }
    Ok(())
}

/// The `tx_completion` and `tx_usecs` keys into `t`.
fn resolve_tx(src: &Source<'_>, r: &RawTiming, t: &mut HostTiming) -> Result<(), ScenarioError> {
    if let Some(m) = &r.tx_completion {
        t.tx_completion = match m.get_ref().as_str() {
            "tx-end" => TxCompletion::TxEnd,
            "orphan" => TxCompletion::Orphan,
            "napi" => match t.tx_completion {
                n @ TxCompletion::Napi { .. } => n,
                _ => TxCompletion::Napi { tx_usecs: ITR_20K },
            },
            other => {
                return Err(src.error(
                    Some(m.span()),
                    "timing.tx_completion",
                    unknown_choice("TX completion", other, TX_COMPLETIONS),
                ));
            }
        };
    }
    if let Some(v) = &r.tx_usecs {
        let TxCompletion::Napi { tx_usecs } = &mut t.tx_completion else {
            return Err(src.error(
                Some(v.span()),
                "timing.tx_usecs",
                "needs tx_completion = \"napi\" (only a NIC's TX interrupts are moderated)",
            ));
        };
        delay(src, &r.tx_usecs, "tx_usecs", tx_usecs)?;
    }
    Ok(())
}

/// The `stall_rate` and `stall_max` keys into `t`: stalls need a positive longest stall.
fn resolve_stalls(
    src: &Source<'_>,
    r: &RawTiming,
    t: &mut HostTiming,
) -> Result<(), ScenarioError> {
    if let Some(v) = &r.stall_rate {
        let x = *v.get_ref();
        if !(0.0..=MAX_STALL_RATE).contains(&x) {
            return Err(src.error(
                Some(v.span()),
                "timing.stall_rate",
                format!("must be between 0 and {MAX_STALL_RATE} stalls per second, got {x}"),
            ));
        }
        t.stall_rate = x;
    }
    delay(src, &r.stall_max, "stall_max", &mut t.stall_max)?;
    if t.stall_rate > 0.0 && t.stall_max == Dur::ZERO {
        let span = r
            .stall_max
            .as_ref()
            .map(Spanned::span)
            .or(r.stall_rate.as_ref().map(Spanned::span));
        return Err(src.error(
            span,
            "timing.stall_max",
            "must be above 0 when stall_rate is (each stall lasts up to stall_max)",
        ));
    }
    Ok(())
}

/// Give every host of `cfg` the timing model `timing` (`None`: leave them ideal).
pub(crate) fn attach(timing: Option<HostTiming>, cfg: &mut SimConfig) {
    let Some(t) = timing else { return };
    for n in cfg.nodes.iter_mut().filter(|n| n.kind == NodeKind::Host) {
        n.host.timing = Some(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Option<HostTiming>, String> {
        resolve(&Source {
            text,
            origin: "t.toml",
        })
        .map_err(|e| e.to_string())
    }

    #[test]
    fn absent_is_linux_ideal_is_none_and_models_are_their_presets() {
        assert_eq!(read("name = \"x\"\n").unwrap(), Some(HostTiming::linux()));
        assert_eq!(read("[timing]\nmodel = \"ideal\"\n").unwrap(), None);
        assert_eq!(read("[timing]\n").unwrap(), Some(HostTiming::linux()));
        assert_eq!(
            read("[timing]\nmodel = \"emulated\"\n").unwrap(),
            Some(HostTiming::emulated())
        );
        let t = read("[timing]\nrx_usecs = \"8us\"\ngro = false\nsoftirq_sigma = 0.5\n")
            .unwrap()
            .unwrap();
        assert_eq!(t.rx_usecs, Dur::from_micros(8));
        assert!(!t.gro);
        assert!((t.softirq_sigma - 0.5).abs() < 1e-12);
        assert_eq!(t.softirq_median, HostTiming::linux().softirq_median);
        let t = read("[timing]\nmodel = \"emulated\"\ntimer_median = \"5us\"\ntimer_sigma = 0\n")
            .unwrap()
            .unwrap();
        assert_eq!(t.timer_median, Dur::from_micros(5));
        assert!(t.timer_sigma == 0.0);
        assert_eq!(t.softirq_median, HostTiming::emulated().softirq_median);
    }

    #[test]
    fn errors_name_line_key_and_choices() {
        let e = read("[timing]\nmodel = \"linx\"\n").unwrap_err();
        assert!(e.contains("t.toml:2") && e.contains("timing.model"), "{e}");
        assert!(e.contains("linux"), "{e}");
        let e = read("[timing]\nsoftirq_sigma = 9.0\n").unwrap_err();
        assert!(
            e.contains("timing.softirq_sigma") && e.contains("between 0 and 5"),
            "{e}"
        );
        let e = read("[timing]\nrx_usecs = \"1s\"\n").unwrap_err();
        assert!(e.contains("timing.rx_usecs"), "{e}");
        let e = read("[timing]\nmodel = \"ideal\"\ngro = true\n").unwrap_err();
        assert!(e.contains("no parameters"), "{e}");
        let e = read("[timing]\nnapi_budget = 0\n").unwrap_err();
        assert!(e.contains("timing.napi_budget"), "{e}");
        let e = read("[timing]\nsoftirq_max = \"1us\"\n").unwrap_err();
        assert!(e.contains("softirq_max"), "{e}");
        let e = read("[timing]\ntimer_max = \"1us\"\n").unwrap_err();
        assert!(
            e.contains("t.toml:2") && e.contains("timing.timer_max"),
            "{e}"
        );
        let e = read("[timing]\ntimer_sigma = -1.0\n").unwrap_err();
        assert!(e.contains("timing.timer_sigma"), "{e}");
        let e = read("[timing]\nmodel = \"ideal\"\ntimer_median = \"1us\"\n").unwrap_err();
        assert!(e.contains("no parameters"), "{e}");
        let e = read("[timing]\nrx_usec = \"1us\"\n").unwrap_err();
        assert!(e.contains("rx_usec"), "{e}");
        let e = read("[timing]\ntick = \"0ms\"\n").unwrap_err();
        assert!(e.contains("t.toml:2") && e.contains("timing.tick"), "{e}");
        let e = read("[timing]\ntick = \"40ms\"\n").unwrap_err();
        assert!(e.contains("timing.tick") && e.contains("10 ms"), "{e}");
        let e = read("[timing]\ntx_completion = \"nappi\"\n").unwrap_err();
        assert!(
            e.contains("timing.tx_completion") && e.contains("orphan"),
            "{e}"
        );
        let e = read("[timing]\nmodel = \"emulated\"\ntx_usecs = \"10us\"\n").unwrap_err();
        assert!(e.contains("timing.tx_usecs") && e.contains("napi"), "{e}");
        let e = read("[timing]\ntx_usecs = \"1s\"\n").unwrap_err();
        assert!(e.contains("timing.tx_usecs"), "{e}");
        let e = read("[timing]\nmodel = \"ideal\"\ntimer_slack = false\n").unwrap_err();
        assert!(e.contains("no parameters"), "{e}");
    }

    /// Stalls: the emulated model has them, keys override them, and a bad value is named.
    #[test]
    fn stall_keys_override_the_model_and_are_checked() {
        let e = HostTiming::emulated();
        assert!(e.stall_rate > 0.0 && e.stall_max == Dur::from_millis(4));
        assert!(HostTiming::linux().stall_rate == 0.0);
        let t = read("[timing]\nstall_rate = 20.0\nstall_max = \"1ms\"\n")
            .unwrap()
            .unwrap();
        assert!(t.stall_rate == 20.0 && t.stall_max == Dur::from_millis(1));
        let t = read("[timing]\nmodel = \"emulated\"\nstall_rate = 0\n")
            .unwrap()
            .unwrap();
        assert!(t.stall_rate == 0.0);
        let e = read("[timing]\nstall_rate = 5.0\n").unwrap_err();
        assert!(
            e.contains("t.toml:2") && e.contains("timing.stall_max"),
            "{e}"
        );
        let e = read("[timing]\nmodel = \"emulated\"\nstall_rate = -1.0\n").unwrap_err();
        assert!(
            e.contains("t.toml:3") && e.contains("timing.stall_rate"),
            "{e}"
        );
        let e = read("[timing]\nstall_max = \"1s\"\n").unwrap_err();
        assert!(e.contains("timing.stall_max"), "{e}");
        let e = read("[timing]\nmodel = \"ideal\"\nstall_rate = 1.0\n").unwrap_err();
        assert!(e.contains("no parameters"), "{e}");
    }

    #[test]
    fn timer_and_tx_keys_override_the_model() {
        let t = read("[timing]\ntimer_slack = false\ntick = \"1ms\"\ntx_usecs = \"8us\"\n")
            .unwrap()
            .unwrap();
        assert!(!t.timer_slack);
        assert_eq!(t.tick, Dur::from_millis(1));
        assert_eq!(
            t.tx_completion,
            TxCompletion::Napi {
                tx_usecs: Dur::from_micros(8)
            }
        );
        let t = read("[timing]\nmodel = \"emulated\"\ntx_completion = \"napi\"\n")
            .unwrap()
            .unwrap();
        assert_eq!(t.tx_completion, TxCompletion::Napi { tx_usecs: ITR_20K });
        let t = read("[timing]\ntx_completion = \"tx-end\"\n")
            .unwrap()
            .unwrap();
        assert_eq!(t.tx_completion, TxCompletion::TxEnd);
        assert_eq!(
            read("[timing]\nmodel = \"emulated\"\n")
                .unwrap()
                .unwrap()
                .tx_completion,
            TxCompletion::Orphan
        );
    }
}
