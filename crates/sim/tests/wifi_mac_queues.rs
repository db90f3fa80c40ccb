//! The BSS MAC with the queues Linux builds ([`Queues::Mac80211`]: mac80211's fq_codel txqs,
//! AQL and airtime fairness pulled by the driver), A-MSDU, A-MPDU on or off and RTS/CTS,
//! against theory.

use std::collections::BTreeMap;

use cclab_sim::wifi::edca::AccessCategory;
use cclab_sim::wifi::goodput::{self, Access};
use cclab_sim::wifi::mac::{Mac, MacConfig, MacEvent, Node, Queues, StationConfig};
use cclab_sim::wifi::phy::{
    ACK_BYTES, BLOCK_ACK_64_BYTES, BLOCK_ACK_256_BYTES, Band, CTS_BYTES, Phy, RTS_BYTES,
    Standard, legacy_airtime,
};
use cclab_sim::{Dur, Time};

const BE: AccessCategory = AccessCategory::Be;
/// A 1500-B IP packet carrying 1448 B of TCP payload.
const IP_LEN: u32 = 1500;
const TCP_PAYLOAD: u32 = 1448;

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
        mac.enqueue(Time::ZERO, from, to, BE, id, IP_LEN, 0).unwrap();
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
            fill(&mut mac, Node::Sta(0), Node::Ap, 2 * u64::from(window) + 64, 0);
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
    assert!(fa.1.abs_diff(fb.1) <= 16, "FIFO frames {} vs {}", fa.1, fb.1);
    assert!(fb.0.as_secs_f64() > 2.0 * fa.0.as_secs_f64());
    let (la, lb) = show("mac80211", &linux);
    let ratio = lb.0.as_secs_f64() / la.0.as_secs_f64();
    assert!((ratio - 1.0).abs() < 0.05, "airtime ratio {ratio}");
    assert!(la.1 > 2 * lb.1);
}
