//! The BSS MAC with the SNR error model and Minstrel rate control, against theory: a
//! saturated station's goodput under a per-MCS SNR curve (the aggregate cycle model times the
//! delivered share of each transmission), Minstrel's goodput against the best fixed MCS at the
//! same SNR, the rate it settles on, determinism. The theory tests run the unbounded FIFO
//! queues ([`Queues::Fifo`]) the cycle model assumes, with the standard's retry limit
//! ([`LONG_RETRY_LIMIT`]), so the Block Ack window never binds.

use cclab_sim::wifi::ampdu::{AmpduBuilder, AmpduLimits};
use cclab_sim::wifi::edca::{AccessCategory, LONG_RETRY_LIMIT};
use cclab_sim::wifi::error_model::{mpdu_error_rate, snr_for_per};
use cclab_sim::wifi::goodput::{self, Access};
use cclab_sim::wifi::mac::{
    Mac, MacConfig, MacError, MacEvent, Node, NodeStats, Queues, RateControl, StationConfig,
};
use cclab_sim::wifi::minstrel::MinstrelConfig;
use cclab_sim::wifi::phy::{BLOCK_ACK_256_BYTES, Band, Phy, Standard};
use cclab_sim::{Dur, Time};

const BE: AccessCategory = AccessCategory::Be;
/// A 1500-B IP packet: a 1554-B MPDU (QoS data + CCMP + FCS), a 1560-B A-MPDU subframe, 1448 B
/// of TCP payload (as in `wifi_mac.rs`).
const IP_LEN: u32 = 1500;
const MPDU: u32 = 1554;
const SUBFRAME: u32 = 1560;
const TCP_PAYLOAD: u32 = 1448;
/// Frames queued ahead of the station: more than any aggregate here holds (the largest, HE20
/// MCS 11 under aPPDUMaxTime, is ~60), so the sender stays saturated.
const BACKLOG: u64 = 400;

/// HE 20 MHz, one stream, 0.8 µs GI: twelve MCSs whose A-MPDUs all fill aPPDUMaxTime.
fn he20(mcs: u8) -> Phy {
    Phy::new(Standard::He, Band::Ghz5, mcs, 1, 20, 800).unwrap()
}

fn fifo(sta: StationConfig, rate_control: RateControl) -> MacConfig {
    MacConfig {
        queues: Queues::Fifo,
        rate_control,
        retry_limit: LONG_RETRY_LIMIT,
        ..MacConfig::new(vec![sta])
    }
}

/// A saturated uplink station: `BACKLOG` frames at time 0 and a new one at each completion or
/// drop. Runs until `until` and returns the station's counters then and the end of its last
/// exchange.
struct Saturated {
    mac: Mac,
    next_id: u64,
    last_end: Time,
}

impl Saturated {
    fn new(cfg: MacConfig, seed: u64) -> Saturated {
        let mut mac = Mac::new(cfg, seed, 0).unwrap();
        for id in 0..BACKLOG {
            mac.enqueue(Time::ZERO, Node::Sta(0), Node::Ap, BE, id, IP_LEN, 0)
                .unwrap();
        }
        Saturated {
            mac,
            next_id: BACKLOG,
            last_end: Time::ZERO,
        }
    }

    fn run_until(&mut self, until: Time) -> NodeStats {
        let mut ev = Vec::new();
        while let Some(t) = self.mac.poll_at().filter(|&t| t <= until) {
            ev.clear();
            self.mac.on_time(t, &mut ev);
            for e in &ev {
                match *e {
                    MacEvent::TxComplete { at, .. } | MacEvent::Dropped { at, .. } => {
                        self.mac
                            .enqueue(at, Node::Sta(0), Node::Ap, BE, self.next_id, IP_LEN, 0)
                            .unwrap();
                        self.next_id += 1;
                    }
                    MacEvent::Transmit { end, .. } => self.last_end = self.last_end.max(end),
                    MacEvent::Delivered { .. } => {}
                }
            }
        }
        self.mac.stats(Node::Sta(0)).unwrap().clone()
    }
}

fn secs(s: f64) -> Time {
    Time::ZERO + Dur::from_secs_f64(s)
}

/// Goodput (TCP payload of acknowledged MPDUs, bit/s) and MCS histogram between two snapshots
/// `dt` seconds apart.
fn window(a: &NodeStats, b: &NodeStats, dt: f64) -> (f64, Vec<u64>) {
    let goodput = (b.acked - a.acked) as f64 * f64::from(TCP_PAYLOAD) * 8.0 / dt;
    let mut mcs = b.mcs_counts.clone();
    for (m, c) in mcs.iter_mut().enumerate() {
        *c -= a.mcs_counts.get(m).copied().unwrap_or(0);
    }
    (goodput, mcs)
}

fn most_used(mcs: &[u64]) -> usize {
    (0..mcs.len()).max_by_key(|&m| (mcs[m], m)).unwrap()
}

/// Fixed MCS, SNR curve. Theory: the station's A-MPDU is bound by aPPDUMaxTime at the same N
/// MPDUs whatever they carry (the retransmissions go first, new frames fill the rest, every
/// MPDU is 1554 B), so every exchange lasts the cycle T(N) of `goodput::saturated`. Each MPDU
/// transmission succeeds independently with probability 1 − p, p = 1 − (1 − per)(1 − PER(snr)),
/// whether it is a first transmission or a retry, and every success is a delivered frame: the
/// retry limit changes which frames are lost, not how many transmissions succeed. So goodput =
/// S(N)·(1 − p) and acknowledged/sent = 1 − p. The Block Ack window (256) never binds: an MPDU
/// is given up after 4 transmissions ([`cclab_sim::wifi::edca::LONG_RETRY_LIMIT`]), so at most
/// 4·N ≤ 4·37 sequence numbers are ever in use; a whole A-MPDU is lost (no Block Ack, the
/// window doubles) with probability p^N < 10⁻¹⁵.
///
/// Tolerance: over 2,000 exchanges of N ≈ 37 MPDUs the acknowledged share has standard error
/// √(p(1 − p)/(N·2000)) ≤ 0.0018 (p ≤ 0.3), 0.26 % of 1 − p; the cycle's backoff (4.6 slots =
/// 41.5 µs standard deviation in a ≈ 5.6-ms cycle) adds 0.02 %; the model's PSDU is N·1560 B
/// where the last subframe is 6 B shorter (at most one 13.6-µs symbol, 0.25 %). 2 % on goodput
/// leaves over 5 standard errors beyond the rounding; 1.5 % on the acknowledged share over 5.
#[test]
fn snr_errors_scale_the_cycle_model_by_the_delivered_share() {
    const EXCHANGES: u64 = 2_000;
    let phy = he20(7);
    let access = Access::best_effort(Band::Ghz5, BLOCK_ACK_256_BYTES, 24).unwrap();
    // N under aPPDUMaxTime, counted with the aggregation limits alone.
    let limits = AmpduLimits::widest(Standard::He);
    let mut b = AmpduBuilder::new(&phy, &limits);
    let mut n = 0;
    while b.push(MPDU).is_ok() {
        n += 1;
    }
    let cycle = goodput::saturated(&phy, &access, n, SUBFRAME, TCP_PAYLOAD);
    for (target, per) in [(0.1, 0.0), (0.3, 0.0), (0.2, 0.1)] {
        let snr = snr_for_per(&phy, target, MPDU);
        let p = 1.0 - (1.0 - per) * (1.0 - mpdu_error_rate(&phy, snr, MPDU));
        let mut sta = StationConfig::new(phy);
        sta.uplink_snr_db = Some(snr);
        sta.uplink_per = per;
        let mut run = Saturated::new(fifo(sta, RateControl::Fixed), 5);
        let mut st = run.run_until(Time::ZERO);
        let mut until = Time::ZERO;
        while st.accesses < EXCHANGES {
            until += Dur::from_millis(100);
            st = run.run_until(until);
        }
        let measured = st.acked as f64 * f64::from(TCP_PAYLOAD) * 8.0 / run.last_end.as_secs_f64();
        let model = cycle.goodput_bps * (1.0 - p);
        let acked_share = st.acked as f64 / st.mpdus_sent as f64;
        println!(
            "SNR {snr:.2} dB, PER {per}: p {p:.4}, N {n}, mean A-MPDU {:.2}, acked share {acked_share:.4}, goodput {:.2} Mbit/s, model S(N)(1 - p) {:.2} Mbit/s ({:+.2} %), MCS {:?}",
            st.mean_ampdu(),
            measured / 1e6,
            model / 1e6,
            (measured / model - 1.0) * 100.0,
            st.mcs_counts
        );
        assert!((st.mean_ampdu() - f64::from(n)).abs() < 1e-9);
        assert!(
            (acked_share / (1.0 - p) - 1.0).abs() < 0.015,
            "{acked_share} vs {}",
            1.0 - p
        );
        assert!(
            (measured / model - 1.0).abs() < 0.02,
            "{measured} vs {model}"
        );
        assert_eq!(st.mcs_counts.len(), 8);
        assert_eq!(st.mcs_counts[7], st.accesses);
    }
}

/// Minstrel at a fixed SNR against every fixed MCS through the same MAC.
///
/// Theory: every A-MPDU here fills aPPDUMaxTime, so each access costs about the same airtime
/// (within 20 % for MCS 0, whose three MPDUs leave part of the 5.484 ms unused, and within 2 %
/// from MCS 1 up) whatever its rate, and the goodput of a mix of rates is the mix of the fixed
/// goodputs weighted by the share of A-MPDUs sent at each: G = Σ_m s_m·G_m. Minstrel sends a
/// share f = 10 % ([`cclab_sim::wifi::minstrel::SAMPLE_FRACTION`]) at a rate drawn uniformly
/// among the other 11, the rest at its max-throughput rate; once that is the best fixed MCS,
/// G = (1 − f)·G_best + f·mean(G_other) ≥ 0.9·G_best: within 10 % of the best. Each rate is
/// first measured when it is sampled, at f/11 of ≈ 180 A-MPDUs/s, 1.6 times per second: after
/// a 3-s warm-up the best rate has been sampled with probability 1 − e^(−4.9) = 99.3 %, and
/// the EWMA has had 60 updates. Measured over the next 6 s (≈ 1,080 A-MPDUs; the sampled share
/// has standard error √(0.1·0.9/1080) = 0.9 %, worth at most 0.9 % of goodput; the expected
/// margin is smallest at the lowest SNR, where 7 of the 11 sampled rates deliver nothing:
/// 0.1·(1 − mean(G_other)/G_best) = 7.8 % lost, 2.2 % inside 10 %, three standard errors of
/// the 0.9 %·(1 − 0.22) = 0.7 % the sampling noise is worth there).
/// Checks: G ≥ 0.9·G_best; G within 3 % of Σ_m s_m·G_m with the measured shares s_m (the
/// airtime spread above on the ≈ 1 % of A-MPDUs sampled at MCS 0, and the fixed runs'
/// estimates over 6 s each: at 30 % PER with ≈ 16 MPDUs per A-MPDU the delivered share has
/// standard error √(0.21/(16·1080)) = 0.0035, 0.5 % of 0.7); the rate sent most is the best fixed MCS or a neighbour
/// (Minstrel's 90 % probability cap can rank two neighbours equal: at 10 % PER or less both
/// count 0.9·rate). At 40 dB every MCS is error-free and MCS 11, the fastest, is sent most.
#[test]
fn minstrel_approaches_the_best_fixed_mcs() {
    const WARM: f64 = 3.0;
    const MEASURE: f64 = 6.0;
    // SNRs where MCS 4 and MCS 7 lose 30 % of their MPDUs (the next rate down then does
    // better), and one where nothing is lost.
    let mid: Vec<f64> = [4, 7]
        .iter()
        .map(|&m| snr_for_per(&he20(m), 0.3, MPDU))
        .collect();
    for snr in mid.into_iter().chain([40.0]) {
        let mut best = (0.0, 0);
        let mut fixed = Vec::new();
        for mcs in 0..=11 {
            let mut sta = StationConfig::new(he20(mcs));
            sta.uplink_snr_db = Some(snr);
            let mut run = Saturated::new(fifo(sta, RateControl::Fixed), 7);
            let a = run.run_until(secs(0.5));
            let b = run.run_until(secs(0.5 + MEASURE));
            let (g, _) = window(&a, &b, MEASURE);
            fixed.push(g / 1e6);
            if g > best.0 {
                best = (g, mcs);
            }
        }
        let mut sta = StationConfig::new(he20(11));
        sta.uplink_snr_db = Some(snr);
        let mut run = Saturated::new(
            fifo(sta, RateControl::Minstrel(MinstrelConfig::default())),
            7,
        );
        let a = run.run_until(secs(WARM));
        let b = run.run_until(secs(WARM + MEASURE));
        let (g, mcs) = window(&a, &b, MEASURE);
        let top = most_used(&mcs);
        let total = mcs.iter().sum::<u64>() as f64;
        let mix: f64 = mcs
            .iter()
            .zip(&fixed)
            .map(|(&c, g)| c as f64 / total * g * 1e6)
            .sum();
        let rc = run.mac.rate_controller(Node::Sta(0), Node::Ap).unwrap();
        println!(
            "SNR {snr:.2} dB: fixed goodput by MCS {fixed:.1?} Mbit/s, best MCS {} {:.2}; Minstrel {:.2} Mbit/s ({:.1} % of best, {:+.2} % from the mix {:.2}), MCS histogram {mcs:?}, max-tp rate MCS {}",
            best.1,
            best.0 / 1e6,
            g / 1e6,
            g / best.0 * 100.0,
            (g / mix - 1.0) * 100.0,
            mix / 1e6,
            rc.phys()[rc.max_tp_rate()].mcs()
        );
        assert!(g >= 0.9 * best.0, "{g} vs {}", best.0);
        assert!((g / mix - 1.0).abs() < 0.03, "{g} vs the mix {mix}");
        assert!(
            top.abs_diff(usize::from(best.1)) <= 1,
            "most used {top}, best {}",
            best.1
        );
        if snr >= 40.0 {
            assert_eq!((best.1, top), (11, 11));
        }
    }
}

/// Same seed, same events, rates included, with Minstrel on both links of two stations
/// through mac80211's queues (the AQL estimate and the CoDel parameters follow the
/// max-throughput rate); another seed gives other events.
#[test]
fn minstrel_is_deterministic() {
    let run = |seed: u64| {
        let stations = (0..2)
            .map(|i| {
                let mut s = StationConfig::new(he20(9));
                s.uplink_snr_db = Some(20.0 + 4.0 * f64::from(i));
                s.downlink_snr_db = Some(22.0);
                s.downlink_per = 0.02;
                s
            })
            .collect();
        let cfg = MacConfig {
            rate_control: RateControl::Minstrel(MinstrelConfig::default()),
            ..MacConfig::new(stations)
        };
        let mut mac = Mac::new(cfg, seed, 3).unwrap();
        let mut id = 0;
        for i in 0..2 {
            for k in 0..300 {
                let (from, to) = if k % 2 == 0 {
                    (Node::Sta(i), Node::Ap)
                } else {
                    (Node::Ap, Node::Sta(i))
                };
                mac.enqueue(
                    Time::ZERO,
                    from,
                    to,
                    BE,
                    id,
                    IP_LEN,
                    u32::try_from(k % 3).unwrap(),
                )
                .unwrap();
                id += 1;
            }
        }
        let mut events = Vec::new();
        while let Some(t) = mac.poll_at() {
            mac.on_time(t, &mut events);
        }
        let rates: Vec<u8> = events
            .iter()
            .filter_map(|e| match e {
                MacEvent::Transmit { phy, .. } => Some(phy.mcs()),
                _ => None,
            })
            .collect();
        (events, rates)
    };
    let (a, rates) = run(1);
    assert_eq!(a, run(1).0);
    assert_ne!(a, run(2).0);
    // Minstrel moved: more than one rate went on air.
    assert!(rates.iter().any(|&m| m != rates[0]), "{rates:?}");
}

/// A NaN SNR is refused, naming the station.
#[test]
fn a_nan_snr_is_refused() {
    let mut sta = StationConfig::new(he20(7));
    sta.downlink_snr_db = Some(f64::NAN);
    let err = Mac::new(MacConfig::new(vec![StationConfig::new(he20(7)), sta]), 1, 0).unwrap_err();
    assert!(matches!(err, MacError::Snr { station: 1, .. }), "{err:?}");
    assert!(err.to_string().contains("station 1"));
}
