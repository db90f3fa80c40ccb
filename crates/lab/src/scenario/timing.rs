//! The `[timing]` table: the host timing model of every host of a scenario
//! ([`cclab_sim::host::timing`]).
//!
//! Contract: [`resolve`] reads the table (absent: ideal timing, every packet processed the
//! instant it arrives) into an optional [`HostTiming`], starting from the named `model` and
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
//! ```

use cclab_sim::host::timing::HostTiming;
use cclab_sim::{Dur, NodeKind, SimConfig};
use serde::Deserialize;
use toml::Spanned;

use super::ScenarioError;
use super::error::{Source, unknown_choice};
use crate::units::TimeValue;

/// `model` values.
pub const MODELS: &[&str] = &["ideal", "linux", "emulated"];

#[derive(Debug, Deserialize)]
struct TimingOnly {
    timing: Option<Spanned<RawTiming>>,
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
}

/// Longest interrupt moderation or softirq latency accepted: far beyond any driver's setting
/// (i40e's ITR register holds at most 8.16 ms), and a typo such as `"50ms"` for `"50us"` is
/// still caught by the message naming what it would mean.
const MAX_DELAY: Dur = Dur::from_millis(100);

/// The `[timing]` table of scenario `src`.
///
/// # Errors
/// A located [`ScenarioError`] for an unknown model or key, or a value out of range.
pub(crate) fn resolve(src: &Source<'_>) -> Result<Option<HostTiming>, ScenarioError> {
    let raw: TimingOnly = toml::from_str(src.text).map_err(|e| src.toml_error(&e))?;
    let Some(table) = raw.timing else {
        return Ok(None);
    };
    let r = table.get_ref();
    let base = match r.model.as_ref().map(|m| (m.get_ref().as_str(), m.span())) {
        None | Some(("linux", _)) => HostTiming::linux(),
        Some(("emulated", _)) => HostTiming::emulated(),
        Some(("ideal", span)) => {
            let overridden = r.rx_usecs.is_some()
                || r.softirq_median.is_some()
                || r.softirq_sigma.is_some()
                || r.softirq_max.is_some()
                || r.napi_budget.is_some()
                || r.gro.is_some();
            if overridden {
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
    let delay = |v: &Option<Spanned<TimeValue>>, key: &str, slot: &mut Dur| {
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
    };
    delay(&r.rx_usecs, "rx_usecs", &mut t.rx_usecs)?;
    delay(&r.softirq_median, "softirq_median", &mut t.softirq_median)?;
    delay(&r.softirq_max, "softirq_max", &mut t.softirq_max)?;
    if let Some(s) = &r.softirq_sigma {
        let v = *s.get_ref();
        if !(0.0..=5.0).contains(&v) {
            return Err(src.error(
                Some(s.span()),
                "timing.softirq_sigma",
                format!("must be between 0 and 5 (a log-normal's shape), got {v}"),
            ));
        }
        t.softirq_sigma = v;
    }
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
    if t.softirq_max < t.softirq_median {
        let span = r
            .softirq_max
            .as_ref()
            .or(r.softirq_median.as_ref())
            .map(Spanned::span);
        return Err(src.error(
            span,
            "timing.softirq_max",
            "must not be below softirq_median",
        ));
    }
    Ok(Some(t))
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
    fn absent_or_ideal_is_none_and_models_are_their_presets() {
        assert_eq!(read("name = \"x\"\n").unwrap(), None);
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
        let e = read("[timing]\nrx_usec = \"1us\"\n").unwrap_err();
        assert!(e.contains("rx_usec"), "{e}");
    }
}
