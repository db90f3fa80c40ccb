//! Controller selection by name: the one place that knows every controller.
//!
//! Contract: [`CcSpec`] is a plain description of a controller and its parameters (what a scenario
//! file names); [`CcSpec::build`] makes a fresh boxed instance. [`CONTROLLERS`] lists the names the
//! scenario layer accepts, so error messages can list valid choices.

use crate::abba::Abba;
use crate::bbr::{Bbr1, Bbr1Config, Bbr3, Bbr3Config, Robust, Tas};
use crate::chirping::ChirpingConfig;
use crate::cuback::{Cuback, CubackConfig};
use crate::cubic::{Cubic, CubicConfig};
use crate::prague::{Prague, PragueConfig};
use crate::quicly::{Quicly, QuiclyConfig, QuiclyKind};
use crate::reno::{NewReno, Reno, RenoRules};
use crate::vegas::{Vegas, VegasConfig};
use crate::{CongestionControl, EcnMode};

/// Names accepted for `controller` in scenario files.
pub const CONTROLLERS: &[&str] = &[
    "reno",
    "newreno",
    "cubic",
    "cuback",
    "quicly_reno",
    "quicly_cubic",
    "bbr1",
    "bbr1_2brobust",
    "bbr3",
    "bbr3_2brobust",
    "bbr_tas",
    "vegas",
    "prague",
];

/// Other names accepted for a controller of [`CONTROLLERS`]: (alias, name). `bbr` is BBRv1's
/// name in Linux (`tcp_bbr.c` registers `.name = "bbr"`), the name users know it by.
pub const CONTROLLER_ALIASES: &[(&str, &str)] = &[("bbr", "bbr1")];

/// The name in [`CONTROLLERS`] that `name` stands for: `name` itself or the one it is an alias
/// of ([`CONTROLLER_ALIASES`]).
#[must_use]
pub fn canonical_controller(name: &str) -> &str {
    CONTROLLER_ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, canonical)| canonical)
}

/// Names accepted for `slow_start` in scenario files.
pub const SLOW_STARTS: &[&str] = &[
    "standard",
    "hystart",
    "hystart++",
    "jumpstart",
    "suss",
    "careful_resume",
    "chirping",
];

/// Slow-start variant pluggable into the loss-based controllers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SlowStartKind {
    /// RFC 5681 slow start; leaves on loss or at ssthresh.
    Standard,
    /// Linux CUBIC HyStart (ACK train + delay), `tcp_cubic.c`.
    HyStart,
    /// HyStart++, RFC 9406.
    HyStartPlusPlus,
    /// Jump Start (Liu, Allman, Jin, Wang, PFLDnet 2007): the first window is the transfer up
    /// to the receive window, paced over the handshake RTT, or over `fallback_rtt` when the
    /// transport has no handshake RTT (standard slow start when neither exists).
    JumpStart {
        /// RTT to pace the jump over without a handshake RTT.
        fallback_rtt: Option<crate::Dur>,
    },
    /// SUSS (Arghavani et al., SIGCOMM 2024): HyStart with growth ×4 in early rounds.
    Suss,
    /// Careful Resume (RFC 9959): a paced jump to half the saved window of an earlier
    /// connection once the path is confirmed, validated or retreated from.
    CarefulResume(crate::CarefulResumeConfig),
    /// Paced Chirping (Misund and Briscoe, INFOCOM GI 2019): chirps estimate the capacity,
    /// then congestion avoidance.
    Chirping(ChirpingConfig),
}

impl SlowStartKind {
    /// Parse a scenario-file name.
    #[must_use]
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "standard" => Some(Self::Standard),
            "hystart" => Some(Self::HyStart),
            "hystart++" | "hystartpp" => Some(Self::HyStartPlusPlus),
            "jumpstart" => Some(Self::JumpStart { fallback_rtt: None }),
            "suss" => Some(Self::Suss),
            "careful_resume" => Some(Self::CarefulResume(crate::CarefulResumeConfig::NONE)),
            "chirping" | "paced_chirping" => Some(Self::Chirping(ChirpingConfig::DEFAULT)),
            _ => None,
        }
    }
    /// The scenario-file name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Standard => "standard",
            Self::HyStart => "hystart",
            Self::HyStartPlusPlus => "hystart++",
            Self::JumpStart { .. } => "jumpstart",
            Self::Suss => "suss",
            Self::CarefulResume(_) => "careful_resume",
            Self::Chirping(_) => "chirping",
        }
    }
}

/// A controller and its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum CcSpec {
    /// Reno: RFC 5681, recovery ends on the first partial ACK.
    Reno {
        /// Slow-start variant.
        slow_start: SlowStartKind,
        /// Growth and loss-response rules (Linux's by default; ns-3's with the `ns3` stack).
        rules: RenoRules,
    },
    /// NewReno: RFC 5681 + RFC 6582, recovery ends at the recovery point.
    NewReno {
        /// Slow-start variant.
        slow_start: SlowStartKind,
        /// Growth and loss-response rules (Linux's by default; ns-3's with the `ns3` stack).
        rules: RenoRules,
    },
    /// CUBIC, RFC 9438 with Linux `tcp_cubic.c` specifics (slow start, fast convergence,
    /// Reno-friendly region, β and C).
    Cubic(CubicConfig),
    /// Cuback: CUBIC driven by acknowledged segments (quicly PR #678 as paraphrased in the
    /// project's notes), optionally with ABBA.
    Cuback(CubackConfig),
    /// quicly's Reno or CUBIC (`lib/cc-reno.c`, `lib/cc-cubic.c`): byte windows, quicly's β.
    Quicly(QuiclyConfig),
    /// BBRv1 (Linux mainline `tcp_bbr.c`), optionally with 2BRobust.
    Bbr1(Bbr1Config),
    /// BBRv3 (google/bbr v3), optionally with BBR-TAS, 2BRobust and the ECN response.
    Bbr3(Bbr3Config),
    /// TCP Vegas (Linux `tcp_vegas.c`): α, β, γ in segments.
    Vegas(VegasConfig),
    /// TCP Prague (L4STeam `tcp_prague.c` v0.6): requires L4S ECN; RTT-independence settings.
    Prague(PragueConfig),
}

impl CcSpec {
    /// The default parameters of the controller called `name` (or an alias of it, see
    /// [`CONTROLLER_ALIASES`]), if it exists.
    #[must_use]
    pub fn default_for(name: &str) -> Option<CcSpec> {
        match canonical_controller(name) {
            "reno" => Some(CcSpec::Reno {
                slow_start: SlowStartKind::Standard,
                rules: RenoRules::LINUX,
            }),
            "newreno" => Some(CcSpec::NewReno {
                slow_start: SlowStartKind::Standard,
                rules: RenoRules::LINUX,
            }),
            "cubic" => Some(CcSpec::Cubic(CubicConfig::default())),
            "cuback" => Some(CcSpec::Cuback(CubackConfig::default())),
            "quicly_reno" => Some(CcSpec::Quicly(QuiclyConfig::new(QuiclyKind::Reno))),
            "quicly_cubic" => Some(CcSpec::Quicly(QuiclyConfig::new(QuiclyKind::Cubic))),
            "bbr1" => Some(CcSpec::Bbr1(Bbr1Config::default())),
            "bbr1_2brobust" => Some(CcSpec::Bbr1(Bbr1Config {
                robust: Some(Robust::DEFAULT),
            })),
            "bbr3" => Some(CcSpec::Bbr3(Bbr3Config::default())),
            "bbr3_2brobust" => Some(CcSpec::Bbr3(Bbr3Config {
                robust: Some(Robust::DEFAULT),
                ..Bbr3Config::default()
            })),
            "bbr_tas" => Some(CcSpec::Bbr3(Bbr3Config {
                tas: Some(Tas::DEFAULT),
                ..Bbr3Config::default()
            })),
            "vegas" => Some(CcSpec::Vegas(VegasConfig::default())),
            "prague" => Some(CcSpec::Prague(PragueConfig::default())),
            _ => None,
        }
    }

    /// The controller's name as listed in [`CONTROLLERS`].
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            CcSpec::Reno { .. } => "reno",
            CcSpec::NewReno { .. } => "newreno",
            CcSpec::Cubic(c) => c.abba.controller_name("cubic"),
            CcSpec::Cuback(c) => c.abba.controller_name("cuback"),
            CcSpec::Quicly(QuiclyConfig {
                kind: QuiclyKind::Reno,
                ..
            }) => "quicly_reno",
            CcSpec::Quicly(c) => c.abba.controller_name("quicly_cubic"),
            CcSpec::Bbr1(c) if c.robust.is_some() => "bbr1_2brobust",
            CcSpec::Bbr1(_) => "bbr1",
            CcSpec::Bbr3(c) if c.tas.is_some() => "bbr_tas",
            CcSpec::Bbr3(c) if c.robust.is_some() => "bbr3_2brobust",
            CcSpec::Bbr3(_) => "bbr3",
            CcSpec::Vegas(_) => "vegas",
            CcSpec::Prague(_) => "prague",
        }
    }

    /// Build a fresh controller instance. `seed` seeds the controller's own random choices
    /// (BBR's probe timing); the transport derives it from the run seed and the flow.
    #[must_use]
    pub fn build(&self, seed: u64) -> Box<dyn CongestionControl> {
        match *self {
            CcSpec::Bbr1(cfg) => Box::new(Bbr1::new(cfg, seed)),
            CcSpec::Bbr3(cfg) => Box::new(Bbr3::new(cfg, seed)),
            CcSpec::Vegas(cfg) => Box::new(Vegas::new(cfg)),
            CcSpec::Prague(cfg) => Box::new(Prague::new(cfg)),
            CcSpec::Reno { slow_start, rules } => Box::new(Reno::with_rules(slow_start, rules)),
            CcSpec::NewReno { slow_start, rules } => {
                Box::new(NewReno::with_rules(slow_start, rules))
            }
            CcSpec::Cubic(cfg) if cfg.abba.is_on() => {
                Box::new(Abba::new(Cubic::new(cfg), cfg.abba))
            }
            CcSpec::Cubic(cfg) => Box::new(Cubic::new(cfg)),
            CcSpec::Cuback(cfg) if cfg.abba.is_on() => {
                Box::new(Abba::new(Cuback::new(cfg), cfg.abba))
            }
            CcSpec::Cuback(cfg) => Box::new(Cuback::new(cfg)),
            CcSpec::Quicly(cfg) if cfg.kind == QuiclyKind::Cubic && cfg.abba.is_on() => {
                Box::new(Abba::new(Quicly::new(cfg), cfg.abba))
            }
            CcSpec::Quicly(cfg) => Box::new(Quicly::new(cfg)),
        }
    }

    /// The ECN mode the controller requires whatever the flow asks for, or `None` to follow the
    /// flow's setting: what [`CongestionControl::ecn_requirement`] of the built controller
    /// answers, known without building one. TCP Prague requires L4S (Linux
    /// `TCP_CONG_NEEDS_ECN | TCP_CONG_NEEDS_ACCECN`).
    #[must_use]
    pub fn ecn_requirement(&self) -> Option<EcnMode> {
        match self {
            CcSpec::Prague(_) => Some(EcnMode::L4s),
            CcSpec::Reno { .. }
            | CcSpec::NewReno { .. }
            | CcSpec::Cubic { .. }
            | CcSpec::Cuback(_)
            | CcSpec::Quicly(_)
            | CcSpec::Bbr1(_)
            | CcSpec::Bbr3(_)
            | CcSpec::Vegas(_) => None,
        }
    }

    /// The slow-start variant of this spec; `None` for controllers with their own startup (BBR,
    /// and Vegas and Prague, whose slow start is built in as in Linux, and quicly's, whose
    /// standard slow start is built in).
    #[must_use]
    pub fn slow_start(&self) -> Option<SlowStartKind> {
        match *self {
            CcSpec::Reno { slow_start, .. }
            | CcSpec::NewReno { slow_start, .. }
            | CcSpec::Cubic(CubicConfig { slow_start, .. })
            | CcSpec::Cuback(CubackConfig { slow_start, .. }) => Some(slow_start),
            CcSpec::Bbr1(_)
            | CcSpec::Bbr3(_)
            | CcSpec::Vegas(_)
            | CcSpec::Prague(_)
            | CcSpec::Quicly(_) => None,
        }
    }

    /// This spec as a connection using `ecn` runs it: an L4S BBRv3 flow gets the ECN response
    /// (Linux v3 enables it with the route's `ecn_low` feature on an ECN connection); every
    /// other controller is unchanged.
    #[must_use]
    pub fn with_ecn(&self, ecn: EcnMode) -> CcSpec {
        match self {
            CcSpec::Bbr3(c) if ecn == EcnMode::L4s => CcSpec::Bbr3(Bbr3Config {
                ecn_low: true,
                ..*c
            }),
            spec => spec.clone(),
        }
    }

    /// This spec as ns-3.37's TCP module runs the controller of the same name (the `ns3` stack
    /// profile): each rule where ns-3's code differs from ours is a field of the controller's
    /// configuration, Linux's by default, and this sets ns-3's value.
    /// - Reno and NewReno: [`RenoRules::NS3`] (`TcpNewReno`, `src/internet/model/
    ///   tcp-congestion-ops.cc`; ns-3 has no separate Reno controller).
    /// - CUBIC: [`CubicConfig::for_ns3`] (`src/internet/model/tcp-cubic.cc`).
    /// - Vegas: [`VegasConfig::for_ns3`] (`src/internet/model/tcp-vegas.cc`).
    /// - BBRv3 (not in ns-3.37; the out-of-tree port used with the L4S/Prague fork,
    ///   `tcp-bbr3.cc`): the per-mark ECN response ([`crate::EcnResponse::PerMark`]). It acts only
    ///   on an L4S connection (`ecn_low`).
    /// - Everything else unchanged (see each controller's module documentation for the rules
    ///   that already agree with ns-3 or are not modelled).
    #[must_use]
    pub fn for_ns3(&self) -> CcSpec {
        match self {
            CcSpec::Reno { slow_start, .. } => CcSpec::Reno {
                slow_start: *slow_start,
                rules: RenoRules::NS3,
            },
            CcSpec::NewReno { slow_start, .. } => CcSpec::NewReno {
                slow_start: *slow_start,
                rules: RenoRules::NS3,
            },
            CcSpec::Cubic(c) => CcSpec::Cubic(c.for_ns3()),
            CcSpec::Vegas(c) => CcSpec::Vegas(c.for_ns3()),
            CcSpec::Bbr3(c) => CcSpec::Bbr3(Bbr3Config {
                ecn_response: crate::EcnResponse::PerMark,
                ..*c
            }),
            spec => spec.clone(),
        }
    }

    /// This spec with another slow-start variant, or `None` if the controller has no pluggable
    /// slow start.
    #[must_use]
    pub fn with_slow_start(&self, kind: SlowStartKind) -> Option<CcSpec> {
        let mut spec = self.clone();
        match &mut spec {
            CcSpec::Reno { slow_start, .. }
            | CcSpec::NewReno { slow_start, .. }
            | CcSpec::Cubic(CubicConfig { slow_start, .. })
            | CcSpec::Cuback(CubackConfig { slow_start, .. }) => *slow_start = kind,
            CcSpec::Bbr1(_)
            | CcSpec::Bbr3(_)
            | CcSpec::Vegas(_)
            | CcSpec::Prague(_)
            | CcSpec::Quicly(_) => {
                return None;
            }
        }
        Some(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AbbaPolicy;
    use crate::driver::Pipe;
    use crate::{AckInfo, CaState, ConnStart, CwndEvent, CwndState, Dur, RateSample, Time};
    use proptest::prelude::*;
    use proptest::test_runner::TestCaseError;

    /// Only an L4S BBRv3 connection gets the ECN response; nothing else changes.
    #[test]
    fn with_ecn_enables_the_bbr3_ecn_response_for_l4s_only() {
        let bbr3 = CcSpec::default_for("bbr3").unwrap();
        let CcSpec::Bbr3(c) = bbr3.with_ecn(EcnMode::L4s) else {
            panic!("still BBRv3")
        };
        assert!(c.ecn_low);
        assert_eq!(bbr3.with_ecn(EcnMode::Classic), bbr3);
        assert_eq!(bbr3.with_ecn(EcnMode::Off), bbr3);
        for name in CONTROLLERS
            .iter()
            .filter(|n| !n.starts_with("bbr3") && **n != "bbr_tas")
        {
            let spec = CcSpec::default_for(name).unwrap();
            assert_eq!(spec.with_ecn(EcnMode::L4s), spec, "{name}");
        }
    }

    /// `for_ns3` keeps the controller and its name, sets ns-3's NewReno (for Reno and NewReno),
    /// CUBIC and Vegas rules and the BBRv3 port's ECN response, and leaves the Linux defaults
    /// themselves untouched.
    #[test]
    fn for_ns3_sets_ns3_rules_and_keeps_names() {
        for name in CONTROLLERS {
            let spec = CcSpec::default_for(name).unwrap();
            let ns3 = spec.for_ns3();
            assert_eq!(ns3.name(), spec.name(), "{name}");
            assert_eq!(ns3.slow_start(), spec.slow_start(), "{name}");
            assert_eq!(ns3.build(1).name(), spec.build(1).name(), "{name}");
        }
        let CcSpec::Cubic(c) = CcSpec::default_for("cubic").unwrap().for_ns3() else {
            panic!("CUBIC")
        };
        assert_eq!(c, CubicConfig::default().for_ns3());
        assert!(!c.tcp_friendliness && c.ai_one_per_ack && !c.idle_epoch_shift);
        assert_eq!(c.hystart_rules, crate::HyStartRules::NS3);
        let CcSpec::Bbr3(b) = CcSpec::default_for("bbr_tas").unwrap().for_ns3() else {
            panic!("BBRv3")
        };
        assert_eq!(b.ecn_response, crate::EcnResponse::PerMark);
        assert!(b.tas.is_some());
        for name in ["reno", "newreno"] {
            let (CcSpec::Reno { rules, slow_start } | CcSpec::NewReno { rules, slow_start }) =
                CcSpec::default_for(name).unwrap().for_ns3()
            else {
                panic!("{name}")
            };
            assert_eq!(rules, RenoRules::NS3, "{name}");
            assert_eq!(slow_start, SlowStartKind::Standard, "{name}");
        }
        assert_eq!(
            CcSpec::default_for("vegas").unwrap().for_ns3(),
            CcSpec::Vegas(VegasConfig::default().for_ns3())
        );
        // Linux defaults stay Linux's.
        assert_eq!(
            CubicConfig::default().hystart_rules,
            crate::HyStartRules::LINUX
        );
        assert_eq!(
            Bbr3Config::default().ecn_response,
            crate::EcnResponse::Google
        );
        assert_eq!(RenoRules::default(), RenoRules::LINUX);
        assert!(VegasConfig::default().idle_restart && !VegasConfig::default().ns3_decision);
    }

    /// `bbr` (Linux's name for BBRv1) is BBRv1 under its listed name; aliases name listed
    /// controllers and are not listed names themselves.
    #[test]
    fn bbr_is_an_alias_of_bbr1() {
        assert_eq!(canonical_controller("bbr"), "bbr1");
        assert_eq!(canonical_controller("cubic"), "cubic");
        let spec = CcSpec::default_for("bbr").unwrap();
        assert_eq!(spec, CcSpec::default_for("bbr1").unwrap());
        assert_eq!(spec.name(), "bbr1");
        for (alias, name) in CONTROLLER_ALIASES {
            assert!(CONTROLLERS.contains(name) && !CONTROLLERS.contains(alias));
        }
    }

    /// Every listed controller and slow start builds, under its listed name.
    #[test]
    fn every_listed_controller_builds_under_its_name() {
        for name in CONTROLLERS {
            let spec = CcSpec::default_for(name).expect("listed controller has defaults");
            assert_eq!(spec.name(), *name);
            let cc = spec.build(1);
            assert_eq!(spec.ecn_requirement(), cc.ecn_requirement(), "{name}");
            // Variants keep their base algorithm's name (BBR-TAS and 2BRobust are BBRv3/v1).
            assert!(
                name.starts_with(cc.name())
                    || (name.starts_with("bbr") && cc.name().starts_with("bbr")),
                "{name} builds {}",
                cc.name()
            );
            for ss in SLOW_STARTS {
                let kind = SlowStartKind::from_name(ss).expect("listed slow start parses");
                assert_eq!(kind.name(), *ss);
                let Some(spec) = spec.with_slow_start(kind) else {
                    assert!(spec.slow_start().is_none());
                    continue;
                };
                assert_eq!(spec.slow_start(), Some(kind));
                let cc = spec.build(1);
                assert_eq!(cc.name(), *name);
                assert_eq!(cc.state(), "slow_start");
            }
        }
        assert!(CcSpec::default_for("bbr2").is_none());
        assert_eq!(
            CcSpec::default_for("prague").and_then(|s| s.ecn_requirement()),
            Some(EcnMode::L4s)
        );
        assert_eq!(
            CcSpec::default_for("cubic").and_then(|s| s.slow_start()),
            Some(SlowStartKind::HyStart),
            "Linux CUBIC defaults to HyStart"
        );
    }

    /// ABBA shows in the names a result carries: the spec's name and the built controller's
    /// are the same variant name (`cubic_abba` for `on`), and `off` is the bare controller.
    #[test]
    fn abba_variants_are_named_in_results() {
        let want = [
            ("off", "cubic", "cuback", "quicly_cubic"),
            ("on", "cubic_abba", "cuback_abba", "quicly_cubic_abba"),
            (
                "0x1",
                "cubic_abba0x1",
                "cuback_abba0x1",
                "quicly_cubic_abba0x1",
            ),
            ("0x2", "cubic_abba", "cuback_abba", "quicly_cubic_abba"),
            (
                "0x3",
                "cubic_abba0x3",
                "cuback_abba0x3",
                "quicly_cubic_abba0x3",
            ),
        ];
        for (policy, cubic, cuback, quicly) in want {
            let abba = AbbaPolicy::from_name(policy).expect("a policy name");
            let specs = [
                (
                    CcSpec::Cubic(CubicConfig {
                        abba,
                        ..CubicConfig::default()
                    }),
                    cubic,
                ),
                (
                    CcSpec::Cuback(CubackConfig {
                        abba,
                        ..CubackConfig::default()
                    }),
                    cuback,
                ),
                (
                    CcSpec::Quicly(QuiclyConfig {
                        abba,
                        ..QuiclyConfig::new(QuiclyKind::Cubic)
                    }),
                    quicly,
                ),
            ];
            for (spec, name) in specs {
                assert_eq!(spec.name(), name);
                assert_eq!(spec.build(1).name(), name);
            }
        }
        assert!(
            AbbaPolicy::NAMES
                .iter()
                .all(|n| AbbaPolicy::from_name(n).is_some())
        );
        assert_eq!(AbbaPolicy::from_name("0x4"), None);
    }

    #[derive(Clone, Debug)]
    enum Event {
        Ack {
            acked: u32,
            rtt_us: u64,
            gap_us: u64,
            cwnd_limited: bool,
            paced: bool,
        },
        FastLoss,
        RecoveryExit,
        Rto,
        Undo,
        Idle {
            ms: u64,
        },
    }

    fn event() -> impl Strategy<Value = Event> {
        prop_oneof![
            8 => (1u32..=64, 1u64..=2_000_000, 0u64..=20_000, any::<bool>(), any::<bool>())
                .prop_map(|(acked, rtt_us, gap_us, cwnd_limited, paced)| Event::Ack {
                    acked, rtt_us, gap_us, cwnd_limited, paced
                }),
            1 => Just(Event::FastLoss),
            1 => Just(Event::RecoveryExit),
            1 => Just(Event::Rto),
            1 => Just(Event::Undo),
            1 => (0u64..=100_000).prop_map(|ms| Event::Idle { ms }),
        ]
    }

    fn spec() -> impl Strategy<Value = CcSpec> {
        let kind = prop_oneof![
            Just(SlowStartKind::Standard),
            Just(SlowStartKind::HyStart),
            Just(SlowStartKind::HyStartPlusPlus),
            Just(SlowStartKind::Suss),
            (0u64..=500).prop_map(|ms| SlowStartKind::JumpStart {
                fallback_rtt: Some(Dur::from_millis(ms)),
            }),
            (
                0u32..=5_000,
                0u64..=2_000,
                proptest::option::of(0u32..=3_000),
                500u32..=1000
            )
                .prop_map(|(saved_cwnd, rtt_ms, max_jump, beta_permille)| {
                    SlowStartKind::CarefulResume(crate::CarefulResumeConfig {
                        saved_cwnd,
                        saved_rtt: Some(Dur::from_millis(rtt_ms)),
                        max_jump,
                        beta_permille,
                    })
                }),
            (
                2u32..=64,
                1u64..=20_000,
                1024u32..=3072,
                1024u32..=8192,
                1u32..=16
            )
                .prop_map(|(chirp_size, gap_us, geometry, gain, excursion_len)| {
                    SlowStartKind::Chirping(ChirpingConfig {
                        chirp_size,
                        initial_gap: Dur::from_micros(gap_us),
                        geometry,
                        gain,
                        excursion_len,
                    })
                }),
        ];
        (0usize..5, kind, any::<bool>(), any::<bool>(), 0u8..=3).prop_map(
            |(i, slow_start, fc, tf, abba)| {
                let abba = AbbaPolicy::from_bits(abba).unwrap_or_default();
                match i {
                    0 => CcSpec::Reno {
                        slow_start,
                        rules: if fc { RenoRules::NS3 } else { RenoRules::LINUX },
                    },
                    1 => CcSpec::NewReno {
                        slow_start,
                        rules: if tf { RenoRules::NS3 } else { RenoRules::LINUX },
                    },
                    2 => CcSpec::Cubic(CubicConfig {
                        slow_start,
                        fast_convergence: fc,
                        tcp_friendliness: tf,
                        abba,
                        ..CubicConfig::default()
                    }),
                    3 => CcSpec::Cuback(CubackConfig {
                        slow_start,
                        fast_convergence: fc,
                        abba,
                        ..CubackConfig::default()
                    }),
                    _ => CcSpec::Quicly(QuiclyConfig {
                        abba,
                        ..QuiclyConfig::new(QuiclyKind::Cubic)
                    }),
                }
            },
        )
    }

    /// A controller that reports every ssthresh it answers, so that the property test checks
    /// the controller's own answer (the transport kit clamps it at 2).
    #[derive(Clone, Debug)]
    struct Watch<C> {
        inner: C,
        ssthresh: Vec<u32>,
    }

    impl<C: CongestionControl + Clone + 'static> CongestionControl for Watch<C> {
        fn name(&self) -> &'static str {
            self.inner.name()
        }
        fn init(&mut self, now: Time, st: &mut CwndState) {
            self.inner.init(now, st);
        }
        fn on_connection_start(&mut self, now: Time, st: &mut CwndState, info: &ConnStart) {
            self.inner.on_connection_start(now, st, info);
        }
        fn pacing_rate(&self) -> Option<u64> {
            self.inner.pacing_rate()
        }
        fn paces_now(&self) -> bool {
            self.inner.paces_now()
        }
        fn may_pace_itself(&self) -> bool {
            self.inner.may_pace_itself()
        }
        fn wants_packet_sent(&self) -> bool {
            self.inner.wants_packet_sent()
        }
        fn on_packet_sent(&mut self, now: Time, st: &CwndState, sent: &crate::SentInfo) {
            self.inner.on_packet_sent(now, st, sent);
        }
        fn tso_segs(&self, st: &CwndState) -> Option<u32> {
            self.inner.tso_segs(st)
        }
        fn pkts_acked(&mut self, now: Time, st: &mut CwndState, ack: &AckInfo) {
            self.inner.pkts_acked(now, st, ack);
        }
        fn cong_avoid(&mut self, now: Time, st: &mut CwndState, acked: u32, ack: &AckInfo) {
            self.inner.cong_avoid(now, st, acked, ack);
        }
        fn grows_when_not_cwnd_limited(&self) -> bool {
            self.inner.grows_when_not_cwnd_limited()
        }
        fn ssthresh(&mut self, now: Time, st: &CwndState, ack: &AckInfo) -> u32 {
            let s = self.inner.ssthresh(now, st, ack);
            self.ssthresh.push(s);
            s
        }
        fn cong_control(
            &mut self,
            now: Time,
            st: &mut CwndState,
            rs: &RateSample,
            ack: &AckInfo,
        ) -> bool {
            self.inner.cong_control(now, st, rs, ack)
        }
        fn set_state(&mut self, now: Time, st: &mut CwndState, new: CaState) {
            self.inner.set_state(now, st, new);
        }
        fn cwnd_event(&mut self, now: Time, st: &mut CwndState, ev: CwndEvent) {
            self.inner.cwnd_event(now, st, ev);
        }
        fn undo_cwnd(&mut self, now: Time, st: &CwndState, prior_cwnd: u32) -> u32 {
            self.inner.undo_cwnd(now, st, prior_cwnd)
        }
        fn handles_ce(&self) -> bool {
            self.inner.handles_ce()
        }
        fn exit_recovery_on_partial_ack(&self) -> bool {
            self.inner.exit_recovery_on_partial_ack()
        }
        fn state(&self) -> &'static str {
            self.inner.state()
        }
        fn stats(&self, sink: crate::StatSink<'_>) {
            self.inner.stats(sink);
        }
    }

    /// Random ACK / loss / recovery exit / RTO / undo / idle sequences through the shared
    /// driver (the kit's state machine calls the hooks as the transport does): cwnd ≥ 1 always,
    /// ≥ 2 when set from a loss-based ssthresh at recovery exit, every ssthresh the controller
    /// answers ≥ 2, ssthresh ≥ 2 always (initial IW 2..=10 ≥ 2), cwnd ≤ clamp, no panic or
    /// overflow. The connection starts with `start` (Jump Start sizes its window from it).
    fn check_window_invariants<C: CongestionControl + Clone + 'static>(
        cc: C,
        iw: u32,
        start: &ConnStart,
        events: &[Event],
    ) -> Result<(), TestCaseError> {
        let watch = Watch {
            inner: cc,
            ssthresh: Vec::new(),
        };
        let mut p = Pipe::new(watch, CwndState::new(iw, 1448));
        p.cc.on_connection_start(Time::ZERO, &mut p.st, start);
        let mut rtt = Dur::from_millis(1);
        for ev in events {
            let before = p.rec.state();
            match *ev {
                Event::Ack {
                    acked,
                    rtt_us,
                    gap_us,
                    cwnd_limited,
                    paced,
                } => {
                    p.cwnd_limited = cwnd_limited;
                    p.paced = paced;
                    rtt = Dur::from_micros(rtt_us);
                    p.ack(acked, rtt, Dur::from_micros(gap_us));
                }
                Event::FastLoss => p.loss(),
                Event::RecoveryExit if before != CaState::Open => {
                    p.recovery_exit(rtt);
                    if matches!(before, CaState::Recovery | CaState::Cwr) {
                        prop_assert_eq!(p.rec.state(), CaState::Open);
                        prop_assert!(
                            p.st.cwnd >= 2,
                            "cwnd {} after a loss-based reduction",
                            p.st.cwnd
                        );
                    }
                }
                Event::Rto => p.rto(),
                Event::Undo if before != CaState::Open => p.undo(),
                Event::Idle { ms } => p.idle(Dur::from_millis(ms)),
                _ => {}
            }
            for &s in &p.cc.ssthresh {
                prop_assert!(s >= 2, "the controller answered ssthresh {}", s);
            }
            p.cc.ssthresh.clear();
            prop_assert!(p.st.cwnd >= 1, "cwnd {}", p.st.cwnd);
            prop_assert!(
                p.st.cwnd <= p.st.cwnd_clamp,
                "cwnd {} above the clamp {} after {:?}",
                p.st.cwnd,
                p.st.cwnd_clamp,
                ev
            );
            prop_assert!(p.st.ssthresh >= 2, "ssthresh {}", p.st.ssthresh);
            // The trait's promise that lets a transport skip the rate and TSO hooks.
            let c = &p.cc.inner;
            if !c.wants_pacing() && !c.may_pace_itself() {
                prop_assert_eq!(c.pacing_rate(), None);
                prop_assert_eq!(c.tso_segs(&p.st), None);
                prop_assert_eq!(c.min_tso_segs(), None);
            }
            let _ = p.cc.state();
            p.cc.stats(&mut |_k, v| assert!(v.is_finite()));
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// See [`check_window_invariants`]; every loss-based controller and slow start (CUBIC,
        /// Cuback and quicly's CUBIC with every ABBA policy).
        #[test]
        fn window_invariants_hold_under_random_events(
            spec in spec(),
            iw in 2u32..=10,
            transfer in proptest::option::of(1u64..=100_000_000),
            rwnd in proptest::option::of(1u64..=100_000_000),
            events in proptest::collection::vec(event(), 1..400),
        ) {
            let start = ConnStart {
                first_rtt: None,
                transfer_bytes: transfer,
                rcv_wnd_bytes: rwnd,
            };
            match spec {
                CcSpec::Reno { slow_start, rules } => {
                    let cc = Reno::with_rules(slow_start, rules);
                    check_window_invariants(cc, iw, &start, &events)?;
                }
                CcSpec::NewReno { slow_start, rules } => {
                    let cc = NewReno::with_rules(slow_start, rules);
                    check_window_invariants(cc, iw, &start, &events)?;
                }
                CcSpec::Cubic(cfg) if cfg.abba.is_on() => {
                    let cc = Abba::new(Cubic::new(cfg), cfg.abba);
                    check_window_invariants(cc, iw, &start, &events)?;
                }
                CcSpec::Cubic(cfg) => {
                    check_window_invariants(Cubic::new(cfg), iw, &start, &events)?;
                }
                CcSpec::Cuback(cfg) if cfg.abba.is_on() => {
                    let cc = Abba::new(Cuback::new(cfg), cfg.abba);
                    check_window_invariants(cc, iw, &start, &events)?;
                }
                CcSpec::Cuback(cfg) => {
                    check_window_invariants(Cuback::new(cfg), iw, &start, &events)?;
                }
                CcSpec::Quicly(cfg) if cfg.abba.is_on() => {
                    let cc = Abba::new(Quicly::new(cfg), cfg.abba);
                    check_window_invariants(cc, iw, &start, &events)?;
                }
                CcSpec::Quicly(cfg) => {
                    check_window_invariants(Quicly::new(cfg), iw, &start, &events)?;
                }
                other => unreachable!("{other:?}"),
            }
        }
    }
}
