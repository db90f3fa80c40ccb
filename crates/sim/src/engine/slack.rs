//! Timer slack and TX completion batching of hosts with a timing model
//! ([`crate::host::timing`]): when a flow's kernel timers run their handlers, and when its NIC
//! tells TSQ that an skb has left.
//!
//! Contract: for a flow whose host has [`HostTiming::timer_slack`], the engine arms the
//! sender's and the receiver's wake-up at the time the host's [`TimerClock`] gives for the
//! deadline the endpoint asked for (never earlier), and a wake-up that finds none of those
//! times reached (the deadlines moved since it was armed) only re-arms. A `timer_list`
//! deadline is remembered with the time it was first seen (its arming: the engine asks after
//! every operation of the endpoint), which the wheel's level depends on; every other answer is
//! a pure function of the deadline. For a NIC of a host with a [`TxCompletion`] other than
//! `TxEnd`, each skb's completion is reported at the time the model gives: in advance (the
//! sender keeps it, no event), and completions found by one poll share its time, so a
//! throttled socket is woken once per poll. Hosts without a model, and every host of a run
//! without one, never come here: `slack` and `tx_polls` are empty and the callers test that
//! first.

use cclab_cc::Time;
use rand_chacha::ChaCha8Rng;

use super::Simulation;
use crate::config::SimConfig;
use crate::host::timing::{HostTiming, RxClock, TX_CLEAN_WORK, TimerClock, TxCompletion};

/// A `timer_list` deadline as first seen, and when the wheel runs it. The wheel's answer is
/// worked out only once the deadline is reached: before that the deadline itself is a bound
/// the engine may arm at (the wheel never runs a timer early), and most deadlines never come
/// (a retransmission timer moves on every ACK), so most never cost the computation.
#[derive(Clone, Copy, Debug)]
struct Armed {
    due: Time,
    /// When the deadline was first seen (the wheel's clock at arming).
    at: Time,
    /// When the wheel runs it; [`UNKNOWN`] until the deadline is reached.
    fire: Time,
}

/// `Armed::fire` not worked out yet.
const UNKNOWN: Time = Time::ZERO;

impl Armed {
    const NONE: Armed = Armed {
        due: Time::MAX,
        at: Time::MAX,
        fire: Time::MAX,
    };

    /// When the timer with deadline `due` runs, or a bound no later than that while the
    /// deadline lies ahead; a new deadline counts as armed at `now`.
    #[inline]
    fn fire(&mut self, due: Option<Time>, now: Time, clock: &TimerClock) -> Time {
        match due {
            None => {
                *self = Armed::NONE;
                Time::MAX
            }
            Some(d) => {
                if d != self.due {
                    *self = Armed {
                        due: d,
                        at: now,
                        fire: UNKNOWN,
                    };
                }
                if self.fire != UNKNOWN {
                    self.fire
                } else if now >= d {
                    self.fire = clock.wheel_fire(self.at, d);
                    self.fire
                } else {
                    d
                }
            }
        }
    }
}

/// One flow's `timer_list` timers as the engine saw them armed, and the timers of its sender's
/// and its receiver's hosts (copies of their [`TimerClock`]s, which are pure functions; `None`:
/// that host fires every timer at its deadline).
#[derive(Clone, Debug)]
pub(super) struct FlowSlack {
    retransmit: Armed,
    reorder: Armed,
    delack: Armed,
    sender: Option<TimerClock>,
    receiver: Option<TimerClock>,
}

impl FlowSlack {
    /// A flow from a host with timers `sender` to one with `receiver`.
    pub(super) fn new(sender: Option<&TimerClock>, receiver: Option<&TimerClock>) -> Self {
        FlowSlack {
            retransmit: Armed::NONE,
            reorder: Armed::NONE,
            delack: Armed::NONE,
            sender: sender.cloned(),
            receiver: receiver.cloned(),
        }
    }
}

/// How one link reports the TX completions of the host it leaves (`Simulation::tx_polls`).
#[derive(Debug)]
pub(super) enum TxPoll {
    /// At the end of serialisation (no model, or [`TxCompletion::TxEnd`]).
    TxEnd,
    /// At the hand-off ([`TxCompletion::Orphan`]).
    Orphan,
    /// At the TX-clean poll ([`TxCompletion::Napi`]).
    Napi(Box<RxClock>),
}

/// The host's timers, if its timing model has slack (host `i`'s own stream).
pub(super) fn timer_clock(cfg: &SimConfig, i: usize, t: &HostTiming) -> Option<Box<TimerClock>> {
    t.timer_slack.then(|| {
        let mut rng = crate::rng::stream(cfg.seed, crate::rng::HOST_TIMERS + i as u64);
        Box::new(TimerClock::new(t, t.timer_latency_table(), &mut rng))
    })
}

/// Per link, how it reports TX completions; empty when no host's model changes that.
pub(super) fn tx_polls(cfg: &SimConfig) -> Vec<TxPoll> {
    let timing = |l: &crate::config::LinkConfig| {
        let n = &cfg.nodes[l.from.0 as usize];
        (n.kind == crate::config::NodeKind::Host)
            .then_some(n.host.timing)
            .flatten()
    };
    if !cfg
        .links
        .iter()
        .filter_map(timing)
        .any(|t| t.tx_completion != TxCompletion::TxEnd)
    {
        return Vec::new();
    }
    cfg.links
        .iter()
        .enumerate()
        .map(|(i, l)| match timing(l).map(|t| (t, t.tx_completion)) {
            None | Some((_, TxCompletion::TxEnd)) => TxPoll::TxEnd,
            Some((_, TxCompletion::Orphan)) => TxPoll::Orphan,
            Some((t, TxCompletion::Napi { tx_usecs })) => {
                let rng: ChaCha8Rng = crate::rng::stream(cfg.seed, crate::rng::HOST_TX + i as u64);
                TxPoll::Napi(Box::new(RxClock::polls(
                    tx_usecs,
                    TX_CLEAN_WORK,
                    t.latency_table(),
                    rng,
                )))
            }
        })
        .collect()
}

/// Which endpoint of a flow a wake-up is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Side {
    Sender,
    Receiver,
}

impl Simulation {
    /// When flow `f`'s sender must run next: [`crate::tcp::sender::Sender::next_wakeup`], with
    /// its kernel timers' slack if its host has a timer model.
    #[inline(always)]
    pub(super) fn sender_fire(&mut self, f: usize) -> Option<Time> {
        let sender = &self.flows[f].sender;
        let s = &mut self.slack[f];
        let Some(clock) = &s.sender else {
            return sender.next_wakeup();
        };
        let p = sender.wakeup_parts();
        let now = self.now;
        let t = s
            .retransmit
            .fire(p.retransmit, now, clock)
            .min(s.reorder.fire(p.reorder, now, clock))
            .min(p.pacing.map_or(Time::MAX, |d| clock.hrtimer_fire(d)))
            .min(p.other.unwrap_or(Time::MAX));
        (t != Time::MAX).then_some(t)
    }

    /// When flow `f`'s receiver must run next: its ACK timers, with their slack if its host
    /// has a timer model.
    #[inline(always)]
    pub(super) fn receiver_fire(&mut self, f: usize) -> Option<Time> {
        let receiver = &self.flows[f].receiver;
        let s = &mut self.slack[f];
        let Some(clock) = &s.receiver else {
            return receiver.delack_deadline();
        };
        let (delack, comp) = receiver.ack_timers();
        // A slow reading application's next read (`read_rate`): a user-space sleep, not one of
        // TCP's timers; it wakes at its deadline (the process's own timer slack and wake-up
        // latency are not modelled).
        let read = receiver.read_deadline().unwrap_or(Time::MAX);
        let now = self.now;
        let t = s
            .delack
            .fire(delack, now, clock)
            .min(comp.map_or(Time::MAX, |(d, s)| clock.hrtimer_range_fire(d, s)))
            .min(read);
        (t != Time::MAX).then_some(t)
    }

    /// A wake-up of flow `f`'s `side` at `now` that finds none of its timers' fire times
    /// reached (the deadlines moved after it was armed): the earliest of them, to arm instead.
    /// Running the endpoint now would run a deadline that has passed but whose handler is not
    /// due yet.
    #[inline]
    pub(super) fn early_wake(&mut self, f: usize, side: Side) -> Option<Time> {
        if self.slack.is_empty() {
            return None;
        }
        let fire = match side {
            Side::Sender => self.sender_fire(f),
            Side::Receiver => self.receiver_fire(f),
        };
        fire.filter(|&t| t > self.now)
    }

    /// NIC link `l` has been handed flow `f`'s skb of `bytes`, whose serialisation ends at
    /// `done` if known now: report its completion, at `done` for ideal hosts (nothing when
    /// `done` is unknown: the link reports it at the end of the transmission), else as the
    /// host's model has it ([`Simulation::nic_handed`]).
    #[inline(always)]
    pub(super) fn skb_handed(&mut self, f: usize, l: u32, done: Option<Time>, bytes: u32) {
        if !self.tx_polls.is_empty() {
            self.nic_handed(f, l, done, bytes);
        } else if let Some(at) = done {
            self.tx_complete(f, at, bytes);
        }
    }

    /// NIC link `l` (`u32::MAX` and above: none) has been handed flow `f`'s skb of `bytes`;
    /// `done` is when its serialisation ends if known now (a drop: now), `None` if the link
    /// reports it at the end of the transmission. Reports the completion as the host's model
    /// has it. Only called when `tx_polls` is not empty.
    #[inline(never)]
    pub(super) fn nic_handed(&mut self, f: usize, l: u32, done: Option<Time>, bytes: u32) {
        let now = self.now;
        let at = match self.tx_polls.get_mut(l as usize) {
            None | Some(TxPoll::TxEnd) => done,
            Some(TxPoll::Orphan) => Some(now),
            Some(TxPoll::Napi(c)) => match done {
                // A serialisation end: the poll that reports it.
                Some(at) if at > now => Some(c.admit(at)),
                // Dropped before the wire: freed now.
                other => other,
            },
        };
        if let Some(at) = at {
            self.tx_complete(f, at, bytes);
        }
    }

    /// NIC link `l` finished transmitting flow `f`'s skb of `bytes` now (the evented FIFO).
    /// Only called when `tx_polls` is not empty.
    #[inline(never)]
    pub(super) fn nic_tx_end(&mut self, f: usize, l: usize, bytes: u32) {
        let now = self.now;
        let at = match self.tx_polls.get_mut(l) {
            None | Some(TxPoll::TxEnd) => now,
            // Reported at the hand-off.
            Some(TxPoll::Orphan) => return,
            Some(TxPoll::Napi(c)) => c.admit(now),
        };
        self.tx_complete(f, at, bytes);
    }

    /// Whether NIC link `l` reported its skbs' completions at the hand-off (so a drop in its
    /// queue reports nothing more).
    #[inline]
    pub(super) fn nic_orphans(&self, l: usize) -> bool {
        matches!(self.tx_polls.get(l), Some(TxPoll::Orphan))
    }
}
