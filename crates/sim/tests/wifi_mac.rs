//! The BSS MAC against theory: the single-station goodput model of an aggregate exchange
//! (`wifi::goodput`), retransmissions under a fixed packet error rate, Bianchi's collision
//! probability, each aggregation limit, the exact airtime of one exchange, determinism, and
//! when the next poll time can move. Every theory test here runs the unbounded FIFO queues
//! ([`Queues::Fifo`]) its theory assumes.

use cclab_sim::wifi::ampdu::Bound;
use cclab_sim::wifi::edca::AccessCategory;
use cclab_sim::wifi::goodput::{self, Access};
use cclab_sim::wifi::mac::{Mac, MacConfig, MacError, MacEvent, Node, Queues, StationConfig};
use cclab_sim::wifi::phy::{BLOCK_ACK_64_BYTES, BLOCK_ACK_256_BYTES, Band, Phy, Standard};
use cclab_sim::{Dur, Time};

const BE: AccessCategory = AccessCategory::Be;
/// A 1500-B IP packet: 1554-B MPDU, 1560-B A-MPDU subframe; 1448 B of TCP payload
/// (IEEE 802.11-2020 timing; `wifi::goodput`).
const IP_LEN: u32 = 1500;
const TCP_PAYLOAD: u32 = 1448;
const SUBFRAME: u32 = 1560;
/// The flow hash of every frame (one flow; the FIFO queues ignore it).
const FLOW: u32 = 0;

/// The theory of these tests is that of an unbounded FIFO per link: [`Queues::Fifo`].
fn fifo(stations: Vec<StationConfig>) -> MacConfig {
    MacConfig {
        queues: Queues::Fifo,
        ..MacConfig::new(stations)
    }
}

fn he80_mcs11() -> Phy {
    Phy::new(Standard::He, Band::Ghz5, 11, 2, 80, 800).unwrap()
}

fn ht40_mcs15() -> Phy {
    Phy::new(Standard::Ht, Band::Ghz5, 7, 2, 40, 400).unwrap()
}

/// Drives `mac` from its poll times until `stop` says so or nothing is left; every
/// `TxComplete`/`Dropped` of an uplink frame queues a new one on that station when `refill`
/// (a saturated sender). Returns every event.
fn drive(
    mac: &mut Mac,
    next_id: &mut u64,
    refill: bool,
    mut stop: impl FnMut(&Mac) -> bool,
) -> Vec<MacEvent> {
    let mut all = Vec::new();
    let mut ev = Vec::new();
    while let Some(t) = mac.poll_at() {
        if stop(mac) {
            break;
        }
        ev.clear();
        mac.on_time(t, &mut ev);
        for e in &ev {
            if let MacEvent::TxComplete { from, to, at, .. }
            | MacEvent::Dropped { from, to, at, .. } = *e
                && refill
            {
                mac.enqueue(at, from, to, BE, *next_id, IP_LEN, FLOW)
                    .unwrap();
                *next_id += 1;
            }
        }
        all.extend_from_slice(&ev);
    }
    all
}

fn fill(mac: &mut Mac, station: u32, frames: u64, next_id: &mut u64) {
    for _ in 0..frames {
        mac.enqueue(
            Time::ZERO,
            Node::Sta(station),
            Node::Ap,
            BE,
            *next_id,
            IP_LEN,
            FLOW,
        )
        .unwrap();
        *next_id += 1;
    }
}

/// One saturated uplink station, no errors, aggregates limited to N by the Block Ack window.
///
/// Theory: `goodput::saturated`: T(N) = AIFS + CWmin/2 slots + PPDU + SIFS +
/// BA. The Block Ack has a 64-bit bitmap up to a window of 64 and a 256-bit one above, so the
/// model is evaluated with the Block Ack the MAC sends. HT40 at N = 64 is bound by the 65,535-B
/// length at 42 (IEEE 802.11-2020 HT maximum A-MPDU length). 4,000 exchanges: the backoff is uniform on 0..=15 slots
/// (standard deviation 4.6 slots = 41.5 µs per cycle), so the mean cycle's standard error is
/// 41.5/√4000 = 0.66 µs, ≤ 0.3 % of the shortest cycle (≈ 210 µs): the 3 % tolerance covers the
/// model's rounding (it counts the PSDU as N·1560 B, the MAC's last subframe is 2 B shorter,
/// at most one symbol) with ≥ 10 standard errors to spare. The same runs check the mean access
/// wait, AIFS + 7.5 slots = 110.5 µs, within 3 %.
#[test]
fn saturated_goodput_matches_the_aggregate_model() {
    const EXCHANGES: u64 = 4_000;
    let cases: [(Phy, &[u16]); 2] = [
        (he80_mcs11(), &[1, 8, 32, 64, 256]),
        (ht40_mcs15(), &[1, 8, 32, 64]),
    ];
    for (phy, windows) in cases {
        for &window in windows {
            let mut sta = StationConfig::new(phy);
            sta.ba_window = window;
            let mut mac = Mac::new(fifo(vec![sta]), 11, 0).unwrap();
            let mut id = 0;
            fill(&mut mac, 0, 2 * u64::from(window) + 64, &mut id);
            let events = drive(&mut mac, &mut id, true, |m| {
                m.stats(Node::Sta(0)).unwrap().accesses >= EXCHANGES
            });
            let st = mac.stats(Node::Sta(0)).unwrap();
            let end = events
                .iter()
                .filter_map(|e| match e {
                    MacEvent::TxComplete { at, .. } => Some(*at),
                    _ => None,
                })
                .max()
                .unwrap();
            let delivered = events
                .iter()
                .filter(|e| matches!(e, MacEvent::Delivered { .. }))
                .count() as f64;
            let measured = delivered * f64::from(TCP_PAYLOAD) * 8.0 / end.as_secs_f64();
            let n = match phy.standard() {
                Standard::Ht => u32::from(window).min(42),
                _ => u32::from(window),
            };
            let ba = if window > 64 {
                BLOCK_ACK_256_BYTES
            } else {
                BLOCK_ACK_64_BYTES
            };
            let access = Access::best_effort(Band::Ghz5, ba, 24).unwrap();
            let model = goodput::saturated(&phy, &access, n, SUBFRAME, TCP_PAYLOAD).goodput_bps;
            let wait_us = st.access_wait.as_secs_f64() * 1e6 / st.accesses as f64;
            println!(
                "{:?} window {window}: mean A-MPDU {:.2} (N {n}), goodput {:.1} Mbit/s, model {:.1} Mbit/s ({:+.2} %), access wait {wait_us:.1} µs",
                phy.standard(),
                st.mean_ampdu(),
                measured / 1e6,
                model / 1e6,
                (measured / model - 1.0) * 100.0
            );
            assert_eq!(st.mean_ampdu(), f64::from(n));
            assert_eq!((st.collisions, st.retries, st.dropped), (0, 0, 0));
            assert!(
                (measured / model - 1.0).abs() < 0.03,
                "{:?} N={n}: {measured} vs {model}",
                phy.standard()
            );
            assert!(
                (wait_us / 110.5 - 1.0).abs() < 0.03,
                "access wait {wait_us}"
            );
        }
    }
}

/// A fixed PER p, one station, no contention. Each MPDU's transmissions are geometric with
/// success 1 − p, truncated at the retry limit L: E = (1 − p^L)/(1 − p).
/// - p = 0.1, L = 10: a frame is dropped with probability 10^−10, so all 20,000 arrive, in order,
///   and the mean transmissions per MPDU is 1/(1 − p) = 1.111 (variance p/(1 − p)² = 0.123 per
///   MPDU, standard error 0.0025 = 0.2 % over 20,000: 3 % is > 10 standard errors).
/// - p = 0.5, L = 2: a frame is dropped with probability p² = 0.25; the rest still arrive in
///   order (the recipient skips what the originator gave up). Over 10,000 frames the drop
///   fraction's standard error is 0.0043: the tolerance 0.025 is ~6 of them.
#[test]
fn lost_mpdus_are_retransmitted_and_delivered_in_order() {
    for (p, limit, frames) in [(0.1, 10, 20_000u64), (0.5, 2, 10_000)] {
        let mut sta = StationConfig::new(he80_mcs11());
        sta.uplink_per = p;
        sta.ba_window = 64;
        let mut cfg = fifo(vec![sta]);
        cfg.retry_limit = limit;
        let mut mac = Mac::new(cfg, 3, 0).unwrap();
        let mut id = 0;
        fill(&mut mac, 0, frames, &mut id);
        let events = drive(&mut mac, &mut id, false, |_| false);
        let delivered: Vec<u64> = events
            .iter()
            .filter_map(|e| match e {
                MacEvent::Delivered { frame, .. } => Some(*frame),
                _ => None,
            })
            .collect();
        let dropped = events
            .iter()
            .filter(|e| matches!(e, MacEvent::Dropped { .. }))
            .count() as u64;
        assert!(delivered.windows(2).all(|w| w[0] < w[1]), "out of order");
        assert_eq!(delivered.len() as u64 + dropped, frames);
        let st = mac.stats(Node::Sta(0)).unwrap();
        let per_mpdu = st.mpdus_sent as f64 / frames as f64;
        let expected = (1.0 - p.powi(limit as i32)) / (1.0 - p);
        let drop_rate = dropped as f64 / frames as f64;
        println!(
            "p {p} L {limit}: transmissions per MPDU {per_mpdu:.4} (theory {expected:.4}), dropped {drop_rate:.4} (theory {:.4}), mean A-MPDU {:.1}",
            p.powi(limit as i32),
            st.mean_ampdu()
        );
        assert!((per_mpdu / expected - 1.0).abs() < 0.03);
        assert_eq!(st.retries, st.mpdus_sent - frames);
        if limit == 10 {
            assert_eq!(dropped, 0);
        } else {
            assert!((drop_rate - 0.25).abs() < 0.025, "drop rate {drop_rate}");
        }
    }
}

/// Bianchi's fixed point (JSAC 18(3) 2000, eqs. 7–8), as in the EDCA test: τ =
/// 2/(1 + W + p·W·Σ_{k<m}(2p)^k), p = 1 − (1 − τ)^(n−1); W = 16, m = 6 (CW 15..1023).
fn bianchi_p(n: u32) -> f64 {
    let tau = |p: f64| {
        let sum: f64 = (0..6).map(|k| (2.0 * p).powi(k)).sum();
        2.0 / (17.0 + p * 16.0 * sum)
    };
    let (mut lo, mut hi) = (0.0, 1.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid - (1.0 - (1.0 - tau(mid)).powi(n as i32 - 1)) > 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    0.5 * (lo + hi)
}

/// n saturated uplink stations with single-MPDU aggregates (window 1). The collision
/// probability per attempt depends only on n and the backoff stages, not on the airtimes, so
/// Bianchi's p applies as in the EDCA test, within the same 10 %. No MPDU is dropped (retry
/// limit 1000), as in his chain. 60,000 accesses: ≥ 10,000 collided attempts, the estimate's
/// binomial standard error ≤ 1.5 % of p.
#[test]
fn collision_probability_matches_bianchi() {
    for n in [5u32, 10] {
        let stations = (0..n)
            .map(|_| {
                let mut s = StationConfig::new(he80_mcs11());
                s.ba_window = 1;
                s
            })
            .collect();
        let mut cfg = fifo(stations);
        cfg.retry_limit = 1000;
        let mut mac = Mac::new(cfg, 42, 0).unwrap();
        let mut id = 0;
        for s in 0..n {
            fill(&mut mac, s, 4, &mut id);
        }
        let total = |m: &Mac, f: fn(&cclab_sim::wifi::mac::NodeStats) -> u64| {
            (0..n)
                .map(|s| f(m.stats(Node::Sta(s)).unwrap()))
                .sum::<u64>()
        };
        drive(&mut mac, &mut id, true, |m| {
            total(m, |s| s.accesses) >= 60_000
        });
        let attempts = total(&mac, |s| s.accesses) as f64;
        let collisions = total(&mac, |s| s.collisions) as f64;
        let p = collisions / attempts;
        let theory = bianchi_p(n);
        println!("n={n}: collision probability {p:.4}, Bianchi {theory:.4}");
        assert!((p / theory - 1.0).abs() < 0.10, "n={n}: {p} vs {theory}");
        assert_eq!(total(&mac, |s| s.dropped), 0);
    }
}

/// One exchange from a fresh station with `frames` queued; returns its Transmit event.
fn first_ampdu(sta: StationConfig, ac: AccessCategory, frames: u64) -> (usize, Bound) {
    first_exchange(fifo(vec![sta]), ac, frames).0
}

/// One exchange of station 0 of `cfg` with `frames` queued in `ac`: its MPDU count and bound,
/// and its duration (PPDU + SIFS + response).
fn first_exchange(cfg: MacConfig, ac: AccessCategory, frames: u64) -> ((usize, Bound), Dur) {
    let mut mac = Mac::new(cfg, 1, 0).unwrap();
    for id in 0..frames {
        mac.enqueue(Time::ZERO, Node::Sta(0), Node::Ap, ac, id, IP_LEN, FLOW)
            .unwrap();
    }
    let mut ev = Vec::new();
    mac.on_time(mac.poll_at().unwrap(), &mut ev);
    let st = mac.stats(Node::Sta(0)).unwrap();
    match ev[0] {
        MacEvent::Transmit {
            mpdus,
            bound,
            start,
            end,
            ..
        } => {
            assert_eq!(st.bound_count(bound), 1);
            ((mpdus, bound), end - start)
        }
        e => panic!("first event {e:?}"),
    }
}

/// Each limit binds through the MAC where `ampdu`'s arithmetic says it should (the numbers are
/// derived in `ampdu`'s tests): 10 queued → backlog; HE window 256 of 300 queued; HT 65,535 B →
/// 42; HE80 MCS0 1SS 5.484 ms → 15; AC_VO's 1.504-ms TXOP with SIFS + 56-B Block Ack (56 µs)
/// at HE80 MCS11 → 133 (with [`MacConfig::ampdu_vo`]; AC_VI's 3.008-ms TXOP allows more than
/// the window, so it is tested through AC_VO).
#[test]
fn each_aggregation_limit_binds_through_the_mac() {
    let he = StationConfig::new(he80_mcs11());
    assert_eq!(first_ampdu(he, BE, 10), (10, Bound::Backlog));
    assert_eq!(first_ampdu(he, BE, 300), (256, Bound::BaWindow));
    assert_eq!(
        first_ampdu(StationConfig::new(ht40_mcs15()), BE, 64),
        (42, Bound::Length)
    );
    let mcs0 = Phy::new(Standard::He, Band::Ghz5, 0, 1, 80, 800).unwrap();
    assert_eq!(
        first_ampdu(StationConfig::new(mcs0), BE, 64),
        (15, Bound::PpduTime)
    );
    let vo = MacConfig {
        ampdu_vo: true,
        ..fifo(vec![he])
    };
    assert_eq!(
        first_exchange(vo, AccessCategory::Vo, 256).0,
        (133, Bound::Txop)
    );
}

/// By default AC_VO is not aggregated, as mac80211 starts no Block Ack session for it
/// (`ieee80211_aggr_check`): with 256 frames queued the first exchange carries one MPDU and is
/// acknowledged by an Ack. HE80 MCS11: the PSDU of one 1554-B MPDU with its delimiter (an
/// S-MPDU) takes 64 µs (see `tx_completion_follows_the_block_ack`), SIFS 16 µs, the 14-B Ack
/// at 24 Mbit/s 20 + 4·⌈(16 + 112 + 6)/96⌉ = 28 µs: 108 µs. AC_VI still aggregates.
#[test]
fn ac_vo_goes_without_a_block_ack_agreement() {
    let he = StationConfig::new(he80_mcs11());
    let ((mpdus, _), exchange) = first_exchange(fifo(vec![he]), AccessCategory::Vo, 256);
    assert_eq!((mpdus, exchange), (1, Dur::from_micros(108)));
    assert!(first_ampdu(he, AccessCategory::Vi, 256).0 > 100);
}

/// The Block Ack window counts sequence numbers: after a first A-MPDU of 64 (window 64) in
/// which the MPDUs from sequence number s0 on include k losses, the window starts at s0 and
/// 64 − s0 … are in use, so the next A-MPDU holds the k retransmissions plus s0 new MPDUs
/// (802.11-2020 §10.25: a new MPDU's sequence number must be below WinStart + WinSize).
#[test]
fn mpdus_awaiting_retransmission_hold_window_space() {
    let mut sta = StationConfig::new(he80_mcs11());
    sta.ba_window = 64;
    sta.uplink_per = 0.3;
    let mut mac = Mac::new(fifo(vec![sta]), 5, 0).unwrap();
    let mut id = 0;
    fill(&mut mac, 0, 400, &mut id);
    let events = drive(&mut mac, &mut id, false, |m| {
        m.stats(Node::Sta(0)).unwrap().accesses >= 2
    });
    let transmits: Vec<(usize, usize, Bound)> = events
        .iter()
        .filter_map(|e| match *e {
            MacEvent::Transmit {
                mpdus,
                retransmissions,
                bound,
                ..
            } => Some((mpdus, retransmissions, bound)),
            _ => None,
        })
        .collect();
    let acked: Vec<u64> = events
        .iter()
        .filter_map(|e| match *e {
            MacEvent::TxComplete { frame, .. } => Some(frame),
            _ => None,
        })
        .take_while(|&f| f < 64)
        .collect();
    // Frames 0..64 got sequence numbers 0..64 in the first A-MPDU.
    let s0 = (0..64).find(|f| !acked.contains(f)).unwrap();
    let k = 64 - acked.len();
    println!(
        "first A-MPDU: {k} lost, first at {s0}; second {:?}",
        transmits[1]
    );
    assert!(k > 0);
    assert_eq!(transmits[0], (64, 0, Bound::BaWindow));
    assert_eq!(
        transmits[1],
        (k + s0 as usize, k, Bound::BaWindow),
        "retransmissions {k} + new {s0}"
    );
}

/// One 1500-B frame: the PSDU is 4 + 1554 = 1558 B.
/// - HE80 MCS11 2SS: preamble 20 + 4 + 8 + 4 + 2·7.2 = 50.4 µs, one 13.6-µs symbol
///   (16 + 8·1558 = 12,480 bits ≤ N_DBPS 16,333): 64 µs; SIFS 16; 56-B Block Ack (window 256)
///   at 24 Mbit/s: 20 + 4·⌈(16 + 448 + 6)/96⌉ = 40 µs.
/// - HT40 MCS15 SGI: preamble 40 µs, ⌈(16 + 12,464 + 6)/1080⌉ = 12 symbols of 3.6 µs = 43.2 µs,
///   rounded up to 44 µs: 84 µs; SIFS 16; 32-B Block Ack 20 + 4·3 = 32 µs.
///
/// The access starts AIFS (43 µs) + b slots (b ≤ 15) after time 0; the frame is released at
/// the end of the PPDU and completed after the Block Ack.
#[test]
fn tx_completion_follows_the_block_ack() {
    for (phy, ppdu_us, exchange_us) in [(he80_mcs11(), 64, 120), (ht40_mcs15(), 84, 132)] {
        let mut mac = Mac::new(fifo(vec![StationConfig::new(phy)]), 9, 0).unwrap();
        mac.enqueue(Time::ZERO, Node::Sta(0), Node::Ap, BE, 7, IP_LEN, FLOW)
            .unwrap();
        let events = drive(&mut mac, &mut 0, false, |_| false);
        let MacEvent::Transmit {
            start, ppdu, end, ..
        } = events[0]
        else {
            panic!("{events:?}")
        };
        let wait = (start - Time::ZERO).as_nanos();
        assert!(
            wait >= 43_000 && (wait - 43_000).is_multiple_of(9_000) && wait <= 43_000 + 15 * 9_000
        );
        assert_eq!(ppdu, Dur::from_micros(ppdu_us));
        assert_eq!(end, start + Dur::from_micros(exchange_us));
        assert_eq!(
            events[1..],
            [
                MacEvent::Delivered {
                    from: Node::Sta(0),
                    to: Node::Ap,
                    frame: 7,
                    len: IP_LEN,
                    at: start + Dur::from_micros(ppdu_us),
                },
                MacEvent::TxComplete {
                    from: Node::Sta(0),
                    to: Node::Ap,
                    frame: 7,
                    at: start + Dur::from_micros(exchange_us),
                },
            ]
        );
        assert_eq!(mac.poll_at(), None);
    }
}

/// Three stations with errors, uplink and downlink: the same seed gives the same event
/// sequence, another seed another one.
#[test]
fn same_seed_same_events() {
    let run = |seed: u64| {
        let stations = (0..3)
            .map(|i| {
                let mut s = StationConfig::new(he80_mcs11());
                s.uplink_per = 0.1 * f64::from(i);
                s.downlink_per = 0.05;
                s
            })
            .collect();
        let mut mac = Mac::new(fifo(stations), seed, 0).unwrap();
        let mut id = 0;
        for s in 0..3 {
            for _ in 0..300 {
                mac.enqueue(Time::ZERO, Node::Sta(s), Node::Ap, BE, id, IP_LEN, FLOW)
                    .unwrap();
                mac.enqueue(Time::ZERO, Node::Ap, Node::Sta(s), BE, id + 1, IP_LEN, FLOW)
                    .unwrap();
                id += 2;
            }
        }
        drive(&mut mac, &mut id, false, |_| false)
    };
    let a = run(1);
    assert!(a.len() > 1800);
    assert_eq!(a, run(1));
    assert_ne!(a, run(2));
}

/// Bad parameters are typed errors naming the station and the valid range, never panics.
#[test]
fn bad_parameters_are_reported() {
    let mut sta = StationConfig::new(he80_mcs11());
    sta.uplink_per = 1.0;
    let err = Mac::new(fifo(vec![sta]), 1, 0).unwrap_err();
    assert_eq!(
        err,
        MacError::Per {
            station: 0,
            per: 1.0
        }
    );
    let mut sta = StationConfig::new(ht40_mcs15());
    sta.ba_window = 256;
    let err = Mac::new(fifo(vec![sta]), 1, 0).unwrap_err();
    assert!(err.to_string().contains("1..=64"), "{err}");
    let mut cfg = fifo(vec![StationConfig::new(he80_mcs11())]);
    cfg.basic_rate_mbps = 11;
    assert_eq!(Mac::new(cfg, 1, 0).unwrap_err(), MacError::BasicRate(11));
    let mut mac = Mac::new(fifo(vec![StationConfig::new(he80_mcs11())]), 1, 0).unwrap();
    assert_eq!(
        mac.enqueue(Time::ZERO, Node::Sta(0), Node::Sta(0), BE, 0, IP_LEN, FLOW),
        Err(MacError::NotInfrastructure {
            from: Node::Sta(0),
            to: Node::Sta(0)
        })
    );
    assert_eq!(
        mac.enqueue(Time::ZERO, Node::Ap, Node::Sta(3), BE, 0, IP_LEN, FLOW),
        Err(MacError::UnknownStation(3))
    );
    assert_eq!(mac.poll_at(), None);
}

/// `take_poll_moved` may say false only when the `enqueue` calls since its last answer left
/// `poll_at` where it was: checked at every frame of two stations' and the AP's saturated
/// senders over many accesses, with either kind of queue.
#[test]
fn poll_moved_is_false_only_when_poll_at_stayed() {
    for queues in [Queues::Fifo, Queues::Mac80211] {
        let cfg = MacConfig {
            queues,
            ..MacConfig::new(vec![
                StationConfig::new(he80_mcs11()),
                StationConfig::new(he80_mcs11()),
            ])
        };
        let mut mac = Mac::new(cfg, 5, 0).unwrap();
        let mut id = 0;
        let mut stayed = 0;
        let mut moved = 0;
        let mut offer = |mac: &mut Mac, at: Time, from: Node, to: Node| {
            let before = mac.poll_at();
            mac.enqueue(at, from, to, BE, id, IP_LEN, FLOW).unwrap();
            id += 1;
            if mac.take_poll_moved() {
                moved += 1;
            } else {
                assert_eq!(mac.poll_at(), before, "{queues:?}");
                stayed += 1;
            }
        };
        let links = [
            (Node::Sta(0), Node::Ap),
            (Node::Sta(1), Node::Ap),
            (Node::Ap, Node::Sta(0)),
        ];
        for &(from, to) in &links {
            for _ in 0..3 {
                offer(&mut mac, Time::ZERO, from, to);
            }
        }
        let mut ev = Vec::new();
        for _ in 0..2000 {
            let Some(t) = mac.poll_at() else { break };
            ev.clear();
            mac.on_time(t, &mut ev);
            for e in &ev {
                if let MacEvent::TxComplete { from, to, at, .. } = *e {
                    offer(&mut mac, at, from, to);
                }
            }
        }
        // Both answers were seen: a queue starting to contend, and frames joining a backlog.
        assert!(
            moved > 0 && stayed > 0,
            "{queues:?}: {moved} moved, {stayed} stayed"
        );
    }
}
