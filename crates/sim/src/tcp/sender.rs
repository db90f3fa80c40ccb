//! The TCP sender: SACK scoreboard, RACK-TLP loss detection, PRR recovery, RTO with backoff,
//! delivery-rate sampling, internal EDT pacing, and the congestion-controller hooks.
//!
//! Contract: the engine calls [`Sender::start`], [`Sender::on_ack`], [`Sender::on_timer`] and
//! [`Sender::stop_app`] with `now`; each appends the data segments to transmit to an output
//! buffer (as [`Payload`]s with their wire size) and leaves its next deadline in
//! [`Sender::next_wakeup`]. Per-ACK work is O(newly acknowledged segments + SACK blocks), never
//! O(window): the SACK blocks of the previous ACK are cached (Linux `recv_sack_cache`), and RACK
//! walks a send-time-ordered list from its old end (Linux `tsorted_sent_queue`).
//!
//! Linux rules followed (v6.x `net/ipv4/`):
//! - in-flight = packets_out − (sacked_out + lost_out) + retrans_out (`tcp_packets_in_flight`);
//! - RACK (RFC 8985 §6, `tcp_recovery.c`): a segment sent before the most recently delivered one
//!   is lost once `now ≥ xmit_ts + rack_rtt + reo_wnd`; reo_wnd = min_rtt/4 capped at SRTT, and 0
//!   when no reordering was seen and the sender is in Recovery/Loss or ≥ 3 segments are SACKed;
//!   (simplification: the reordering timer is armed for the earliest pending deadline, Linux
//!   arms it for the latest plus 2 ms);
//! - recovery starts when a segment is marked lost (`tcp_time_to_recover`), ends when SND.UNA
//!   reaches the recovery point; PRR (RFC 6937, `tcp_cwnd_reduction`) meters cwnd meanwhile;
//! - TLP (RFC 8985 §7, `tcp_schedule_loss_probe`/`tcp_send_loss_probe`) in Open state:
//!   PTO = 2·SRTT (+200 ms if one segment is out, else +2 ms), capped by the RTO time left;
//!   a probe sends new data if any, else retransmits the highest segment; a repaired tail loss
//!   (an ACK beyond the probe without DSACK) reduces cwnd once (`tcp_process_tlp_ack`), and
//!   entering recovery ends the probe episode (`tcp_init_cwnd_reduction`);
//! - cwnd grows only on ACKs that advance SND.UNA unless reordering was seen
//!   (`tcp_may_raise_cwnd`);
//! - RTO (`tcp_retransmit_timer`/`tcp_enter_loss`): a new ssthresh from the controller only for a
//!   new episode (Open/Disorder, recovery point reached, or progress since the last RTO), cwnd =
//!   1, every un-SACKed segment marked lost, exponential backoff, reset on an ACK with an RTT
//!   sample;
//! - RTT (`tcp_ack_update_rtt`): SRTT from the oldest newly acknowledged never-retransmitted
//!   segment, the windowed minimum from the newest, none from a cumulative ACK that covers
//!   retransmitted data (Karn); the timestamp echo serves retransmitted data;
//! - delivery-rate samples (`tcp_rate.c`): interval = max(send elapsed, ACK elapsed), samples
//!   shorter than min_rtt are invalid, app-limited marking when the application runs dry;
//! - pacing (`tcp_update_skb_after_send`): once 10 data segments were sent, each departure
//!   advances the earliest departure time by payload length / rate, claiming back at most half of it from
//!   lateness; default rate for controllers without one: 200 % (cwnd < ssthresh/2) or 120 % of
//!   mss·max(cwnd, packets_out)/srtt (`tcp_update_pacing_rate`);
//! - restart after idle (`tcp_cwnd_restart`, `tcp_slow_start_after_idle` = 1): cwnd halves per
//!   RTO of idleness, not below min(IW, cwnd).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use cclab_cc::{
    AckInfo, CaState, CongestionControl, CwndEvent, CwndState, Dur, INFINITE_SSTHRESH, LostInfo,
    RateSample, Time,
};

use super::rtt::{RTO_MAX, RTO_MIN, RttEstimator};
use crate::config::{FlowConfig, PacingMode, TCP_IP_HEADER_BYTES};
use crate::histogram::Histogram;
use crate::packet::{MAX_SACK_BLOCKS, Payload, SeqRange};
use crate::results::TracePoint;

/// RFC 8985 §7.2 / Linux `tcp_schedule_loss_probe`: extra PTO time when one segment is out
/// (worst-case delayed ACK, `TCP_RTO_MIN`).
const TLP_SINGLE_EXTRA: Dur = RTO_MIN;
/// Linux `TCP_TIMEOUT_MIN` (2 jiffies ≈ 2 ms) added to the PTO otherwise.
const TLP_EXTRA: Dur = Dur::from_millis(2);
/// Linux: pacing starts after this many data segments (`tcp_update_skb_after_send`).
const PACING_MIN_SEGS: u64 = 10;
/// Linux `sysctl_tcp_pacing_ss_ratio` (percent).
const PACING_SS_RATIO: u64 = 200;
/// Linux `sysctl_tcp_pacing_ca_ratio` (percent).
const PACING_CA_RATIO: u64 = 120;
/// RFC 6675 DupThresh / Linux `tcp_reordering` default.
const DUP_THRESH: u32 = 3;

const F_SACKED: u8 = 1;
const F_LOST: u8 = 2;
const F_RETRANS: u8 = 4;
const F_EVER_RETRANS: u8 = 8;
const F_RATE_USED: u8 = 16;
const F_APP_LIMITED: u8 = 32;

/// Per-segment scoreboard entry (Linux `tcp_skb_cb` fields used by SACK, RACK and tcp_rate).
#[derive(Clone, Copy, Debug, Default)]
struct Seg {
    xmit_ts: Time,
    first_tx: Time,
    delivered_ts: Time,
    delivered: u64,
    tx_in_flight: u32,
    tx_count: u32,
    flags: u8,
}

impl Seg {
    fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// Which timer a deadline belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Timer {
    Rto,
    Probe,
}

/// Counters exported to the results.
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderCounters {
    /// Data segments sent (including retransmissions).
    pub segments_sent: u64,
    /// Retransmissions.
    pub retransmits: u64,
    /// Segments marked lost.
    pub lost: u64,
    /// Fast-recovery episodes.
    pub fast_recoveries: u64,
    /// Retransmission timeouts.
    pub rtos: u64,
    /// Tail-loss probes.
    pub tlps: u64,
    /// Smallest cwnd ever.
    pub min_cwnd: u32,
}

/// One segment to put on the wire.
#[derive(Clone, Copy, Debug)]
pub struct Outgoing {
    /// The data payload.
    pub payload: Payload,
    /// Wire bytes.
    pub wire_bytes: u32,
}

/// The sending side of one flow.
#[derive(Debug)]
pub struct Sender {
    cc: Box<dyn CongestionControl>,
    st: CwndState,
    mss: u32,
    /// Segments the application has handed over so far (`u64::MAX` = unlimited bulk).
    app_end: u64,
    /// Total segments of a sized transfer.
    total_segs: Option<u64>,
    last_len: u32,
    initial_window: u32,
    snd_una: u64,
    snd_nxt: u64,
    segs: VecDeque<Seg>,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    tsorted: VecDeque<(u64, Time)>,
    lost_q: BinaryHeap<Reverse<u64>>,
    sack_cache: [SeqRange; MAX_SACK_BLOCKS],
    n_sack_cache: usize,
    rtt: RttEstimator,
    backoff: u32,
    rack_xmit: Time,
    rack_end: u64,
    rack_rtt: Dur,
    rack_advanced: bool,
    fack: u64,
    reordering_seen: bool,
    ca_state: CaState,
    high_seq: u64,
    /// RTOs since SND.UNA last advanced (Linux `icsk_retransmits`).
    rtos_since_progress: u32,
    prior_cwnd: u32,
    prr_delivered: u32,
    prr_out: u32,
    tlp_high_seq: Option<u64>,
    tlp_retrans: bool,
    delivered: u64,
    delivered_ts: Time,
    first_tx_ts: Time,
    app_limited: u64,
    total_lost: u64,
    /// Last valid delivery-rate sample as (segments, interval); converted to bit/s on demand.
    last_rs: Option<(u64, Dur)>,
    paced: bool,
    wstamp: Time,
    data_segs_out: u64,
    pacing_rate: Option<u64>,
    cwnd_limited: bool,
    last_send: Time,
    timer: Option<(Timer, Time)>,
    reo_at: Option<Time>,
    pace_at: Option<Time>,
    started: bool,
    /// Exported counters.
    pub counters: SenderCounters,
    /// Every RTT sample taken from ACKs (Linux `ca_rtt`: newest delivered segment).
    pub rtt_hist: Histogram,
    /// When each RTO fired.
    pub rto_times: Vec<Time>,
    trace: Option<Vec<TracePoint>>,
    /// Time the whole sized transfer was acknowledged.
    pub completed_at: Option<Time>,
}

impl Sender {
    /// A sender for `cfg`.
    #[must_use]
    pub fn new(cfg: &FlowConfig) -> Self {
        let mss = cfg.mss;
        let (total_segs, last_len) = match cfg.size {
            Some(bytes) => {
                let n = bytes.div_ceil(u64::from(mss)).max(1);
                let last = bytes - (n - 1) * u64::from(mss);
                (Some(n), last.max(1) as u32)
            }
            None => (None, mss),
        };
        let cc = cfg.cc.build();
        let cc_wants_pacing = cc.wants_pacing();
        let st = CwndState::new(cfg.initial_window, mss);
        Sender {
            cc,
            st,
            mss,
            app_end: 0,
            total_segs,
            last_len,
            initial_window: cfg.initial_window,
            snd_una: 0,
            snd_nxt: 0,
            segs: VecDeque::new(),
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            tsorted: VecDeque::new(),
            lost_q: BinaryHeap::new(),
            sack_cache: [SeqRange::default(); MAX_SACK_BLOCKS],
            n_sack_cache: 0,
            rtt: RttEstimator::default(),
            backoff: 0,
            rack_xmit: Time::ZERO,
            rack_end: 0,
            rack_rtt: Dur::ZERO,
            rack_advanced: false,
            fack: 0,
            reordering_seen: false,
            ca_state: CaState::Open,
            high_seq: 0,
            rtos_since_progress: 0,
            prior_cwnd: 0,
            prr_delivered: 0,
            prr_out: 0,
            tlp_high_seq: None,
            tlp_retrans: false,
            delivered: 0,
            delivered_ts: Time::ZERO,
            first_tx_ts: Time::ZERO,
            app_limited: 0,
            total_lost: 0,
            last_rs: None,
            paced: match cfg.pacing {
                PacingMode::On => true,
                PacingMode::Off => false,
                PacingMode::Auto => cc_wants_pacing,
            },
            wstamp: Time::ZERO,
            data_segs_out: 0,
            pacing_rate: None,
            cwnd_limited: false,
            last_send: Time::ZERO,
            timer: None,
            reo_at: None,
            pace_at: None,
            started: false,
            counters: SenderCounters {
                min_cwnd: cfg.initial_window,
                ..SenderCounters::default()
            },
            rtt_hist: Histogram::new(),
            rto_times: Vec::new(),
            trace: cfg.trace.then(Vec::new),
            completed_at: None,
        }
    }

    // ----- observation -----

    /// The controller.
    #[must_use]
    pub fn cc(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }
    /// Window state.
    #[must_use]
    pub fn cwnd_state(&self) -> CwndState {
        self.st
    }
    /// Smoothed RTT.
    #[must_use]
    pub fn srtt(&self) -> Option<Dur> {
        self.rtt.srtt()
    }
    /// Minimum RTT.
    #[must_use]
    pub fn min_rtt(&self) -> Option<Dur> {
        self.rtt.min_rtt()
    }
    /// Segments in flight (Linux `tcp_packets_in_flight`).
    #[must_use]
    pub fn in_flight(&self) -> u32 {
        let packets_out = (self.snd_nxt - self.snd_una) as u32;
        packets_out - (self.sacked_out + self.lost_out) + self.retrans_out
    }
    /// Pacing rate in force, bytes/s, if the flow paces.
    #[must_use]
    pub fn pacing_rate(&self) -> Option<u64> {
        if self.is_paced() {
            self.pacing_rate
        } else {
            None
        }
    }
    /// Last valid delivery-rate sample, bit/s.
    #[must_use]
    pub fn last_delivery_rate_bps(&self) -> Option<f64> {
        self.last_rs
            .map(|(segs, dt)| segs as f64 * f64::from(self.mss) * 8.0 / dt.as_secs_f64())
    }
    /// Recovery state.
    #[must_use]
    pub fn ca_state(&self) -> CaState {
        self.ca_state
    }
    /// SND.UNA in segments.
    #[must_use]
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    /// SND.NXT in segments.
    #[must_use]
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    /// Total segments of a sized transfer.
    #[must_use]
    pub fn total_segments(&self) -> Option<u64> {
        self.total_segs
    }
    /// Payload bytes of segment `seq`.
    #[must_use]
    pub fn seg_len(&self, seq: u64) -> u32 {
        match self.total_segs {
            Some(n) if seq + 1 == n => self.last_len,
            _ => self.mss,
        }
    }

    /// Earliest time the sender needs to run again.
    #[must_use]
    pub fn next_wakeup(&self) -> Option<Time> {
        // Time::MAX stands for "none" so the minimum is branch-free.
        let t = self.timer.map_or(Time::MAX, |(_, t)| t);
        let t = t
            .min(self.reo_at.unwrap_or(Time::MAX))
            .min(self.pace_at.unwrap_or(Time::MAX));
        (t != Time::MAX).then_some(t)
    }

    fn is_paced(&self) -> bool {
        self.paced
    }

    fn note_cwnd(&mut self) {
        self.st.cwnd = self.st.cwnd.max(1);
        self.counters.min_cwnd = self.counters.min_cwnd.min(self.st.cwnd);
    }

    // ----- application -----

    /// The application starts at `now`.
    pub fn start(&mut self, now: Time, out: &mut Vec<Outgoing>) {
        self.started = true;
        self.app_end = self.total_segs.unwrap_or(u64::MAX);
        self.cc.init(now, &mut self.st);
        self.update_pacing_rate();
        self.try_send(now, out);
    }

    /// The application stops handing data to TCP at `now`; what was handed over is still
    /// delivered.
    pub fn stop_app(&mut self, _now: Time) {
        self.app_end = self.app_end.min(self.snd_nxt);
    }

    // ----- ACK processing -----

    /// Process an ACK arriving at `now`.
    pub fn on_ack(&mut self, now: Time, ack: &Payload, out: &mut Vec<Outgoing>) {
        let Payload::Ack {
            ack,
            sack: packed,
            dsack,
            tsecr,
        } = *ack
        else {
            return;
        };
        if ack > self.snd_nxt || ack < self.snd_una || !self.started {
            return; // old or invalid
        }
        let prior_in_flight = self.in_flight();
        let prior_una = self.snd_una;
        let prior_fack = self.fack;
        let prior_delivered = self.delivered;
        let mut rs: Option<RatePrior> = None;
        let mut rtt_first: Option<Time> = None; // earliest xmit of never-retransmitted, cum-acked
        let mut rtt_last: Option<Time> = None; // latest xmit of never-retransmitted delivered
        let mut sack_first: Option<Time> = None;
        let mut any_retrans_acked = false;
        let mut retrans_cum_acked = false;

        // SACK blocks (skipping the DSACK block), minus what the previous ACK already reported.
        let mut sack = [SeqRange::default(); MAX_SACK_BLOCKS];
        let n_blocks = packed.len();
        for (i, b) in sack.iter_mut().enumerate().take(n_blocks) {
            *b = packed.get(ack, i);
        }
        let first = usize::from(dsack).min(n_blocks);
        let blocks = &sack[first..n_blocks];
        for b in blocks {
            let lo = b.start.max(ack);
            let hi = b.end.min(self.snd_nxt);
            if lo >= hi {
                continue;
            }
            let mut pieces = [(lo, hi); 1 + MAX_SACK_BLOCKS];
            let mut np = 1;
            for c in &self.sack_cache[..self.n_sack_cache] {
                let mut next = [(0, 0); 1 + MAX_SACK_BLOCKS];
                let mut nn = 0;
                for &(s, e) in &pieces[..np] {
                    // subtract [c.start, c.end) from [s, e)
                    if c.end <= s || c.start >= e {
                        next[nn] = (s, e);
                        nn += 1;
                    } else {
                        if c.start > s {
                            next[nn] = (s, c.start);
                            nn += 1;
                        }
                        if c.end < e && nn < next.len() {
                            next[nn] = (c.end, e);
                            nn += 1;
                        }
                    }
                }
                pieces = next;
                np = nn;
            }
            for &(s, e) in &pieces[..np] {
                for seq in s..e {
                    let i = (seq - self.snd_una) as usize;
                    let seg = self.segs[i];
                    if seg.has(F_SACKED) {
                        continue;
                    }
                    self.segs[i].flags |= F_SACKED;
                    self.sacked_out += 1;
                    self.on_delivered(now, seq, seg, &mut rs, prior_fack);
                    if seg.tx_count == 0 {
                        sack_first = Some(sack_first.map_or(seg.xmit_ts, |t| t.min(seg.xmit_ts)));
                        rtt_last = Some(rtt_last.map_or(seg.xmit_ts, |t| t.max(seg.xmit_ts)));
                    } else {
                        any_retrans_acked = true;
                    }
                    self.fack = self.fack.max(seq + 1);
                }
            }
        }
        self.n_sack_cache = blocks.len();
        self.sack_cache[..blocks.len()].copy_from_slice(blocks);

        // Cumulative ACK.
        while self.snd_una < ack {
            let seg = self
                .segs
                .pop_front()
                .expect("scoreboard shorter than window");
            let seq = self.snd_una;
            self.snd_una += 1;
            if seg.has(F_SACKED) {
                self.sacked_out -= 1;
                continue;
            }
            if seg.has(F_LOST) {
                self.lost_out -= 1;
            }
            if seg.has(F_RETRANS) {
                self.retrans_out -= 1;
            }
            // The entry is gone: fix flags on a copy for the bookkeeping below.
            let mut s = seg;
            s.flags &= !(F_LOST | F_RETRANS);
            self.on_delivered_acked(now, seq, s, &mut rs, prior_fack);
            if seg.tx_count == 0 {
                rtt_first = Some(rtt_first.map_or(seg.xmit_ts, |t| t.min(seg.xmit_ts)));
                rtt_last = Some(rtt_last.map_or(seg.xmit_ts, |t| t.max(seg.xmit_ts)));
            } else {
                any_retrans_acked = true;
                retrans_cum_acked = true;
            }
            self.fack = self.fack.max(seq + 1);
        }
        // Karn (Linux FLAG_RETRANS_DATA_ACKED): no sequence RTT from a cumulative ACK that also
        // covers retransmitted data.
        if retrans_cum_acked {
            rtt_first = None;
        }
        let una_advanced = self.snd_una > prior_una;
        if una_advanced {
            self.rtos_since_progress = 0;
        }
        let acked_sacked = (self.delivered - prior_delivered) as u32;

        // RTT (Linux tcp_ack_update_rtt: cum-acked first, then SACK, then the TS echo).
        let seq_rtt = rtt_first.or(sack_first).map(|t| now.saturating_since(t));
        let ts_rtt = (any_retrans_acked && (una_advanced || acked_sacked > 0))
            .then(|| now.saturating_since(tsecr));
        // Linux `tcp_ack_update_rtt`: the minimum takes the newest segment's RTT (`ca_rtt`), the
        // smoothed RTT the oldest's (`seq_rtt`), both only when a Karn-safe sample exists.
        let mut rtt_sample = None;
        let mut ca_rtt = None;
        if let Some(r) = seq_rtt.or(ts_rtt) {
            let ca = if seq_rtt.is_some() {
                rtt_last.map_or(r, |t| now.saturating_since(t))
            } else {
                r
            };
            self.rtt.min_sample(now, ca.max(Dur(1)));
            self.rtt.smooth(r);
            self.backoff = 0;
            rtt_sample = Some(r);
            ca_rtt = Some(ca);
        }
        if let Some(r) = ca_rtt {
            self.rtt_hist.record(r.as_nanos());
        }

        // Delivery-rate sample (tcp_rate_gen).
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if acked_sacked > 0 {
            self.delivered_ts = now;
        }
        let mut sample = RateSample {
            total_delivered: self.delivered,
            acked_sacked,
            rtt: ca_rtt,
            ..RateSample::default()
        };
        if let Some(p) = rs {
            sample.prior_delivered = p.delivered;
            sample.is_app_limited = p.app_limited;
            sample.tx_in_flight = p.tx_in_flight;
            sample.is_retrans = p.is_retrans;
            sample.delivered = self.delivered - p.delivered;
            let ack_elapsed = now.saturating_since(p.delivered_ts);
            let interval = p.send_elapsed.max(ack_elapsed);
            let min_rtt = self.rtt.min_rtt().unwrap_or(Dur::ZERO);
            if interval >= min_rtt && interval > Dur::ZERO {
                sample.interval = Some(interval);
                if !sample.is_app_limited || sample.delivered > 0 {
                    self.last_rs = Some((sample.delivered, interval));
                }
            }
        }

        // RACK: loss detection on this ACK.
        let lost_before = self.total_lost;
        if self.rack_advanced {
            self.rack_advanced = false;
            self.rack_detect_loss(now);
        }

        // TLP outcome (Linux `tcp_process_tlp_ack`): a probe that sent new data, or whose
        // retransmission was reported as a duplicate (DSACK), or a pure duplicate ACK after it,
        // ends the episode; an ACK beyond the probe without DSACK means the probe repaired a
        // loss, which is answered with one cwnd reduction.
        let mut tlp_reduce = false;
        if let Some(h) = self.tlp_high_seq
            && ack >= h
        {
            if !self.tlp_retrans || dsack {
                self.tlp_high_seq = None;
            } else if ack > h {
                self.tlp_high_seq = None;
                tlp_reduce = true;
            } else if !una_advanced && acked_sacked == 0 {
                self.tlp_high_seq = None;
            }
        }

        // Recovery state machine (tcp_fastretrans_alert, simplified to SACK + RACK).
        match self.ca_state {
            CaState::Recovery => {
                let exit = self.snd_una >= self.high_seq
                    || (una_advanced && self.cc.exit_recovery_on_partial_ack());
                if exit {
                    self.end_cwnd_reduction(now);
                }
            }
            CaState::Loss if self.snd_una >= self.high_seq => {
                self.set_ca_state(now, CaState::Open);
            }
            _ => {}
        }
        if matches!(self.ca_state, CaState::Open | CaState::Disorder) {
            if self.lost_out > 0 {
                let ackinfo = self.ack_info(&sample, prior_in_flight, rtt_sample);
                self.enter_recovery(now, &ackinfo);
            } else if tlp_reduce {
                // The probe repaired a tail loss: one reduction, as a CWR episode
                // (`tcp_init_cwnd_reduction`, CWR, `tcp_end_cwnd_reduction`: cwnd = ssthresh).
                let ackinfo = self.ack_info(&sample, prior_in_flight, rtt_sample);
                self.st.ssthresh = self.cc.ssthresh(now, &self.st, &ackinfo).max(2);
                self.st.cwnd = self.st.ssthresh;
                self.cc
                    .cwnd_event(now, &mut self.st, CwndEvent::CompleteCwr);
                self.counters.fast_recoveries += 1;
                self.note_cwnd();
            } else {
                let s = if self.sacked_out > 0 {
                    CaState::Disorder
                } else {
                    CaState::Open
                };
                if s != self.ca_state {
                    self.set_ca_state(now, s);
                }
            }
        }

        // Congestion control (tcp_cong_control).
        let newly_lost = (self.total_lost - lost_before) as u32;
        sample.losses = newly_lost;
        let ackinfo = self.ack_info(&sample, prior_in_flight, rtt_sample);
        if acked_sacked > 0 {
            self.cc.pkts_acked(now, &mut self.st, &ackinfo);
        }
        if !self.cc.cong_control(now, &mut self.st, &sample, &ackinfo) {
            if self.ca_state == CaState::Recovery {
                self.prr(acked_sacked, newly_lost, una_advanced);
            } else if self.cwnd_limited
                && acked_sacked > 0
                && (una_advanced || self.reordering_seen)
            {
                // `tcp_may_raise_cwnd`: grow only on in-order progress, unless reordering was
                // seen (then any delivery counts).
                self.cc
                    .cong_avoid(now, &mut self.st, acked_sacked, &ackinfo);
            }
        }
        self.note_cwnd();
        self.update_pacing_rate();

        if let Some(n) = self.total_segs
            && self.snd_una >= n
            && self.completed_at.is_none()
        {
            self.completed_at = Some(now);
        }

        self.try_send(now, out);
        if una_advanced || acked_sacked > 0 {
            self.rearm_timer(now);
        }
        self.record(now, "ack");
    }

    fn ack_info(&self, rs: &RateSample, prior_in_flight: u32, rtt: Option<Dur>) -> AckInfo {
        AckInfo {
            acked_sacked: rs.acked_sacked,
            pkts_acked: rs.acked_sacked,
            rtt: rs.rtt.or(rtt),
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            in_flight: self.in_flight(),
            prior_in_flight,
            is_cwnd_limited: self.cwnd_limited,
            paced: self.is_paced(),
            snd_nxt: self.snd_nxt,
            snd_una: self.snd_una,
            ca_state: Some(self.ca_state),
        }
    }

    /// A segment was newly SACKed (still in the scoreboard).
    fn on_delivered(
        &mut self,
        now: Time,
        seq: u64,
        seg: Seg,
        rs: &mut Option<RatePrior>,
        prior_fack: u64,
    ) {
        if seg.has(F_LOST) {
            self.lost_out -= 1;
            self.segs[(seq - self.snd_una) as usize].flags &= !F_LOST;
        }
        if seg.has(F_RETRANS) {
            self.retrans_out -= 1;
            self.segs[(seq - self.snd_una) as usize].flags &= !F_RETRANS;
        }
        self.on_delivered_acked(now, seq, seg, rs, prior_fack);
    }

    /// Bookkeeping shared by SACKed and cumulatively acknowledged segments.
    fn on_delivered_acked(
        &mut self,
        now: Time,
        seq: u64,
        seg: Seg,
        rs: &mut Option<RatePrior>,
        prior_fack: u64,
    ) {
        self.delivered += 1;
        // tcp_rate_skb_delivered: keep the most recently sent segment's snapshot.
        if !seg.has(F_RATE_USED) {
            // Linux `tcp_skb_sent_after`: later send time, ties by higher sequence.
            let newer = rs.is_none_or(|p| (seg.xmit_ts, seq) > (p.xmit_ts, p.seq));
            if newer {
                *rs = Some(RatePrior {
                    xmit_ts: seg.xmit_ts,
                    seq,
                    delivered: seg.delivered,
                    delivered_ts: seg.delivered_ts,
                    send_elapsed: seg.xmit_ts.saturating_since(seg.first_tx),
                    tx_in_flight: seg.tx_in_flight,
                    app_limited: seg.has(F_APP_LIMITED),
                    is_retrans: seg.tx_count > 0,
                });
                self.first_tx_ts = seg.xmit_ts;
            }
            if seq >= self.snd_una {
                self.segs[(seq - self.snd_una) as usize].flags |= F_RATE_USED;
            }
        }
        // RACK (RFC 8985 §6.2 steps 1–2; Linux tcp_rack_advance).
        let rtt = now.saturating_since(seg.xmit_ts);
        let min_rtt = self.rtt.min_rtt().unwrap_or(Dur::ZERO);
        if !(seg.tx_count > 0 && rtt < min_rtt) {
            self.rack_rtt = rtt;
            if seg.xmit_ts > self.rack_xmit
                || (seg.xmit_ts == self.rack_xmit && seq + 1 > self.rack_end)
            {
                self.rack_xmit = seg.xmit_ts;
                self.rack_end = seq + 1;
            }
            self.rack_advanced = true;
        }
        // Reordering: a never-retransmitted segment below the highest delivered (RFC 8985 §6.2
        // step 3).
        if seg.tx_count == 0 && seq + 1 < prior_fack {
            self.reordering_seen = true;
        }
    }

    /// RFC 8985 §6.2 step 4: the reordering window.
    fn reo_wnd(&self) -> Dur {
        // Linux `tcp_rack_reo_wnd`: `icsk_ca_state >= TCP_CA_Recovery` (Recovery or Loss).
        if !self.reordering_seen
            && (matches!(self.ca_state, CaState::Recovery | CaState::Loss)
                || self.sacked_out >= DUP_THRESH)
        {
            return Dur::ZERO;
        }
        let min_rtt = self.rtt.min_rtt().unwrap_or(Dur::ZERO);
        let w = Dur(min_rtt.0 / 4);
        match self.rtt.srtt() {
            Some(s) => w.min(s),
            None => w,
        }
    }

    /// RFC 8985 §6.2 step 5 (Linux `tcp_rack_detect_loss`), walking the send-ordered list.
    fn rack_detect_loss(&mut self, now: Time) {
        // Computed only if a segment sent before the RACK segment is still outstanding (rare
        // without loss: the front of the list is usually acknowledged).
        let mut reo = None;
        self.reo_at = None;
        while let Some(&(seq, ts)) = self.tsorted.front() {
            let valid = seq >= self.snd_una && {
                let s = &self.segs[(seq - self.snd_una) as usize];
                // Stale: re-sent since, SACKed, or marked lost and awaiting retransmission.
                s.xmit_ts == ts && !s.has(F_SACKED) && (s.has(F_RETRANS) || !s.has(F_LOST))
            };
            if !valid {
                self.tsorted.pop_front();
                continue;
            }
            // Only segments sent before the RACK segment can be judged.
            if !(ts < self.rack_xmit || (ts == self.rack_xmit && seq + 1 < self.rack_end)) {
                break;
            }
            let reo = *reo.get_or_insert_with(|| self.reo_wnd());
            let deadline = ts + self.rack_rtt + reo;
            if deadline <= now {
                self.tsorted.pop_front();
                self.mark_lost(now, seq);
            } else {
                self.reo_at = Some(deadline);
                break;
            }
        }
    }

    fn mark_lost(&mut self, now: Time, seq: u64) {
        let i = (seq - self.snd_una) as usize;
        let seg = &mut self.segs[i];
        if seg.has(F_RETRANS) {
            seg.flags &= !F_RETRANS;
            self.retrans_out -= 1;
        }
        if !seg.has(F_LOST) {
            seg.flags |= F_LOST;
            self.lost_out += 1;
        }
        let info = LostInfo {
            tx_in_flight: seg.tx_in_flight,
            prior_delivered: seg.delivered,
            total_lost: self.total_lost + 1,
            total_delivered: self.delivered,
            is_app_limited: seg.has(F_APP_LIMITED),
        };
        self.total_lost += 1;
        self.counters.lost += 1;
        self.lost_q.push(Reverse(seq));
        self.cc.on_packet_lost(now, &mut self.st, &info);
    }

    fn set_ca_state(&mut self, now: Time, s: CaState) {
        self.ca_state = s;
        self.cc.set_state(now, &mut self.st, s);
    }

    fn enter_recovery(&mut self, now: Time, ack: &AckInfo) {
        // tcp_enter_recovery + tcp_init_cwnd_reduction.
        self.high_seq = self.snd_nxt;
        self.prior_cwnd = self.st.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.st.ssthresh = self.cc.ssthresh(now, &self.st, ack).max(2);
        self.st.cwnd_cnt = 0;
        // `tcp_init_cwnd_reduction` ends any TLP episode: the recovery answers the loss.
        self.tlp_high_seq = None;
        self.counters.fast_recoveries += 1;
        self.set_ca_state(now, CaState::Recovery);
    }

    fn end_cwnd_reduction(&mut self, now: Time) {
        // tcp_end_cwnd_reduction.
        if self.st.ssthresh < INFINITE_SSTHRESH {
            self.st.cwnd = self.st.ssthresh;
        }
        self.cc
            .cwnd_event(now, &mut self.st, CwndEvent::CompleteCwr);
        let s = if self.sacked_out > 0 {
            CaState::Disorder
        } else {
            CaState::Open
        };
        self.set_ca_state(now, s);
        self.note_cwnd();
    }

    /// Proportional Rate Reduction, RFC 6937 (Linux `tcp_cwnd_reduction`, PRR-SSRB bound).
    fn prr(&mut self, newly_acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
        if newly_acked_sacked == 0 && newly_lost == 0 {
            return;
        }
        self.prr_delivered += newly_acked_sacked;
        let in_flight = self.in_flight();
        let ssthresh = self.st.ssthresh;
        let delta = i64::from(ssthresh) - i64::from(in_flight);
        let mut sndcnt: i64 = if delta < 0 {
            let dividend = u64::from(ssthresh) * u64::from(self.prr_delivered)
                + u64::from(self.prior_cwnd.max(1))
                - 1;
            (dividend / u64::from(self.prior_cwnd.max(1))) as i64 - i64::from(self.prr_out)
        } else if una_advanced && newly_lost == 0 {
            let s = (i64::from(self.prr_delivered) - i64::from(self.prr_out))
                .max(i64::from(newly_acked_sacked))
                + 1;
            s.min(delta)
        } else {
            i64::from(newly_acked_sacked).min(delta)
        };
        // Force a fast retransmit upon entering recovery.
        sndcnt = sndcnt.max(i64::from(self.prr_out == 0));
        self.st.cwnd = in_flight + sndcnt.max(0) as u32;
    }

    fn update_pacing_rate(&mut self) {
        if !self.paced {
            return; // the rate is neither used nor reported for unpaced flows
        }
        if let Some(r) = self.cc.pacing_rate() {
            self.pacing_rate = Some(r);
            return;
        }
        // tcp_update_pacing_rate.
        let Some(srtt) = self.rtt.srtt() else {
            self.pacing_rate = None;
            return;
        };
        let ratio = if self.st.cwnd < self.st.ssthresh / 2 {
            PACING_SS_RATIO
        } else {
            PACING_CA_RATIO
        };
        let packets_out = self.snd_nxt - self.snd_una;
        let segs = u64::from(self.st.cwnd).max(packets_out);
        let bytes_per_s = u128::from(u64::from(self.mss) * segs * ratio) * 1_000_000_000
            / 100
            / u128::from(srtt.as_nanos().max(1));
        self.pacing_rate = Some(bytes_per_s.min(u128::from(u64::MAX)) as u64);
    }

    // ----- timers -----

    fn rearm_timer(&mut self, now: Time) {
        if self.snd_nxt == self.snd_una {
            self.timer = None;
            self.reo_at = None;
            return;
        }
        let rto = self.rto_interval();
        let tlp_ok =
            self.tlp_high_seq.is_none() && matches!(self.ca_state, CaState::Open | CaState::Cwr);
        if tlp_ok {
            let packets_out = self.snd_nxt - self.snd_una;
            let pto = match self.rtt.srtt() {
                Some(s) => {
                    Dur(2 * s.0)
                        + if packets_out == 1 {
                            TLP_SINGLE_EXTRA
                        } else {
                            TLP_EXTRA
                        }
                }
                None => Dur::from_secs(1),
            };
            self.timer = Some((Timer::Probe, now + pto.min(rto)));
        } else {
            self.timer = Some((Timer::Rto, now + rto));
        }
    }

    fn rto_interval(&self) -> Dur {
        let base = self.rtt.rto();
        let mut r = base;
        for _ in 0..self.backoff {
            r = Dur(r.0.saturating_mul(2));
            if r >= RTO_MAX {
                return RTO_MAX;
            }
        }
        r.min(RTO_MAX)
    }

    /// Run due timers at `now`.
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Outgoing>) {
        if let Some(t) = self.pace_at
            && t <= now
        {
            self.pace_at = None;
        }
        if let Some(t) = self.reo_at
            && t <= now
        {
            self.reo_at = None;
            // tcp_rack_reo_timeout.
            let before = self.total_lost;
            self.rack_detect_loss(now);
            // Linux `tcp_rack_reo_timeout` enters recovery from any state but Recovery.
            if self.total_lost > before && self.ca_state != CaState::Recovery {
                let rs = RateSample::default();
                let info = self.ack_info(&rs, self.in_flight(), None);
                self.enter_recovery(now, &info);
                self.prr(0, (self.total_lost - before) as u32, false);
            }
            if self.timer.is_some_and(|(k, _)| k == Timer::Probe) {
                self.timer = Some((Timer::Rto, now + self.rto_interval()));
            }
            self.record(now, "reorder_timer");
        }
        if let Some((kind, t)) = self.timer
            && t <= now
        {
            self.timer = None;
            match kind {
                Timer::Probe => self.send_loss_probe(now, out),
                Timer::Rto => self.on_rto(now),
            }
            self.try_send(now, out);
            self.record(now, if kind == Timer::Probe { "probe" } else { "rto" });
            return;
        }
        self.try_send(now, out);
    }

    /// Append a trace row if tracing is on.
    fn record(&mut self, now: Time, event: &'static str) {
        if self.trace.is_none() {
            return;
        }
        let point = TracePoint {
            t_s: now.as_secs_f64(),
            event,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            cwnd: self.st.cwnd,
            ssthresh: (self.st.ssthresh < INFINITE_SSTHRESH).then_some(self.st.ssthresh),
            in_flight: self.in_flight(),
            ca_state: match self.ca_state {
                CaState::Open => "open",
                CaState::Disorder => "disorder",
                CaState::Cwr => "cwr",
                CaState::Recovery => "recovery",
                CaState::Loss => "loss",
            },
            cc_state: self.cc.state(),
            srtt_ms: self.rtt.srtt().map(Dur::as_millis_f64),
        };
        if let Some(t) = &mut self.trace {
            t.push(point);
        }
    }

    /// The recorded trace (empty unless `FlowConfig::trace` was set).
    pub fn take_trace(&mut self) -> Vec<TracePoint> {
        self.trace.take().unwrap_or_default()
    }

    fn send_loss_probe(&mut self, now: Time, out: &mut Vec<Outgoing>) {
        if self.snd_nxt == self.snd_una {
            return;
        }
        self.counters.tlps += 1;
        if self.snd_nxt < self.app_end {
            self.transmit_new(now, out);
            self.tlp_retrans = false;
        } else {
            let seq = self.snd_nxt - 1;
            let i = (seq - self.snd_una) as usize;
            if self.segs[i].has(F_SACKED) {
                self.timer = Some((Timer::Rto, now + self.rto_interval()));
                return;
            }
            self.retransmit(now, seq, out);
            self.tlp_retrans = true;
        }
        self.tlp_high_seq = Some(self.snd_nxt);
        self.timer = Some((Timer::Rto, now + self.rto_interval()));
    }

    fn on_rto(&mut self, now: Time) {
        if self.snd_nxt == self.snd_una {
            return;
        }
        self.counters.rtos += 1;
        self.rto_times.push(now);
        // tcp_enter_loss: a new congestion event (new ssthresh, CA_EVENT_LOSS) unless this RTO
        // continues a recovery or an earlier RTO that has made no progress since.
        let new_event = matches!(self.ca_state, CaState::Open | CaState::Disorder)
            || self.snd_una >= self.high_seq
            || (self.ca_state == CaState::Loss && self.rtos_since_progress == 0);
        if new_event {
            let rs = RateSample::default();
            let info = self.ack_info(&rs, self.in_flight(), None);
            self.st.ssthresh = self.cc.ssthresh(now, &self.st, &info).max(2);
            self.cc.cwnd_event(now, &mut self.st, CwndEvent::Loss);
        }
        self.rtos_since_progress += 1;
        // tcp_timeout_mark_lost: every un-SACKed segment is lost, except (with RACK) those sent
        // less than one RACK RTT ago, other than the head; those stay in flight for RACK.
        self.lost_q.clear();
        let una = self.snd_una;
        for i in 0..self.segs.len() {
            let seg = self.segs[i];
            if seg.has(F_SACKED) || (i > 0 && seg.xmit_ts + self.rack_rtt > now) {
                continue;
            }
            let seq = una + i as u64;
            if seg.has(F_LOST) && !seg.has(F_RETRANS) {
                self.lost_q.push(Reverse(seq)); // already counted, awaiting retransmission
            } else {
                self.mark_lost(now, seq);
            }
        }
        // tcp_enter_loss: cwnd = in flight + 1 (1 unless recently sent segments were spared).
        self.st.cwnd = self.in_flight() + 1;
        self.st.cwnd_cnt = 0;
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.reo_at = None;
        self.set_ca_state(now, CaState::Loss);
        self.note_cwnd();
        self.backoff += 1;
        self.timer = Some((Timer::Rto, now + self.rto_interval()));
    }

    // ----- transmission -----

    fn next_lost(&mut self) -> Option<u64> {
        while let Some(&Reverse(seq)) = self.lost_q.peek() {
            if seq >= self.snd_una {
                let s = &self.segs[(seq - self.snd_una) as usize];
                if s.has(F_LOST) && !s.has(F_RETRANS) && !s.has(F_SACKED) {
                    return Some(seq);
                }
            }
            self.lost_q.pop();
        }
        None
    }

    fn try_send(&mut self, now: Time, out: &mut Vec<Outgoing>) {
        if !self.started {
            return;
        }
        loop {
            if self.is_paced() && self.wstamp > now {
                self.pace_at = Some(self.wstamp);
                return;
            }
            let in_flight = self.in_flight();
            let lost = self.next_lost();
            let has_new = self.snd_nxt < self.app_end;
            if lost.is_none() && !has_new {
                // tcp_rate_check_app_limited.
                if in_flight < self.st.cwnd {
                    self.app_limited = (self.delivered + u64::from(in_flight)).max(1);
                    self.cwnd_limited = false;
                }
                break;
            }
            if in_flight >= self.st.cwnd {
                self.cwnd_limited = true;
                break;
            }
            match lost {
                Some(seq) => {
                    self.lost_q.pop();
                    self.retransmit(now, seq, out);
                }
                None => self.transmit_new(now, out),
            }
            if self.ca_state == CaState::Recovery {
                self.prr_out += 1;
            }
        }
    }

    fn transmit_new(&mut self, now: Time, out: &mut Vec<Outgoing>) {
        let seq = self.snd_nxt;
        if self.snd_nxt == self.snd_una {
            // Restart after idle (tcp_cwnd_restart, Linux `tcp_slow_start_after_idle` = 1).
            if self.counters.segments_sent > 0 {
                let idle = now.saturating_since(self.last_send);
                let rto = self.rtt.rto();
                if idle >= rto {
                    let restart = self.initial_window.min(self.st.cwnd);
                    let halvings = (idle.0 / rto.0.max(1)).min(31) as u32;
                    self.st.ssthresh = self.st.ssthresh.max((3 * self.st.cwnd) / 4);
                    self.st.cwnd = (self.st.cwnd >> halvings).max(restart);
                    self.cc
                        .cwnd_event(now, &mut self.st, CwndEvent::CwndRestart);
                }
                self.cc.cwnd_event(now, &mut self.st, CwndEvent::TxStart);
            }
        }
        let fresh = self.snd_nxt == self.snd_una;
        self.snd_nxt += 1;
        self.segs.push_back(Seg::default());
        self.emit(now, seq, fresh, out);
    }

    fn retransmit(&mut self, now: Time, seq: u64, out: &mut Vec<Outgoing>) {
        let i = (seq - self.snd_una) as usize;
        self.segs[i].flags |= F_RETRANS | F_EVER_RETRANS;
        self.segs[i].tx_count += 1;
        self.retrans_out += 1;
        self.counters.retransmits += 1;
        self.emit(now, seq, false, out);
    }

    /// Put segment `seq` on the wire. `fresh_flight`: nothing was outstanding before it.
    fn emit(&mut self, now: Time, seq: u64, fresh_flight: bool, out: &mut Vec<Outgoing>) {
        // tcp_rate_skb_sent: a fresh flight restarts the rate clocks.
        if fresh_flight {
            self.first_tx_ts = now;
            self.delivered_ts = now;
        }
        let in_flight = self.in_flight();
        let app_limited = self.app_limited != 0;
        let i = (seq - self.snd_una) as usize;
        let seg = &mut self.segs[i];
        seg.xmit_ts = now;
        seg.first_tx = self.first_tx_ts;
        seg.delivered_ts = self.delivered_ts;
        seg.delivered = self.delivered;
        // in_flight already counts this segment, as BBRv3's tx_in_flight does.
        seg.tx_in_flight = in_flight;
        seg.flags &= !(F_RATE_USED | F_APP_LIMITED);
        if app_limited {
            seg.flags |= F_APP_LIMITED;
        }
        let tx_count = seg.tx_count;
        self.tsorted.push_back((seq, now));
        let len = self.seg_len(seq);
        let wire = len + TCP_IP_HEADER_BYTES;
        out.push(Outgoing {
            payload: Payload::Data {
                seq,
                tx_count,
                tsval: now,
            },
            wire_bytes: wire,
        });
        self.counters.segments_sent += 1;
        self.data_segs_out += 1;
        self.last_send = now;
        // Arm the RTO / probe timer if none is pending (tcp_event_new_data_sent / rearm).
        if self.timer.is_none() {
            self.rearm_timer(now);
        }
        // EDT pacing (tcp_update_skb_after_send).
        if self.is_paced()
            && let Some(rate) = self.pacing_rate
            && rate > 0
            && self.data_segs_out >= PACING_MIN_SEGS
        {
            let prior = self.wstamp;
            self.wstamp = self.wstamp.max(now);
            let credit = self.wstamp.saturating_since(prior);
            // Linux paces the payload length (`skb->len` in `tcp_update_skb_after_send`).
            let len_ns = u64::from(len) * 1_000_000_000 / rate;
            let len_ns = len_ns - (len_ns / 2).min(credit.0);
            self.wstamp += Dur(len_ns);
        }
    }
}

/// The snapshot of the most recently sent delivered segment (Linux `rate_sample` prior fields).
#[derive(Clone, Copy, Debug)]
struct RatePrior {
    xmit_ts: Time,
    seq: u64,
    delivered: u64,
    delivered_ts: Time,
    send_elapsed: Dur,
    tx_in_flight: u32,
    app_limited: bool,
    is_retrans: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::NodeId;
    use crate::packet::SackBlocks;
    use cclab_cc::CcSpec;

    /// Linux `tcp_update_skb_after_send`: after the first 10 data segments, each departure moves
    /// the earliest departure time on by *payload* length / pacing rate (headers are not
    /// counted), claiming back at most half of it from lateness. With one RTT sample of 40 ms,
    /// cwnd 20 after slow start and Linux's 200 % slow-start ratio, the rate is
    /// 2·1448·20/0.04 = 1,448,000 B/s, so paced segments leave exactly 1 ms apart (1.036 ms if
    /// the 52 header bytes were counted); the first paced one claims half its slot back.
    #[test]
    fn edt_pacing_spaces_departures_by_payload_length() {
        let mut cfg = FlowConfig::bulk(
            "f",
            NodeId(0),
            NodeId(1),
            CcSpec::default_for("newreno").unwrap(),
        );
        cfg.pacing = PacingMode::On;
        let mut s = Sender::new(&cfg);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        assert_eq!(out.len(), 10, "the initial window leaves unpaced");
        let t0 = Time::ZERO + Dur::from_millis(40);
        let ack = Payload::Ack {
            ack: 10,
            sack: SackBlocks::default(),
            dsack: false,
            tsecr: Time::ZERO,
        };
        out.clear();
        s.on_ack(t0, &ack, &mut out);
        assert_eq!(s.pacing_rate(), Some(1_448_000));
        let mut departures = vec![t0; out.len()];
        for _ in 0..4 {
            let next = s
                .next_wakeup()
                .expect("paced sender waits for its departure time");
            out.clear();
            s.on_timer(next, &mut out);
            departures.extend(std::iter::repeat_n(next, out.len()));
        }
        assert_eq!(departures[0], t0);
        assert_eq!(
            departures[1] - departures[0],
            Dur::from_micros(500),
            "half claimed back"
        );
        for w in departures[1..].windows(2) {
            assert_eq!(w[1] - w[0], Dur::from_millis(1), "{departures:?}");
        }
    }
}
