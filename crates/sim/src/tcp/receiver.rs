//! The TCP receiver: in-order delivery, out-of-order ranges, SACK/DSACK generation, delayed
//! ACKs and SACK compression.
//!
//! Contract: [`Receiver::on_data`] takes one data segment and returns an ACK to send now, if any;
//! otherwise the receiver's timer may be armed ([`Receiver::delack_deadline`]: the earlier of the
//! delayed-ACK and the compressed-SACK deadlines) and [`Receiver::on_delack_timer`] produces the
//! ACK of whichever is due when it fires.
//!
//! Rules (the ACK decision is Linux's `__tcp_ack_snd_check`, `net/ipv4/tcp_input.c`, in order):
//! - ACK at once when `ack_every` (2) full segments are unacknowledged (RFC 5681 §4.2, RFC 1122
//!   §4.2.3.2; Linux: `rcv_nxt - rcv_wup > rcv_mss`), in quick-ACK mode, or when the arrival
//!   demands it (Linux `ICSK_ACK_NOW`): a segment that fills the last hole, so the out-of-order
//!   queue empties (`tcp_data_queue`), and the ECN cases below.
//! - Otherwise, with no out-of-order data, delay the ACK up to the delayed-ACK timer (Linux
//!   `TCP_DELACK_MIN` 40 ms).
//! - Otherwise (out-of-order data held), SACK compression ([`SackCompression`], Linux ≥ 4.19):
//!   the first [`TCP_FASTRETRANS_THRESH`] ACKs for one `rcv_nxt` leave at once
//!   (`dup_ack_counter`, reset when `rcv_nxt` moves: `compressed_ack_rcv_nxt`); later ones are
//!   counted (`compressed_ack`) and held, and a timer of `min(tcp_comp_sack_delay_ns, rtt / 20)` is
//!   armed unless armed; the arrival after `tcp_comp_sack_nr` held ones is ACKed at once, and when
//!   the timer fires the ACK leaves (`tcp_compressed_ack_kick`, `net/ipv4/tcp_timer.c`). Any ACK
//!   sent cancels the held one (`tcp_event_ack_sent`, `net/ipv4/tcp_output.c`). An arrival
//!   whose SACK block is not among the two most recent ones ([`TCP_SACK_BLOCKS_EXPECTED`]) first
//!   sends the held ACK (`tcp_sack_new_ofo_skb` → `tcp_sack_compress_send_ack`). Without
//!   compression ([`Receiver::with_sack_compression`]`(None)`) every out-of-order arrival is ACKed
//!   at once (RFC 5681 §4.2).
//!   In effect every arrival that moves `rcv_nxt` is ACKed at once while a hole is open.
//! - Duplicates (RFC 2883 §4): a segment below `rcv_nxt` is DSACKed at once (Linux
//!   `tcp_data_queue`: `tcp_dsack_set` and `tcp_enter_quickack_mode`); a copy of out-of-order
//!   data is DSACKed on the next ACK, which SACK compression may hold (`tcp_data_queue_ofo` sets
//!   the DSACK and no immediate ACK), and as in Linux the DSACK is forgotten when another segment
//!   arrives first (`tcp_data_queue` clears `rx_opt.dsack`).
//! - Quick-ACK mode at connection start: the first 16 ACKs are sent for every segment (Linux
//!   `tcp_incr_quickack`, `TCP_MAX_QUICKACKS` = 16).
//! - SACK blocks (RFC 2018 §4): the first block holds the segment that triggered the ACK, the
//!   others the most recently changed ranges; a duplicate is reported as a DSACK block first
//!   (RFC 2883 §4). At most [`MAX_SACK_BLOCKS`](crate::packet::MAX_SACK_BLOCKS).
//! - The ACK echoes the TSval of the segment that triggered it (RFC 7323 TSecr, simplified to the
//!   latest segment).
//! - ECN feedback ([`Receiver::with_ecn`]). Classic (RFC 3168 §6.1.3): a CE arrival latches ECE
//!   on every ACK until a segment with CWR arrives; the first CE of an episode is acknowledged
//!   at once with two quick ACKs (Linux `tcp_ecn_check_ce`: `tcp_enter_quickack_mode(sk, 2)`).
//!   Accurate ECN (RFC 9768): every ACK carries the count of CE-marked segments received
//!   (`r.cep`), and a CE arrival after a non-CE one is acknowledged at once (§3.2.2.5.1,
//!   change-triggered ACKs).
//!
//! The receiver's RTT estimate (for the compression delay): Linux uses `rcv_rtt_est` (or `srtt`
//! if smaller, for a receiver that also sends). Data segments carry `tsval` = their send time, so
//! the model takes 2 × the smallest one-way delay seen (`now - tsval`): on a symmetric path this
//! approximates the base RTT (Linux's estimate also holds queueing delay, so the model's delay is
//! at most as long). With the 1 ms cap it only matters for RTTs under 20 ms.
//!
//! Simplifications against Linux (read in v6.6): the compressed-SACK timer fires at the start of
//! its slack range; when two ACKs are due at one instant (a held ACK sent ahead of a new SACK
//! block, then this arrival's own), only the later is sent; the quick-ACK mode a segment below
//! `rcv_nxt` enters is not modelled, nor the move of a DSACKed out-of-order range to the front
//! of the SACK blocks.

use cclab_cc::{Dur, EcnMode, Time};

use crate::packet::{Ecn, Payload, SackBlocks, SeqRange};

pub mod rcvbuf;

/// Linux `TCP_MAX_QUICKACKS`.
pub const MAX_QUICKACKS: u32 = 16;

/// Linux `TCP_FASTRETRANS_THRESH` (`include/net/tcp.h`): ACKs for one `rcv_nxt` sent at once
/// before SACK compression holds them (`__tcp_ack_snd_check`, `dup_ack_counter`).
pub const TCP_FASTRETRANS_THRESH: u8 = 3;

/// Linux `TCP_SACK_BLOCKS_EXPECTED` (`net/ipv4/tcp_input.c`): SACK blocks a sender is expected to
/// see (4 fit, 3 with timestamps, and SACKs may be lost); an arrival extending a block further
/// down, or opening a new one behind this many, first sends the held compressed ACK.
pub const TCP_SACK_BLOCKS_EXPECTED: usize = 2;

/// Linux SACK compression (since 4.19; the sysctls of `Documentation/networking/ip-sysctl.rst`,
/// defaults set in `tcp_sk_init`, `net/ipv4/tcp_ipv4.c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SackCompression {
    /// `tcp_comp_sack_delay_ns`: the longest a compressed ACK is held (Linux 1 ms,
    /// `NSEC_PER_MSEC`); the timer is `min(delay, rtt / 20)`.
    pub delay: Dur,
    /// `tcp_comp_sack_slack_ns`: the timer's slack (Linux 100 µs). Linux arms the hrtimer to fire
    /// anywhere in `[delay, delay + slack]` (`hrtimer_start_range_ns`); the receiver's deadline
    /// is the start of that range. A host with a timing model fires it where Linux does (the
    /// first tick in the range, else its end) plus the softirq latency
    /// ([`crate::host::timing::TimerClock::hrtimer_range_fire`]); an ideal host at the start.
    pub slack: Dur,
    /// `tcp_comp_sack_nr`: the most ACKs held in a row (Linux 44); the arrival after that many is
    /// ACKed at once. 0 turns compression off, as in Linux.
    pub nr: u32,
}

impl SackCompression {
    /// The Linux defaults.
    pub const LINUX: SackCompression = SackCompression {
        delay: Dur::from_millis(1),
        slack: Dur::from_micros(100),
        nr: 44,
    };
}

impl Default for SackCompression {
    fn default() -> Self {
        Self::LINUX
    }
}

/// Receiver state of one flow.
#[derive(Debug)]
pub struct Receiver {
    rcv_nxt: u64,
    /// Out-of-order ranges above `rcv_nxt`, most recently changed first.
    ooo: Vec<SeqRange>,
    /// In-order segments not yet acknowledged (Linux `rcv_nxt - rcv_wup`, in segments).
    unacked: u32,
    quickacks: u32,
    /// Quick-ACK mode exists ([`crate::TcpRules::quickack`]); without it `quickacks` never
    /// makes an ACK immediate.
    quickack_mode: bool,
    ack_every: u32,
    delack: Dur,
    delack_at: Option<Time>,
    last_tsval: Time,
    /// The DSACK block the next ACK carries (Linux `rx_opt.dsack`, `duplicate_sack[0]`).
    dsack: Option<SeqRange>,
    /// SACK compression parameters; `None`: off.
    sack_compression: Option<SackCompression>,
    /// Linux `compressed_ack`: ACKs held since the last one sent.
    compressed_ack: u32,
    /// Linux `dup_ack_counter`: ACKs sent at once for `compressed_ack_rcv_nxt`.
    dup_ack_counter: u8,
    /// Linux `compressed_ack_rcv_nxt`.
    compressed_ack_rcv_nxt: u64,
    /// Linux `compressed_ack_timer` deadline.
    comp_sack_at: Option<Time>,
    /// Smallest one-way delay seen (`now - tsval`); 2 × this stands in for `rcv_rtt_est`.
    min_owd: Option<Dur>,
    ecn: EcnMode,
    /// Classic ECN: ECE is set until CWR arrives (Linux `TCP_ECN_DEMAND_CWR`).
    demand_cwr: bool,
    /// Accurate ECN: CE-marked segments received, modulo 256.
    ce_count: u8,
    /// The previous segment was CE-marked.
    last_ce: bool,
    /// Segments received CE-marked.
    pub ce_received: u64,
    /// Segments (payload) delivered in order to the application.
    pub segments_delivered: u64,
    /// Data segments received, including duplicates.
    pub segments_received: u64,
    /// ACKs sent carrying a DSACK block (RFC 2883 §4).
    pub dsacks_sent: u64,
    /// ACKs SACK compression saved (Linux `LINUX_MIB_TCPACKCOMPRESSED`, `TcpExtTCPAckCompressed`).
    pub acks_compressed: u64,
    /// The receive buffer and its reading application ([`rcvbuf`]); `None`: the application
    /// reads everything at once and ACKs carry no window.
    rcvbuf: Option<Box<rcvbuf::RcvBuf>>,
}

impl Receiver {
    /// A receiver acking every `ack_every` segments with a `delack` timer, with Linux's SACK
    /// compression ([`SackCompression::LINUX`]).
    #[must_use]
    pub fn new(ack_every: u32, delack: Dur) -> Self {
        Receiver {
            rcv_nxt: 0,
            ooo: Vec::new(),
            unacked: 0,
            quickacks: MAX_QUICKACKS,
            quickack_mode: true,
            ack_every: ack_every.max(1),
            delack,
            delack_at: None,
            last_tsval: Time::ZERO,
            dsack: None,
            sack_compression: Some(SackCompression::LINUX),
            compressed_ack: 0,
            dup_ack_counter: 0,
            compressed_ack_rcv_nxt: 0,
            comp_sack_at: None,
            min_owd: None,
            ecn: EcnMode::Off,
            demand_cwr: false,
            ce_count: 0,
            last_ce: false,
            ce_received: 0,
            segments_delivered: 0,
            segments_received: 0,
            dsacks_sent: 0,
            acks_compressed: 0,
            rcvbuf: None,
        }
    }

    /// The same receiver giving `ecn` feedback.
    #[must_use]
    pub fn with_ecn(self, ecn: EcnMode) -> Self {
        Receiver { ecn, ..self }
    }

    /// The same receiver with SACK compression `c`; `None` ACKs every out-of-order arrival at
    /// once (the behaviour before Linux 4.19).
    #[must_use]
    pub fn with_sack_compression(self, c: Option<SackCompression>) -> Self {
        Receiver {
            sack_compression: c,
            ..self
        }
    }

    /// The same receiver following `rules`: without quick-ACK mode no ACK is sent at once for
    /// being among the first or after out-of-order data (ns-3's receiver), without SACK
    /// compression every out-of-order arrival is ACKed at once.
    #[must_use]
    pub fn with_rules(self, rules: &crate::TcpRules) -> Self {
        let r = Receiver {
            quickack_mode: rules.quickack,
            ..self
        };
        if rules.sack_compression {
            r
        } else {
            r.with_sack_compression(None)
        }
    }

    /// ECN bookkeeping of one arriving segment; true when it must be acknowledged at once.
    fn on_ecn(&mut self, ecn: Ecn, cwr: bool) -> bool {
        let ce = ecn == Ecn::Ce;
        if ce {
            self.ce_received += 1;
        }
        let prev_ce = std::mem::replace(&mut self.last_ce, ce);
        match self.ecn {
            EcnMode::Off => false,
            EcnMode::Classic => {
                // Linux `tcp_ecn_accept_cwr` before `tcp_ecn_check_ce`.
                if cwr {
                    self.demand_cwr = false;
                }
                if ce && !self.demand_cwr {
                    self.demand_cwr = true;
                    self.quickacks = self.quickacks.max(2);
                    return true;
                }
                false
            }
            EcnMode::L4s => {
                if ce {
                    self.ce_count = self.ce_count.wrapping_add(1);
                }
                ce && !prev_ce
            }
        }
    }

    /// Next segment expected.
    #[must_use]
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// The ACK a data segment leaving now would carry, if one is pending (a delayed or
    /// compressed ACK not yet sent): Linux sends it on the segment and cancels both timers
    /// (`tcp_event_ack_sent`). Used by the client of a request/response workload
    /// ([`super::exchange`]).
    pub fn take_pending_ack(&mut self) -> Option<Payload> {
        if self.delack_at.is_none() && self.comp_sack_at.is_none() {
            return None;
        }
        self.delack_at = None;
        self.comp_sack_at = None;
        (self.unacked > 0 || self.compressed_ack > 0).then(|| self.make_ack())
    }

    /// A new connection whose initial sequence number continues this one's sequence space
    /// (so segments of the old connection still in the network are old duplicates to it): the
    /// connection state (out-of-order ranges, delayed, quick and compressed ACKs, the RTT
    /// estimate, ECN feedback) starts afresh, the counters and `rcv_nxt` stay.
    pub fn reopen(&mut self) {
        self.ooo.clear();
        self.unacked = 0;
        self.quickacks = MAX_QUICKACKS;
        self.delack_at = None;
        self.dsack = None;
        self.compressed_ack = 0;
        self.dup_ack_counter = 0;
        self.compressed_ack_rcv_nxt = self.rcv_nxt;
        self.comp_sack_at = None;
        self.min_owd = None;
        self.demand_cwr = false;
        self.ce_count = 0;
        self.last_ce = false;
    }

    /// The receiver's timer: the earlier of the delayed-ACK and the compressed-SACK deadlines
    /// (and, with a receive buffer model, the application's next read, [`rcvbuf`]).
    #[must_use]
    pub fn delack_deadline(&self) -> Option<Time> {
        let t = match (self.delack_at, self.comp_sack_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if self.rcvbuf.is_some() {
            return self.rb_deadline(t);
        }
        t
    }

    /// The reading application's next read ([`rcvbuf`]): not a kernel timer (the application
    /// sleeps, or is blocked in `read` when `None`); [`Receiver::on_delack_timer`] runs it.
    #[must_use]
    #[inline]
    pub fn read_deadline(&self) -> Option<Time> {
        // Tested here so that the common receiver (no reader) pays one branch per packet.
        self.rcvbuf.as_ref()?;
        self.rb_deadline(None)
    }

    /// [`Receiver::delack_deadline`] by timer: the delayed-ACK deadline (Linux
    /// `icsk_delack_timer`, a `timer_list`), and the compressed-SACK deadline with its slack
    /// (`compressed_ack_timer`, a soft hrtimer with a range), for a host whose timers fire
    /// late ([`crate::host::timing`]).
    #[must_use]
    pub fn ack_timers(&self) -> (Option<Time>, Option<(Time, Dur)>) {
        let slack = self.sack_compression.map_or(Dur::ZERO, |c| c.slack);
        (self.delack_at, self.comp_sack_at.map(|t| (t, slack)))
    }

    /// The compressed-SACK timer: `min(tcp_comp_sack_delay_ns, rtt / 20)` (Linux
    /// `__tcp_ack_snd_check`, "5 % of rtt"), the RTT being 2 × the smallest one-way delay seen,
    /// or the cap itself before any sample.
    fn comp_sack_delay(&self, c: SackCompression) -> Dur {
        match self.min_owd {
            Some(owd) => Dur::from_nanos(c.delay.as_nanos().min(owd.as_nanos() * 2 / 20)),
            None => c.delay,
        }
    }

    /// Process data segment `seq` sent at `tsval`, with IP ECN field `ecn` and TCP flag `cwr`.
    /// Returns an ACK payload to send now, if any.
    #[inline(always)]
    pub fn on_data(
        &mut self,
        now: Time,
        seq: u64,
        tsval: Time,
        ecn: Ecn,
        cwr: bool,
    ) -> Option<Payload> {
        self.segments_received += 1;
        let ecn_now = self.on_ecn(ecn, cwr);
        self.last_tsval = tsval;
        let owd = now.saturating_since(tsval);
        self.min_owd = Some(self.min_owd.map_or(owd, |m| m.min(owd)));
        // Linux `tcp_data_queue`: a DSACK not sent by now is forgotten.
        self.dsack = None;
        let one = SeqRange {
            start: seq,
            end: seq + 1,
        };
        if seq < self.rcv_nxt {
            // Old duplicate: DSACK it at once (RFC 2883 §4; Linux `tcp_dsack_set` and
            // `tcp_enter_quickack_mode`).
            self.dsack = Some(one);
            return Some(self.make_ack());
        }
        if seq == self.rcv_nxt {
            let had_ooo = !self.ooo.is_empty();
            self.rcv_nxt += 1;
            // Absorb a range that now continues the in-order data.
            if let Some(i) = self.ooo.iter().position(|r| r.start == self.rcv_nxt) {
                self.rcv_nxt = self.ooo[i].end;
                self.ooo.remove(i);
            }
            let newly = self.rcv_nxt - seq;
            self.segments_delivered += newly;
            self.unacked = self
                .unacked
                .saturating_add(u32::try_from(newly).unwrap_or(u32::MAX));
            // Linux `tcp_data_queue`: the out-of-order queue emptied → `ICSK_ACK_NOW`.
            let emptied = had_ooo && self.ooo.is_empty();
            return self.ack_snd_check(now, ecn_now || emptied);
        }
        if let Some(i) = self.ooo.iter().position(|r| r.start <= seq && seq < r.end) {
            // A copy of out-of-order data (Linux `tcp_data_queue_ofo`: `tcp_dsack_set`, then
            // the ordinary ACK decision).
            self.dsack = Some(one);
            let flushed = self.sack_compress_send_ack(i);
            return self.ack_snd_check(now, ecn_now).or(flushed);
        }
        // Out of order: extend or merge ranges, move the touched one to the front.
        let below = self.ooo.iter().position(|r| r.end == seq);
        let above = self.ooo.iter().position(|r| r.start == seq + 1);
        // Linux `tcp_sack_new_ofo_skb`: the first block the segment extends, else a new one.
        let block = below
            .into_iter()
            .chain(above)
            .min()
            .unwrap_or(self.ooo.len());
        let flushed = self.sack_compress_send_ack(block);
        let merged = match (below, above) {
            (Some(b), Some(a)) => {
                let r = SeqRange {
                    start: self.ooo[b].start,
                    end: self.ooo[a].end,
                };
                let (hi, lo) = if a > b { (a, b) } else { (b, a) };
                self.ooo.remove(hi);
                self.ooo.remove(lo);
                r
            }
            (Some(b), None) => {
                let r = SeqRange {
                    start: self.ooo[b].start,
                    end: seq + 1,
                };
                self.ooo.remove(b);
                r
            }
            (None, Some(a)) => {
                let r = SeqRange {
                    start: seq,
                    end: self.ooo[a].end,
                };
                self.ooo.remove(a);
                r
            }
            (None, None) => one,
        };
        self.ooo.insert(0, merged);
        // Two ACKs due at once (the held one, then this arrival's): the later one carries all
        // the earlier one does but a SACK block it may push out; only it is sent.
        self.ack_snd_check(now, ecn_now).or(flushed)
    }

    /// Linux `tcp_sack_new_ofo_skb` → `tcp_sack_compress_send_ack`: an arrival whose SACK block
    /// is block `block` (counted from the most recent) sends the held compressed ACK first when
    /// that block is not among the [`TCP_SACK_BLOCKS_EXPECTED`] most recent, so the sender sees
    /// the older blocks before newer ones push them out. Call before updating the ranges.
    fn sack_compress_send_ack(&mut self, block: usize) -> Option<Payload> {
        (block >= TCP_SACK_BLOCKS_EXPECTED && self.compressed_ack > 0).then(|| {
            // Linux counts the one sent as not compressed.
            self.compressed_ack -= 1;
            self.make_ack()
        })
    }

    /// Linux `__tcp_ack_snd_check`: whether this arrival is ACKed now (`Some`), after the
    /// delayed-ACK timer, or held by SACK compression. `ack_now`: Linux `ICSK_ACK_NOW` or an
    /// ECN rule.
    fn ack_snd_check(&mut self, now: Time, ack_now: bool) -> Option<Payload> {
        if self.rcvbuf.is_some() {
            self.rb_on_arrival(now);
        }
        if (self.unacked >= self.ack_every && (self.rcvbuf.is_none() || self.rb_window_advances()))
            || (self.quickacks > 0 && self.quickack_mode)
            || ack_now
        {
            return Some(self.make_ack());
        }
        if self.ooo.is_empty() {
            if self.delack_at.is_none() {
                self.delack_at = Some(now + self.delack);
            }
            return None;
        }
        let c = match self.sack_compression {
            Some(c) if self.compressed_ack < c.nr => c,
            _ => return Some(self.make_ack()),
        };
        if self.compressed_ack_rcv_nxt != self.rcv_nxt {
            self.compressed_ack_rcv_nxt = self.rcv_nxt;
            self.dup_ack_counter = 0;
        }
        if self.dup_ack_counter < TCP_FASTRETRANS_THRESH {
            self.dup_ack_counter += 1;
            return Some(self.make_ack());
        }
        self.compressed_ack += 1;
        if self.comp_sack_at.is_none() {
            self.comp_sack_at = Some(now + self.comp_sack_delay(c));
        }
        None
    }

    /// The receiver's timer fired at `now`: the compressed ACK (Linux `tcp_compressed_ack_kick`)
    /// or the delayed ACK, whichever is due; one ACK at most, which cancels the other.
    pub fn on_delack_timer(&mut self, now: Time) -> Option<Payload> {
        if self.rcvbuf.is_some()
            && let Some(a) = self.rb_read_due(now)
        {
            return Some(a);
        }
        if self.comp_sack_at.is_some_and(|t| t <= now) {
            self.comp_sack_at = None;
            if self.compressed_ack > 0 {
                // Linux counts the one sent as not compressed.
                self.compressed_ack -= 1;
                return Some(self.make_ack());
            }
        }
        match self.delack_at {
            Some(t) if t <= now => {
                self.delack_at = None;
                (self.unacked > 0).then(|| self.make_ack())
            }
            _ => None,
        }
    }

    /// The ACK for the current state; sending it cancels the delayed and the compressed ACK
    /// (Linux `tcp_event_ack_sent`) and the pending DSACK.
    #[inline(always)]
    fn make_ack(&mut self) -> Payload {
        self.unacked = 0;
        self.delack_at = None;
        self.acks_compressed += u64::from(self.compressed_ack);
        self.compressed_ack = 0;
        self.comp_sack_at = None;
        self.quickacks = self.quickacks.saturating_sub(1);
        let mut sack = SackBlocks::default();
        let dsack = self.dsack.take();
        if let Some(d) = dsack {
            sack.push(self.rcv_nxt, d);
            self.dsacks_sent += 1;
        }
        for r in &self.ooo {
            if !sack.push(self.rcv_nxt, *r) {
                break;
            }
        }
        if self.rcvbuf.is_some() {
            self.rb_stamp(&mut sack);
        }
        Payload::Ack {
            ack: self.rcv_nxt,
            sack,
            dsack: dsack.is_some(),
            tsecr: self.last_tsval,
            ece: self.ecn == EcnMode::Classic && self.demand_cwr,
            ce_count: self.ce_count,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack_of(p: Option<Payload>) -> (u64, Vec<(u64, u64)>, bool) {
        match p {
            Some(Payload::Ack {
                ack, sack, dsack, ..
            }) => (
                ack,
                (0..sack.len())
                    .map(|i| {
                        let r = sack.get(ack, i);
                        (r.start, r.end)
                    })
                    .collect(),
                dsack,
            ),
            other => panic!("expected an ACK, got {other:?}"),
        }
    }

    /// ns-3's receiver (`TcpRules::NS3`): no quick-ACK mode, so the first in-order segment
    /// already waits for a second or for the delayed-ACK timer (`TcpSocketBase::ReceivedData`),
    /// and every out-of-order segment is ACKed at once, even past the point where Linux's SACK
    /// compression holds the ACK (the fourth for one `rcv_nxt`).
    #[test]
    fn ns3_rules_have_no_quickack_and_no_sack_compression() {
        let mut r = Receiver::new(2, Dur::from_millis(200)).with_rules(&crate::TcpRules::NS3);
        assert!(r.on_data(Time(0), 0, Time(0), Ecn::NotEct, false).is_none());
        assert_eq!(r.delack_deadline(), Some(Time(0) + Dur::from_millis(200)));
        assert_eq!(
            ack_of(r.on_data(Time(1), 1, Time(0), Ecn::NotEct, false)).0,
            2
        );
        for k in 0..6u64 {
            assert!(
                r.on_data(Time(10 + k), 3 + k, Time(0), Ecn::NotEct, false)
                    .is_some(),
                "out-of-order segment {k} ACKed at once"
            );
        }
        // Linux after its quick-ACK phase (16 in-order segments): SACK compression holds some.
        let mut linux = Receiver::new(2, Dur::from_millis(40)).with_rules(&crate::TcpRules::LINUX);
        for s in 0..20u64 {
            let _ = linux.on_data(Time(s), s, Time(0), Ecn::NotEct, false);
        }
        let held = (0..6u64)
            .filter(|k| {
                linux
                    .on_data(Time(30 + k), 21 + k, Time(0), Ecn::NotEct, false)
                    .is_none()
            })
            .count();
        assert!(held > 0, "Linux compresses some of them");
    }

    #[test]
    fn quickacks_then_every_second_segment_then_timer() {
        let mut r = Receiver::new(2, Dur::from_millis(40));
        for s in 0..MAX_QUICKACKS as u64 {
            assert!(
                r.on_data(Time(s), s, Time(0), Ecn::NotEct, false).is_some(),
                "quick-ack {s}"
            );
        }
        let s = u64::from(MAX_QUICKACKS);
        assert!(
            r.on_data(Time(100), s, Time(0), Ecn::NotEct, false)
                .is_none()
        );
        assert_eq!(r.delack_deadline(), Some(Time(100) + Dur::from_millis(40)));
        assert_eq!(
            ack_of(r.on_data(Time(101), s + 1, Time(0), Ecn::NotEct, false)).0,
            s + 2
        );
        assert!(
            r.on_data(Time(200), s + 2, Time(0), Ecn::NotEct, false)
                .is_none()
        );
        assert!(r.on_delack_timer(Time(201)).is_none(), "timer not due yet");
        let t = Time(200) + Dur::from_millis(40);
        assert_eq!(ack_of(r.on_delack_timer(t)).0, s + 3);
    }

    /// Every out-of-order arrival is ACKed here: without SACK compression, as before Linux 4.19
    /// (with it, the fourth ACK for one `rcv_nxt` would be held; see the tests below).
    #[test]
    fn out_of_order_data_is_sacked_most_recent_first_and_hole_fill_acks_at_once() {
        let mut r = Receiver::new(2, Dur::from_millis(40)).with_sack_compression(None);
        r.quickacks = 0;
        assert!(r.on_data(Time(0), 0, Time(0), Ecn::NotEct, false).is_none());
        // Segment 1 lost; 2, 3 arrive, then 5.
        assert_eq!(
            ack_of(r.on_data(Time(1), 2, Time(0), Ecn::NotEct, false)),
            (1, vec![(2, 3)], false)
        );
        assert_eq!(
            ack_of(r.on_data(Time(2), 3, Time(0), Ecn::NotEct, false)),
            (1, vec![(2, 4)], false)
        );
        assert_eq!(
            ack_of(r.on_data(Time(3), 5, Time(0), Ecn::NotEct, false)),
            (1, vec![(5, 6), (2, 4)], false)
        );
        // 4 joins both ranges.
        assert_eq!(
            ack_of(r.on_data(Time(4), 4, Time(0), Ecn::NotEct, false)),
            (1, vec![(2, 6)], false)
        );
        // Retransmitted 1 fills the hole: cumulative ACK jumps, sent immediately.
        assert_eq!(
            ack_of(r.on_data(Time(5), 1, Time(0), Ecn::NotEct, false)),
            (6, vec![], false)
        );
        assert_eq!(r.segments_delivered, 6);
        // A duplicate is DSACKed.
        assert_eq!(
            ack_of(r.on_data(Time(6), 3, Time(0), Ecn::NotEct, false)),
            (6, vec![(3, 4)], true)
        );
    }

    // ----- ECN feedback -----

    /// Classic ECN (RFC 3168 §6.1.3): ECE from the first CE until CWR, and the CE segment is
    /// acknowledged at once although delayed ACKs would hold it.
    #[test]
    fn classic_ece_latches_until_cwr_and_ce_is_acked_at_once() {
        let mut r = Receiver::new(2, Dur::from_millis(40)).with_ecn(EcnMode::Classic);
        r.quickacks = 0;
        let ece = |p: Option<Payload>| match p {
            Some(Payload::Ack { ece, .. }) => Some(ece),
            _ => None,
        };
        assert_eq!(ece(r.on_data(Time(0), 0, Time(0), Ecn::Ect0, false)), None);
        // CE: immediate ACK with ECE, although one segment is unacknowledged.
        assert_eq!(
            ece(r.on_data(Time(1), 1, Time(0), Ecn::Ce, false)),
            Some(true)
        );
        // Quick-ACK mode of 2: the next segment is acknowledged at once too, still with ECE.
        assert_eq!(
            ece(r.on_data(Time(2), 2, Time(0), Ecn::Ect0, false)),
            Some(true)
        );
        assert_eq!(ece(r.on_data(Time(3), 3, Time(0), Ecn::Ect0, false)), None);
        assert_eq!(
            ece(r.on_data(Time(4), 4, Time(0), Ecn::Ect0, false)),
            Some(true)
        );
        // CWR clears the latch.
        assert_eq!(ece(r.on_data(Time(5), 5, Time(0), Ecn::Ect0, true)), None);
        assert_eq!(
            ece(r.on_data(Time(6), 6, Time(0), Ecn::Ect0, false)),
            Some(false)
        );
        assert_eq!(r.ce_received, 1);
    }

    /// Accurate ECN: the ACK counts CE segments; a CE after a non-CE is acknowledged at once
    /// (RFC 9768 §3.2.2.5.1), a run of CE segments follows the normal every-2 rule.
    #[test]
    fn accurate_ecn_counts_every_ce_segment() {
        let mut r = Receiver::new(2, Dur::from_millis(40)).with_ecn(EcnMode::L4s);
        r.quickacks = 0;
        let cnt = |p: Option<Payload>| match p {
            Some(Payload::Ack { ce_count, ece, .. }) => {
                assert!(!ece, "no classic ECE under AccECN");
                Some(ce_count)
            }
            _ => None,
        };
        assert_eq!(cnt(r.on_data(Time(0), 0, Time(0), Ecn::Ect1, false)), None);
        assert_eq!(cnt(r.on_data(Time(1), 1, Time(0), Ecn::Ce, false)), Some(1));
        assert_eq!(cnt(r.on_data(Time(2), 2, Time(0), Ecn::Ce, false)), None);
        assert_eq!(cnt(r.on_data(Time(3), 3, Time(0), Ecn::Ce, false)), Some(3));
        // 300 more CE segments: the counter wraps modulo 256.
        for s in 4..304 {
            r.on_data(Time(s), s, Time(0), Ecn::Ce, false);
        }
        assert_eq!(cnt(r.on_delack_timer(Time(1_000_000_000))), None);
        assert_eq!(
            cnt(r.on_data(Time(400), 304, Time(0), Ecn::Ect1, false)),
            None
        );
        assert_eq!(
            cnt(r.on_data(Time(401), 305, Time(0), Ecn::Ect1, false)),
            Some(u8::try_from(303 % 256).unwrap())
        );
        assert_eq!(r.ce_received, 303);
    }

    /// ECN off: CE is ignored in the feedback.
    #[test]
    fn no_feedback_without_ecn() {
        let mut r = Receiver::new(1, Dur::from_millis(40));
        match r.on_data(Time(0), 0, Time(0), Ecn::Ce, false) {
            Some(Payload::Ack { ece, ce_count, .. }) => assert!(!ece && ce_count == 0),
            other => panic!("{other:?}"),
        }
    }

    // ----- SACK compression (Linux `__tcp_ack_snd_check`) -----

    /// A receiver past quick-ACK mode that has received segment 0 (sent at 0, one-way delay
    /// `owd`, so its RTT estimate is 2 × `owd`): segment 1 is the hole.
    fn after_first(ack_every: u32, owd: Dur) -> Receiver {
        let mut r = Receiver::new(ack_every, Dur::from_millis(40));
        r.quickacks = 0;
        assert!(
            r.on_data(Time::ZERO + owd, 0, Time::ZERO, Ecn::NotEct, false)
                .is_none()
        );
        r
    }

    /// Segment `seq` sent at `sent`, arriving `owd` later.
    fn arrive(r: &mut Receiver, sent: Time, owd: Dur, seq: u64) -> Option<Payload> {
        r.on_data(sent + owd, seq, sent, Ecn::NotEct, false)
    }

    fn us(n: u64) -> Time {
        Time(n * 1_000)
    }

    /// The first `TCP_FASTRETRANS_THRESH` (3) ACKs for one `rcv_nxt` leave at once, the next
    /// ones are held; the timer is armed by the first held one and not moved by later ones.
    #[test]
    fn first_three_dup_acks_at_once_then_compressed() {
        let owd = Dur::from_millis(50);
        let mut r = after_first(2, owd);
        for seq in 2..5 {
            assert_eq!(
                ack_of(arrive(&mut r, us(seq), owd, seq)),
                (1, vec![(2, seq + 1)], false),
                "dup ACK {}",
                seq - 1
            );
        }
        assert!(arrive(&mut r, us(5), owd, 5).is_none());
        let due = us(5) + owd + Dur::from_millis(1);
        assert_eq!(r.delack_deadline(), Some(due));
        assert!(arrive(&mut r, us(6), owd, 6).is_none());
        assert_eq!(r.delack_deadline(), Some(due), "the timer is not re-armed");
        assert_eq!(r.acks_compressed, 0);
    }

    /// The held ACK leaves when the timer fires, `min(tcp_comp_sack_delay_ns, rtt / 20)` after
    /// the first held arrival: 1 ms at an RTT of 100 ms, 500 µs at an RTT of 10 ms; it carries
    /// everything held, and counts as one ACK sent for the held ones.
    #[test]
    fn compressed_ack_timer_fires_after_min_of_cap_and_rtt_over_20() {
        for (owd, delay) in [
            (Dur::from_millis(50), Dur::from_millis(1)),
            (Dur::from_millis(5), Dur::from_micros(500)),
        ] {
            let mut r = after_first(2, owd);
            for seq in 2..5 {
                assert!(arrive(&mut r, us(seq), owd, seq).is_some());
            }
            for seq in 5..9 {
                assert!(arrive(&mut r, us(seq), owd, seq).is_none());
            }
            let due = us(5) + owd + delay;
            assert_eq!(r.delack_deadline(), Some(due), "owd {owd}");
            assert!(r.on_delack_timer(Time(due.0 - 1)).is_none(), "not due yet");
            assert_eq!(ack_of(r.on_delack_timer(due)), (1, vec![(2, 9)], false));
            assert_eq!(r.delack_deadline(), None);
            assert_eq!(r.acks_compressed, 3, "4 held, 1 sent for them");
            // Still past the threshold for this `rcv_nxt`: the next one is held again.
            assert!(arrive(&mut r, us(9), owd, 9).is_none());
            assert!(r.delack_deadline().is_some());
        }
    }

    /// The arrival after `tcp_comp_sack_nr` (44) held ones is ACKed at once.
    #[test]
    fn ack_after_tcp_comp_sack_nr_held_is_sent_at_once() {
        let owd = Dur::from_millis(50);
        let mut r = after_first(2, owd);
        for seq in 2..5 {
            assert!(arrive(&mut r, us(seq), owd, seq).is_some());
        }
        let nr = u64::from(SackCompression::LINUX.nr);
        assert_eq!(nr, 44);
        for seq in 5..5 + nr {
            assert!(arrive(&mut r, us(seq), owd, seq).is_none(), "held {seq}");
        }
        let last = 5 + nr;
        assert_eq!(
            ack_of(arrive(&mut r, us(last), owd, last)),
            (1, vec![(2, last + 1)], false)
        );
        assert_eq!(r.acks_compressed, nr);
        assert_eq!(r.delack_deadline(), None, "the timer is cancelled");
    }

    /// A segment that fills the last hole empties the out-of-order queue and is ACKed at once
    /// (Linux `ICSK_ACK_NOW`), although the held ACK's timer has not fired and `ack_every`
    /// would hold it.
    #[test]
    fn hole_fill_that_empties_the_queue_acks_at_once() {
        let owd = Dur::from_millis(50);
        let mut r = after_first(64, owd);
        for seq in 2..5 {
            assert!(arrive(&mut r, us(seq), owd, seq).is_some());
        }
        assert!(arrive(&mut r, us(5), owd, 5).is_none());
        assert_eq!(ack_of(arrive(&mut r, us(6), owd, 1)), (6, vec![], false));
        assert_eq!(r.delack_deadline(), None);
        assert_eq!(r.segments_delivered, 6);
        assert_eq!(r.acks_compressed, 1);
    }

    /// When `rcv_nxt` moves (here a retransmission fills the first of two holes), the next three
    /// out-of-order arrivals are ACKed at once again.
    #[test]
    fn rcv_nxt_moving_resets_the_dup_ack_counter() {
        let owd = Dur::from_millis(50);
        let mut r = after_first(2, owd);
        // Holes at 1 and 3.
        assert!(arrive(&mut r, us(2), owd, 2).is_some());
        for seq in 4..6 {
            assert!(arrive(&mut r, us(seq), owd, seq).is_some());
        }
        assert!(arrive(&mut r, us(6), owd, 6).is_none());
        assert_eq!(
            ack_of(arrive(&mut r, us(7), owd, 1)),
            (3, vec![(4, 7)], false)
        );
        for seq in 7..10 {
            assert_eq!(
                ack_of(arrive(&mut r, us(seq), owd, seq)),
                (3, vec![(4, seq + 1)], false)
            );
        }
        assert!(arrive(&mut r, us(10), owd, 10).is_none());
    }

    /// A segment below `rcv_nxt` is DSACKed at once (Linux `tcp_enter_quickack_mode`) even while
    /// an ACK is held; that ACK is cancelled, its information being in this one.
    #[test]
    fn old_duplicate_is_dsacked_at_once_while_compressing() {
        let owd = Dur::from_millis(50);
        let mut r = after_first(2, owd);
        for seq in 2..5 {
            assert!(arrive(&mut r, us(seq), owd, seq).is_some());
        }
        assert!(arrive(&mut r, us(5), owd, 5).is_none());
        assert_eq!(
            ack_of(arrive(&mut r, us(6), owd, 0)),
            (1, vec![(0, 1), (2, 6)], true)
        );
        assert_eq!(r.delack_deadline(), None);
        assert_eq!((r.dsacks_sent, r.acks_compressed), (1, 1));
    }

    /// A copy of out-of-order data follows the ordinary decision (Linux `tcp_data_queue_ofo`):
    /// held while compressing, its DSACK goes out on the held ACK, and is forgotten when another
    /// segment arrives first.
    #[test]
    fn copy_of_out_of_order_data_is_dsacked_on_the_held_ack() {
        let owd = Dur::from_millis(50);
        let mut r = after_first(2, owd);
        for seq in 2..5 {
            assert!(arrive(&mut r, us(seq), owd, seq).is_some());
        }
        assert!(arrive(&mut r, us(5), owd, 3).is_none());
        let due = r.delack_deadline().unwrap();
        assert_eq!(
            ack_of(r.on_delack_timer(due)),
            (1, vec![(3, 4), (2, 5)], true)
        );
        // Another copy, then a new segment before the timer: no DSACK on the ACK.
        assert!(arrive(&mut r, us(6), owd, 2).is_none());
        assert!(arrive(&mut r, us(7), owd, 5).is_none());
        let due = r.delack_deadline().unwrap();
        assert_eq!(ack_of(r.on_delack_timer(due)), (1, vec![(2, 6)], false));
        assert_eq!(r.dsacks_sent, 1);
    }

    /// An arrival extending the third most recent SACK block first sends the held ACK (Linux
    /// `tcp_sack_new_ofo_skb`, `TCP_SACK_BLOCKS_EXPECTED`), without the new segment; the arrival
    /// itself is held.
    #[test]
    fn sack_block_behind_the_two_most_recent_sends_the_held_ack_first() {
        let owd = Dur::from_millis(50);
        let mut r = after_first(2, owd);
        // Holes at 1, 3–4 and 6–7.
        for seq in [2, 5, 8] {
            assert!(arrive(&mut r, us(seq), owd, seq).is_some());
        }
        assert!(arrive(&mut r, us(9), owd, 9).is_none());
        // 3 extends the third block.
        assert_eq!(
            ack_of(arrive(&mut r, us(10), owd, 3)),
            (1, vec![(8, 10), (5, 6), (2, 3)], false)
        );
        let due = r.delack_deadline().expect("the arrival is held");
        assert_eq!(due, us(10) + owd + Dur::from_millis(1));
        assert_eq!(
            ack_of(r.on_delack_timer(due)),
            (1, vec![(2, 4), (8, 10), (5, 6)], false)
        );
        // Extending the second block holds without sending.
        assert!(arrive(&mut r, us(11), owd, 10).is_none());
    }

    /// The held compressed ACK rides on a data segment leaving now (`tcp_event_ack_sent`).
    #[test]
    fn held_ack_is_taken_by_outgoing_data() {
        let owd = Dur::from_millis(50);
        let mut r = after_first(2, owd);
        for seq in 2..5 {
            assert!(arrive(&mut r, us(seq), owd, seq).is_some());
        }
        assert!(arrive(&mut r, us(5), owd, 5).is_none());
        assert_eq!(ack_of(r.take_pending_ack()), (1, vec![(2, 6)], false));
        assert_eq!(r.delack_deadline(), None);
        assert!(r.take_pending_ack().is_none());
    }

    /// Compression off: every out-of-order arrival is ACKed at once, no timer, as before.
    #[test]
    fn compression_off_acks_every_out_of_order_arrival() {
        let owd = Dur::from_millis(50);
        let mut on = after_first(2, owd);
        let mut off = after_first(2, owd).with_sack_compression(None);
        let (mut sent_on, mut sent_off) = (0, 0);
        for seq in 2..100 {
            sent_on += u32::from(arrive(&mut on, us(seq), owd, seq).is_some());
            let a = arrive(&mut off, us(seq), owd, seq);
            assert_eq!(ack_of(a), (1, vec![(2, seq + 1)], false));
            sent_off += 1;
            assert_eq!(off.delack_deadline(), None);
        }
        assert_eq!(sent_off, 98);
        assert_eq!(sent_on, 3 + 2, "3 at once, then 1 per 45 arrivals");
        assert_eq!(off.acks_compressed, 0);
    }
}
