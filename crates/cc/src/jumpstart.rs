//! Jump Start: congestion control without a startup phase (Liu, Allman, Jin and Wang,
//! "Congestion Control Without a Startup Phase", PFLDnet 2007).
//!
//! Contract: [`JumpStart`] is a [`crate::SlowStart`] variant of the loss-based hosts (Reno,
//! NewReno, CUBIC). At [`JumpStart::on_connection_start`] it replaces slow start by one jump:
//! - the first window is the whole transfer, at most the receiver's advertised window
//!   (`W = min(⌈transfer / mss⌉, ⌊rwnd / mss⌋)` segments, never below the initial window and
//!   never above `cwnd_clamp`); `ssthresh = W`, so the host is in congestion avoidance from the
//!   first ACK on ("the remainder of TCP's congestion control algorithms (additive-increase /
//!   multiplicative-decrease and timeout mechanism) remain intact", the paper's abstract);
//! - the W segments are paced evenly over the first RTT, the RTT of the three-way handshake:
//!   [`JumpStart::pacing_rate`] is `W · mss / rtt` until the whole first flight is acknowledged
//!   (or a congestion event ends the jump round), then `None`; the host asks the transport to
//!   pace during that round only (`paces_now`), from the first segment (Linux's internal pacing
//!   leaves the first ten segments unpaced, `tcp_update_skb_after_send`, which would put a
//!   burst at the head of the flight the paper spreads), and afterwards the flow is paced or not
//!   as its `pacing` setting says;
//! - losses, in the first round or later, get the host's own response (its `ssthresh`, PRR,
//!   RTO): the paper keeps TCP's loss recovery intact.
//!
//! Choices where the paper leaves the transport open (its full text was not at hand: only the
//! abstract above was; the rules of the first two points are its definition of Jump Start):
//! - Without an RTT to pace over (the transport passes `first_rtt: None` when it models no
//!   handshake, and the scenario gives no `jumpstart_rtt`), or without a finite window to jump
//!   to (an unsized transfer and no receive window), there is nothing to spread the jump over:
//!   JumpStart then runs standard slow start (RFC 5681 §3.1) and reports it in its stats
//!   (`jumpstart_jumped` = 0).
//! - The configured `fallback_rtt` is used only when the transport has no handshake RTT.
//!
//! Units: windows in segments, rates in bytes per second.

use crate::{AckInfo, ConnStart, CwndState, Dur, StatSink};

/// Where Jump Start is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Before the transport reported the connection start.
    Waiting,
    /// The jump flight `[0, end)` is out and paced at `rate` bytes/s.
    Jump {
        /// SND.NXT after the jump flight, in segments: the round ends once SND.UNA reaches it.
        end: u64,
        /// Pacing rate of the flight, bytes/s.
        rate: u64,
    },
    /// After the jump round: the host's congestion avoidance.
    Done,
    /// No RTT or no finite window: standard slow start.
    Standard,
}

/// Jump Start state of one connection.
#[derive(Clone, Debug)]
pub struct JumpStart {
    /// RTT to pace the jump over when the transport has no handshake RTT.
    fallback_rtt: Option<Dur>,
    phase: Phase,
    /// The jump window, segments (0 before the start or without a jump).
    jump_cwnd: u32,
    /// The RTT the jump was paced over.
    jump_rtt: Option<Dur>,
}

impl JumpStart {
    /// Jump Start pacing over the handshake RTT, or over `fallback_rtt` without one.
    #[must_use]
    pub fn new(fallback_rtt: Option<Dur>) -> Self {
        JumpStart {
            fallback_rtt,
            phase: Phase::Waiting,
            jump_cwnd: 0,
            jump_rtt: None,
        }
    }

    /// The RTT used when the transport has none.
    #[must_use]
    pub fn fallback_rtt(&self) -> Option<Dur> {
        self.fallback_rtt
    }

    /// The jump window in segments, `None` when the connection did not jump.
    #[must_use]
    pub fn jump_cwnd(&self) -> Option<u32> {
        (self.jump_cwnd > 0).then_some(self.jump_cwnd)
    }

    /// The jump window for `info` in segments of `mss` bytes: min(⌈transfer/mss⌉, ⌊rwnd/mss⌋),
    /// `None` when both are unbounded.
    #[must_use]
    pub fn window(info: &ConnStart, mss: u32) -> Option<u32> {
        let mss = u64::from(mss.max(1));
        let transfer = info.transfer_bytes.map(|b| b.div_ceil(mss).max(1));
        let rwnd = info.rcv_wnd_bytes.map(|b| (b / mss).max(1));
        let w = match (transfer, rwnd) {
            (Some(t), Some(r)) => t.min(r),
            (Some(w), None) | (None, Some(w)) => w,
            (None, None) => return None,
        };
        Some(u32::try_from(w).unwrap_or(u32::MAX))
    }

    /// The connection starts sending: jump to the whole window and pace it over the RTT, or
    /// fall back to standard slow start (module documentation).
    pub fn on_connection_start(&mut self, st: &mut CwndState, info: &ConnStart) {
        let rtt = info
            .first_rtt
            .or(self.fallback_rtt)
            .filter(|d| d.as_nanos() > 0);
        let (Some(rtt), Some(w)) = (rtt, Self::window(info, st.mss)) else {
            self.phase = Phase::Standard;
            return;
        };
        let w = w.max(st.cwnd).min(st.cwnd_clamp);
        st.cwnd = w;
        st.ssthresh = w;
        self.jump_cwnd = w;
        self.jump_rtt = Some(rtt);
        // W · mss bytes over one RTT: bytes/s = W · mss · 1e9 / rtt_ns.
        let bytes = u128::from(w) * u128::from(st.mss);
        let rate = bytes * 1_000_000_000 / u128::from(rtt.as_nanos());
        self.phase = Phase::Jump {
            end: u64::from(w),
            rate: u64::try_from(rate).unwrap_or(u64::MAX).max(1),
        };
    }

    /// Per ACK: the jump round ends once the whole first flight is acknowledged.
    pub fn on_ack(&mut self, ack: &AckInfo) {
        if let Phase::Jump { end, .. } = self.phase
            && ack.snd_una >= end
        {
            self.phase = Phase::Done;
        }
    }

    /// A congestion event (loss, ECN, RTO) ends the paced jump round; the host responds.
    pub fn on_congestion(&mut self) {
        if matches!(self.phase, Phase::Jump { .. }) {
            self.phase = Phase::Done;
        }
    }

    /// Whether JumpStart runs standard slow start (no RTT or no finite window).
    #[must_use]
    pub fn is_standard(&self) -> bool {
        self.phase == Phase::Standard
    }

    /// The jump flight's pacing rate, bytes/s, during the jump round only.
    #[must_use]
    pub fn pacing_rate(&self) -> Option<u64> {
        match self.phase {
            Phase::Jump { rate, .. } => Some(rate),
            _ => None,
        }
    }

    /// Whether the jump round is under way.
    #[must_use]
    pub fn in_jump(&self) -> bool {
        matches!(self.phase, Phase::Jump { .. })
    }

    /// Emit `jumpstart_jumped` (1 if the connection jumped), `jumpstart_cwnd`,
    /// `jumpstart_rtt_ms`.
    pub fn stats(&self, sink: StatSink<'_>) {
        sink(
            "jumpstart_jumped",
            if self.jump_cwnd > 0 { 1.0 } else { 0.0 },
        );
        sink("jumpstart_cwnd", f64::from(self.jump_cwnd));
        if let Some(r) = self.jump_rtt {
            sink("jumpstart_rtt_ms", r.as_millis_f64());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    fn start(transfer: Option<u64>, rwnd: Option<u64>, rtt_ms: Option<u64>) -> ConnStart {
        ConnStart {
            first_rtt: rtt_ms.map(Dur::from_millis),
            transfer_bytes: transfer,
            rcv_wnd_bytes: rwnd,
        }
    }

    /// The jump window is min(⌈transfer/mss⌉, ⌊rwnd/mss⌋) (the paper: the whole transfer, up
    /// to the receiver's window), never below the IW.
    #[test]
    fn the_jump_window_is_the_transfer_up_to_the_receive_window() {
        let mss = u64::from(MSS);
        assert_eq!(
            JumpStart::window(&start(Some(100 * mss), None, None), MSS),
            Some(100)
        );
        assert_eq!(
            JumpStart::window(&start(Some(100 * mss + 1), None, None), MSS),
            Some(101)
        );
        assert_eq!(
            JumpStart::window(&start(Some(100 * mss), Some(64 * mss + 7), None), MSS),
            Some(64)
        );
        assert_eq!(
            JumpStart::window(&start(None, Some(65_535), None), MSS),
            Some(45)
        );
        assert_eq!(JumpStart::window(&start(None, None, None), MSS), None);
        let mut js = JumpStart::new(None);
        let mut st = CwndState::new(10, MSS);
        js.on_connection_start(&mut st, &start(Some(3 * mss), None, Some(40)));
        assert_eq!(st.cwnd, 10, "a transfer below the IW keeps the IW");
    }

    /// The flight of W segments is paced at W·mss per RTT during the first round only, and
    /// the host is in congestion avoidance (ssthresh = W) from the start.
    #[test]
    fn the_jump_is_paced_over_one_rtt_and_ends_when_the_flight_is_acked() {
        let mut js = JumpStart::new(None);
        let mut st = CwndState::new(10, MSS);
        js.on_connection_start(&mut st, &start(Some(500 * u64::from(MSS)), None, Some(50)));
        assert_eq!((st.cwnd, st.ssthresh), (500, 500));
        assert!(!st.in_slow_start());
        // 500 · 1448 B / 0.05 s = 14 480 000 B/s.
        assert_eq!(js.pacing_rate(), Some(14_480_000));
        let ack = |una| AckInfo {
            snd_una: una,
            snd_nxt: 500,
            ..AckInfo::default()
        };
        js.on_ack(&ack(499));
        assert!(js.in_jump());
        js.on_ack(&ack(500));
        assert!(!js.in_jump());
        assert_eq!(js.pacing_rate(), None);
    }

    /// A loss in the jump round ends the paced round; the window is the host's to reduce.
    #[test]
    fn congestion_ends_the_jump_round() {
        let mut js = JumpStart::new(Some(Dur::from_millis(20)));
        let mut st = CwndState::new(10, MSS);
        js.on_connection_start(&mut st, &start(None, Some(1_000_000), None));
        assert_eq!(st.cwnd, 690);
        assert!(js.in_jump());
        js.on_congestion();
        assert!(!js.in_jump());
        assert_eq!(js.jump_cwnd(), Some(690));
    }

    /// Without an RTT (no handshake, no fallback) or without a finite window, standard slow
    /// start runs: the window is untouched and nothing is paced.
    #[test]
    fn no_rtt_or_no_window_falls_back_to_slow_start() {
        for (info, fallback) in [
            (start(Some(1_000_000), None, None), None),
            (start(None, None, Some(40)), Some(Dur::from_millis(40))),
        ] {
            let mut js = JumpStart::new(fallback);
            let mut st = CwndState::new(10, MSS);
            js.on_connection_start(&mut st, &info);
            assert!(js.is_standard());
            assert_eq!(st.cwnd, 10);
            assert!(st.in_slow_start());
            assert_eq!(js.pacing_rate(), None);
        }
        // The handshake RTT wins over the configured one.
        let mut js = JumpStart::new(Some(Dur::from_millis(400)));
        let mut st = CwndState::new(10, MSS);
        js.on_connection_start(&mut st, &start(Some(100 * u64::from(MSS)), None, Some(40)));
        assert_eq!(js.pacing_rate(), Some(100 * 1448 * 25));
    }
}
