//! Linux HyStart: the hybrid slow-start exit of `tcp_cubic.c` (Ha and Rhee, 2011).
//!
//! Contract: [`HyStart`] watches the ACKs of one connection while it is in slow start and, the
//! first time one of its two detectors fires, sets `ssthresh = cwnd` so that the host controller
//! leaves slow start on its next `cong_avoid` (Linux `hystart_update`). It never changes `cwnd`.
//! Growth in slow start stays the host's (standard slow start). The host supplies the RTT sample
//! and its `delay_min` (Linux keeps `delay_min` in `struct bictcp`; CUBIC also uses it for the
//! cubic curve), because the host decides which samples count (CUBIC discards samples in the
//! first second of an epoch, `cubictcp_acked`).
//!
//! Rules, all from Linux `net/ipv4/tcp_cubic.c`:
//! - A round starts when SND.UNA passes the SND.NXT recorded at the previous round start
//!   (`bictcp_hystart_reset`, `after(snd_una, end_seq)`), checked before the detectors run.
//! - Nothing is detected while `cwnd < HYSTART_LOW_WINDOW` (`hystart_low_window`).
//! - *ACK train*: an ACK no more than [`HYSTART_ACK_DELTA`] after the previous "close" ACK
//!   extends the train; if the train then spans more than `delay_min + hystart_ack_delay` since
//!   the round start (halved when the socket is unpaced), exit.
//! - *Delay*: the round's minimum RTT is taken over the ACKs of the round; once
//!   [`HYSTART_MIN_SAMPLES`] samples have been counted, every further sample checks
//!   `curr_rtt > delay_min + clamp(delay_min/8, 4 ms, 16 ms)`; if so, exit.
//! - After an exit (`found`), HyStart is inert until [`HyStart::restart`] (CUBIC calls it on
//!   `TCP_CA_Loss`, `bictcp_state`).
//!
//! ns-3.37's `TcpCubic` runs the same detectors with other rules ([`HyStartRules::NS3`]): a
//! margin of clamp(delay_min, 4 ms, 1000 ms) instead of clamp(delay_min/8, 4 ms, 16 ms), a train
//! threshold of delay_min (neither halved nor widened), and a round minimum frozen after the
//! first 8 samples. [`HyStartRules::LINUX`] is the default.
//!
//! Units: times at nanosecond resolution (Linux uses microseconds from `tcp_clock_us`); windows
//! in segments.

use crate::{AckInfo, CwndState, Dur, StatSink, Time};

/// Minimum number of RTT samples in a round before the delay detector may fire
/// (Linux `HYSTART_MIN_SAMPLES`, tcp_cubic.c).
pub const HYSTART_MIN_SAMPLES: u32 = 8;
/// Lower clamp of the delay threshold (Linux `HYSTART_DELAY_MIN` = 4000 µs, tcp_cubic.c).
pub const HYSTART_DELAY_MIN: Dur = Dur::from_millis(4);
/// Upper clamp of the delay threshold (Linux `HYSTART_DELAY_MAX` = 16000 µs, tcp_cubic.c).
pub const HYSTART_DELAY_MAX: Dur = Dur::from_millis(16);
/// HyStart only runs once cwnd reaches this many segments (Linux module parameter
/// `hystart_low_window` = 16, tcp_cubic.c).
pub const HYSTART_LOW_WINDOW: u32 = 16;
/// Maximum spacing of two ACKs of one train (Linux module parameter `hystart_ack_delta_us` =
/// 2000, tcp_cubic.c).
pub const HYSTART_ACK_DELTA: Dur = Dur::from_millis(2);
/// Cap of the pacing allowance added to the train threshold (Linux `hystart_ack_delay`:
/// `min(USEC_PER_MSEC, …)`).
pub const HYSTART_ACK_DELAY_MAX: Dur = Dur::from_millis(1);
/// GSO size used by `hystart_ack_delay` (Linux `sk_gso_max_size`, default
/// `GSO_LEGACY_MAX_SIZE` = 65536 bytes, include/linux/netdevice.h).
const GSO_MAX_SIZE_BYTES: u128 = 65_536;
/// Number of GSO packets of allowance in `hystart_ack_delay` (the factor 4 in
/// `4 * sk_gso_max_size / pacing_rate`, tcp_cubic.c).
const ACK_DELAY_GSO_PACKETS: u128 = 4;
/// Slow-start pacing ratio used to reconstruct `sk_pacing_rate` (Linux sysctl
/// `tcp_pacing_ss_ratio` = 200 %, `tcp_update_pacing_rate` in tcp_input.c).
const PACING_SS_RATIO_PERCENT: u128 = 200;

/// The HyStart rules that differ between Linux `tcp_cubic.c` and ns-3.37's `TcpCubic`
/// (`src/internet/model/tcp-cubic.cc`, `HystartUpdate` and `HystartDelayThresh`). Both share
/// the low window (16), the sample count (8), the ACK spacing of a train (2 ms) and the 4 ms
/// lower clamp of the delay margin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HyStartRules {
    /// The delay margin is clamp(delay_min >> `delay_margin_shift`, 4 ms, `delay_margin_max`):
    /// Linux 3 (`HYSTART_DELAY_THRESH(ca->delay_min >> 3)`); ns-3 0 (`HystartUpdate` passes
    /// `m_delayMin` itself to `HystartDelayThresh`, so the round minimum must reach about
    /// twice delay_min).
    pub delay_margin_shift: u32,
    /// Upper clamp of the delay margin: Linux 16 ms (`HYSTART_DELAY_MAX`); ns-3 1000 ms
    /// (attribute `HyStartDelayMax`).
    pub delay_margin_max: Dur,
    /// ACK-train threshold: `false` = Linux's delay_min + `hystart_ack_delay`, halved when
    /// unpaced (`hystart_update`); `true` = ns-3's delay_min itself (`HystartUpdate`:
    /// `(now - m_roundStart) > m_delayMin`).
    pub train_threshold_delay_min: bool,
    /// Round minimum: `false` = Linux's minimum over every sample of the round (`curr_rtt`);
    /// `true` = ns-3's minimum over the round's first [`HYSTART_MIN_SAMPLES`] samples only
    /// (`HystartUpdate` updates `m_currRtt` only while `m_sampleCnt < m_hystartMinSamples`).
    pub round_min_first_samples: bool,
}

impl HyStartRules {
    /// Linux `tcp_cubic.c`.
    pub const LINUX: HyStartRules = HyStartRules {
        delay_margin_shift: 3,
        delay_margin_max: HYSTART_DELAY_MAX,
        train_threshold_delay_min: false,
        round_min_first_samples: false,
    };
    /// ns-3.37 `TcpCubic` (`tcp-cubic.cc`).
    pub const NS3: HyStartRules = HyStartRules {
        delay_margin_shift: 0,
        delay_margin_max: NS3_HYSTART_DELAY_MAX,
        train_threshold_delay_min: true,
        round_min_first_samples: true,
    };

    /// The delay margin for `delay_min` under these rules.
    #[must_use]
    pub fn delay_margin(&self, delay_min: Dur) -> Dur {
        let shifted = delay_min.as_nanos() >> self.delay_margin_shift.min(63);
        Dur::from_nanos(shifted).clamp(HYSTART_DELAY_MIN, self.delay_margin_max)
    }
}

impl Default for HyStartRules {
    fn default() -> Self {
        Self::LINUX
    }
}

/// Upper clamp of ns-3's delay margin (ns-3.37 `TcpCubic` attribute `HyStartDelayMax` =
/// 1000 ms, `tcp-cubic.cc`).
pub const NS3_HYSTART_DELAY_MAX: Dur = Dur::from_millis(1000);

/// Which detector ended slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HyStartExit {
    /// ACK-train length exceeded the threshold (`HYSTART_ACK_TRAIN`).
    AckTrain,
    /// Round minimum RTT rose above the threshold (`HYSTART_DELAY`).
    Delay,
}

/// Linux HyStart state (the HyStart fields of `struct bictcp`).
#[derive(Clone, Debug)]
pub struct HyStart {
    /// Whether the ACK-train detector is enabled (`hystart_detect & HYSTART_ACK_TRAIN`).
    pub detect_ack_train: bool,
    /// Whether the delay detector is enabled (`hystart_detect & HYSTART_DELAY`).
    pub detect_delay: bool,
    /// Linux's or ns-3's rules ([`HyStartRules`]).
    pub rules: HyStartRules,
    /// Set once a detector fired (`found`).
    found: Option<HyStartExit>,
    /// Start of the current round (`round_start`).
    round_start: Time,
    /// Last ACK of the current train (`last_ack`).
    last_ack: Time,
    /// SND.NXT at round start, in segments (`end_seq`).
    end_seq: u64,
    /// Minimum RTT of the current round (`curr_rtt`; `None` = Linux `~0U`).
    curr_rtt: Option<Dur>,
    /// Samples counted this round, saturating at `HYSTART_MIN_SAMPLES` (`sample_cnt`).
    sample_cnt: u32,
    /// cwnd at the exit, for stats.
    exit_cwnd: u32,
}

impl Default for HyStart {
    fn default() -> Self {
        Self::new()
    }
}

impl HyStart {
    /// HyStart with both detectors, as Linux defaults (`hystart_detect` = 3).
    #[must_use]
    pub fn new() -> Self {
        HyStart {
            detect_ack_train: true,
            detect_delay: true,
            rules: HyStartRules::LINUX,
            found: None,
            round_start: Time::ZERO,
            last_ack: Time::ZERO,
            end_seq: 0,
            curr_rtt: None,
            sample_cnt: 0,
            exit_cwnd: 0,
        }
    }

    /// Which detector fired, if any.
    #[must_use]
    pub fn found(&self) -> Option<HyStartExit> {
        self.found
    }

    /// Re-arm after an RTO (`bictcp_reset` clears `found`, then `bictcp_hystart_reset`). The
    /// round restarts on the next ACK (`end_seq = 0`), since the SND.NXT of the RTO instant is not
    /// passed to `set_state`.
    pub fn restart(&mut self) {
        *self = HyStart {
            detect_ack_train: self.detect_ack_train,
            detect_delay: self.detect_delay,
            rules: self.rules,
            ..HyStart::new()
        };
    }

    /// Start a new round (`bictcp_hystart_reset`).
    fn reset_round(&mut self, now: Time, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// Linux `hystart_ack_delay`: min(1 ms, 4 · GSO size / pacing rate), with the pacing rate
    /// reconstructed as Linux computes it in slow start (`tcp_update_pacing_rate`: 200 % of
    /// cwnd · mss / srtt). Zero without an srtt (Linux: zero when `sk_pacing_rate` is 0).
    pub(crate) fn ack_delay(st: &CwndState, ack: &AckInfo) -> Dur {
        let Some(srtt) = ack.srtt.filter(|d| d.as_nanos() > 0) else {
            return Dur::ZERO;
        };
        // rate [B/s] = 2 · cwnd · mss / srtt; delay [ns] = 4 · 65536 · 1e9 / rate.
        let num = ACK_DELAY_GSO_PACKETS
            * GSO_MAX_SIZE_BYTES
            * 1_000_000_000
            * 100
            * u128::from(srtt.as_nanos());
        let den = PACING_SS_RATIO_PERCENT
            * u128::from(st.cwnd.max(1))
            * u128::from(st.mss.max(1))
            * 1_000_000_000;
        let ns = u64::try_from(num / den).unwrap_or(u64::MAX);
        Dur::from_nanos(ns).min(HYSTART_ACK_DELAY_MAX)
    }

    /// Per-ACK update while in slow start (Linux `hystart_update`, called from `cubictcp_acked`
    /// only with a valid RTT sample). `delay` is this ACK's RTT sample and `delay_min` the host's
    /// minimum RTT (already including `delay`). May set `st.ssthresh = st.cwnd`.
    pub fn on_ack(
        &mut self,
        now: Time,
        st: &mut CwndState,
        ack: &AckInfo,
        delay: Dur,
        delay_min: Dur,
    ) {
        if self.found.is_some() || !st.in_slow_start() {
            return;
        }
        if ack.snd_una > self.end_seq {
            self.reset_round(now, ack.snd_nxt);
        }
        if st.cwnd < HYSTART_LOW_WINDOW {
            return;
        }
        if self.detect_ack_train && now.saturating_since(self.last_ack) <= HYSTART_ACK_DELTA {
            self.last_ack = now;
            let mut threshold = if self.rules.train_threshold_delay_min {
                delay_min
            } else {
                delay_min + Self::ack_delay(st, ack)
            };
            // Unpaced senders send in bursts, so the ACK train is compressed; Linux halves the
            // threshold when `sk_pacing_status == SK_PACING_NONE`.
            if !ack.paced && !self.rules.train_threshold_delay_min {
                threshold = Dur::from_nanos(threshold.as_nanos() / 2);
            }
            if now.saturating_since(self.round_start) > threshold {
                self.exit(st, HyStartExit::AckTrain);
                return;
            }
        }
        if self.detect_delay {
            let counting = self.sample_cnt < HYSTART_MIN_SAMPLES;
            if counting || !self.rules.round_min_first_samples {
                self.curr_rtt = Some(self.curr_rtt.map_or(delay, |c| c.min(delay)));
            }
            if counting {
                self.sample_cnt += 1;
            } else if self
                .curr_rtt
                .is_some_and(|c| c > delay_min + self.rules.delay_margin(delay_min))
            {
                self.exit(st, HyStartExit::Delay);
            }
        }
    }

    fn exit(&mut self, st: &mut CwndState, how: HyStartExit) {
        self.found = Some(how);
        self.exit_cwnd = st.cwnd;
        st.ssthresh = st.cwnd;
    }

    /// Emit `hystart_found` (0 none, 1 ACK train, 2 delay), `hystart_exit_cwnd`,
    /// `hystart_round_min_rtt_ms`.
    pub fn stats(&self, sink: StatSink<'_>) {
        let found = match self.found {
            None => 0.0,
            Some(HyStartExit::AckTrain) => 1.0,
            Some(HyStartExit::Delay) => 2.0,
        };
        sink("hystart_found", found);
        sink("hystart_exit_cwnd", f64::from(self.exit_cwnd));
        if let Some(c) = self.curr_rtt {
            sink("hystart_round_min_rtt_ms", c.as_millis_f64());
        }
    }
}

/// Delay-detector margin: clamp(delay_min / 8, 4 ms, 16 ms) (Linux `HYSTART_DELAY_THRESH` of
/// `delay_min >> 3`).
#[must_use]
pub fn delay_threshold(delay_min: Dur) -> Dur {
    Dur::from_nanos(delay_min.as_nanos() / 8).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    fn ack(snd_una: u64, snd_nxt: u64, rtt_ms: f64, paced: bool) -> AckInfo {
        AckInfo {
            acked_sacked: 1,
            pkts_acked: 1,
            rtt: Some(Dur::from_secs_f64(rtt_ms / 1e3)),
            srtt: Some(Dur::from_millis(40)),
            min_rtt: Some(Dur::from_millis(40)),
            is_cwnd_limited: true,
            paced,
            snd_una,
            snd_nxt,
            ..AckInfo::default()
        }
    }

    #[test]
    fn delay_threshold_clamps_between_4_and_16_ms() {
        assert_eq!(delay_threshold(Dur::from_millis(8)), Dur::from_millis(4));
        assert_eq!(delay_threshold(Dur::from_millis(40)), Dur::from_millis(5));
        assert_eq!(delay_threshold(Dur::from_millis(400)), Dur::from_millis(16));
    }

    /// ACKs 3 ms apart never form a train, so only the delay detector can act. With delay_min
    /// 40 ms the threshold is 40 + 5 = 45 ms: a round at 46 ms exits on the sample after the 8th
    /// (Linux counts 8 samples, then checks), a round at exactly 45 ms never does.
    #[test]
    fn delay_detector_exits_after_eight_samples_above_threshold() {
        let delay_min = Dur::from_millis(40);
        for (rtt_ms, expect_exit) in [(46.0, true), (45.0, false)] {
            let mut h = HyStart::new();
            let mut st = CwndState::new(32, MSS);
            let mut now = Time::ZERO;
            // Round 1 begins at the first ACK (snd_una 1 > end_seq 0).
            for i in 1..=20u64 {
                now += Dur::from_millis(3);
                let a = ack(i, 100, rtt_ms, false);
                h.on_ack(now, &mut st, &a, a.rtt.unwrap(), delay_min);
                if i <= 8 {
                    assert!(h.found().is_none(), "fired after only {i} samples");
                    assert!(st.in_slow_start());
                }
                if i == 9 {
                    assert_eq!(h.found().is_some(), expect_exit, "rtt {rtt_ms} ms");
                }
            }
            if expect_exit {
                assert_eq!(h.found(), Some(HyStartExit::Delay));
                assert_eq!(st.ssthresh, 32);
            } else {
                assert!(h.found().is_none());
                assert!(st.in_slow_start());
            }
        }
    }

    fn ns3() -> HyStart {
        HyStart {
            rules: HyStartRules::NS3,
            ..HyStart::new()
        }
    }

    /// Runs `rtts` (ms) as one round of ACKs 3 ms apart (no train) with delay_min 40 ms;
    /// returns the index of the sample on which HyStart exited.
    fn delay_exit(mut h: HyStart, rtts: &[f64]) -> Option<usize> {
        let mut st = CwndState::new(32, MSS);
        let mut now = Time::ZERO;
        for (i, &rtt) in rtts.iter().enumerate() {
            now += Dur::from_millis(3);
            let a = ack(i as u64 + 1, 1000, rtt, false);
            h.on_ack(now, &mut st, &a, a.rtt.unwrap(), Dur::from_millis(40));
            if h.found().is_some() {
                assert_eq!(st.ssthresh, 32);
                return Some(i);
            }
        }
        None
    }

    /// ns-3 `TcpCubic::HystartDelayThresh(m_delayMin)`: margin clamp(delay_min, 4 ms,
    /// 1000 ms), not Linux's clamp(delay_min/8, 4 ms, 16 ms). delay_min 40 ms: Linux margin
    /// 5 ms, ns-3 40 ms, so a round at 50 ms exits Linux's HyStart on the 9th sample but not
    /// ns-3's; a round at 81 ms (> 40 + 40) exits ns-3's on the 9th.
    #[test]
    fn ns3_delay_margin_is_delay_min_clamped_to_4_ms_and_1_s() {
        let ms = Dur::from_millis;
        for (delay_min, linux, ns3) in [
            (ms(2), ms(4), ms(4)),
            (ms(40), ms(5), ms(40)),
            (ms(400), ms(16), ms(400)),
            (ms(2000), ms(16), ms(1000)),
        ] {
            assert_eq!(HyStartRules::LINUX.delay_margin(delay_min), linux);
            assert_eq!(delay_threshold(delay_min), linux);
            assert_eq!(HyStartRules::NS3.delay_margin(delay_min), ns3);
        }
        assert_eq!(delay_exit(HyStart::new(), &[50.0; 12]), Some(8));
        assert_eq!(delay_exit(ns3(), &[50.0; 12]), None);
        assert_eq!(delay_exit(ns3(), &[80.0; 12]), None);
        assert_eq!(delay_exit(ns3(), &[81.0; 12]), Some(8));
    }

    /// ns-3 `HystartUpdate` takes the round minimum over the first 8 samples only: 8 samples
    /// at 90 ms then 41 ms keep ns-3's minimum at 90 > 40 + 40, which exits on the 9th sample;
    /// Linux's minimum falls to 41 < 45 and never exits.
    #[test]
    fn ns3_round_minimum_is_frozen_after_eight_samples() {
        let mut rtts = vec![90.0; 8];
        rtts.extend([41.0; 8]);
        assert_eq!(delay_exit(ns3(), &rtts), Some(8));
        assert_eq!(delay_exit(HyStart::new(), &rtts), None);
    }

    /// ns-3's ACK train fires once the train spans more than delay_min itself (`(now -
    /// m_roundStart) > m_delayMin`), paced or not: ACKs 1 ms apart with delay_min 40 ms fire
    /// at 41 ms (Linux unpaced: 21 ms, see the test above).
    #[test]
    fn ns3_ack_train_threshold_is_delay_min() {
        for paced in [false, true] {
            let mut h = ns3();
            let mut st = CwndState::new(100, MSS);
            let t0 = Time::ZERO + Dur::from_secs(1);
            let mut fired_at = None;
            for k in 0..60u64 {
                let a = ack(k + 1, 1000, 40.0, paced);
                h.on_ack(
                    t0 + Dur::from_millis(k),
                    &mut st,
                    &a,
                    a.rtt.unwrap(),
                    Dur::from_millis(40),
                );
                if h.found().is_some() && fired_at.is_none() {
                    fired_at = Some(k);
                }
            }
            assert_eq!(fired_at, Some(41), "paced {paced}");
            assert_eq!(h.found(), Some(HyStartExit::AckTrain));
        }
    }

    /// Below `hystart_low_window` = 16 segments neither detector acts, however large the delay
    /// or the train.
    #[test]
    fn nothing_happens_below_the_low_window() {
        let mut h = HyStart::new();
        let mut st = CwndState::new(15, MSS);
        let mut now = Time::ZERO;
        for i in 1..=200u64 {
            now += Dur::from_micros(500);
            let a = ack(i, 1000, 200.0, false);
            h.on_ack(now, &mut st, &a, a.rtt.unwrap(), Dur::from_millis(10));
        }
        assert!(h.found().is_none());
        assert!(st.in_slow_start());
    }

    /// ACKs 1 ms apart (< 2 ms delta) with a flat RTT, so the delay detector stays quiet.
    /// delay_min 40 ms, ack_delay = min(1 ms, …) = 1 ms (the reconstructed pacing rate is far
    /// below 262 MB/s), so the unpaced threshold is 41/2 = 20.5 ms: the train fires on the ACK
    /// at 21 ms after the round start. Paced, the threshold is 41 ms: it fires at 42 ms.
    #[test]
    fn ack_train_detector_fires_when_the_train_spans_the_threshold() {
        for (paced, fire_ms) in [(false, 21u64), (true, 42u64)] {
            let mut h = HyStart::new();
            let mut st = CwndState::new(100, MSS);
            let t0 = Time::ZERO + Dur::from_secs(1);
            let mut fired_at = None;
            for k in 0..60u64 {
                let now = t0 + Dur::from_millis(k);
                let a = ack(k + 1, 1000, 40.0, paced);
                h.on_ack(now, &mut st, &a, a.rtt.unwrap(), Dur::from_millis(40));
                if h.found().is_some() && fired_at.is_none() {
                    fired_at = Some(k);
                }
            }
            assert_eq!(fired_at, Some(fire_ms), "paced={paced}");
            assert_eq!(h.found(), Some(HyStartExit::AckTrain));
            assert_eq!(st.ssthresh, 100);
        }
    }

    /// A gap larger than 2 ms breaks the train for the rest of the round.
    #[test]
    fn ack_train_needs_closely_spaced_acks() {
        let mut h = HyStart::new();
        let mut st = CwndState::new(100, MSS);
        for k in 0..60u64 {
            let now = Time::ZERO + Dur::from_millis(3 * k);
            let a = ack(k + 1, 1000, 40.0, false);
            h.on_ack(now, &mut st, &a, a.rtt.unwrap(), Dur::from_millis(40));
        }
        assert!(h.found().is_none());
    }

    /// After `restart` (RTO), HyStart may fire again.
    #[test]
    fn restart_rearms_the_detectors() {
        let mut h = HyStart::new();
        let mut st = CwndState::new(64, MSS);
        let dm = Dur::from_millis(40);
        for i in 1..=9u64 {
            let a = ack(i, 100, 60.0, false);
            h.on_ack(Time(i * 3_000_000), &mut st, &a, a.rtt.unwrap(), dm);
        }
        assert_eq!(h.found(), Some(HyStartExit::Delay));
        h.restart();
        st.ssthresh = 1000;
        assert!(h.found().is_none());
        for i in 10..=18u64 {
            let a = ack(i, 100, 60.0, false);
            h.on_ack(Time(i * 3_000_000), &mut st, &a, a.rtt.unwrap(), dm);
        }
        assert_eq!(h.found(), Some(HyStartExit::Delay));
        assert_eq!(st.ssthresh, 64);
    }
}
