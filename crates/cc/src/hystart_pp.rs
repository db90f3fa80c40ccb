//! HyStart++ (RFC 9406): delay-based slow-start exit through a Conservative Slow Start phase.
//!
//! Contract: [`HyStartPlusPlus`] runs during the *initial* slow start only (RFC 9406 §4.3: while
//! ssthresh is still [`INFINITE_SSTHRESH`]); afterwards, and after any congestion event, it is
//! [`HyStartPpPhase::Done`] and the host uses standard slow start. The host calls
//! [`HyStartPlusPlus::on_ack`] from `pkts_acked` on every ACK (round tracking needs every ACK;
//! the RTT sample is optional) and [`HyStartPlusPlus::grow`] instead of standard slow start from
//! `cong_avoid` while `cwnd < ssthresh`. `on_ack` may set `ssthresh = cwnd` (end of CSS, RFC 9406
//! §4.2); [`HyStartPlusPlus::on_congestion`] must be called at every loss/ECN reduction.
//!
//! Rounds (RFC 9406 §4.2): `windowEnd` is SND.NXT at round start; the round ends when it is
//! acknowledged, taken here as `SND.UNA >= windowEnd` (every segment sent before the round
//! started is cumulatively acknowledged; sequence numbers are segment numbers).
//!
//! Growth (RFC 9406 §4.2): in slow start `cwnd += min(N, L)`, in CSS
//! `cwnd += min(N, L) / CSS_GROWTH_DIVISOR`, with N the newly acknowledged segments and
//! L = 8 segments when unpaced, unlimited when paced ([`AckInfo::paced`]). The CSS division keeps
//! its remainder, so four acknowledged segments grow cwnd by exactly one.

use crate::{AckInfo, CwndState, Dur, INFINITE_SSTHRESH, StatSink, Time};

/// Lower clamp of the RTT threshold (RFC 9406 §4.3 `MIN_RTT_THRESH` = 4 ms).
pub const MIN_RTT_THRESH: Dur = Dur::from_millis(4);
/// Upper clamp of the RTT threshold (RFC 9406 §4.3 `MAX_RTT_THRESH` = 16 ms).
pub const MAX_RTT_THRESH: Dur = Dur::from_millis(16);
/// RTT threshold is lastRoundMinRTT / this (RFC 9406 §4.3 `MIN_RTT_DIVISOR` = 8).
pub const MIN_RTT_DIVISOR: u64 = 8;
/// RTT samples needed in a round before any check (RFC 9406 §4.3 `N_RTT_SAMPLE` = 8).
pub const N_RTT_SAMPLE: u32 = 8;
/// CSS growth is slow-start growth divided by this (RFC 9406 §4.3 `CSS_GROWTH_DIVISOR` = 4).
pub const CSS_GROWTH_DIVISOR: u32 = 4;
/// Rounds spent in CSS before congestion avoidance (RFC 9406 §4.3 `CSS_ROUNDS` = 5).
pub const CSS_ROUNDS: u32 = 5;
/// Per-ACK growth limit L in segments for an unpaced sender (RFC 9406 §4.3: "L = 8 if
/// non-paced"; L = infinity if paced).
pub const L_UNPACED: u32 = 8;

/// Where HyStart++ is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HyStartPpPhase {
    /// Standard slow start with delay-increase detection.
    SlowStart,
    /// Conservative Slow Start.
    Css {
        /// `cssBaselineMinRtt`: the round minimum RTT that triggered CSS.
        baseline: Dur,
        /// Round boundaries crossed since entering CSS (the partial entry round counts).
        rounds: u32,
    },
    /// Initial slow start is over (CSS completed, a congestion event, or ssthresh no longer
    /// initial): standard slow start from now on.
    Done,
}

/// HyStart++ state (RFC 9406 §4.2 variables).
#[derive(Clone, Debug)]
pub struct HyStartPlusPlus {
    phase: HyStartPpPhase,
    /// `windowEnd` in segments; `None` until the first ACK.
    window_end: Option<u64>,
    /// `lastRoundMinRTT` (`None` = infinity).
    last_round_min_rtt: Option<Dur>,
    /// `currentRoundMinRTT` (`None` = infinity).
    current_round_min_rtt: Option<Dur>,
    /// `rttSampleCount`.
    rtt_sample_count: u32,
    /// Segments acknowledged in CSS not yet turned into cwnd (remainder of the division).
    css_acked: u32,
    /// Number of SS → CSS transitions (stats).
    css_entries: u32,
    /// Number of spurious CSS exits back to slow start (stats).
    spurious_exits: u32,
    /// cwnd when CSS ended in congestion avoidance (stats; 0 if not).
    exit_cwnd: u32,
}

impl Default for HyStartPlusPlus {
    fn default() -> Self {
        Self::new()
    }
}

impl HyStartPlusPlus {
    /// A fresh HyStart++ in slow start.
    #[must_use]
    pub fn new() -> Self {
        HyStartPlusPlus {
            phase: HyStartPpPhase::SlowStart,
            window_end: None,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_sample_count: 0,
            css_acked: 0,
            css_entries: 0,
            spurious_exits: 0,
            exit_cwnd: 0,
        }
    }

    /// Current phase.
    #[must_use]
    pub fn phase(&self) -> HyStartPpPhase {
        self.phase
    }

    /// True while in Conservative Slow Start.
    #[must_use]
    pub fn in_css(&self) -> bool {
        matches!(self.phase, HyStartPpPhase::Css { .. })
    }

    /// Loss or ECN-CE in slow start or CSS (RFC 9406 §4.2): the initial slow start is over. The
    /// RFC's "ssthresh = cwnd" is superseded by the host's own reduction, which the transport
    /// applies right after.
    pub fn on_congestion(&mut self) {
        self.phase = HyStartPpPhase::Done;
    }

    /// Per-ACK round tracking and detection; `rtt` is this ACK's RTT sample, if any.
    pub fn on_ack(&mut self, _now: Time, st: &mut CwndState, ack: &AckInfo, rtt: Option<Dur>) {
        if self.phase == HyStartPpPhase::Done {
            return;
        }
        if st.ssthresh != INFINITE_SSTHRESH {
            // Someone else ended the initial slow start (RFC 9406 §4.3: initial slow start only).
            self.phase = HyStartPpPhase::Done;
            return;
        }
        let round_over = self.window_end.is_none_or(|end| ack.snd_una >= end);
        if round_over {
            self.window_end = Some(ack.snd_nxt);
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = None;
            self.rtt_sample_count = 0;
            if let HyStartPpPhase::Css { baseline, rounds } = self.phase {
                let rounds = rounds + 1;
                if rounds >= CSS_ROUNDS {
                    // RFC 9406 §4.2: "If CSS_ROUNDS rounds are complete, enter congestion
                    // avoidance by setting the ssthresh to the current cwnd."
                    st.ssthresh = st.cwnd;
                    self.exit_cwnd = st.cwnd;
                    self.phase = HyStartPpPhase::Done;
                    return;
                }
                self.phase = HyStartPpPhase::Css { baseline, rounds };
            }
        }
        let Some(rtt) = rtt else { return };
        self.current_round_min_rtt = Some(self.current_round_min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.rtt_sample_count = self.rtt_sample_count.saturating_add(1);
        if self.rtt_sample_count < N_RTT_SAMPLE {
            return;
        }
        let Some(current) = self.current_round_min_rtt else {
            return;
        };
        match self.phase {
            HyStartPpPhase::SlowStart => {
                let Some(last) = self.last_round_min_rtt else {
                    return;
                };
                let thresh = Dur::from_nanos(last.as_nanos() / MIN_RTT_DIVISOR)
                    .clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                if current >= last + thresh {
                    self.phase = HyStartPpPhase::Css {
                        baseline: current,
                        rounds: 0,
                    };
                    self.css_acked = 0;
                    self.css_entries += 1;
                }
            }
            HyStartPpPhase::Css { baseline, .. } => {
                if current < baseline {
                    // Spurious slow-start exit: resume slow start (RFC 9406 §4.2).
                    self.phase = HyStartPpPhase::SlowStart;
                    self.spurious_exits += 1;
                }
            }
            HyStartPpPhase::Done => {}
        }
    }

    /// Slow-start growth for `acked` newly delivered segments while `cwnd < ssthresh`; returns
    /// the segments left over once ssthresh is reached (as `CwndState::slow_start`).
    pub fn grow(&mut self, st: &mut CwndState, acked: u32, ack: &AckInfo) -> u32 {
        let limit = if ack.paced { u32::MAX } else { L_UNPACED };
        match self.phase {
            HyStartPpPhase::SlowStart => st.slow_start(acked.min(limit)),
            HyStartPpPhase::Css { .. } => {
                self.css_acked = self.css_acked.saturating_add(acked.min(limit));
                let inc = self.css_acked / CSS_GROWTH_DIVISOR;
                self.css_acked -= inc * CSS_GROWTH_DIVISOR;
                st.slow_start(inc)
            }
            HyStartPpPhase::Done => st.slow_start(acked),
        }
    }

    /// Emit `hspp_css_entries`, `hspp_spurious_exits`, `hspp_exit_cwnd`, and the round minima.
    pub fn stats(&self, sink: StatSink<'_>) {
        sink("hspp_css_entries", f64::from(self.css_entries));
        sink("hspp_spurious_exits", f64::from(self.spurious_exits));
        sink("hspp_exit_cwnd", f64::from(self.exit_cwnd));
        if let HyStartPpPhase::Css { rounds, .. } = self.phase {
            sink("hspp_css_rounds", f64::from(rounds));
        }
        if let Some(m) = self.last_round_min_rtt {
            sink("hspp_last_round_min_rtt_ms", m.as_millis_f64());
        }
        if let Some(m) = self.current_round_min_rtt {
            sink("hspp_current_round_min_rtt_ms", m.as_millis_f64());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SlowStartKind;
    use crate::driver::Pipe;
    use crate::reno::Reno;
    use crate::slowstart::SlowStart;

    const MSS: u32 = 1448;

    /// Reno with HyStart++ on the crate's test pipe: `iw` segments in flight, unpaced, each
    /// ACK acknowledging one segment and the window refilled after it.
    fn sender(iw: u32) -> Pipe<Reno> {
        let mut p = Pipe::new(
            Reno::new(SlowStartKind::HyStartPlusPlus),
            CwndState::new(iw, MSS),
        );
        p.nxt = u64::from(iw);
        p
    }

    fn hspp(p: &Pipe<Reno>) -> &HyStartPlusPlus {
        match p.cc.slow_start() {
            SlowStart::HyStartPlusPlus(h) => h,
            other => panic!("slow start {other:?}"),
        }
    }

    /// Deliver one ACK for one segment, 100 µs after the previous, with RTT `rtt_ms`; returns
    /// the phase afterwards.
    fn ack(p: &mut Pipe<Reno>, rtt_ms: u64) -> HyStartPpPhase {
        p.ack(1, Dur::from_millis(rtt_ms), Dur::from_micros(100));
        hspp(p).phase()
    }

    /// ACK until the next ACK would open a new round; returns the ACK count.
    fn finish_round(p: &mut Pipe<Reno>, rtt_ms: u64) -> u64 {
        let mut n = 0;
        while !p.opens_round(1) {
            ack(p, rtt_ms);
            n += 1;
        }
        n
    }

    /// One whole round: the opening ACK and the rest; returns the ACK count.
    fn round(p: &mut Pipe<Reno>, rtt_ms: u64) -> u64 {
        assert!(p.opens_round(1));
        ack(p, rtt_ms);
        1 + finish_round(p, rtt_ms)
    }

    /// Three flat 40 ms rounds, then 50 ms (≥ 40 + clamp(40/8, 4, 16) = 45 ms). CSS must start
    /// exactly on the 8th sample of the first 50 ms round. In CSS, a round of N ACKs grows cwnd by
    /// N/4 (within 1: the carried remainder is < 4 segments). CSS_ROUNDS = 5 counts the partial
    /// entry round, so the ACK opening the 5th round after the entry round ends CSS with
    /// ssthresh = cwnd.
    #[test]
    fn enters_css_after_eight_samples_grows_a_quarter_and_ends_after_five_rounds() {
        let mut s = sender(10);
        for _ in 0..3 {
            round(&mut s, 40);
        }
        assert_eq!(hspp(&s).phase(), HyStartPpPhase::SlowStart);
        let mut entered_at = None;
        for k in 1..=20 {
            if matches!(ack(&mut s, 50), HyStartPpPhase::Css { .. }) {
                entered_at = Some(k);
                break;
            }
        }
        assert_eq!(entered_at, Some(N_RTT_SAMPLE));
        let before = s.st.cwnd;
        let n = finish_round(&mut s, 50);
        let grown = s.st.cwnd - before;
        assert!(
            (i64::from(grown) - (n as i64) / 4).abs() <= 1,
            "CSS grew {grown} for {n} acks"
        );
        for r in 2..=5 {
            let before = s.st.cwnd;
            let n = round(&mut s, 50);
            assert!(hspp(&s).in_css(), "left CSS early in CSS round {r}");
            let grown = s.st.cwnd - before;
            assert!(
                (i64::from(grown) - (n as i64) / 4).abs() <= 1,
                "CSS round {r}: grew {grown} for {n} acks"
            );
        }
        ack(&mut s, 50);
        assert_eq!(hspp(&s).phase(), HyStartPpPhase::Done);
        assert_eq!(s.st.ssthresh, s.st.cwnd);
        assert!(!s.st.in_slow_start());
    }

    /// An RTT spike enters CSS; when the RTT falls back below the CSS baseline for a full set of
    /// samples, HyStart++ returns to slow start (spurious exit) and grows 1 per ACK again.
    #[test]
    fn spurious_css_entry_returns_to_slow_start() {
        let mut s = sender(10);
        for _ in 0..3 {
            round(&mut s, 40);
        }
        for _ in 0..N_RTT_SAMPLE {
            ack(&mut s, 60);
        }
        assert!(hspp(&s).in_css());
        finish_round(&mut s, 60);
        // A full round at 40 ms: after 8 samples, 40 < baseline 60 → slow start.
        for k in 1..=N_RTT_SAMPLE {
            let ph = ack(&mut s, 40);
            if k < N_RTT_SAMPLE {
                assert!(
                    matches!(ph, HyStartPpPhase::Css { .. }),
                    "left CSS at sample {k}"
                );
            } else {
                assert_eq!(ph, HyStartPpPhase::SlowStart);
            }
        }
        let before = s.st.cwnd;
        ack(&mut s, 40);
        assert_eq!(
            s.st.cwnd,
            before + 1,
            "slow start grows one segment per segment acked"
        );
        assert_eq!(hspp(&s).spurious_exits, 1);
        assert!(s.st.in_slow_start());
    }

    /// L caps the per-ACK increase at 8 segments when unpaced (RFC 9406 §4.3); paced, a stretch
    /// ACK of 20 segments grows cwnd by 20.
    #[test]
    fn unpaced_growth_per_ack_is_capped_at_l() {
        for (paced, expect) in [(false, 8), (true, 20)] {
            let mut h = HyStartPlusPlus::new();
            let mut st = CwndState::new(10, MSS);
            let a = AckInfo {
                acked_sacked: 20,
                snd_una: 20,
                snd_nxt: 30,
                paced,
                ..AckInfo::default()
            };
            h.on_ack(Time::ZERO, &mut st, &a, None);
            h.grow(&mut st, 20, &a);
            assert_eq!(st.cwnd, 10 + expect, "paced={paced}");
        }
    }

    /// A loss ends HyStart++ for good; so does a finite ssthresh (not the initial slow start).
    #[test]
    fn congestion_or_finite_ssthresh_means_standard_slow_start() {
        let mut h = HyStartPlusPlus::new();
        h.on_congestion();
        assert_eq!(h.phase(), HyStartPpPhase::Done);
        let mut h = HyStartPlusPlus::new();
        let mut st = CwndState::new(10, MSS);
        st.ssthresh = 50;
        let a = AckInfo {
            acked_sacked: 20,
            snd_una: 20,
            snd_nxt: 30,
            ..AckInfo::default()
        };
        h.on_ack(Time::ZERO, &mut st, &a, Some(Dur::from_millis(10)));
        assert_eq!(h.phase(), HyStartPpPhase::Done);
        h.grow(&mut st, 20, &a);
        assert_eq!(st.cwnd, 30, "standard slow start is not capped by L");
    }
}
