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
//!
//! [`linux`]: HostTiming::linux

use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use rand::Rng;

/// `NAPI_POLL_WEIGHT` (`include/linux/netdevice.h`): packets one NAPI poll may take.
pub const NAPI_POLL_WEIGHT: u32 = 64;
/// i40e/ice default RX interrupt throttling, `I40E_ITR_20K`: one interrupt per 50 µs.
pub const ITR_20K: Dur = Dur::from_micros(50);

/// A host's receive-side timing (see the module documentation).
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
        }
    }

    /// A host behind cclab's user-space emulator (`cclab emulate`): no NIC, so no interrupt
    /// moderation; the forwarder's timing is the latency, measured on an idle two-core machine
    /// at a median of 25 µs and a 99th percentile of 0.6 ms (σ = ln(600/25) / 2.326 = 1.37).
    /// `cclab validate` gives the simulated hosts this model, so both sides of a comparison
    /// see the same kind of timing noise.
    #[must_use]
    pub const fn emulated() -> Self {
        HostTiming {
            rx_usecs: Dur::ZERO,
            softirq_median: Dur::from_micros(25),
            softirq_sigma: 1.37,
            softirq_max: Dur::from_millis(5),
            napi_budget: NAPI_POLL_WEIGHT,
            gro: true,
        }
    }

    /// The latency's quantile table: entry `i` is the log-normal's quantile at
    /// `(i + 0.5) / LATENCY_TABLE`, `median · exp(σ·Φ⁻¹(q))`, capped at
    /// [`HostTiming::softirq_max`], in nanoseconds. A draw picks an entry uniformly
    /// ([`LatencyTable::draw`]): one random number and one load per poll, where an exact draw
    /// costs a logarithm, a square root, a cosine and an exponential. The table resolves the
    /// distribution to 1/4096 of probability (the tail above the 99.99th percentile is cut).
    #[must_use]
    pub fn latency_table(&self) -> LatencyTable {
        #[expect(
            clippy::cast_precision_loss,
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "latencies are far below 2^53 ns; the product is positive and capped"
        )]
        let ns = standard_normal_quantiles()
            .iter()
            .map(|&z| {
                (self.softirq_median.as_nanos() as f64 * (self.softirq_sigma * z).exp())
                    .min(self.softirq_max.as_nanos() as f64)
                    .round() as u64
            })
            .collect();
        LatencyTable { ns }
    }
}

/// The standard normal's quantiles at `(i + 0.5) / LATENCY_TABLE`, computed once per process
/// (by bisection, [`crate::net::dist::normal_quantile`]: exact to far below the table's step).
fn standard_normal_quantiles() -> &'static [f64] {
    static Z: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    Z.get_or_init(|| {
        #[expect(clippy::cast_precision_loss, reason = "indices below 2^12")]
        (0..LATENCY_TABLE)
            .map(|i| crate::net::dist::normal_quantile((i as f64 + 0.5) / LATENCY_TABLE as f64))
            .collect()
    })
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
    rx_usecs: Dur,
    budget: u32,
    latency: LatencyTable,
    rng: ChaCha8Rng,
    /// The latest poll, and how many packets it takes.
    poll: Option<(Time, u32)>,
    last_irq: Option<Time>,
}

impl RxClock {
    /// The clock of a host with `timing`, drawing from `rng` (the host's own stream).
    #[must_use]
    pub fn new(timing: &HostTiming, rng: ChaCha8Rng) -> Self {
        RxClock {
            rx_usecs: timing.rx_usecs,
            budget: timing.napi_budget.max(1),
            latency: timing.latency_table(),
            rng,
            poll: None,
            last_irq: None,
        }
    }

    /// The time of the poll that takes a packet arriving at `arrival`.
    #[inline]
    pub fn admit(&mut self, arrival: Time) -> Time {
        if let Some((p, n)) = self.poll
            && arrival < p
        {
            if n < self.budget {
                self.poll = Some((p, n + 1));
                return p;
            }
            // The budget is spent: NAPI polls again at once, after this poll.
            let next = p + Dur::from_nanos(1);
            self.poll = Some((next, 1));
            return next;
        }
        // The NIC raises its interrupt now, or rx_usecs after the previous one if that is later.
        let irq = self
            .last_irq
            .map_or(arrival, |t| (t + self.rx_usecs).max(arrival));
        self.last_irq = Some(irq);
        let mut at = irq + self.latency.draw(&mut self.rng);
        if let Some((p, _)) = self.poll
            && at <= p
        {
            at = p + Dur::from_nanos(1);
        }
        self.poll = Some((at, 1));
        at
    }
}

/// Entries of a [`LatencyTable`] (a power of two: a draw is the top bits of a random word).
pub const LATENCY_TABLE: usize = 4096;

/// Quantiles of a host's softirq latency ([`HostTiming::latency_table`]).
#[derive(Clone, Debug)]
pub struct LatencyTable {
    ns: Vec<u64>,
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{HOST_TIMING, stream};

    /// The latency is log-normal: its median and 99th percentile over many draws are those of
    /// `median · exp(σ z)` (z's 99th percentile is 2.326), within the sampling error of 20,000
    /// draws (a few per cent at the median, about 5 % at p99) and the table's resolution.
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
            gro: true,
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
}
