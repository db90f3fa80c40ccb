//! Controller selection by name: the one place that knows every controller.
//!
//! Contract: [`CcSpec`] is a plain description of a controller and its parameters (what a scenario
//! file names); [`CcSpec::build`] makes a fresh boxed instance. [`CONTROLLERS`] lists the names the
//! scenario layer accepts, so error messages can list valid choices.

use crate::bbr::{Bbr1, Bbr1Config, Bbr3, Bbr3Config, Robust, Tas};
use crate::cubic::{Cubic, CubicConfig};
use crate::prague::{Prague, PragueConfig};
use crate::reno::{NewReno, Reno};
use crate::vegas::{Vegas, VegasConfig};
use crate::{CongestionControl, EcnMode};

/// Names accepted for `controller` in scenario files.
pub const CONTROLLERS: &[&str] = &[
    "reno",
    "newreno",
    "cubic",
    "bbr1",
    "bbr1_2brobust",
    "bbr3",
    "bbr3_2brobust",
    "bbr_tas",
    "vegas",
    "prague",
];

/// Names accepted for `slow_start` in scenario files.
pub const SLOW_STARTS: &[&str] = &["standard", "hystart", "hystart++"];

/// Slow-start variant pluggable into the loss-based controllers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SlowStartKind {
    /// RFC 5681 slow start; leaves on loss or at ssthresh.
    Standard,
    /// Linux CUBIC HyStart (ACK train + delay), `tcp_cubic.c`.
    HyStart,
    /// HyStart++, RFC 9406.
    HyStartPlusPlus,
}

impl SlowStartKind {
    /// Parse a scenario-file name.
    #[must_use]
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "standard" => Some(Self::Standard),
            "hystart" => Some(Self::HyStart),
            "hystart++" | "hystartpp" => Some(Self::HyStartPlusPlus),
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
    },
    /// NewReno: RFC 5681 + RFC 6582, recovery ends at the recovery point.
    NewReno {
        /// Slow-start variant.
        slow_start: SlowStartKind,
    },
    /// CUBIC, RFC 9438 with Linux `tcp_cubic.c` specifics (slow start, fast convergence,
    /// Reno-friendly region, β and C).
    Cubic(CubicConfig),
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
    /// The default parameters of the controller called `name`, if it exists.
    #[must_use]
    pub fn default_for(name: &str) -> Option<CcSpec> {
        match name {
            "reno" => Some(CcSpec::Reno {
                slow_start: SlowStartKind::Standard,
            }),
            "newreno" => Some(CcSpec::NewReno {
                slow_start: SlowStartKind::Standard,
            }),
            "cubic" => Some(CcSpec::Cubic(CubicConfig::default())),
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
            CcSpec::Cubic(_) => "cubic",
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
            CcSpec::Reno { slow_start } => Box::new(Reno::new(slow_start)),
            CcSpec::NewReno { slow_start } => Box::new(NewReno::new(slow_start)),
            CcSpec::Cubic(cfg) => Box::new(Cubic::new(cfg)),
        }
    }

    /// The slow-start variant of this spec; `None` for controllers with their own startup (BBR,
    /// and Vegas and Prague, whose slow start is built in as in Linux).
    #[must_use]
    pub fn slow_start(&self) -> Option<SlowStartKind> {
        match *self {
            CcSpec::Reno { slow_start }
            | CcSpec::NewReno { slow_start }
            | CcSpec::Cubic(CubicConfig { slow_start, .. }) => Some(slow_start),
            CcSpec::Bbr1(_) | CcSpec::Bbr3(_) | CcSpec::Vegas(_) | CcSpec::Prague(_) => None,
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

    /// This spec with another slow-start variant, or `None` if the controller has no pluggable
    /// slow start.
    #[must_use]
    pub fn with_slow_start(&self, kind: SlowStartKind) -> Option<CcSpec> {
        let mut spec = self.clone();
        match &mut spec {
            CcSpec::Reno { slow_start }
            | CcSpec::NewReno { slow_start }
            | CcSpec::Cubic(CubicConfig { slow_start, .. }) => *slow_start = kind,
            CcSpec::Bbr1(_) | CcSpec::Bbr3(_) | CcSpec::Vegas(_) | CcSpec::Prague(_) => {
                return None;
            }
        }
        Some(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AckInfo, CaState, CwndEvent, CwndState, Dur, Time};
    use proptest::prelude::*;

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

    /// Every listed controller and slow start builds, under its listed name.
    #[test]
    fn every_listed_controller_builds_under_its_name() {
        for name in CONTROLLERS {
            let spec = CcSpec::default_for(name).expect("listed controller has defaults");
            assert_eq!(spec.name(), *name);
            let cc = spec.build(1);
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
        assert!(CcSpec::default_for("bbr").is_none());
        assert_eq!(
            CcSpec::default_for("cubic").and_then(|s| s.slow_start()),
            Some(SlowStartKind::HyStart),
            "Linux CUBIC defaults to HyStart"
        );
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
        ];
        (0usize..3, kind, any::<bool>(), any::<bool>()).prop_map(
            |(i, slow_start, fc, tf)| match i {
                0 => CcSpec::Reno { slow_start },
                1 => CcSpec::NewReno { slow_start },
                _ => CcSpec::Cubic(CubicConfig {
                    slow_start,
                    fast_convergence: fc,
                    tcp_friendliness: tf,
                    ..CubicConfig::default()
                }),
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Random ACK / loss / RTO / undo / idle sequences, driven the way the transport calls
        /// the hooks: cwnd ≥ 1 always, ≥ 2 when set from a loss-based ssthresh at recovery exit,
        /// ssthresh ≥ 2 always (initial IW 2..=10 ≥ 2), cwnd ≤ clamp, no panic or overflow.
        #[test]
        fn window_invariants_hold_under_random_events(
            spec in spec(),
            iw in 2u32..=10,
            events in proptest::collection::vec(event(), 1..400),
        ) {
            let mut cc = spec.build(7);
            let mut st = CwndState::new(iw, 1448);
            let mut now = Time::ZERO;
            let (mut una, mut nxt) = (0u64, u64::from(iw));
            let mut state = CaState::Open;
            let mut prior_cwnd = st.cwnd;
            let mut prior_ssthresh = st.ssthresh;
            cc.init(now, &mut st);
            for ev in events {
                match ev {
                    Event::Ack { acked, rtt_us, gap_us, cwnd_limited, paced } => {
                        now += Dur::from_micros(gap_us);
                        una += u64::from(acked);
                        nxt = nxt.max(una);
                        let ack = AckInfo {
                            acked_sacked: acked,
                            pkts_acked: acked,
                            rtt: Some(Dur::from_micros(rtt_us)),
                            srtt: Some(Dur::from_micros(rtt_us)),
                            min_rtt: Some(Dur::from_micros(rtt_us)),
                            in_flight: u32::try_from(nxt - una).unwrap_or(u32::MAX),
                            prior_in_flight: u32::try_from(nxt - una).unwrap_or(u32::MAX),
                            is_cwnd_limited: cwnd_limited,
                            paced,
                            snd_nxt: nxt,
                            snd_una: una,
                            ca_state: Some(state),
                            ..AckInfo::default()
                        };
                        cc.pkts_acked(now, &mut st, &ack);
                        if state != CaState::Recovery && cwnd_limited {
                            cc.cong_avoid(now, &mut st, acked, &ack);
                        }
                        nxt = nxt.max(una + u64::from(st.cwnd));
                    }
                    Event::FastLoss if state == CaState::Open => {
                        prior_cwnd = st.cwnd;
                        prior_ssthresh = st.ssthresh;
                        st.ssthresh = cc.ssthresh(now, &st, &AckInfo::default());
                        prop_assert!(st.ssthresh >= 2);
                        cc.set_state(now, &mut st, CaState::Recovery);
                        state = CaState::Recovery;
                        // PRR moves cwnd towards ssthresh.
                        st.cwnd = st.cwnd.min(st.ssthresh).max(1);
                    }
                    Event::RecoveryExit if state != CaState::Open => {
                        st.cwnd = st.ssthresh.min(st.cwnd_clamp);
                        prop_assert!(st.cwnd >= 2, "cwnd {} after a loss-based reduction", st.cwnd);
                        cc.cwnd_event(now, &mut st, CwndEvent::CompleteCwr);
                        cc.set_state(now, &mut st, CaState::Open);
                        state = CaState::Open;
                    }
                    Event::Rto => {
                        if state == CaState::Open {
                            prior_cwnd = st.cwnd;
                            prior_ssthresh = st.ssthresh;
                        }
                        st.ssthresh = cc.ssthresh(now, &st, &AckInfo::default());
                        prop_assert!(st.ssthresh >= 2);
                        cc.cwnd_event(now, &mut st, CwndEvent::Loss);
                        cc.set_state(now, &mut st, CaState::Loss);
                        state = CaState::Loss;
                        st.cwnd = 1;
                        st.cwnd_cnt = 0;
                    }
                    Event::Undo if state != CaState::Open => {
                        st.cwnd = cc.undo_cwnd(now, &st, prior_cwnd).min(st.cwnd_clamp);
                        st.ssthresh = st.ssthresh.max(prior_ssthresh);
                        cc.set_state(now, &mut st, CaState::Open);
                        state = CaState::Open;
                    }
                    Event::Idle { ms } => {
                        now += Dur::from_millis(ms);
                        cc.cwnd_event(now, &mut st, CwndEvent::TxStart);
                    }
                    _ => {}
                }
                prop_assert!(st.cwnd >= 1, "cwnd {}", st.cwnd);
                prop_assert!(st.cwnd <= st.cwnd_clamp);
                prop_assert!(st.ssthresh >= 2, "ssthresh {}", st.ssthresh);
                let _ = cc.state();
                cc.stats(&mut |_k, v| assert!(v.is_finite()));
            }
        }
    }
}
