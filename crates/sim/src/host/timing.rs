//! The host timing model: when a host's kernel gets round to the packets that reached it.
//!
//! Contract: a host with a [`HostTiming`] does not process an arriving packet the instant it
//! arrives. Its NIC keeps packets in an RX ring and raises an interrupt no sooner than
//! [`HostTiming::rx_usecs`] after the previous one (interrupt throttling); the NAPI poll that
//! processes the ring runs a softirq latency after the interrupt, drawn from the host's own
//! seeded stream ([`crate::rng::HOST_TIMING`] + node index); a poll takes at most
//! [`HostTiming::napi_budget`] packets in arrival order and, with [`HostTiming::gro`], merges
//! runs of in-order segments of one TCP flow into one skb, which the receiver acknowledges once
//! (a stretch ACK). Order is never changed. A host without a model (`None`, "ideal timing")
//! processes every packet at its arrival, as before the model existed.
//!
//! What it stands for, in Linux terms:
//! - **Interrupt moderation.** Intel's i40e/ice drivers throttle RX interrupts to
//!   `I40E_ITR_20K` by default (20,000 per second: one per 50 µs, `ethtool -c`: `rx-usecs
//!   50`), `drivers/net/ethernet/intel/i40e/i40e_txrx.h`. Throttling delays a packet only when
//!   the previous interrupt was recent; at a few tens of Mbit/s packets are farther apart than
//!   that and are not delayed.
//! - **Softirq latency.** The time from the interrupt to `net_rx_action` running the poll: a
//!   few microseconds on an idle core, more when the core runs something else or the work moves
//!   to `ksoftirqd`. A log-normal with a median and a shape σ, capped; the defaults ([`linux`])
//!   put the median at 10 µs and the 99th percentile near 100 µs, the order that wake-up
//!   latency measurements of non-realtime kernels show on a busy host. This is the draw that
//!   makes two runs with different seeds differ.
//! - **NAPI budget.** `NAPI_POLL_WEIGHT` = 64 packets per poll (`include/linux/netdevice.h`);
//!   a ring with more waiting is polled again at once.
//! - **GRO.** `tcp_gro_receive` (`net/ipv4/tcp_offload.c`) merges segments of one flow whose
//!   sequence numbers continue each other; a segment with CWR set, or a different IP ECN
//!   field (`inet_gro_receive` compares the TOS byte), ends the run. The merged skb is one
//!   arrival for TCP: more than one full-sized segment received, so `__tcp_ack_snd_check`
//!   acknowledges it at once (`net/ipv4/tcp_input.c`). Pure ACKs are not merged.
//! - **Timer slack** ([`HostTiming::timer_slack`], [`TimerClock`]). TCP's retransmission
//!   timer (RTO, tail loss probe, RACK reordering timer, SYN retransmission:
//!   `icsk_retransmit_timer`) and its delayed-ACK timer (`icsk_delack_timer`) are `timer_list`
//!   timers on the jiffies wheel (`sk_reset_timer`, `net/core/sock.c`; `icsk_ack.timeout =
//!   jiffies + ato`, `net/ipv4/tcp_output.c`): they expire at a tick boundary
//!   ([`HostTiming::tick`], one jiffy), and the handler runs in the TIMER softirq a timer
//!   latency later ([`HostTiming::timer_median`]: a softirq latency, drawn from its own
//!   distribution because in emulation the packets' latency is a user-space forwarder's). The wheel's rule is exact ([`wheel_expiry`], `kernel/time/timer.c`
//!   `calc_wheel_index` and `calc_index`). The pacing timer (`tp->pacing_timer`,
//!   `HRTIMER_MODE_ABS_PINNED_SOFT`) and the compressed-SACK timer (`compressed_ack_timer`,
//!   `HRTIMER_MODE_REL_PINNED_SOFT` with `tcp_comp_sack_slack_ns` of range) are soft hrtimers
//!   (`tcp_init_xmit_timers`, `net/ipv4/tcp_timer.c`): they run in the HRTIMER softirq, a
//!   timer latency after their expiry.
//! - **TX completion batching** ([`HostTiming::tx_completion`]). A NIC reports that it has
//!   sent an skb in the NAPI poll after a TX interrupt; the driver frees the skb there and
//!   `tcp_wfree` tells TSQ. Intel's i40e throttles TX interrupts like RX ones
//!   (`I40E_ITR_TX_DEF` = `I40E_ITR_20K`, `ethtool -c`: `tx-usecs 50`), so TSQ learns of
//!   completions late and in batches. A TUN device frees the skb as it queues it
//!   (`tun_net_xmit` calls `skb_orphan`, `drivers/net/tun.c`): TSQ learns at once.
//! - **Stalls** ([`HostTiming::stall_rate`], [`HostTiming::stall_max`]): times in which the
//!   receive path does not run at all, because the packets' handler woke while another task
//!   held its CPU and waits for the scheduler's tick. A poll due in a stall runs at its end.
//!   None on a physical host's softirq path (`linux`); the `emulated` model's user-space
//!   forwarder has them ([`HostTiming::emulated`]).
//!
//! [`linux`]: HostTiming::linux

use std::sync::Arc;

use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use rand::Rng;

/// `NAPI_POLL_WEIGHT` (`include/linux/netdevice.h`): packets one NAPI poll may take.
pub const NAPI_POLL_WEIGHT: u32 = 64;
/// i40e/ice default RX interrupt throttling, `I40E_ITR_20K`: one interrupt per 50 µs.
pub const ITR_20K: Dur = Dur::from_micros(50);

/// One jiffy at `CONFIG_HZ` = 250, the default of `kernel/Kconfig.hz` (`HZ_250`), which Debian
/// and the kernel this project's emulator runs on use (Fedora, RHEL and Ubuntu since 24.04 build
/// with 1000: `tick = "1ms"`).
pub const HZ_250_TICK: Dur = Dur::from_millis(4);
/// Most stalls a second a host may have ([`HostTiming::stall_rate`]): at 1,000 stalls of up
/// to a 4 ms tick the host would be stalled most of the time.
pub const MAX_STALL_RATE: f64 = 1_000.0;
/// i40e `I40E_DEFAULT_IRQ_WORK` (`drivers/net/ethernet/intel/i40e/i40e_txrx.h`): TX descriptors
/// one poll cleans at most.
pub const TX_CLEAN_WORK: u32 = 256;

/// When a host's device tells TSQ that an skb has left (`tcp_wfree`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxCompletion {
    /// At the end of the skb's serialisation, as with ideal timing.
    TxEnd,
    /// In the TX-clean NAPI poll after the serialisation ends: the TX interrupt comes no
    /// sooner than `tx_usecs` after the previous one (`ethtool -c`: `tx-usecs`), the poll a
    /// softirq latency after it, and one poll reports every completion it finds (at most
    /// [`TX_CLEAN_WORK`]).
    Napi {
        /// Minimum time between two TX interrupts (0 = no moderation).
        tx_usecs: Dur,
    },
    /// When the skb is handed to the device, which frees it at once: a TUN device
    /// (`tun_net_xmit` → `skb_orphan`). Bytes queued behind the device are not below TCP.
    Orphan,
}

/// A host's timing (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostTiming {
    /// Minimum time between two RX interrupts (`rx-usecs`; 0 = no moderation).
    pub rx_usecs: Dur,
    /// Median softirq latency, from the interrupt to the NAPI poll.
    pub softirq_median: Dur,
    /// Shape σ of the log-normal softirq latency (0 = always the median).
    pub softirq_sigma: f64,
    /// Largest softirq latency drawn.
    pub softirq_max: Dur,
    /// Packets one poll takes ([`NAPI_POLL_WEIGHT`]).
    pub napi_budget: u32,
    /// Generic receive offload: in-order segments of a flow polled together become one skb.
    pub gro: bool,
    /// Kernel timers fire late: the wheel's tick and the timer softirq's latency
    /// ([`TimerClock`]). `false`: every TCP timer fires at its deadline, as with ideal timing.
    pub timer_slack: bool,
    /// Median latency from a timer's expiry (the tick for wheel timers) to its handler, in the
    /// TIMER or HRTIMER softirq.
    pub timer_median: Dur,
    /// Shape σ of the log-normal timer latency (0 = always the median).
    pub timer_sigma: f64,
    /// Largest timer latency drawn.
    pub timer_max: Dur,
    /// One jiffy, `1 / CONFIG_HZ` ([`HZ_250_TICK`]).
    pub tick: Dur,
    /// When TX completions reach TSQ.
    pub tx_completion: TxCompletion,
    /// Stalls per second of the receive path ([`Stalls`]; 0 = none): times when the packets'
    /// handler waits for a CPU another task holds.
    pub stall_rate: f64,
    /// Longest stall; each lasts a uniform draw between 0 and this (one scheduler tick).
    pub stall_max: Dur,
}

impl HostTiming {
    /// A physical Linux host with an Intel NIC's default interrupt throttling and GRO on, on a
    /// core that also runs other work (see the module documentation for each value).
    #[must_use]
    pub const fn linux() -> Self {
        HostTiming {
            rx_usecs: ITR_20K,
            softirq_median: Dur::from_micros(10),
            softirq_sigma: 1.0,
            softirq_max: Dur::from_millis(2),
            napi_budget: NAPI_POLL_WEIGHT,
            gro: true,
            timer_slack: true,
            timer_median: Dur::from_micros(10),
            timer_sigma: 1.0,
            timer_max: Dur::from_millis(2),
            tick: HZ_250_TICK,
            tx_completion: TxCompletion::Napi { tx_usecs: ITR_20K },
            stall_rate: 0.0,
            stall_max: Dur::ZERO,
        }
    }

    /// A host behind cclab's user-space emulator (`cclab emulate`): no NIC, so no interrupt
    /// moderation; the packets' latency is the forwarder's, a user-space process that sleeps
    /// until the next release and writes each packet into its host's TUN device. Its lateness
    /// in `cclab validate`'s single-flow cases (idle two-core machine, 3 runs of 14 cases, a
    /// few tens of thousands of packets each): median 30–60 µs, 99th percentile 0.1–0.3 ms,
    /// 99.9th 2–3.5 ms. Two parts make that shape:
    /// - **Wake-up latency** of every release: a log-normal with a median of 30 µs and σ 0.5
    ///   (99th percentile 0.1 ms).
    /// - **Stalls** ([`Stalls`]): now and then the forwarder wakes while another task (a
    ///   sender, a receiver, a softirq) holds its CPU and waits until the scheduler's tick
    ///   takes the CPU back: a wait uniform between 0 and one tick (4 ms at `CONFIG_HZ` =
    ///   250), every packet due in it released together at its end. A packet is late by more
    ///   than `x` in a fraction `rate · (T − x)² / (2T)` of the time, so 5.5 stalls a second
    ///   put the 99th percentile at 0.2 ms and the 99.9th at 2.8 ms, as measured. Two flows
    ///   (two senders and two receivers on the two cores) stall more often: their 99th
    ///   percentile was 1.8–2.5 ms (about 20 a second); `cclab validate --sim-timing
    ///   measured` takes the rate from each case's own kernel runs.
    ///
    /// `cclab validate` gives the simulated hosts this model, so both sides of a comparison
    /// see the same kind of timing noise. The hosts are Linux kernels (network namespaces), so
    /// their TCP timers behave as on any Linux host: the tick of the kernel the emulator runs
    /// on (`CONFIG_HZ` = 250), and the latency of a kernel's timer softirq, that of
    /// [`HostTiming::linux`]. Not the forwarder's: its lateness is that of a user-space process
    /// woken by its timer (the interrupt, a wake-up, the scheduler, a context switch back to
    /// user space), while a TCP timer's handler runs in the softirq that the interrupt's exit
    /// runs, with no scheduler in between. Their device is a TUN,
    /// which orphans each skb as it queues it ([`TxCompletion::Orphan`]): TSQ sees the
    /// completion at the hand-off, never when the forwarder reads the packet, so the bytes
    /// waiting for the forwarder never throttle the socket.
    #[must_use]
    pub const fn emulated() -> Self {
        HostTiming {
            rx_usecs: Dur::ZERO,
            softirq_median: Dur::from_micros(30),
            softirq_sigma: 0.5,
            softirq_max: Dur::from_millis(5),
            napi_budget: NAPI_POLL_WEIGHT,
            gro: true,
            timer_slack: true,
            timer_median: Dur::from_micros(10),
            timer_sigma: 1.0,
            timer_max: Dur::from_millis(2),
            tick: HZ_250_TICK,
            tx_completion: TxCompletion::Orphan,
            stall_rate: 5.5,
            stall_max: HZ_250_TICK,
        }
    }

    /// The softirq latency's quantile table ([`latency_table`]).
    #[must_use]
    pub fn latency_table(&self) -> LatencyTable {
        latency_table(self.softirq_median, self.softirq_sigma, self.softirq_max)
    }

    /// The fraction of packets a host with this model processes more than `x` after their
    /// arrival, for packets far enough apart that each has its own poll: the log-normal's tail
    /// plus the time share of stalls that have more than `x` left, `rate · (T − x)² / (2T)` for
    /// stalls uniform on `[0, T]` (a packet arriving in a stall waits for its end). The two
    /// are added, which is exact to within their product.
    #[must_use]
    pub fn lateness_exceeds(&self, x: Dur) -> f64 {
        #[expect(clippy::cast_precision_loss, reason = "durations far below 2^53 ns")]
        let (x, med, cap, t) = (
            x.as_nanos() as f64,
            self.softirq_median.as_nanos() as f64,
            self.softirq_max.as_nanos() as f64,
            self.stall_max.as_nanos() as f64,
        );
        let body = if x >= cap {
            0.0
        } else if self.softirq_sigma == 0.0 || x <= 0.0 {
            if x < med { 1.0 } else { 0.0 }
        } else {
            0.5 * crate::net::dist::erfc(
                (x / med).ln() / (self.softirq_sigma * std::f64::consts::SQRT_2),
            )
        };
        let stall = if t > x {
            self.stall_rate * 1e-9 * (t - x).powi(2) / (2.0 * t)
        } else {
            0.0
        };
        (body + stall).min(1.0)
    }

    /// The lateness that a fraction `1 − q` of packets exceed ([`HostTiming::lateness_exceeds`]),
    /// to the nanosecond.
    #[must_use]
    pub fn lateness_quantile(&self, q: f64) -> Dur {
        let (mut lo, mut hi) = (0_u64, self.softirq_max.max(self.stall_max).as_nanos());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.lateness_exceeds(Dur::from_nanos(mid)) > 1.0 - q {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Dur::from_nanos(lo)
    }

    /// The timer latency's quantile table ([`latency_table`]).
    #[must_use]
    pub fn timer_latency_table(&self) -> LatencyTable {
        latency_table(self.timer_median, self.timer_sigma, self.timer_max)
    }
}

/// A log-normal latency's quantile table: entry `i` is the quantile at `(i + 0.5) /
/// LATENCY_TABLE`, `median · exp(σ·Φ⁻¹(q))`, capped at `max`, in nanoseconds. A draw picks an
/// entry uniformly ([`LatencyTable::draw`]): one random number and one load per poll, where an
/// exact draw costs a logarithm, a square root, a cosine and an exponential. The table
/// resolves the distribution to 1/4096 of probability (the tail above the 99.99th percentile
/// is cut).
#[must_use]
pub fn latency_table(median: Dur, sigma: f64, max: Dur) -> LatencyTable {
    // Every host of a run usually has the same model: the table is built once per
    // distribution and process, and shared (it is a pure function of the three values).
    type Cache = Vec<((u64, u64, u64), Arc<[u64; LATENCY_TABLE]>)>;
    static CACHE: std::sync::Mutex<Cache> = std::sync::Mutex::new(Vec::new());
    let key = (median.as_nanos(), sigma.to_bits(), max.as_nanos());
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, ns)) = cache.iter().find(|(k, _)| *k == key) {
        return LatencyTable { ns: Arc::clone(ns) };
    }
    let z = standard_normal_quantiles();
    #[expect(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "latencies are far below 2^53 ns; the product is positive and capped"
    )]
    let ns: Arc<[u64; LATENCY_TABLE]> = Arc::new(std::array::from_fn(|i| {
        (median.as_nanos() as f64 * (sigma * z[i]).exp())
            .min(max.as_nanos() as f64)
            .round() as u64
    }));
    // A long sweep over many distributions must not grow the cache without bound.
    if cache.len() >= 64 {
        cache.remove(0);
    }
    cache.push((key, Arc::clone(&ns)));
    LatencyTable { ns }
}

/// `LVL_CLK_SHIFT` (`kernel/time/timer.c`): each wheel level is 8 times coarser than the one
/// below.
const LVL_CLK_SHIFT: u32 = 3;
/// `LVL_DEPTH` for `HZ` > 100: levels of the wheel.
const LVL_DEPTH: u32 = 9;

/// `LVL_START(n)` (`kernel/time/timer.c`): the shortest timeout, in jiffies, that level `n`
/// holds, `(LVL_SIZE - 1) << ((n - 1) · LVL_CLK_SHIFT)` with 64 buckets per level.
const fn lvl_start(n: u32) -> u64 {
    63 << ((n - 1) * LVL_CLK_SHIFT)
}

/// The jiffy at which the timer wheel runs a `timer_list` timer that expires at jiffy
/// `expires`, enqueued while the wheel's clock reads `clk` (`calc_wheel_index`,
/// `kernel/time/timer.c`): the level is the first whose range holds `expires - clk`
/// (level 0: under 63 jiffies, each level 8 times the range and the granularity of the one
/// below), and the bucket's expiry is `expires` rounded *up past* the level's granularity,
/// `((expires >> 3·level) + 1) << 3·level` (`calc_index`: "the timer wheel has to guarantee
/// that a timer does not fire early"), so a level-0 timer runs one jiffy after `expires`.
/// Timeouts beyond the last level are cut to its end, as `WHEEL_TIMEOUT_CUTOFF` does.
#[must_use]
pub const fn wheel_expiry(expires: u64, clk: u64) -> u64 {
    let mut expires = expires;
    let mut delta = expires.saturating_sub(clk);
    if delta >= lvl_start(LVL_DEPTH) {
        // WHEEL_TIMEOUT_MAX = WHEEL_TIMEOUT_CUTOFF - LVL_GRAN(LVL_DEPTH - 1).
        delta = lvl_start(LVL_DEPTH) - (1 << ((LVL_DEPTH - 1) * LVL_CLK_SHIFT));
        expires = clk + delta;
    }
    let mut lvl = 0;
    while lvl < LVL_DEPTH - 1 && delta >= lvl_start(lvl + 1) {
        lvl += 1;
    }
    let shift = lvl * LVL_CLK_SHIFT;
    ((expires >> shift) + 1) << shift
}

/// A host's kernel timers ([`HostTiming::timer_slack`]): its jiffies clock and when each kind of
/// TCP timer runs its handler.
///
/// Contract: the host's ticks fall at `phase + k · tick` (the phase is drawn once per host, so
/// hosts' ticks are not aligned; so is the jiffies count at time zero, which places the
/// coarser levels' boundaries). Every answer is at or after the deadline asked about, and a
/// pure function of its arguments: asking again, for the same timer or another, gives the same
/// time. The softirq latency is drawn by hashing the host's key with the expiry (the tick for
/// wheel timers: the wheel runs every timer of a tick in one TIMER softirq, so they share it;
/// the expiry instant for hrtimers), one table load per answer
/// ([`LatencyTable::draw_keyed`]): no random state, so how often the engine asks cannot change
/// the draws.
#[derive(Clone, Debug)]
pub struct TimerClock {
    tick: u64,
    phase: u64,
    jiffies0: u64,
    key: u64,
    latency: LatencyTable,
}

/// Keeps the hrtimer expiries' latency keys apart from the ticks'.
const HRTIMER_KEY: u64 = 0x6872_7469_6d65_7273;

impl TimerClock {
    /// The timers of a host with `timing`, phase, jiffies origin and latency key drawn from
    /// `rng` (the host's timer stream).
    #[must_use]
    pub fn new(timing: &HostTiming, latency: LatencyTable, rng: &mut ChaCha8Rng) -> Self {
        let tick = timing.tick.as_nanos().max(1);
        TimerClock {
            tick,
            phase: rng.next_u64() % tick,
            jiffies0: rng.next_u64() >> 32,
            key: rng.next_u64(),
            latency,
        }
    }

    /// The host's tick phase: its ticks fall at `phase + k · tick`.
    #[must_use]
    pub fn phase(&self) -> Dur {
        Dur::from_nanos(self.phase)
    }

    /// The host's `jiffies` at `t`.
    #[must_use]
    pub fn jiffies(&self, t: Time) -> u64 {
        (t.0 + self.tick - self.phase) / self.tick + self.jiffies0
    }

    /// When jiffy `j` starts (the tick that makes `jiffies` read `j`).
    #[must_use]
    pub fn tick_start(&self, j: u64) -> Time {
        Time(((j - self.jiffies0) * self.tick).saturating_sub(self.tick - self.phase))
    }

    /// When the handler of a `timer_list` timer armed at `armed` for `due` runs: the timeout
    /// is `due - armed` rounded up to whole jiffies (Linux computes TCP's timeouts in jiffies,
    /// `usecs_to_jiffies` rounds up), added to `jiffies` at `armed` (`icsk_timeout = jiffies +
    /// when`); the wheel runs it at [`wheel_expiry`] (its clock taken as `jiffies` at `armed`;
    /// while the wheel runs timers it reads one more, which only moves the level boundaries by
    /// a jiffy); the TIMER softirq of that tick runs a latency later.
    #[must_use]
    pub fn wheel_fire(&self, armed: Time, due: Time) -> Time {
        let clk = self.jiffies(armed);
        let timeout = due.saturating_since(armed).as_nanos().div_ceil(self.tick);
        let j = wheel_expiry(clk + timeout, clk);
        self.tick_start(j) + self.latency.draw_keyed(self.key, j)
    }

    /// When a soft hrtimer expiring at `due` (no range) runs its handler: a latency after it.
    #[must_use]
    pub fn hrtimer_fire(&self, due: Time) -> Time {
        due + self.latency.draw_keyed(self.key ^ HRTIMER_KEY, due.0)
    }

    /// When a soft hrtimer started with a range, `hrtimer_start_range_ns(due, slack)`, runs
    /// its handler. The clock event is programmed for the range's end and any hrtimer interrupt
    /// in the range runs it (`__hrtimer_run_queues` takes timers whose soft expiry has
    /// passed); on a busy host the periodic tick is such an interrupt. So: the first tick at or
    /// after `due`, or `due + slack` if that is earlier, and a latency after that. (Other
    /// sockets' hrtimers in the range would run it earlier; they are not modelled.)
    #[must_use]
    pub fn hrtimer_range_fire(&self, due: Time, slack: Dur) -> Time {
        let j = self.jiffies(due);
        let tick = if self.tick_start(j) == due {
            due
        } else {
            self.tick_start(j + 1)
        };
        self.hrtimer_fire(tick.min(due + slack))
    }
}

/// The standard normal's quantiles at `(i + 0.5) / LATENCY_TABLE`, computed once per process
/// ([`normal_quantile`]).
fn standard_normal_quantiles() -> &'static [f64] {
    static Z: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    Z.get_or_init(|| {
        #[expect(clippy::cast_precision_loss, reason = "indices below 2^12")]
        (0..LATENCY_TABLE)
            .map(|i| normal_quantile((i as f64 + 0.5) / LATENCY_TABLE as f64))
            .collect()
    })
}

/// The standard normal quantile Φ⁻¹(q), q in (0, 1), by P. J. Acklam's rational
/// approximations (2003; relative error below 1.15·10⁻⁹): a central one for
/// 0.02425 ≤ q ≤ 0.97575, one in √(−2 ln q) for each tail. A bisection on the CDF
/// ([`crate::net::dist::normal_quantile`], 60 evaluations of `erfc`) gives the same table to
/// the CDF's own accuracy at a hundredth of the cost, which a run paid per process before
/// its first packet (about 30 million instructions).
fn normal_quantile(q: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    const LOW: f64 = 0.024_25;
    let tail = |p: f64| {
        let t = (-2.0 * p.ln()).sqrt();
        (((((C[0] * t + C[1]) * t + C[2]) * t + C[3]) * t + C[4]) * t + C[5])
            / ((((D[0] * t + D[1]) * t + D[2]) * t + D[3]) * t + 1.0)
    };
    if q < LOW {
        tail(q)
    } else if q > 1.0 - LOW {
        -tail(1.0 - q)
    } else {
        let x = q - 0.5;
        let r = x * x;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * x
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// When a host's NAPI polls take the packets that reach it: the interrupt throttling, the drawn
/// softirq latency and the budget of [`HostTiming`], as a function of the arrival times alone.
///
/// Contract: [`RxClock::admit`] takes arrival times in non-decreasing order and returns, for
/// each, the time of the poll that takes the packet. Poll times never decrease, and two polls
/// never share a time (a poll at the same time as the previous one is moved 1 ns later; so is
/// the poll that takes what a full budget left), so packets with the same poll time were
/// polled together. A packet arriving before the pending poll runs joins it (the poll has not
/// run yet); one arriving at the poll's time or later needs a new interrupt.
#[derive(Clone, Debug)]
pub struct RxClock {
    /// `rx_usecs` in nanoseconds.
    throttle: u64,
    budget: u32,
    /// Packets the latest poll takes.
    taken: u32,
    /// One nanosecond after the latest poll: the earliest time a new poll may have (0 before
    /// the first, which no time is below).
    after: u64,
    /// The earliest time of the next interrupt: the latest one plus the throttle (0 before the
    /// first).
    irq_free: u64,
    latency: LatencyTable,
    rng: ChaCha8Rng,
    stalls: Stalls,
}

/// A host's stalls: intervals in which its receive path does not run, a renewal process with
/// exponential gaps (mean `1 / rate`) between one stall's end and the next one's start and
/// durations uniform on `[0, max]`, drawn lazily from the host's stream as time passes. A poll
/// that falls in a stall runs at its end, and takes everything that arrived meanwhile.
#[derive(Clone, Debug)]
struct Stalls {
    /// Mean gap between stalls, ns.
    mean_gap_ns: f64,
    max_ns: f64,
    /// The next (or current) stall, `[start, end)`; `start` is `Time::MAX` without stalls.
    start: Time,
    end: Time,
}

impl Stalls {
    /// No stalls: no poll ever reaches `start`.
    const NONE: Stalls = Stalls {
        mean_gap_ns: 0.0,
        max_ns: 0.0,
        start: Time::MAX,
        end: Time::MAX,
    };

    /// `rate_per_s` stalls a second of up to `max`, the first drawn from `rng` (none, and no
    /// draw, if either is zero).
    fn new(rate_per_s: f64, max: Dur, rng: &mut ChaCha8Rng) -> Self {
        if rate_per_s <= 0.0 || max == Dur::ZERO {
            return Stalls::NONE;
        }
        #[expect(clippy::cast_precision_loss, reason = "durations far below 2^53 ns")]
        let mut s = Stalls {
            mean_gap_ns: 1e9 / rate_per_s,
            max_ns: max.as_nanos() as f64,
            start: Time::ZERO,
            end: Time::ZERO,
        };
        s.draw_next(rng);
        s
    }

    /// The stall after the current one.
    fn draw_next(&mut self, rng: &mut ChaCha8Rng) {
        // Exponential gap by inversion; 1 - u is in (0, 1], so the logarithm is finite.
        let u = crate::rng::unit_f64(rng);
        let gap = -(1.0 - u).ln() * self.mean_gap_ns;
        let len = crate::rng::unit_f64(rng) * self.max_ns;
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "non-negative durations far below 2^64 ns"
        )]
        let (gap, len) = (Dur::from_nanos(gap as u64), Dur::from_nanos(len as u64));
        self.start = self.end + gap;
        self.end = self.start + len;
    }

    /// When a poll due at `at` (no earlier than any before it) runs.
    #[cold]
    #[inline(never)]
    fn delay(&mut self, at: Time, rng: &mut ChaCha8Rng) -> Time {
        loop {
            if at < self.start {
                return at;
            }
            if at < self.end {
                return self.end;
            }
            self.draw_next(rng);
        }
    }
}

impl RxClock {
    /// The clock of a host with `timing`, drawing from `rng` (the host's own stream).
    #[must_use]
    pub fn new(timing: &HostTiming, rng: ChaCha8Rng) -> Self {
        let mut c = Self::polls(
            timing.rx_usecs,
            timing.napi_budget,
            timing.latency_table(),
            rng,
        );
        c.stalls = Stalls::new(timing.stall_rate, timing.stall_max, &mut c.rng);
        c
    }

    /// A clock of NAPI polls after interrupts at most one per `throttle`, taking at most
    /// `budget` items each, with `latency`: the RX ring's ([`RxClock::new`]) or a NIC's TX
    /// ring's ([`TxCompletion::Napi`], where `admit` takes serialisation ends and answers when
    /// the poll reports them).
    #[must_use]
    pub fn polls(throttle: Dur, budget: u32, latency: LatencyTable, rng: ChaCha8Rng) -> Self {
        RxClock {
            throttle: throttle.as_nanos(),
            budget: budget.max(1),
            taken: 0,
            after: 0,
            irq_free: 0,
            latency,
            rng,
            stalls: Stalls::NONE,
        }
    }

    /// The time of the poll that takes a packet arriving at `arrival`.
    #[inline]
    pub fn admit(&mut self, arrival: Time) -> Time {
        // Simulated times stay far below 2^64 ns: the sums below cannot overflow.
        let arrival = arrival.0;
        if arrival + 1 < self.after {
            // Before the latest poll runs: it takes the packet, if its budget allows.
            if self.taken < self.budget {
                self.taken += 1;
                return Time(self.after - 1);
            }
            // The budget is spent: NAPI polls again at once, after this poll.
            let next = self.after;
            self.after = next + 1;
            self.taken = 1;
            return Time(next);
        }
        // The NIC raises its interrupt now, or rx_usecs after the previous one if that is later.
        let irq = arrival.max(self.irq_free);
        self.irq_free = irq + self.throttle;
        let mut at = irq + self.latency.draw(&mut self.rng).as_nanos();
        if at >= self.stalls.start.0 {
            at = self.stalls.delay(Time(at), &mut self.rng).0;
        }
        let at = at.max(self.after);
        self.after = at + 1;
        self.taken = 1;
        Time(at)
    }
}

/// Entries of a [`LatencyTable`] (a power of two: a draw is the top bits of a random word).
pub const LATENCY_TABLE: usize = 4096;

/// Quantiles of a host's softirq latency ([`HostTiming::latency_table`]); clones share them.
#[derive(Clone, Debug)]
pub struct LatencyTable {
    ns: Arc<[u64; LATENCY_TABLE]>,
}

impl LatencyTable {
    /// One latency drawn from `rng`.
    #[inline]
    pub fn draw(&self, rng: &mut ChaCha8Rng) -> Dur {
        // The top 12 bits of one draw index the 4096 entries uniformly.
        #[expect(
            clippy::cast_possible_truncation,
            reason = "the shifted draw is below 4096"
        )]
        let i = (rng.next_u64() >> (64 - LATENCY_TABLE.trailing_zeros())) as usize;
        Dur::from_nanos(self.ns[i])
    }

    /// The latency of the event `x` of the stream keyed `key`: the entry that the top bits of
    /// a SplitMix64 hash of the pair pick, as uniform over the entries as a random draw, and
    /// the same for the same pair ([`TimerClock`]).
    #[inline]
    #[must_use]
    pub fn draw_keyed(&self, key: u64, x: u64) -> Dur {
        let mut z = key ^ x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        #[expect(
            clippy::cast_possible_truncation,
            reason = "the shifted hash is below 4096"
        )]
        let i = (z >> (64 - LATENCY_TABLE.trailing_zeros())) as usize;
        Dur::from_nanos(self.ns[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{HOST_TIMING, stream};

    /// The latency is log-normal: its median and 99th percentile over many draws are those of
    /// `median · exp(σ z)` (z's 99th percentile is 2.326), within the sampling error of 20,000
    /// draws (a few per cent at the median, about 5 % at p99) and the table's resolution.
    /// Acklam's approximation against the bisection of the CDF it replaces, over the table's
    /// grid and both tails: the two differ by less than the CDF's own error (`erfc` is exact
    /// to 1.2·10⁻⁷ relative) turned into z (at most ~1.5·10⁻⁷ near the centre).
    #[test]
    fn the_normal_quantile_agrees_with_the_cdf_bisection() {
        for i in 0..LATENCY_TABLE {
            #[expect(clippy::cast_precision_loss, reason = "indices below 2^12")]
            let q = (i as f64 + 0.5) / LATENCY_TABLE as f64;
            let (a, b) = (normal_quantile(q), crate::net::dist::normal_quantile(q));
            assert!((a - b).abs() < 5e-7, "q {q}: {a} vs {b}");
        }
        assert!((normal_quantile(0.975) - 1.959_963_985).abs() < 1e-8);
        assert!((normal_quantile(0.5)).abs() < 1e-15);
    }

    #[test]
    fn latency_draws_have_the_configured_median_and_tail() {
        let t = HostTiming::linux();
        let mut rng = stream(1, HOST_TIMING);
        let table = t.latency_table();
        let mut v: Vec<u64> = (0..20_000)
            .map(|_| table.draw(&mut rng).as_nanos())
            .collect();
        v.sort_unstable();
        #[expect(clippy::cast_precision_loss, reason = "latencies far below 2^53 ns")]
        let (median, p99) = (v[v.len() / 2] as f64, v[v.len() * 99 / 100] as f64);
        assert!((median / 10_000.0 - 1.0).abs() < 0.04, "median {median} ns");
        let want = 10_000.0 * (2.326_f64).exp();
        assert!((p99 / want - 1.0).abs() < 0.08, "p99 {p99} ns, want {want}");
        assert!(v.iter().all(|&x| x <= t.softirq_max.as_nanos()));
        let fixed = HostTiming {
            softirq_sigma: 0.0,
            ..t
        };
        assert_eq!(fixed.latency_table().draw(&mut rng), Dur::from_micros(10));
    }

    /// Throttling, joining a pending poll, the budget and distinct poll times, with a fixed
    /// latency so every time is predictable.
    #[test]
    fn the_clock_throttles_joins_and_splits_polls() {
        let t = HostTiming {
            rx_usecs: Dur::from_micros(50),
            softirq_median: Dur::from_micros(10),
            softirq_sigma: 0.0,
            softirq_max: Dur::from_micros(10),
            napi_budget: 2,
            ..HostTiming::linux()
        };
        let us = |x: u64| Time::ZERO + Dur::from_micros(x);
        let mut c = RxClock::new(&t, stream(1, HOST_TIMING));
        // First packet: interrupt at once, poll 10 µs later.
        assert_eq!(c.admit(us(100)), us(110));
        // Arrives before that poll runs: joins it.
        assert_eq!(c.admit(us(105)), us(110));
        // Budget of 2 spent: the next poll follows 1 ns later.
        assert_eq!(c.admit(us(106)), us(110) + Dur::from_nanos(1));
        // After the poll: a new interrupt, no sooner than 50 µs after the previous one.
        assert_eq!(c.admit(us(120)), us(160));
        // Long after: at once again.
        assert_eq!(c.admit(us(1_000)), us(1_010));
    }

    /// A poll that falls in a stall runs at the stall's end and takes what arrives meanwhile;
    /// a host without stalls never draws one.
    #[test]
    fn a_stall_holds_the_poll_to_its_end() {
        let t = HostTiming {
            softirq_sigma: 0.0,
            stall_rate: 100.0,
            stall_max: Dur::from_millis(4),
            ..HostTiming::emulated()
        };
        let us = Dur::from_micros;
        let mut c = RxClock::new(&t, stream(1, HOST_TIMING));
        let (start, end) = (c.stalls.start, c.stalls.end);
        assert!(start > Time::ZERO && end > start && end - start <= us(4_000));
        // Before the stall, with its poll (30 µs later) inside it: at the stall's end.
        assert_eq!(c.admit(Time(start.0 - 5_000)), end);
        // Arrives during the stall: joins that poll.
        assert_eq!(c.admit(Time(start.0 + (end.0 - start.0) / 2)), end);
        // After the stall: a poll of its own, 30 µs later, unless that falls in the next stall.
        let after = end + us(1);
        let p = c.admit(after);
        let want = if after + us(30) < c.stalls.start {
            after + us(30)
        } else {
            c.stalls.end
        };
        assert_eq!(p, want);
        assert!(c.stalls.start > end, "the next stall follows the first");
        let linux = RxClock::new(&HostTiming::linux(), stream(1, HOST_TIMING));
        assert_eq!(linux.stalls.start, Time::MAX);
    }

    /// The emulated host's packets, one every 600 µs (20 Mbit/s of full-sized segments) for
    /// 10 minutes: their lateness has the quantiles of [`HostTiming::lateness_quantile`] (the
    /// sampling error of a million packets is a few per cent at p99.9, where about a thousand
    /// packets lie beyond) and the shape the emulator's forwarder measured in `cclab
    /// validate`'s single-flow cases: median 30–60 µs, p99 0.1–0.3 ms, p99.9 2–3.5 ms.
    #[test]
    fn emulated_lateness_has_the_forwarders_shape() {
        let t = HostTiming::emulated();
        let mut c = RxClock::new(&t, stream(3, HOST_TIMING));
        let mut late: Vec<u64> = (1..=1_000_000_u64)
            .map(|i| {
                let at = Time::ZERO + Dur::from_micros(600 * i);
                c.admit(at).saturating_since(at).as_nanos()
            })
            .collect();
        late.sort_unstable();
        let q = |p: f64| {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                clippy::cast_precision_loss,
                reason = "an index into a million sorted samples"
            )]
            let i = (p * late.len() as f64) as usize;
            #[expect(clippy::cast_precision_loss, reason = "latencies far below 2^53 ns")]
            let ms = late[i] as f64 / 1e6;
            ms
        };
        let model = |p: f64| t.lateness_quantile(p).as_secs_f64() * 1e3;
        for (p, tol) in [(0.5, 0.03), (0.99, 0.05), (0.999, 0.06)] {
            assert!(
                (q(p) / model(p) - 1.0).abs() < tol,
                "p{p}: simulated {} ms, model {} ms",
                q(p),
                model(p)
            );
        }
        assert!((0.03..=0.06).contains(&q(0.5)), "p50 {}", q(0.5));
        assert!((0.1..=0.3).contains(&q(0.99)), "p99 {}", q(0.99));
        assert!((2.0..=3.5).contains(&q(0.999)), "p99.9 {}", q(0.999));
    }

    /// Same stream, same draws; another host's stream, other draws.
    #[test]
    fn draws_are_reproducible_per_host() {
        let t = HostTiming::emulated().latency_table();
        let a: Vec<Dur> = {
            let mut r = stream(7, HOST_TIMING + 3);
            (0..50).map(|_| t.draw(&mut r)).collect()
        };
        let b: Vec<Dur> = {
            let mut r = stream(7, HOST_TIMING + 3);
            (0..50).map(|_| t.draw(&mut r)).collect()
        };
        let c: Vec<Dur> = {
            let mut r = stream(7, HOST_TIMING + 4);
            (0..50).map(|_| t.draw(&mut r)).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    /// `calc_wheel_index` by hand: level 0 below 63 jiffies rounds past `expires` by one;
    /// level 1 (63 to 503 jiffies) to the next multiple of 8 above; level 2 (504 to 4031) of
    /// 64; the boundaries themselves.
    #[test]
    fn the_wheel_rounds_each_level_up_past_its_granularity() {
        let clk = 1_000_000;
        assert_eq!(wheel_expiry(clk, clk), clk + 1);
        assert_eq!(wheel_expiry(clk + 40, clk), clk + 41);
        assert_eq!(wheel_expiry(clk + 62, clk), clk + 63);
        // 63 jiffies: level 1, granularity 8. clk + 63 = 1_000_063 → (125_007 + 1) · 8.
        assert_eq!(wheel_expiry(clk + 63, clk), 1_000_064);
        assert_eq!(wheel_expiry(clk + 200, clk), 1_000_208);
        // Already a multiple of 8: still one granule later (no early expiry, ever).
        assert_eq!(wheel_expiry(1_000_200, 1_000_000), 1_000_208);
        assert_eq!(wheel_expiry(clk + 503, clk), 1_000_504);
        // 504 jiffies: level 2, granularity 64. 1_000_504 >> 6 = 15_632 → 15_633 · 64.
        assert_eq!(wheel_expiry(clk + 504, clk), 1_000_512);
        assert_eq!(wheel_expiry(clk + 1_000, clk), 1_001_024);
        // Never early, never later than one granule of its level plus a jiffy.
        for d in [0, 1, 62, 63, 100, 503, 504, 4_031, 4_032, 30_000] {
            let e = wheel_expiry(clk + d, clk);
            assert!(e > clk + d, "{d}");
            let gran = if d < 63 {
                1
            } else if d < 504 {
                8
            } else if d < 4_032 {
                64
            } else {
                512
            };
            assert!(e <= clk + d + gran, "{d}: {e}");
        }
    }

    /// A 40 ms delayed-ACK timer at HZ = 1000 armed at a known time: jiffies + 40, run one
    /// jiffy later at that tick's start, plus the latency (fixed here); computed by hand from
    /// the phase.
    #[test]
    fn a_delayed_ack_timer_runs_one_tick_after_its_expiry_jiffy() {
        let t = HostTiming {
            tick: Dur::from_millis(1),
            timer_sigma: 0.0,
            ..HostTiming::linux()
        };
        let c = TimerClock::new(&t, t.timer_latency_table(), &mut stream(3, HOST_TIMING));
        let phase = c.phase().as_nanos();
        assert!(phase < 1_000_000);
        // Armed 0.3 ms after the tick at phase + 10 ms; due 40 ms later.
        let armed = Time(phase + 10_300_000);
        let due = armed + Dur::from_millis(40);
        // jiffies + 40 expires in the tick starting at phase + 50 ms; the wheel runs it at
        // the next one, phase + 51 ms, and the softirq 10 µs later.
        let want = Time(phase + 51_000_000 + 10_000);
        assert_eq!(c.wheel_fire(armed, due), want);
        assert_eq!(c.tick_start(c.jiffies(armed)), Time(phase + 10_000_000));
        // Armed exactly on a tick: the same jiffy, the same answer.
        assert_eq!(
            c.wheel_fire(Time(phase + 10_000_000), Time(phase + 50_000_000)),
            want
        );
        // A 200 ms RTO is level 1 at HZ = 1000 (200 ≥ 63 jiffies): its expiry jiffy rounded
        // up past a multiple of 8.
        let j = c.jiffies(armed);
        let e = ((j + 200) / 8 + 1) * 8;
        assert_eq!(
            c.wheel_fire(armed, armed + Dur::from_millis(200)),
            c.tick_start(e) + Dur::from_micros(10)
        );
        // Soft hrtimers: the latency after the deadline; with a range, the earlier of the
        // next tick and the range's end.
        let d = Time(phase + 20_500_000);
        assert_eq!(c.hrtimer_fire(d), d + Dur::from_micros(10));
        assert_eq!(
            c.hrtimer_range_fire(d, Dur::from_micros(100)),
            d + Dur::from_micros(110)
        );
        let late = Time(phase + 20_950_000);
        assert_eq!(
            c.hrtimer_range_fire(late, Dur::from_micros(100)),
            Time(phase + 21_000_000 + 10_000)
        );
    }

    /// Keyed draws follow the table's distribution (the median of many keys is the median) and
    /// repeat for the same key; hosts' phases spread over the tick.
    #[test]
    fn keyed_draws_and_phases_are_spread() {
        let t = HostTiming::linux();
        let table = t.latency_table();
        let mut v: Vec<u64> = (0..20_000u64)
            .map(|j| table.draw_keyed(42, j).as_nanos())
            .collect();
        assert_eq!(table.draw_keyed(42, 7), table.draw_keyed(42, 7));
        v.sort_unstable();
        #[expect(clippy::cast_precision_loss, reason = "latencies far below 2^53 ns")]
        let median = v[v.len() / 2] as f64;
        assert!((median / 10_000.0 - 1.0).abs() < 0.04, "median {median} ns");
        let phases: Vec<u64> = (0..8)
            .map(|h| {
                TimerClock::new(&t, table.clone(), &mut stream(1, HOST_TIMING + h))
                    .phase()
                    .as_nanos()
            })
            .collect();
        assert!(phases.iter().all(|&p| p < t.tick.as_nanos()));
        assert!(phases.windows(2).any(|w| w[0] != w[1]), "{phases:?}");
    }
}
