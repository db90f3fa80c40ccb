//! The BSS MAC with the queues Linux builds ([`Queues::Mac80211`]: mac80211's fq_codel txqs,
//! AQL and airtime fairness pulled by the driver), A-MSDU, A-MPDU on or off and RTS/CTS,
//! against theory.

use std::collections::BTreeMap;

use cclab_sim::wifi::edca::AccessCategory;
use cclab_sim::wifi::goodput::{self, Access};
use cclab_sim::wifi::mac::{Mac, MacConfig, MacError, MacEvent, Node, Queues, StationConfig};
use cclab_sim::wifi::phy::{
    ACK_BYTES, BLOCK_ACK_64_BYTES, Band, CTS_BYTES, Phy, RTS_BYTES, Standard, legacy_airtime,
};
use cclab_sim::{Dur, Time};

const BE: AccessCategory = AccessCategory::Be;
/// A 1500-B IP packet carrying 1448 B of TCP payload.
const IP_LEN: u32 = 1500;
const TCP_PAYLOAD: u32 = 1448;
/// Two flow hashes in different fq flows (`reciprocal_scale(hash, 4096)`: 256 and 2048).
const FLOW_A: u32 = 0x1000_0000;
const FLOW_B: u32 = 0x8000_0000;

fn he80_mcs11() -> Phy {
    Phy::new(Standard::He, Band::Ghz5, 11, 2, 80, 800).unwrap()
}

fn ht40_mcs15() -> Phy {
    Phy::new(Standard::Ht, Band::Ghz5, 7, 2, 40, 400).unwrap()
}

fn config(stations: Vec<StationConfig>, queues: Queues) -> MacConfig {
    MacConfig {
        queues,
        ..MacConfig::new(stations)
    }
}

/// Drives `mac` until `stop`; every `TxComplete`/`Dropped` queues a new frame on the same link
/// (a saturated sender keeping its backlog constant). Returns every event.
fn saturate(mac: &mut Mac, mut stop: impl FnMut(&Mac) -> bool) -> Vec<MacEvent> {
    let mut all = Vec::new();
    let mut ev = Vec::new();
    let mut id = 1_000_000;
    while let Some(t) = mac.poll_at() {
        if stop(mac) {
            break;
        }
        ev.clear();
        mac.on_time(t, &mut ev);
        for e in &ev {
            if let MacEvent::TxComplete { from, to, at, .. }
            | MacEvent::Dropped { from, to, at, .. } = *e
            {
                mac.enqueue(at, from, to, BE, id, IP_LEN, 0).unwrap();
                id += 1;
            }
        }
        all.extend_from_slice(&ev);
    }
    all
}

fn fill(mac: &mut Mac, from: Node, to: Node, frames: u64, first_id: u64) {
    for id in first_id..first_id + frames {
        mac.enqueue(Time::ZERO, from, to, BE, id, IP_LEN, 0)
            .unwrap();
    }
}

/// Goodput of TCP payload over the run (last completion).
fn goodput_bps(events: &[MacEvent]) -> f64 {
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
    delivered * f64::from(TCP_PAYLOAD) * 8.0 / end.as_secs_f64()
}

/// One saturated uplink station: the pull model and AQL must not starve the channel. Theory:
/// the driver pulls frames until the aggregate is full; AQL lets a station pull while its
/// pending airtime is below 5 ms (`IEEE80211_DEFAULT_AQL_TXQ_LIMIT_L`), and the largest
/// aggregate here is 256 × 1560 B at 1.2 Gbit/s ≈ 2.7 ms, with every estimate released at the
/// end of its exchange; CoDel does not drop while the sojourn stays below 20 ms (the backlog of
/// 2·window + 64 frames drains in 576 × 1500 B / 1 Gbit/s = 7 ms at HE80, 128 × 1500 B /
/// 0.25 Gbit/s = 6 ms at HT40). So every access carries the same aggregate as the FIFO, and with the same seed the
/// same backoff: the goodputs agree within 1 % (they should be equal).
#[test]
fn one_saturated_station_matches_the_fifo() {
    for (phy, window) in [(he80_mcs11(), 256u16), (ht40_mcs15(), 64)] {
        let run = |queues| {
            let mut sta = StationConfig::new(phy);
            sta.ba_window = window;
            let mut mac = Mac::new(config(vec![sta], queues), 11, 0).unwrap();
            fill(
                &mut mac,
                Node::Sta(0),
                Node::Ap,
                2 * u64::from(window) + 64,
                0,
            );
            let ev = saturate(&mut mac, |m| {
                m.stats(Node::Sta(0)).unwrap().accesses >= 4_000
            });
            (goodput_bps(&ev), mac.stats(Node::Sta(0)).unwrap().clone())
        };
        let (fifo, _) = run(Queues::Fifo);
        let (linux, st) = run(Queues::Mac80211);
        println!(
            "{:?} window {window}: FIFO {:.1} Mbit/s, mac80211 {:.1} Mbit/s ({:+.3} %), mean A-MPDU {:.1}",
            phy.standard(),
            fifo / 1e6,
            linux / 1e6,
            (linux / fifo - 1.0) * 100.0,
            st.mean_ampdu()
        );
        assert!((linux / fifo - 1.0).abs() < 0.01, "{linux} vs {fifo}");
        assert_eq!(st.txq_drops, 0);
    }
}

/// Per receiver: (airtime of its exchanges, MSDUs delivered).
fn per_receiver(events: &[MacEvent]) -> BTreeMap<Node, (Dur, u64)> {
    let mut m: BTreeMap<Node, (Dur, u64)> = BTreeMap::new();
    for e in events {
        match *e {
            MacEvent::Transmit { to, start, end, .. } => m.entry(to).or_default().0 += end - start,
            MacEvent::Delivered { to, .. } => m.entry(to).or_default().1 += 1,
            _ => {}
        }
    }
    m
}

/// Two saturated downlink stations, HT40 MCS15 (300 Mbit/s) and HT40 MCS2 (45 Mbit/s), Block
/// Ack window 16: each aggregate holds 16 frames at both rates (16 × 1560 B lasts 4.4 ms at
/// 45 Mbit/s, below aPPDUMaxTime). The FIFO round robin alternates the stations, so they get
/// equal frames (within one aggregate) and airtime in the ratio of their exchange durations;
/// mac80211's deficit round robin charges each exchange's airtime and refills both deficits
/// with the same weight, so their airtime is equal up to one exchange (≤ 4.6 ms) over a run of
/// 4 s, i.e. 0.2 %: 5 % leaves room for the accesses the slow station's CoDel drops leave
/// short.
#[test]
fn airtime_fairness_equalises_airtime_where_round_robin_equalises_frames() {
    let slow = Phy::new(Standard::Ht, Band::Ghz5, 2, 1, 40, 400).unwrap();
    let stations: Vec<StationConfig> = [ht40_mcs15(), slow]
        .into_iter()
        .map(|p| {
            let mut s = StationConfig::new(p);
            s.ba_window = 16;
            s
        })
        .collect();
    let run = |queues| {
        let mut mac = Mac::new(config(stations.clone(), queues), 4, 0).unwrap();
        fill(&mut mac, Node::Ap, Node::Sta(0), 48, 0);
        fill(&mut mac, Node::Ap, Node::Sta(1), 48, 100);
        let until = Time::ZERO + Dur::from_secs(4);
        let ev = saturate(&mut mac, |m| m.poll_at().is_none_or(|t| t > until));
        per_receiver(&ev)
    };
    let fifo = run(Queues::Fifo);
    let linux = run(Queues::Mac80211);
    let show = |name: &str, m: &BTreeMap<Node, (Dur, u64)>| {
        let (a, b) = (m[&Node::Sta(0)], m[&Node::Sta(1)]);
        println!(
            "{name}: fast {:.3} s {} frames, slow {:.3} s {} frames, airtime ratio {:.3}, frame ratio {:.3}",
            a.0.as_secs_f64(),
            a.1,
            b.0.as_secs_f64(),
            b.1,
            b.0.as_secs_f64() / a.0.as_secs_f64(),
            b.1 as f64 / a.1 as f64
        );
        (a, b)
    };
    let (fa, fb) = show("FIFO", &fifo);
    assert!(
        fa.1.abs_diff(fb.1) <= 16,
        "FIFO frames {} vs {}",
        fa.1,
        fb.1
    );
    assert!(fb.0.as_secs_f64() > 2.0 * fa.0.as_secs_f64());
    let (la, lb) = show("mac80211", &linux);
    let ratio = lb.0.as_secs_f64() / la.0.as_secs_f64();
    assert!((ratio - 1.0).abs() < 0.05, "airtime ratio {ratio}");
    assert!(la.1 > 2 * lb.1);
}

/// Open-loop downlink arrivals to station 0, one every `gap`, until `until`; returns the
/// sojourn (enqueue to delivery) of each delivered frame by delivery time, and the events.
fn open_loop(mac: &mut Mac, gap: Dur, until: Time) -> (Vec<(Time, Dur)>, Vec<MacEvent>) {
    let mut next = Time::ZERO;
    let mut id = 0u64;
    let mut sent = Vec::new();
    let mut sojourn = Vec::new();
    let mut all = Vec::new();
    let mut ev = Vec::new();
    loop {
        let poll = mac.poll_at();
        if next <= until && poll.is_none_or(|p| next < p) {
            mac.enqueue(next, Node::Ap, Node::Sta(0), BE, id, IP_LEN, 7)
                .unwrap();
            sent.push(next);
            id += 1;
            next += gap;
            continue;
        }
        let Some(t) = poll.filter(|&t| t <= until) else {
            break;
        };
        ev.clear();
        mac.on_time(t, &mut ev);
        for e in &ev {
            if let MacEvent::Delivered { frame, at, .. } = *e {
                sojourn.push((at, at - sent[usize::try_from(frame).unwrap()]));
            }
        }
        all.extend_from_slice(&ev);
    }
    (sojourn, all)
}

/// One downlink station at HT20 MCS1 (13 Mbit/s; its expected throughput is above
/// `STA_SLOW_THRESHOLD`, so CoDel has target 20 ms, interval 100 ms) offered 1,053 frames/s of
/// 1500 B (12.6 Mbit/s), 5 % above what the link carries (aggregates of 5 frames bound by
/// aPPDUMaxTime, ~1,000 frames/s). The FIFO grows without bound: its sojourn after t is about
/// (offered − served)·t / served, 0.75 s at t = 15 s, more later. CoDel drops at dequeue
/// until the sojourn of the frames it lets through is back at its target: the excess of
/// ~50 frames/s needs a drop rate √count / interval, i.e. count ≈ 25, reached within a second,
/// after which the control law keeps the queue's sojourn near 20 ms. A delivered frame also
/// waits for its aggregate (≤ 5.5 ms) and the channel access, so the mean sojourn of the frames
/// delivered in the last 15 s is checked to lie in 10–60 ms, the order of magnitude of the
/// target (the FIFO's is > 1 s). Every drop is reported with 0 attempts. (Against a 25 %
/// unresponsive overload the count has to climb to ~600 after each exit from the dropping
/// state, and the sojourn swings between 50 and 300 ms: CoDel's known slowness against
/// unresponsive traffic, not checked here.)
#[test]
fn codel_holds_an_overloaded_downlink_near_its_target() {
    let phy = Phy::new(Standard::Ht, Band::Ghz5, 1, 1, 20, 800).unwrap();
    let gap = Dur::from_micros(950);
    let until = Time::ZERO + Dur::from_secs(30);
    let mean_late = |s: &[(Time, Dur)]| {
        let late: Vec<f64> = s
            .iter()
            .filter(|(at, _)| *at > Time::ZERO + Dur::from_secs(15))
            .map(|(_, d)| d.as_secs_f64())
            .collect();
        late.iter().sum::<f64>() / late.len() as f64
    };
    let mut fifo = Mac::new(config(vec![StationConfig::new(phy)], Queues::Fifo), 2, 0).unwrap();
    let (fs, _) = open_loop(&mut fifo, gap, until);
    let mut linux = Mac::new(
        config(vec![StationConfig::new(phy)], Queues::Mac80211),
        2,
        0,
    )
    .unwrap();
    let (ls, events) = open_loop(&mut linux, gap, until);
    let drops: Vec<u32> = events
        .iter()
        .filter_map(|e| match *e {
            MacEvent::Dropped { attempts, .. } => Some(attempts),
            _ => None,
        })
        .collect();
    let (f, l) = (mean_late(&fs), mean_late(&ls));
    println!(
        "mean sojourn, last 15 s: FIFO {:.0} ms, mac80211 {:.1} ms; {} CoDel drops, {} delivered",
        f * 1e3,
        l * 1e3,
        drops.len(),
        ls.len()
    );
    assert!(f > 1.0, "the FIFO should hold seconds: {f}");
    assert!((0.010..0.060).contains(&l), "sojourn {l}");
    assert!(!drops.is_empty() && drops.iter().all(|&a| a == 0));
    assert_eq!(linux.stats(Node::Ap).unwrap().txq_drops, drops.len() as u64);
}

/// A-MSDU without A-MPDU, HT40 MCS15: five 1500-B frames of one flow queued at once become one
/// A-MSDU of 4·1524 + 1522 = 7618 B (≤ 7935; 14-B subheader + 8-B LLC/SNAP + 1500, padded to
/// 4 B but the last), an MPDU of 26 + 16 + 4 + 7618 = 7664 B sent alone (an HT PSDU without
/// delimiter) and answered by a 14-B Ack at 24 Mbit/s: 20 + 4·⌈(16 + 112 + 6)/96⌉ = 28 µs.
/// The exchange lasts exactly TXTIME(7664) + SIFS + 28 µs; the five frames arrive at the end
/// of the PPDU and complete after the Ack. A sixth frame would exceed 7935 B (9142): it goes in
/// a second exchange, as does a frame of another flow. (mac80211's fq tells flows apart by
/// `reciprocal_scale(hash, 4096)`, the top 12 bits of the hash: the two hashes differ there.)
#[test]
fn an_amsdu_exchange_lasts_its_ppdu_and_the_ack() {
    let phy = ht40_mcs15();
    for queues in [Queues::Fifo, Queues::Mac80211] {
        let mut cfg = config(vec![StationConfig::new(phy)], queues);
        cfg.ampdu = false;
        cfg.amsdu_max = Some(7935);
        let mut mac = Mac::new(cfg, 3, 0).unwrap();
        for id in 0..6 {
            mac.enqueue(Time::ZERO, Node::Sta(0), Node::Ap, BE, id, IP_LEN, FLOW_A)
                .unwrap();
        }
        mac.enqueue(Time::ZERO, Node::Sta(0), Node::Ap, BE, 6, IP_LEN, FLOW_B)
            .unwrap();
        let mut events = Vec::new();
        while let Some(t) = mac.poll_at() {
            mac.on_time(t, &mut events);
        }
        let transmits: Vec<(Time, Dur, Time, usize)> = events
            .iter()
            .filter_map(|e| match *e {
                MacEvent::Transmit {
                    start,
                    ppdu,
                    end,
                    mpdus,
                    ..
                } => Some((start, ppdu, end, mpdus)),
                _ => None,
            })
            .collect();
        assert_eq!(transmits.len(), 3, "{queues:?}");
        let (start, ppdu, end, mpdus) = transmits[0];
        let ack = legacy_airtime(Band::Ghz5, 24, ACK_BYTES).unwrap();
        assert_eq!(ack, Dur::from_micros(28));
        assert_eq!(mpdus, 1);
        assert_eq!(ppdu, phy.ppdu_airtime(7664));
        assert_eq!(end - start, ppdu + Band::Ghz5.sifs() + ack);
        let first: Vec<(u64, Time)> = events
            .iter()
            .filter_map(|e| match *e {
                MacEvent::Delivered { frame, at, .. } if at <= end => Some((frame, at)),
                _ => None,
            })
            .collect();
        assert_eq!(first, (0..5).map(|f| (f, start + ppdu)).collect::<Vec<_>>());
        let completed = events
            .iter()
            .filter(|e| matches!(e, MacEvent::TxComplete { at, .. } if *at == end))
            .count();
        assert_eq!(completed, 5);
        // The sixth frame and the other flow's frame: single MPDUs of 1554 B each.
        for &(_, ppdu, _, _) in &transmits[1..] {
            assert_eq!(ppdu, phy.ppdu_airtime(1554));
        }
    }
}

/// 802.11n (HT40 MCS15, 300 Mbit/s), one saturated station, 1500-B frames, through mac80211's
/// queues: A-MPDU only, A-MSDU only (7935 B, Ack) and both. Each run is checked against the
/// aggregate model of `wifi::goodput` (cycle = AIFS + CWmin/2 slots + TXTIME(PSDU) + SIFS +
/// Block Ack or Ack) with the aggregate the standard's limits allow:
/// - A-MPDU only: 1560-B subframes (1554-B MPDU + delimiter, padded); N = min(window,
///   ⌊(max length − 1558)/1560⌋ + 1).
/// - A-MSDU only: one 7664-B MPDU of five MSDUs (4·1524 + 1522 = 7618 ≤ 7935, + 46 B of MAC
///   header, CCMP and FCS), no delimiter, answered by a 14-B Ack.
/// - Both: an HT MPDU in an A-MPDU is at most 4095 B (the delimiter's 12-bit length,
///   `IEEE80211_MAX_MPDU_LEN_HT_BA`), so an A-MSDU holds two MSDUs (3046 B, MPDU 3092 B,
///   subframe 3096 B); N = min(window, ⌊max length/3096⌋) A-MSDUs of 2 frames.
///
/// With the 64-MPDU window and 65,535-B A-MPDUs both carry 42 frames per access, "both" in
/// 502 fewer bytes: 0.7 % more goodput. With a 16-MPDU window the window binds and "both"
/// carries 32 frames to 16. With 8,191-B A-MPDUs "both" fits 2 A-MSDUs (4 frames) where
/// A-MPDU alone fits 5 frames and A-MSDU alone 5 frames with a shorter Ack: "both" is the
/// worst of the three. The model and the MAC must agree on each ordering; 4,000 accesses with the same backoff draws (one station, same seed) make each run's
/// cycle exact to ≪ 0.1 %, and 1.5 % covers the model's rounding of the last subframe's padding
/// (≤ one 3.6-µs symbol of ≥ 300-µs cycles).
#[test]
fn amsdu_and_ampdu_on_80211n_against_the_aggregate_model() {
    let phy = ht40_mcs15();
    let ba = Access::best_effort(Band::Ghz5, BLOCK_ACK_64_BYTES, 24).unwrap();
    let ack = Access::best_effort(Band::Ghz5, ACK_BYTES, 24).unwrap();
    // (window, max A-MPDU length) → (A-MPDU only, A-MSDU only, both) goodputs.
    for (window, max_len) in [(64u16, 65_535u64), (16, 65_535), (64, 8_191)] {
        let run = |ampdu: bool, amsdu: Option<u32>| {
            let mut sta = StationConfig::new(phy);
            sta.ba_window = window;
            sta.max_ampdu_len = max_len;
            let mut cfg = config(vec![sta], Queues::Mac80211);
            cfg.ampdu = ampdu;
            cfg.amsdu_max = amsdu;
            let mut mac = Mac::new(cfg, 21, 0).unwrap();
            fill(&mut mac, Node::Sta(0), Node::Ap, 160, 0);
            let ev = saturate(&mut mac, |m| {
                m.stats(Node::Sta(0)).unwrap().accesses >= 4_000
            });
            assert_eq!(mac.stats(Node::Sta(0)).unwrap().txq_drops, 0);
            goodput_bps(&ev)
        };
        let n_ampdu = u32::from(window).min(u32::try_from((max_len - 1558) / 1560 + 1).unwrap());
        let n_both = u32::from(window).min(u32::try_from(max_len / 3096).unwrap());
        let models = [
            goodput::saturated(&phy, &ba, n_ampdu, 1560, TCP_PAYLOAD).goodput_bps,
            goodput::saturated(&phy, &ack, 1, 7664, 5 * TCP_PAYLOAD).goodput_bps,
            goodput::saturated(&phy, &ba, n_both, 3096, 2 * TCP_PAYLOAD).goodput_bps,
        ];
        let measured = [
            run(true, None),
            run(false, Some(7935)),
            run(true, Some(7935)),
        ];
        println!(
            "window {window}, max A-MPDU {max_len} B: A-MPDU only {:.1} (model {:.1}), A-MSDU only {:.1} ({:.1}), both {:.1} ({:.1}) Mbit/s",
            measured[0] / 1e6,
            models[0] / 1e6,
            measured[1] / 1e6,
            models[1] / 1e6,
            measured[2] / 1e6,
            models[2] / 1e6
        );
        for (m, t) in measured.iter().zip(models) {
            assert!((m / t - 1.0).abs() < 0.015, "{m} vs model {t}");
        }
        for (i, j) in [(0, 1), (0, 2), (1, 2)] {
            assert_eq!(
                measured[i] > measured[j],
                models[i] > models[j],
                "{i} vs {j}"
            );
        }
        if max_len == 8_191 {
            assert!(measured[2] < measured[0] && measured[2] < measured[1]);
        } else {
            assert!(measured[2] > measured[0] && measured[2] > measured[1]);
        }
    }
}

/// Ten saturated uplink stations, HE80 MCS11, 32-MPDU aggregates, with and without RTS/CTS
/// (threshold 1000 B: every aggregate is protected). Theory (IEEE 802.11-2020 §10.3.2.6):
/// - A protected exchange without collision lasts RTS + SIFS + CTS + SIFS longer than the
///   unprotected one: RTS 20 B and CTS 14 B at 24 Mbit/s are 28 µs each, so every such
///   exchange lasts exactly 88 µs + PPDU + SIFS + Block Ack (32 B: 32 µs).
/// - A collision of RTSs costs RTS + the CTS timeout (SIFS + CTS, the approximation of the
///   unprotected case): exactly 72 µs, instead of the longest PPDU + SIFS + Block Ack
///   (~0.4 ms here).
/// - The contention window doubles after a collision either way, so the collision probability
///   per access stays Bianchi's (10 stations: p ≈ 0.24), and the collision airtime falls in the
///   ratio of those durations. No MPDU counts an attempt in a collided RTS: without errors there
///   is no retransmission at all.
///
/// 20,000 transmissions (≈ 16,000 accesses, ≈ 3,500 collided) per run. The backoff draws do not
/// depend on airtime, so both runs see the same collisions here; if they did not, the collision
/// counts would differ by their binomial spread (1.7 % for ~3,500), far inside the 20 % margin
/// on the collision airtime ratio.
#[test]
fn rts_cts_trades_a_fixed_overhead_for_cheap_collisions() {
    let n = 10u32;
    let run = |rts: Option<u32>| {
        let stations = (0..n)
            .map(|_| {
                let mut s = StationConfig::new(he80_mcs11());
                s.ba_window = 32;
                s
            })
            .collect();
        let mut cfg = config(stations, Queues::Mac80211);
        cfg.rts_threshold = rts;
        let mut mac = Mac::new(cfg, 8, 0).unwrap();
        for s in 0..n {
            fill(&mut mac, Node::Sta(s), Node::Ap, 96, u64::from(s) * 1000);
        }
        let total = |m: &Mac| {
            (0..n)
                .map(|s| m.stats(Node::Sta(s)).unwrap().accesses)
                .sum::<u64>()
        };
        let ev = saturate(&mut mac, |m| total(m) >= 20_000);
        let retries: u64 = (0..n)
            .map(|s| mac.stats(Node::Sta(s)).unwrap().retries)
            .sum();
        (ev, retries)
    };
    let sifs = Band::Ghz5.sifs();
    let rts = legacy_airtime(Band::Ghz5, 24, RTS_BYTES).unwrap();
    let cts = legacy_airtime(Band::Ghz5, 24, CTS_BYTES).unwrap();
    let ba = legacy_airtime(Band::Ghz5, 24, BLOCK_ACK_64_BYTES).unwrap();
    assert_eq!(
        (rts, cts, ba),
        (
            Dur::from_micros(28),
            Dur::from_micros(28),
            Dur::from_micros(32)
        )
    );
    let summary = |ev: &[MacEvent]| {
        // One entry per access (colliders share start and end).
        let mut accesses: BTreeMap<Time, (Dur, bool)> = BTreeMap::new();
        for e in ev {
            if let MacEvent::Transmit {
                start,
                end,
                collided,
                ..
            } = *e
            {
                accesses.insert(start, (end - start, collided));
            }
        }
        let collided: Vec<Dur> = accesses.values().filter(|a| a.1).map(|a| a.0).collect();
        let airtime: f64 = collided.iter().map(|d| d.as_secs_f64()).sum();
        (accesses.len(), collided, airtime)
    };
    let (plain, plain_retries) = run(None);
    let (protected, protected_retries) = run(Some(1000));
    let (pa, pc, p_air) = summary(&plain);
    let (ra, rc, r_air) = summary(&protected);
    let mean = |c: &[Dur]| c.iter().map(|d| d.as_secs_f64()).sum::<f64>() / c.len() as f64;
    println!(
        "no RTS: {pa} accesses, {} collided, collision airtime {:.3} s (mean {:.0} µs), {plain_retries} retries; RTS: {ra} accesses, {} collided, {:.3} s (mean {:.0} µs), {protected_retries} retries",
        pc.len(),
        p_air,
        mean(&pc) * 1e6,
        rc.len(),
        r_air,
        mean(&rc) * 1e6
    );
    assert!(rc.iter().all(|&d| d == rts + sifs + cts));
    let expected_ratio = (rts + sifs + cts).as_secs_f64() / mean(&pc);
    let ratio = r_air / p_air;
    assert!(
        (ratio / expected_ratio - 1.0).abs() < 0.2,
        "collision airtime ratio {ratio} vs {expected_ratio}"
    );
    assert_eq!(protected_retries, 0);
    assert!(plain_retries > 0);
    for e in &protected {
        if let MacEvent::Transmit {
            start,
            ppdu,
            end,
            collided: false,
            ..
        } = *e
        {
            assert_eq!(end - start, rts + sifs + cts + sifs + ppdu + sifs + ba);
        }
    }
}

/// A-MSDU lengths above the standard's are refused naming the station and the limit: HT's
/// Maximum A-MSDU Length is 3839 or 7935 B, VHT/HE's Maximum MPDU Length 3895, 7991 or
/// 11,454 B (IEEE 802.11-2020 §9.4.2.55.2, §9.4.2.157.2).
#[test]
fn amsdu_lengths_beyond_the_standard_are_refused() {
    let with = |phy: Phy, amsdu: u32| {
        let mut cfg = MacConfig::new(vec![StationConfig::new(phy)]);
        cfg.amsdu_max = Some(amsdu);
        Mac::new(cfg, 1, 0).err()
    };
    assert!(with(ht40_mcs15(), 7935).is_none());
    let err = with(ht40_mcs15(), 7936).unwrap();
    assert_eq!(
        err,
        MacError::AmsduMax {
            station: 0,
            given: 7936,
            max: 7935,
            standard: Standard::Ht
        }
    );
    assert!(err.to_string().contains("1..=7935"), "{err}");
    assert!(with(he80_mcs11(), 11_454).is_none());
    assert!(with(he80_mcs11(), 11_455).is_some());
    assert!(with(he80_mcs11(), 0).is_some());
}

/// Three stations with errors, uplink and downlink, several flows, A-MSDU and RTS/CTS through
/// mac80211's queues: the same seed gives the same events, another seed others.
#[test]
fn same_seed_same_events_through_the_linux_queues() {
    let run = |seed: u64| {
        let stations = (0..3)
            .map(|i| {
                let mut s = StationConfig::new(he80_mcs11());
                s.uplink_per = 0.1 * f64::from(i);
                s.downlink_per = 0.05;
                s
            })
            .collect();
        let mut cfg = config(stations, Queues::Mac80211);
        cfg.amsdu_max = Some(7991);
        cfg.rts_threshold = Some(20_000);
        let mut mac = Mac::new(cfg, seed, 0).unwrap();
        let mut id = 0u64;
        for s in 0..3 {
            for k in 0..300u32 {
                let hash = k % 4 * FLOW_A;
                mac.enqueue(Time::ZERO, Node::Sta(s), Node::Ap, BE, id, IP_LEN, hash)
                    .unwrap();
                mac.enqueue(Time::ZERO, Node::Ap, Node::Sta(s), BE, id + 1, IP_LEN, hash)
                    .unwrap();
                id += 2;
            }
        }
        let mut events = Vec::new();
        while let Some(t) = mac.poll_at() {
            mac.on_time(t, &mut events);
        }
        events
    };
    let a = run(1);
    let frames = a
        .iter()
        .filter(|e| matches!(e, MacEvent::Delivered { .. } | MacEvent::Dropped { .. }))
        .count();
    assert_eq!(frames, 1800);
    assert!(
        a.windows(2).all(|w| w[0].at() <= w[1].at()),
        "events out of time order"
    );
    assert_eq!(a, run(1));
    assert_ne!(a, run(2));
}
