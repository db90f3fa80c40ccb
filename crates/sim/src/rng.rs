//! Per-component random streams derived from the scenario seed.
//!
//! Contract: [`stream`] gives a ChaCha8 generator for `(seed, component)`. Components are stable
//! small integers chosen by the simulator (e.g. `LINK_LOSS | link index`), so adding a flow or a
//! link never changes the draws of another component. The derivation is SplitMix64 over the pair,
//! which is fixed forever (changing it would change every published result).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Component class: random loss of link `i` is `LINK_LOSS + i`.
pub const LINK_LOSS: u64 = 1 << 32;
/// Component class: the controller of flow `i` is seeded from stream `FLOW_CC + i`.
pub const FLOW_CC: u64 = 2 << 32;
/// Component class: the random drops and marks of link `i`'s AQM (`AQM + i`).
pub const AQM: u64 = 3 << 32;
/// Component class: the key of link `i`'s AQM flow hash (`AQM_HASH + i`).
pub const AQM_HASH: u64 = 4 << 32;
/// Component class: the random stream of network element `i` (a middlebox, `ELEMENT + i`;
/// elements are numbered by their scenario, in the order they are declared).
pub const ELEMENT: u64 = 5 << 32;
/// Component class: the arrival times and sizes a scenario's `[[flows]]` table `i` draws for a
/// workload (`WORKLOAD + i`; drawn when the scenario is read, not during the run).
pub const WORKLOAD: u64 = 6 << 32;
/// Component class: the send schedule (Poisson gaps, on/off periods) of UDP source `i`
/// (`UDP + i`, in the order of `SimConfig::udp`).
pub const UDP: u64 = 7 << 32;
/// Component class: the delays of link `i`'s jitter (`LINK_JITTER + i`, `LinkConfig::jitter`).
pub const LINK_JITTER: u64 = 8 << 32;
/// Component class: the MAC of Wi-Fi BSS `i` (`WIFI + i`, in the order of `SimConfig::wifi`;
/// the MAC derives its contention and error streams from it).
pub const WIFI: u64 = 9 << 32;
/// Component class: the softirq latencies of node `i`'s host timing model (`HOST_TIMING + i`,
/// `HostConfig::timing`).
pub const HOST_TIMING: u64 = 10 << 32;
/// Component class: the tick phase and timer-latency key of node `i`'s host timing model
/// (`HOST_TIMERS + i`, [`crate::host::timing::TimerClock`]).
pub const HOST_TIMERS: u64 = 11 << 32;
/// Component class: the TX-clean poll latencies of link `i` when it is the NIC of a host with
/// a timing model (`HOST_TX + i`, [`crate::host::timing::TxCompletion::Napi`]).
pub const HOST_TX: u64 = 12 << 32;

/// The seed handed to flow `index`'s congestion controller in a run seeded with `seed`.
#[must_use]
pub fn cc_seed(seed: u64, index: u32) -> u64 {
    stream(seed, FLOW_CC + u64::from(index)).next_u64()
}

/// The key of link `index`'s AQM flow hash in a run seeded with `seed`.
#[must_use]
pub fn aqm_hash_key(seed: u64, index: u32) -> u64 {
    stream(seed, AQM_HASH + u64::from(index)).next_u64()
}

/// SplitMix64 finaliser (Steele, Lea, Flood 2014), used to spread seed bits.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The random stream of `component` in a run seeded with `seed`.
#[must_use]
pub fn stream(seed: u64, component: u64) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    let mut x = splitmix64(seed) ^ splitmix64(component.wrapping_add(0x5851_F42D_4C95_7F2D));
    for chunk in key.chunks_exact_mut(8) {
        x = splitmix64(x);
        chunk.copy_from_slice(&x.to_le_bytes());
    }
    ChaCha8Rng::from_seed(key)
}

/// A uniform draw in [0, 1) with 53 bits of precision.
#[expect(
    clippy::cast_precision_loss,
    reason = "both values are below 2^53 + 1 and exact in f64: the draw keeps 53 bits and the scale is a power of two"
)]
pub fn unit_f64(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(stream(7, 1), |r, _| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(stream(7, 1), |r, _| Some(r.next_u64()))
            .collect();
        let c: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(stream(7, 2), |r, _| Some(r.next_u64()))
            .collect();
        let d: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(stream(8, 1), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }

    #[test]
    fn unit_draws_have_the_right_mean() {
        let mut r = stream(1, 1);
        let n = 100_000;
        let mean = (0..n).map(|_| unit_f64(&mut r)).sum::<f64>() / f64::from(n);
        // Standard error of the mean of U(0,1) over 1e5 draws is 0.29/316 ≈ 0.0009; 5σ ≈ 0.0046.
        assert!((mean - 0.5).abs() < 0.0046, "mean {mean}");
    }
}
