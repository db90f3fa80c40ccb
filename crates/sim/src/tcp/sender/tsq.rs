//! TCP Small Queues (Linux `tcp_small_queue_check`, `tcp_wfree`, `tcp_tsq_handler`): the bytes
//! handed below TCP and not yet completed, the throttle, and the wakeup at the completion that
//! ends it.
//!
//! Contract: the engine reports TX completions ([`Sender::tx_completed`]), at once or ahead of
//! time; the transmit path asks [`Sender::tsq_blocks`] before each skb; a throttled socket is
//! woken at the earliest reported completion that brings it back within its limit.

use super::*;

/// TX completions reported ahead of time, in time order: a vector read from `head`, so the
/// common pattern (append in order; everything due by the next look) costs a store and a reset.
#[derive(Debug, Default)]
pub(super) struct Completions {
    q: Vec<(Time, u32)>,
    head: usize,
    /// Sum of the pending bytes.
    pub(super) bytes: u64,
}

impl Completions {
    /// Add a completion; returns whether it came in time order.
    #[inline]
    pub(super) fn push(&mut self, at: Time, bytes: u32) -> bool {
        self.bytes += u64::from(bytes);
        if self.q.last().is_none_or(|&(t, _)| t <= at) {
            self.q.push((at, bytes));
            return true;
        }
        let i = self.head + self.q[self.head..].partition_point(|&(t, _)| t <= at);
        self.q.insert(i, (at, bytes));
        false
    }

    /// Remove the completions due by `now`; returns their bytes.
    #[inline]
    pub(super) fn settle(&mut self, now: Time) -> u64 {
        match self.q.last() {
            None => 0,
            Some(&(t, _)) if t <= now => {
                let b = self.bytes;
                self.q.clear();
                self.head = 0;
                self.bytes = 0;
                b
            }
            Some(_) => {
                let mut b = 0;
                while let Some(&(t, n)) = self.q.get(self.head) {
                    if t > now {
                        break;
                    }
                    b += u64::from(n);
                    self.head += 1;
                }
                self.bytes -= b;
                b
            }
        }
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &(Time, u32)> {
        self.q[self.head..].iter()
    }
}

/// What the engine must do after reporting a TX completion ([`Sender::tx_completed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxNote {
    /// Nothing.
    None,
    /// The sender's wakeup moved earlier ([`Sender::next_wakeup`]): re-arm it.
    Rearm,
    /// A throttled socket is back within its TSQ limit now: run [`Sender::tsq_kick`].
    Kick,
}

impl Sender {
    pub(super) fn tsq_limit_for(&self, skb_bytes: u64) -> u64 {
        tsq_limit(
            skb_bytes,
            self.pacing_rate,
            self.tsq_shift(),
            !self.is_paced(),
            self.host.limit_output_bytes,
        )
    }

    /// The TSQ budget in force, bytes: the limit a full-size skb of the current TSO goal would
    /// be checked against (`None` when TSQ is off).
    #[must_use]
    pub fn tsq_budget(&self) -> Option<u64> {
        self.host.tsq.then(|| {
            let skb = u64::from(self.tso_goal()) * u64::from(self.mss + TCP_IP_HEADER_BYTES);
            self.tsq_limit_for(skb)
        })
    }

    /// Bytes below TCP at `now`: handed to the qdisc or NIC and not yet completed.
    #[must_use]
    pub fn below_tcp(&self, now: Time) -> u64 {
        let done: u64 = self
            .completions
            .iter()
            .take_while(|&&(t, _)| t <= now)
            .map(|&(_, b)| u64::from(b))
            .sum();
        self.below_tcp - done
    }

    /// Whether the socket is TSQ-throttled.
    #[must_use]
    pub fn tsq_throttled(&self) -> bool {
        self.tsq_throttled
    }

    /// TSQ tasklet (`tcp_tsq_handler`): TX completions brought a throttled socket back within
    /// its limit at `now`; try to send.
    pub fn tsq_kick(&mut self, now: Time, out: &mut Vec<Outgoing>) {
        if !self.tsq_throttled {
            return;
        }
        self.try_send(now, out);
        self.record(now, "tsq");
    }

    /// The device reports that `bytes` of this socket's data finish transmission at `at`
    /// (`tcp_wfree`): at once if `at <= now`, else in advance. Advance reports may come in any
    /// order. Returns what the engine must do.
    #[inline]
    pub fn tx_completed(&mut self, at: Time, bytes: u32, now: Time) -> TxNote {
        if self.host.instant_completion {
            return TxNote::None;
        }
        if self.trace_tx {
            self.record(at, "tx_done");
        }
        if at <= now {
            self.below_tcp -= u64::from(bytes);
            return if self.tsq_throttled && self.below_tcp <= self.tsq_limit_now {
                TxNote::Kick
            } else {
                TxNote::None
            };
        }
        let in_order = self.completions.push(at, bytes);
        if self.tsq_throttled && self.tsq_wake.is_none() {
            // Earlier reports did not suffice; with an in-order report only the total can.
            self.tsq_wake = if in_order {
                (self.below_tcp - self.completions.bytes <= self.tsq_limit_now).then_some(at)
            } else {
                self.tsq_wake_time()
            };
            if self.tsq_wake.is_some() {
                return TxNote::Rearm;
            }
        }
        TxNote::None
    }

    /// Account the completions due by `now`.
    #[inline]
    pub(super) fn settle_completions(&mut self, now: Time) {
        self.below_tcp -= self.completions.settle(now);
    }

    /// The earliest reported completion after which the bytes below TCP are within
    /// `tsq_limit_now`.
    pub(super) fn tsq_wake_time(&self) -> Option<Time> {
        let need = self.below_tcp.saturating_sub(self.tsq_limit_now);
        let mut freed = 0;
        for &(t, b) in self.completions.iter() {
            freed += u64::from(b);
            if freed >= need {
                return Some(t);
            }
        }
        None
    }

    /// `tcp_small_queue_check` for an skb of `skb_bytes` (`factor` 1 for retransmissions):
    /// true = throttled.
    pub(super) fn tsq_blocks(&mut self, skb_bytes: u64, factor: u32) -> bool {
        if !self.host.tsq || self.below_tcp <= (2 * skb_bytes).min(self.host.limit_output_bytes) {
            return false; // below any limit this skb can get, whatever the rate
        }
        let limit = self.tsq_limit_for(skb_bytes) << factor;
        if self.below_tcp <= limit || self.snd_una == self.snd_nxt {
            return false; // within budget, or nothing outstanding (`tcp_rtx_queue_empty`)
        }
        // Linux `tcp_write_xmit` ends with is_cwnd_limited = in_flight >= cwnd: a socket held
        // back by TSQ below its window is not cwnd-limited, so its window stops growing
        // (`tcp_cwnd_validate`, `tcp_is_cwnd_limited`; Linux keeps the flag for the rest of
        // the window in which it was last set, this model clears it at once).
        self.cwnd_limited = false;
        self.tsq_throttled = true;
        self.tsq_limit_now = limit;
        self.tsq_wake = self.tsq_wake_time();
        self.counters.tsq_throttles += 1;
        true
    }
}
