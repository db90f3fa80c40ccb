//! Controller declarations: what `controller = "…"` accepts and the keys each controller takes.
//!
//! Contract: [`ALL`] lists one [`Controller`] per name in [`cclab_cc::CONTROLLERS`] (a test keeps
//! the two in step). Each declares its parameters once ([`Param`]) and builds its [`CcSpec`] from
//! the checked values; `resolve` runs the generic checks of `params::resolve_component`
//! and then the controller's own. Adding a controller to the scenario layer is one file here and one line in
//! [`ALL`].

mod bbr;
mod cuback;
mod cubic;
mod prague;
mod quicly;
mod reno;
mod vegas;

use cclab_cc::careful_resume::{BETA_MAX_PERMILLE, BETA_MIN_PERMILLE};
use cclab_cc::chirping::{ChirpingConfig, G_G_SHIFT, MAX_GAP};
use cclab_cc::{AbbaPolicy, CarefulResumeConfig, CcSpec, Dur, SLOW_STARTS, SlowStartKind};

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
    &cuback::CUBACK,
    &quicly::QUICLY_RENO,
    &quicly::QUICLY_CUBIC,
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
    // An alias (`bbr`) is resolved as the controller it names (`bbr1`), keys and all.
    let name = toml::Spanned::new(
        name.span(),
        cclab_cc::canonical_controller(name.get_ref()).to_owned(),
    );
    params::resolve_component(
        src,
        field,
        "controller",
        Some("controller"),
        ALL,
        &name,
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
        doc: "slow-start variant: RFC 5681, Linux HyStart, HyStart++, Jump Start, SUSS, Careful \
              Resume or Paced Chirping",
        source,
    }
}

/// `abba` of CUBIC, Cuback and quicly's CUBIC: ABBA's policy flags (off by default).
const ABBA: Param = Param {
    name: "abba",
    kind: Kind::Choice(&AbbaPolicy::NAMES),
    unit: "",
    default: "off",
    doc: "ABBA's extra growth while the RTT sits at its floor: off, on (= 0x2: full_rtt guard \
          and recalibration), 0x1 (no full_rtt guard), 0x2, 0x3 (both); the flow's controller \
          name shows it (`cubic_abba`, `cubic_abba0x1`, …)",
    source: "seed-systems.md §3 (quicly PR #689)",
};

/// A β key in (0, 1): `name`, default `default` (CUBIC, Cuback, quicly's controllers).
const fn beta(
    name: &'static str,
    default: &'static str,
    doc: &'static str,
    source: &'static str,
) -> Param {
    Param {
        name,
        kind: Kind::Float {
            min: 0.0,
            min_open: true,
            max: 1.0,
            max_open: true,
        },
        unit: "",
        default,
        doc,
        source,
    }
}

/// `fast_convergence` of CUBIC and Cuback (RFC 9438 §4.7), on by default.
const fn fast_convergence(source: &'static str) -> Param {
    Param {
        name: "fast_convergence",
        kind: Kind::Bool,
        unit: "",
        default: "true",
        doc: "release bandwidth faster when W_max shrinks",
        source,
    }
}

/// `c`, the aggressiveness of the cubic function in segments/s³ (RFC 9438 §5: 0.4), in
/// [0.01, 10]; `doc` says how it is rounded.
const fn cubic_c(doc: &'static str, source: &'static str) -> Param {
    Param {
        name: "c",
        kind: Kind::Float {
            min: 0.01,
            min_open: false,
            max: 10.0,
            max_open: false,
        },
        unit: "segments/s³",
        default: "0.4",
        doc,
        source,
    }
}

/// The ABBA policy set in `values` (off when absent).
fn abba_of(values: &Resolved) -> AbbaPolicy {
    values
        .choice("abba")
        .and_then(AbbaPolicy::from_name)
        .unwrap_or(AbbaPolicy::OFF)
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

/// Largest window Careful Resume takes, segments (the transport's `cwnd_clamp`, 2^24).
const CR_WINDOW_MAX: i64 = 1 << 24;

/// Careful Resume's saved CC parameters and limits (`slow_start = "careful_resume"`), declared
/// once: the loss-based controllers take them and `cclab list slow-starts --params` lists
/// them under `careful_resume`.
pub(crate) const CAREFUL_RESUME_PARAMS: [Param; 4] = [
    Param {
        name: "cr_saved_cwnd",
        kind: Kind::Int {
            min: 0,
            max: CR_WINDOW_MAX,
        },
        unit: "segments",
        default: "0",
        doc: "with slow_start = \"careful_resume\": saved_cwnd, the window an earlier \
              connection on this path used (data acknowledged in one RTT); 0 = no saved \
              state, then standard slow start",
        source: "RFC 9959 §3.1",
    },
    Param {
        name: "cr_saved_rtt",
        kind: Kind::Duration {
            max: JUMPSTART_RTT_MAX,
        },
        unit: "",
        default: "0ms",
        doc: "with slow_start = \"careful_resume\": saved_rtt, that connection's minimum RTT; \
              the resume is abandoned when this path's minimum RTT is at most half of it or \
              its current RTT more than ten times it; 0 = no saved state",
        source: "RFC 9959 §3.1, §3.2, §4.2.1",
    },
    Param {
        name: "cr_max_jump",
        kind: Kind::Int {
            min: 0,
            max: CR_WINDOW_MAX,
        },
        unit: "segments",
        default: "0",
        doc: "with slow_start = \"careful_resume\": max_jump, the largest jump_cwnd \
              (jump_cwnd = min(max_jump, saved_cwnd/2)); 0 = no cap",
        source: "RFC 9959 §2.4, §3.3, §4.3.2",
    },
    Param {
        name: "cr_beta",
        kind: Kind::Float {
            min: 0.5,
            min_open: false,
            max: 1.0,
            max_open: false,
        },
        unit: "",
        default: "0.5",
        doc: "with slow_start = \"careful_resume\": Beta, ssthresh = PipeSize·Beta when a \
              Safe Retreat ends (rounded to 1/1000)",
        source: "RFC 9959 §2.4, §3.5",
    },
];

/// Paced Chirping's keys (with `slow_start = "chirping"`), shown by `cclab list slow-starts
/// --params` and taken by every controller with a pluggable slow start.
pub(crate) const CHIRPING_PARAMS: [Param; 5] = [
    Param {
        name: "chirp_size",
        kind: Kind::Int { min: 2, max: 256 },
        unit: "packets",
        default: "16",
        doc: "with slow_start = \"chirping\": packets per chirp from the fifth chirp on (the \
              first four have 5, 5, 8, 8, at most this)",
        source: "JoakimMisund/PacedChirping paced_chirping.c `CHIRP_SIZE`",
    },
    Param {
        name: "chirp_initial_gap",
        kind: Kind::Duration { max: MAX_GAP },
        unit: "",
        default: "200us",
        doc: "with slow_start = \"chirping\": average gap of the first chirps (the capacity \
              guess mss/gap before any estimate), > 0",
        source: "paced_chirping.c `init_paced_chirping`: gap_avg_ns = 200 µs",
    },
    Param {
        name: "chirp_geometry",
        kind: Kind::Float {
            min: 1.0,
            min_open: false,
            max: 3.0,
            max_open: false,
        },
        unit: "",
        default: "2.0",
        doc: "with slow_start = \"chirping\": first gap of a chirp over its average gap; the \
              gaps fall linearly by 2(G-1)g/N (rounded to 1/1024)",
        source: "paced_chirping.c `dctcp_pc_initial_geometry` = 2, clamped to 1..3",
    },
    Param {
        name: "chirp_gain",
        kind: Kind::Float {
            min: 1.0,
            min_open: false,
            max: 8.0,
            max_open: false,
        },
        unit: "",
        default: "2.0",
        doc: "with slow_start = \"chirping\": growth of the number of chirps per round from \
              the seventh chirp on (rounded to 1/1024)",
        source: "paced_chirping.c `dctcp_pc_initial_gain` = 2, at least 1",
    },
    Param {
        name: "chirp_excursion",
        kind: Kind::Int { min: 1, max: 256 },
        unit: "packets",
        default: "5",
        doc: "with slow_start = \"chirping\": rising-delay packets that make an excursion (L)",
        source: "paced_chirping.c `dctcp_pc_L` = 5",
    },
];

/// The keys of the pluggable slow start (`slow_start` with its default and source, Jump
/// Start's RTT, Careful Resume's saved state and Paced Chirping's keys).
const fn slow_start_params(default: &'static str, source: &'static str) -> [Param; 11] {
    let cr = CAREFUL_RESUME_PARAMS;
    let ch = CHIRPING_PARAMS;
    [
        slow_start(default, source),
        JUMPSTART_RTT,
        cr[0],
        cr[1],
        cr[2],
        cr[3],
        ch[0],
        ch[1],
        ch[2],
        ch[3],
        ch[4],
    ]
}

/// Careful Resume's configuration from `values` (the declared defaults when absent).
fn careful_resume_of(values: &Resolved) -> CarefulResumeConfig {
    let beta = values.float("cr_beta").map_or(
        cclab_cc::careful_resume::BETA_DEFAULT_PERMILLE,
        |b| {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "rounded and clamped to 500..=1000 first (the declaration keeps β in [0.5, 1])"
            )]
            let permille = (b * 1000.0)
                .round()
                .clamp(f64::from(BETA_MIN_PERMILLE), f64::from(BETA_MAX_PERMILLE))
                as u32;
            permille
        },
    );
    CarefulResumeConfig {
        saved_cwnd: values.u32("cr_saved_cwnd").unwrap_or(0),
        saved_rtt: values.duration("cr_saved_rtt").filter(|d| *d > Dur::ZERO),
        max_jump: values.u32("cr_max_jump").filter(|&m| m > 0),
        beta_permille: beta,
    }
}

/// A ratio in the code's 1/1024 fixed point (`G_G_SHIFT`); the declarations bound it to 1..8.
fn fixed_point(x: f64) -> u32 {
    let scale = f64::from(1u32 << G_G_SHIFT);
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "rounded and clamped to 1024..=8192 first"
    )]
    let units = (x * scale).round().clamp(scale, 8.0 * scale) as u32;
    units
}

/// Paced Chirping's configuration from `values`; `None` when no chirping key is set.
fn chirping_config(values: &Resolved) -> Result<Option<ChirpingConfig>, Conflict> {
    if !CHIRPING_PARAMS.iter().any(|p| values.has(p.name)) {
        return Ok(None);
    }
    let d = ChirpingConfig::DEFAULT;
    let initial_gap = values
        .duration("chirp_initial_gap")
        .unwrap_or(d.initial_gap);
    if initial_gap == Dur::ZERO {
        return Err((
            "chirp_initial_gap",
            "`chirp_initial_gap` must be above 0 (the first chirps' average gap)".to_owned(),
        ));
    }
    Ok(Some(ChirpingConfig {
        chirp_size: values.u32("chirp_size").unwrap_or(d.chirp_size),
        initial_gap,
        geometry: values
            .float("chirp_geometry")
            .map_or(d.geometry, fixed_point),
        gain: values.float("chirp_gain").map_or(d.gain, fixed_point),
        excursion_len: values.u32("chirp_excursion").unwrap_or(d.excursion_len),
    }))
}

/// The slow start set in `values` (`default` when absent), with Jump Start's RTT, Careful
/// Resume's saved state and Paced Chirping's keys; a `jumpstart_rtt` without Jump Start, or a
/// `cr_*` or `chirp_*` key without its slow start, is a conflict.
fn slow_start_of(values: &Resolved, default: SlowStartKind) -> Result<SlowStartKind, Conflict> {
    let kind = values
        .choice("slow_start")
        .and_then(SlowStartKind::from_name)
        .unwrap_or(default);
    let rtt = values.duration("jumpstart_rtt");
    if !matches!(kind, SlowStartKind::CarefulResume(_))
        && let Some(p) = CAREFUL_RESUME_PARAMS.iter().find(|p| values.has(p.name))
    {
        return Err((
            p.name,
            format!(
                "`{}` needs slow_start = \"careful_resume\" (the slow start is `{}`)",
                p.name,
                kind.name()
            ),
        ));
    }
    let chirp = chirping_config(values)?;
    if let Some(p) = CHIRPING_PARAMS.iter().find(|p| values.has(p.name))
        && !matches!(kind, SlowStartKind::Chirping(_))
    {
        return Err((
            p.name,
            format!(
                "`{}` needs slow_start = \"chirping\" (the slow start is `{}`)",
                p.name,
                kind.name()
            ),
        ));
    }
    match kind {
        SlowStartKind::JumpStart { .. } => Ok(SlowStartKind::JumpStart {
            fallback_rtt: rtt.filter(|d| *d > Dur::ZERO),
        }),
        SlowStartKind::CarefulResume(_) if rtt.is_some_and(|d| d > Dur::ZERO) => Err((
            "jumpstart_rtt",
            "`jumpstart_rtt` needs slow_start = \"jumpstart\" (the slow start is \
             `careful_resume`)"
                .to_owned(),
        )),
        SlowStartKind::CarefulResume(_) => {
            Ok(SlowStartKind::CarefulResume(careful_resume_of(values)))
        }
        _ if rtt.is_some_and(|d| d > Dur::ZERO) => Err((
            "jumpstart_rtt",
            format!(
                "`jumpstart_rtt` needs slow_start = \"jumpstart\" (the slow start is `{}`)",
                kind.name()
            ),
        )),
        SlowStartKind::Chirping(d) => Ok(SlowStartKind::Chirping(chirp.unwrap_or(d))),
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

    /// `ecn_response` reaches every BBRv3 controller's spec; a name outside the list is an
    /// error that names the key and the valid values.
    #[test]
    fn ecn_response_reaches_the_bbr3_spec() {
        let src = Source {
            text: "",
            origin: "t.toml",
        };
        let given = |v: &str| {
            vec![(
                "ecn_response".to_owned(),
                toml::Spanned::new(0..0, params::RawValue::Str(v.to_owned())),
            )]
        };
        for name in ["bbr3", "bbr3_2brobust", "bbr_tas"] {
            let c = find(name).expect("declared");
            let values =
                params::resolve(&src, "flows[0]", "controller", c, ALL, &given("per_mark"))
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
            let Ok(CcSpec::Bbr3(cfg)) = (c.build)(&values) else {
                panic!("{name} is BBRv3")
            };
            assert_eq!(cfg.ecn_response, cclab_cc::EcnResponse::PerMark, "{name}");
            let err = params::resolve(&src, "flows[0]", "controller", c, ALL, &given("dctcp"))
                .expect_err("not a response")
                .to_string();
            assert!(
                err.contains("ecn_response") && err.contains("per_mark"),
                "{err}"
            );
        }
        assert!(find("bbr1").is_some_and(|c| c.params.iter().all(|p| p.name != "ecn_response")));
    }
}
