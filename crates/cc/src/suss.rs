//! SUSS, "Speeding Up Slow Start" (Arghavani, Zhang, Eyers, Arghavani, ACM SIGCOMM 2024; the
//! authors' Linux patch to `tcp_cubic.c`, `tcp_input.c` and `tcp_output.c`, SUSSdeveloper/SUSS,
//! linux-6.8): Linux HyStart plus a growth factor of 4 instead of 2 in the early rounds of slow
//! start, when the ACK train of the round predicts that exponential growth can go on.
//!
//! Contract: [`Suss`] is a [`crate::SlowStart`] variant. It watches the ACKs of slow start
//! (from the host's `pkts_acked`), and may raise `cwnd`, set `ssthresh = cwnd` (exit) or cancel
//! the slow-start growth of an ACK ([`Suss::grow`]). While it paces it answers
//! [`Suss::pacing_rate`] and [`Suss::paces_now`], which the host forwards.
//!
//! Rules (function names are the patch's):
//! - *Rounds and the blue part* (`suss_measurements`): a round starts when SND.UNA passes the
//!   SND.NXT of the previous round start. The *blue* segments of round r are the first
//!   `IW · 2^(r−2)` segments of the previous round's flight, the ones plain slow start would
//!   have sent (the initial window in round 2; the patch's `TCP_INIT_CWND << (round − 1)`
//!   counts in sent segments of the next round), the rest are *red* (SUSS's extra segments).
//!   The first round is round 1 (the initial window in flight).
//! - *Measurement*: when the ACK of the last blue segment arrives, the blue ACK train's duration
//!   normalised to the blue segments is `Δ = blue · elapsed / (2 · blue_acked)`, `elapsed` since
//!   the round start, `blue_acked` the segments acknowledged by the earlier ACKs of the round.
//! - *Growth factor 4* (`suss_speedup`), decided at that ACK while SUSS still accelerates:
//!   round 2: only if min RTT > 10 ms and Δ < min RTT / 4, otherwise SUSS is off for the
//!   connection (plain HyStart); round r ≥ 3: (condition 1) the next round's ACK train,
//!   predicted as `Δ_r² / Δ_{r−1}` with `Δ_r = Δ · 2^(r−2)` and `Δ_{r−1} = Δ_prev · 2^(r−3)`,
//!   fits in min RTT, and r < `suss_max` + 2 (at most `suss_max` = 3 accelerated rounds);
//!   (condition 2) the round's minimum RTT has not grown: `(k+1)·curr_rtt ≤
//!   (k+1)·min_rtt + k·min_rtt/8`, k = rounds since min RTT last decreased. Once refused, no
//!   later round accelerates.
//! - *Acceleration*: `red = blue · (2^(r−1) − 1)` extra segments are sent paced at
//!   `red · mss / T` over `T = min_rtt − min_rtt / 2^(r−1)`, if the time left,
//!   `min_rtt − T`, exceeds Δ (else the round is not accelerated); the window grows by
//!   `red − red_acked` (`suss_limit = cwnd + acked + red − red_ack`, red_ack = the previous
//!   round's red segments, whose ACKs arrive in this round and do not grow the window while it
//!   paces: `snd_cwnd -= acked` for red ACKs), so the round ends at 4× the previous round's
//!   window (IW 10: 40, 160, 640). At the next round start pacing stops (ACK clocking again).
//! - *Exit* (`suss_cap`, replacing HyStart's ACK-train detector while SUSS runs): on closely
//!   spaced blue ACKs (≤ 2 ms, `hystart_ack_delta_us`) of a round, once `(now − round_start) ·
//!   2^jumps > (min_rtt + ack_delay) / 2` a cap `cwnd + blue_acked · (2^jumps − 1)` is set and
//!   slow start ends (`ssthresh = cwnd`) when cwnd passes it; HyStart's delay detector is
//!   unchanged, and after more than one accelerated round it first sets `cwnd = in_flight`
//!   (the red window not yet sent is not kept). Both only for cwnd ≥ 16 (`hystart_low_window`).
//! - *Congestion*: any loss or ECN reduction ends SUSS (patch `tcp_init_cwnd_reduction`, state
//!   9); an RTO turns it off and re-arms plain HyStart (patch `tcp_enter_loss`).
//!
//! Differences from the patch: the window of an accelerated round is raised at the blue tail
//! at once instead of by 2 per paced skb (`tcp_update_skb_after_send`), so `cwnd = in_flight`
//! at a loss in the paced part is not modelled (the host reduces from the raised window); the
//! paced part starts at once instead of after the patch's guard `(min_rtt − T − Δ)/2`; `IW` is
//! the connection's initial window where the patch has `TCP_INIT_CWND`; the patch's
//! port-based opt-in is replaced by choosing `slow_start = "suss"`.

use crate::hystart::{HYSTART_ACK_DELTA, HYSTART_LOW_WINDOW, HyStart, HyStartExit};
use crate::{AckInfo, CwndState, Dur, StatSink, Time};

/// Maximum number of rounds with growth factor 4 (patch module parameter `suss_max` = 3).
pub const SUSS_MAX: u32 = 3;
/// SUSS accelerates only on paths whose minimum RTT exceeds this (`suss_speedup`:
/// `delay_min > 10000` µs).
pub const SUSS_MIN_RTT: Dur = Dur::from_millis(10);
/// Largest round exponent used in window arithmetic (keeps `IW << r` far from overflow; rounds
/// beyond it never accelerate).
const MAX_SHIFT: u32 = 40;

/// Where SUSS is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Measuring rounds, possibly accelerating (patch states 1 and 2).
    Active,
    /// Off for this connection: plain HyStart (patch state 10).
    Off,
    /// Slow start ended (exit or congestion).
    Done,
}

/// SUSS state of one connection.
#[derive(Clone, Debug)]
pub struct Suss {
    hystart: HyStart,
    mode: Mode,
    /// Growth factor 4 still allowed (`suss_gf`).
    gf: bool,
    /// Initial window, segments (taken at the first ACK).
    iw: u64,
    /// Round number, 1 while the initial window is in flight (`suss_round_no`).
    round: u32,
    /// SND.NXT at the round start, segments (`suss_head_seq`).
    head: u64,
    /// End of the blue part of this round, segments (`suss_tail_seq`).
    tail: u64,
    round_start: Time,
    /// Last ACK of the blue ACK train (HyStart's `last_ack`, for the cap rule).
    last_ack: Time,
    /// 1 while ACKs are blue, 2 on the blue tail's ACK, 0 on red ACKs (`suss_is_blue`).
    is_blue: u8,
    /// Segments acknowledged by blue ACKs this round (`suss_blue_cnt`).
    blue_acked: u64,
    /// Δ of the previous accelerated round (`suss_perv_delta_t_bat`).
    prev_delta: Dur,
    /// Accelerated rounds so far (`suss_num_of_jump`).
    jumps: u32,
    /// Exit cap (`suss_cap`, set when `suss_flag`).
    cap: Option<u64>,
    /// The round in which min RTT last decreased (`suss_r_minupdate`).
    r_minupdate: u32,
    delay_min: Option<Dur>,
    /// Minimum RTT of the current round.
    curr_rtt: Option<Dur>,
    /// Pacing rate of the paced part of this round, bytes/s (patch state 2).
    paced: Option<u64>,
    /// This ACK is red while the round paces: no slow-start growth for it.
    cancel_growth: bool,
}

impl Default for Suss {
    fn default() -> Self {
        Self::new()
    }
}

impl Suss {
    /// SUSS on top of Linux HyStart.
    #[must_use]
    pub fn new() -> Self {
        Suss {
            hystart: HyStart::new(),
            mode: Mode::Active,
            gf: true,
            iw: 0,
            round: 1,
            head: 0,
            tail: 0,
            round_start: Time::ZERO,
            last_ack: Time::ZERO,
            is_blue: 0,
            blue_acked: 0,
            prev_delta: Dur::ZERO,
            jumps: 0,
            cap: None,
            r_minupdate: 1,
            delay_min: None,
            curr_rtt: None,
            paced: None,
            cancel_growth: false,
        }
    }

    /// Rounds accelerated so far.
    #[must_use]
    pub fn jumps(&self) -> u32 {
        self.jumps
    }

    /// Whether SUSS was turned off for this connection (plain HyStart).
    #[must_use]
    pub fn is_off(&self) -> bool {
        self.mode == Mode::Off
    }

    /// Which HyStart detector ended slow start, if one did.
    #[must_use]
    pub fn hystart_found(&self) -> Option<HyStartExit> {
        self.hystart.found()
    }

    /// Per-ACK update (`cubictcp_acked` → `hystart_update` with `suss_cap`, then
    /// `suss_measurements` from `cubictcp_cong_avoid`). `rtt` and `delay_min` as for HyStart.
    pub fn on_ack(
        &mut self,
        now: Time,
        st: &mut CwndState,
        ack: &AckInfo,
        rtt: Option<Dur>,
        delay_min: Option<Dur>,
    ) {
        self.cancel_growth = false;
        if self.iw == 0 {
            self.iw = u64::from(st.cwnd.max(1));
            self.tail = self.iw;
        }
        if self.mode != Mode::Active {
            if let (Some(d), Some(m)) = (rtt, delay_min) {
                self.hystart.on_ack(now, st, ack, d, m);
            }
            return;
        }
        if !st.in_slow_start() {
            self.finish();
            return;
        }
        if let Some(m) = delay_min
            && self.delay_min.is_none_or(|old| m < old)
        {
            self.delay_min = Some(m);
            self.r_minupdate = self.round;
        }
        // Round bookkeeping first (Linux resets HyStart's round before `suss_cap`).
        if self.is_blue == 2 {
            self.is_blue = 0;
        }
        if ack.snd_una > self.head {
            self.is_blue = 1;
            self.blue_acked = 0;
            self.round += 1;
            self.round_start = now;
            self.last_ack = now;
            self.head = ack.snd_nxt;
            self.curr_rtt = None;
            self.paced = None;
        }
        if let (Some(d), Some(m)) = (rtt, delay_min) {
            self.curr_rtt = Some(self.curr_rtt.map_or(d, |c| c.min(d)));
            if st.cwnd >= HYSTART_LOW_WINDOW && self.cap_check(now, st, ack, m) {
                return;
            }
            // HyStart's rounds and delay detector; its ACK-train detector is SUSS's cap rule.
            self.hystart.detect_ack_train = false;
            self.hystart.on_ack(now, st, ack, d, m);
            if self.hystart.found().is_some() {
                if self.jumps > 1 {
                    st.cwnd = ack.in_flight.clamp(2, st.cwnd);
                    st.ssthresh = st.cwnd;
                }
                self.finish();
                return;
            }
        }
        self.measure(now, st, ack);
    }

    /// `suss_cap`: set the exit cap on a long blue ACK train, exit when cwnd passes it. Returns
    /// whether slow start ended.
    fn cap_check(&mut self, now: Time, st: &mut CwndState, ack: &AckInfo, delay_min: Dur) -> bool {
        if let Some(cap) = self.cap {
            if u64::from(st.cwnd) > cap {
                if self.jumps > 1 {
                    st.cwnd = ack.in_flight.clamp(2, st.cwnd);
                }
                st.ssthresh = st.cwnd;
                self.finish();
                return true;
            }
            return false;
        }
        if self.is_blue != 0 && now.saturating_since(self.last_ack) <= HYSTART_ACK_DELTA {
            self.last_ack = now;
            // The patch halves the threshold: SUSS runs on sockets that are not paced.
            let threshold = (delay_min + HyStart::ack_delay(st, ack)).as_nanos() / 2;
            let train = now.saturating_since(self.round_start).as_nanos();
            if u128::from(train) << self.jumps.min(MAX_SHIFT) > u128::from(threshold) {
                let extra = self
                    .blue_acked
                    .saturating_mul((1u64 << self.jumps.min(MAX_SHIFT)) - 1);
                self.cap = Some(u64::from(st.cwnd).saturating_add(extra));
            }
        }
        false
    }

    /// `suss_measurements`: at the blue tail, measure Δ and maybe accelerate this round.
    fn measure(&mut self, now: Time, st: &mut CwndState, ack: &AckInfo) {
        if ack.snd_una >= self.tail {
            let elapsed = now.saturating_since(self.round_start);
            self.is_blue = 2;
            let shift = (self.round - 1).min(MAX_SHIFT);
            let blue = self.iw << shift;
            let blue_ack = blue / 2;
            self.tail = self.head + blue;
            let delta_ns = u128::from(blue) * u128::from(elapsed.as_nanos())
                / u128::from(2 * self.blue_acked.max(1));
            let delta = Dur::from_nanos(u64::try_from(delta_ns).unwrap_or(u64::MAX));
            if self.gf {
                self.gf = self.speedup(delta);
            }
            if self.gf
                && let Some(min_rtt) = self.delay_min
            {
                self.prev_delta = delta;
                let red = blue.saturating_mul((1u64 << shift) - 1);
                let red_ack = (blue_ack << (shift - 1).min(MAX_SHIFT)).saturating_sub(blue_ack);
                let pacing_ns = min_rtt.as_nanos() - (min_rtt.as_nanos() >> shift);
                if min_rtt.as_nanos() - pacing_ns > delta.as_nanos() && pacing_ns > 0 {
                    self.jumps += 1;
                    let bytes = u128::from(red) * u128::from(st.mss);
                    let rate = bytes * 1_000_000_000 / u128::from(pacing_ns);
                    self.paced = Some(u64::try_from(rate).unwrap_or(u64::MAX).max(1));
                    let extra = u32::try_from(red.saturating_sub(red_ack)).unwrap_or(u32::MAX);
                    st.cwnd = st.cwnd.saturating_add(extra).min(st.cwnd_clamp);
                }
            }
        }
        if self.is_blue != 0 {
            self.blue_acked += u64::from(ack.acked_sacked);
        }
        if self.is_blue == 0 && self.paced.is_some() {
            self.cancel_growth = true;
        }
    }

    /// `suss_speedup`: whether round `self.round` grows by 4.
    fn speedup(&mut self, delta: Dur) -> bool {
        let Some(min_rtt) = self.delay_min else {
            return false;
        };
        if self.round <= 2 {
            if min_rtt > SUSS_MIN_RTT && delta.as_nanos() < min_rtt.as_nanos() / 4 {
                return true;
            }
            self.mode = Mode::Off;
            self.hystart.detect_ack_train = true;
            return false;
        }
        let r = self.round.min(MAX_SHIFT);
        // Condition 1: the next round's train Δ_r² / Δ_{r−1} fits in min RTT.
        let d_r = u128::from(delta.as_nanos()) << (r - 2);
        let d_prev = (u128::from(self.prev_delta.as_nanos()) << (r - 3)).max(1);
        let predicted = d_r * d_r / d_prev;
        let c1 = predicted <= u128::from(min_rtt.as_nanos()) && self.round < SUSS_MAX + 2;
        // Condition 2: (k+1)·curr_rtt ≤ (k+1)·min_rtt + k·min_rtt/8.
        let k = u128::from(self.round.saturating_sub(self.r_minupdate));
        let curr = u128::from(self.curr_rtt.unwrap_or(min_rtt).as_nanos());
        let m = u128::from(min_rtt.as_nanos());
        let c2 = (k + 1) * curr <= (k + 1) * m + k * m / 8;
        c1 && c2
    }

    fn finish(&mut self) {
        self.mode = Mode::Done;
        self.paced = None;
        self.cancel_growth = false;
        self.hystart.detect_ack_train = true;
    }

    /// Slow-start growth: none for a red ACK while the round paces (the patch's
    /// `snd_cwnd -= acked` before `tcp_slow_start`), else standard. Returns the leftover.
    pub fn grow(&mut self, st: &mut CwndState, acked: u32) -> u32 {
        if self.cancel_growth {
            self.cancel_growth = false;
            return 0;
        }
        st.slow_start(acked)
    }

    /// A loss or ECN reduction ends SUSS (patch `tcp_init_cwnd_reduction`).
    pub fn on_congestion(&mut self) {
        if self.mode == Mode::Active {
            self.finish();
        }
    }

    /// RTO: SUSS off, HyStart re-armed (patch `tcp_enter_loss`; CUBIC's `bictcp_state`).
    pub fn on_rto(&mut self) {
        self.mode = Mode::Off;
        self.paced = None;
        self.cancel_growth = false;
        self.hystart.restart();
    }

    /// The paced part's rate, bytes/s.
    #[must_use]
    pub fn pacing_rate(&self) -> Option<u64> {
        self.paced
    }

    /// Whether the round is in its paced part.
    #[must_use]
    pub fn paces_now(&self) -> bool {
        self.paced.is_some()
    }

    /// Emit `suss_round`, `suss_jumps`, `suss_mode` (0 active, 1 off, 2 done), `suss_rate` and
    /// HyStart's stats.
    pub fn stats(&self, sink: StatSink<'_>) {
        sink("suss_round", f64::from(self.round));
        sink("suss_jumps", f64::from(self.jumps));
        let mode = match self.mode {
            Mode::Active => 0.0,
            Mode::Off => 1.0,
            Mode::Done => 2.0,
        };
        sink("suss_mode", mode);
        if let Some(r) = self.paced {
            sink("suss_rate", crate::num::u64_to_f64(r));
        }
        self.hystart.stats(sink);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_round(round: u32, min_rtt_ms: u64) -> Suss {
        let mut s = Suss::new();
        s.round = round;
        s.delay_min = Some(Dur::from_millis(min_rtt_ms));
        s.r_minupdate = 1;
        s
    }

    /// `suss_speedup` in round 2: growth ×4 only above a 10 ms min RTT and with a blue train
    /// shorter than min RTT / 4; otherwise SUSS is off for the connection.
    #[test]
    fn round_two_needs_a_long_rtt_and_a_short_train() {
        assert!(at_round(2, 100).speedup(Dur::from_millis(24)));
        for (rtt, delta) in [(100, 25), (10, 1)] {
            let mut s = at_round(2, rtt);
            assert!(!s.speedup(Dur::from_millis(delta)), "rtt {rtt} Δ {delta}");
            assert!(s.is_off());
        }
    }

    /// Later rounds: the predicted train Δ_r²/Δ_{r−1} (Δ_r = Δ·2^(r−2)) must fit in min RTT,
    /// at most `suss_max` = 3 rounds accelerate (r < 5), and the round's RTT must not have grown
    /// beyond (1 + k/(8(k+1)))·min RTT.
    #[test]
    fn later_rounds_check_the_predicted_train_the_round_cap_and_the_rtt() {
        // Round 3, Δ_prev = 10 ms: Δ_3 = 2Δ; predicted = 4Δ²/10 ms ≤ 100 ms ⇔ Δ ≤ 15.8 ms.
        let mut s = at_round(3, 100);
        s.prev_delta = Dur::from_millis(10);
        s.curr_rtt = Some(Dur::from_millis(100));
        assert!(s.clone().speedup(Dur::from_millis(15)));
        assert!(!s.clone().speedup(Dur::from_millis(16)));
        // k = 2 rounds since the min RTT fell: the RTT may grow by 2/24 = 8.3 %.
        s.curr_rtt = Some(Dur::from_micros(108_300));
        assert!(s.clone().speedup(Dur::from_millis(1)));
        s.curr_rtt = Some(Dur::from_micros(108_400));
        assert!(!s.clone().speedup(Dur::from_millis(1)));
        // Round 5 never accelerates.
        let mut s = at_round(5, 100);
        s.prev_delta = Dur::from_millis(10);
        assert!(!s.speedup(Dur::from_micros(1)));
    }
}
