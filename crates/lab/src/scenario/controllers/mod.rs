//! Controller declarations: what `controller = "…"` accepts and the keys each controller takes.
//!
//! Contract: [`ALL`] lists one [`Controller`] per name in [`cclab_cc::CONTROLLERS`] (a test keeps
//! the two in step). Each declares its parameters once ([`Param`]) and builds its [`CcSpec`] from
//! the checked values; `resolve` runs the generic checks of `params::resolve_component`
//! and then the controller's own. Adding a controller to the scenario layer is one file here and one line in
//! [`ALL`].

mod bbr;
mod cubic;
mod prague;
mod reno;
mod vegas;

use cclab_cc::{CcSpec, Dur, SLOW_STARTS, SlowStartKind};

use super::ScenarioError;
use super::error::Source;
use super::params::{self, Component, Conflict, Given, Kind, Param, Resolved};

/// A controller a scenario can name, with its parameters; `build` makes its [`CcSpec`].
pub type Controller = Component<CcSpec>;

/// Every controller, in the order `cclab list controllers` prints them.
pub const ALL: &[&Controller] = &[
    &reno::RENO,
    &reno::NEWRENO,
    &cubic::CUBIC,
    &bbr::BBR1,
    &bbr::BBR1_2BROBUST,
    &bbr::BBR3,
    &bbr::BBR3_2BROBUST,
    &bbr::BBR_TAS,
    &vegas::VEGAS,
    &prague::PRAGUE,
];

/// The controller called `name`.
#[must_use]
pub fn find(name: &str) -> Option<&'static Controller> {
    ALL.iter().copied().find(|c| c.name == name)
}

/// Every key some controller takes, each once, in declaration order.
#[must_use]
pub fn all_param_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    for c in ALL {
        for p in c.params {
            if !names.contains(&p.name) {
                names.push(p.name);
            }
        }
    }
    names
}

/// The spec of controller `name` with the controller keys `given` of table `field` applied.
///
/// # Errors
/// An unknown controller (listing the valid ones), a key the controller does not take, a value
/// outside its declaration, or a conflict between keys.
pub(crate) fn resolve(
    src: &Source<'_>,
    field: &str,
    name: &toml::Spanned<String>,
    given: &Given,
) -> Result<CcSpec, ScenarioError> {
    params::resolve_component(
        src,
        field,
        "controller",
        Some("controller"),
        ALL,
        name,
        given,
    )
}

/// `slow_start` of the loss-based controllers (`default` differs: CUBIC's is HyStart).
const fn slow_start(default: &'static str, source: &'static str) -> Param {
    Param {
        name: "slow_start",
        kind: Kind::Choice(SLOW_STARTS),
        unit: "",
        default,
        doc: "slow-start variant: RFC 5681, Linux HyStart, HyStart++, Jump Start or SUSS",
        source,
    }
}

/// Longest accepted `jumpstart_rtt` (a round trip longer than a minute is a typo).
const JUMPSTART_RTT_MAX: Dur = Dur::from_secs(60);

/// `jumpstart_rtt` of the loss-based controllers: what Jump Start paces its first flight over
/// when the transport has no handshake RTT.
const JUMPSTART_RTT: Param = Param {
    name: "jumpstart_rtt",
    kind: Kind::Duration {
        max: JUMPSTART_RTT_MAX,
    },
    unit: "",
    default: "0ms",
    doc: "with slow_start = \"jumpstart\": RTT to pace the first flight over when no handshake \
          RTT is known (the simulator models none); 0 = none, then standard slow start",
    source: "Liu, Allman, Jin, Wang, PFLDnet 2007 (the handshake RTT)",
};

/// The keys of the pluggable slow start (`slow_start` with its default and source, and
/// Jump Start's RTT).
const fn slow_start_params(default: &'static str, source: &'static str) -> [Param; 2] {
    [slow_start(default, source), JUMPSTART_RTT]
}

/// The slow start set in `values` (`default` when absent), with Jump Start's RTT; a
/// `jumpstart_rtt` without Jump Start is a conflict.
fn slow_start_of(values: &Resolved, default: SlowStartKind) -> Result<SlowStartKind, Conflict> {
    let kind = values
        .choice("slow_start")
        .and_then(SlowStartKind::from_name)
        .unwrap_or(default);
    let rtt = values.duration("jumpstart_rtt");
    match kind {
        SlowStartKind::JumpStart { .. } => Ok(SlowStartKind::JumpStart {
            fallback_rtt: rtt.filter(|d| *d > Dur::ZERO),
        }),
        _ if rtt.is_some_and(|d| d > Dur::ZERO) => Err((
            "jumpstart_rtt",
            format!(
                "`jumpstart_rtt` needs slow_start = \"jumpstart\" (the slow start is `{}`)",
                kind.name()
            ),
        )),
        _ => Ok(kind),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The declarations and the controller factory know the same names, and every default
    /// declaration builds the factory's default spec.
    #[test]
    fn every_factory_controller_is_declared_and_builds_its_default() {
        let declared: Vec<&str> = ALL.iter().map(|c| c.name).collect();
        assert_eq!(declared, cclab_cc::CONTROLLERS);
        for c in ALL {
            let spec = (c.build)(&Resolved::default()).expect("defaults build");
            assert_eq!(Some(spec), CcSpec::default_for(c.name), "{}", c.name);
        }
    }

    /// Every declared default is a value its own declaration accepts.
    #[test]
    fn declared_defaults_pass_their_own_checks() {
        let src = Source {
            text: "",
            origin: "t.toml",
        };
        for c in ALL {
            for p in c.params {
                let raw: toml::Table = toml::from_str(&format!("v = {}", p.default_toml()))
                    .unwrap_or_else(|e| panic!("{}.{}: {e}", c.name, p.name));
                let value: params::RawValue = raw["v"].clone().try_into().expect("a value");
                let given = vec![(p.name.to_owned(), toml::Spanned::new(0..0, value))];
                params::resolve(&src, "flows[0]", "controller", *c, ALL, &given)
                    .unwrap_or_else(|e| panic!("{}.{}: {e}", c.name, p.name));
            }
        }
    }
}
