//! The BSS MAC as a consumer access point runs it: vendor firmware's deep per-AC FIFOs at the
//! AP beside mac80211's queues at the Linux client ([`Queues::Firmware`],
//! [`MacConfig::ap_queues`]), DSCP → AC mapping on or off per side
//! ([`MacConfig::ap_dscp_to_ac`], [`MacConfig::sta_dscp_to_ac`]) and the AP's EDCA table
//! ([`MacConfig::ap_edca`]), against their sources.

use cclab_sim::wifi::edca::{AccessCategory, ac_of_dscp};
use cclab_sim::wifi::mac::{
    FIRMWARE_DEPTH, Mac, MacConfig, MacError, MacEvent, Node, Queues, StationConfig,
};
use cclab_sim::wifi::phy::{Band, Phy, Standard};
use cclab_sim::wifi::txq::LIMIT;
use cclab_sim::{Dur, Time};

const IP_LEN: u32 = 1500;

fn he80() -> Phy {
    Phy::new(Standard::He, Band::Ghz5, 9, 2, 80, 800).unwrap()
}

fn bss() -> MacConfig {
    MacConfig::new(vec![StationConfig::new(he80())])
}

/// Runs `mac` until it has nothing left to do; every event.
fn drain(mac: &mut Mac) -> Vec<MacEvent> {
    let mut events = Vec::new();
    while let Some(t) = mac.poll_at() {
        mac.on_time(t, &mut events);
    }
    events
}

/// Ids of the frames dropped before any transmission (`attempts` 0), with their time.
fn queue_drops(events: &[MacEvent]) -> Vec<(u64, Time)> {
    events
        .iter()
        .filter_map(|e| match *e {
            MacEvent::Dropped {
                frame,
                attempts: 0,
                at,
                ..
            } => Some((frame, at)),
            _ => None,
        })
        .collect()
}

/// Tail drop at the bound: an AP whose BE FIFO holds 10 frames, given 15 at once, keeps the
/// first 10 (delivered, in order) and drops the last 5 at once, before any transmission; its
/// VI FIFO is another FIFO, so 10 VI frames queued with the BE backlog all get through.
#[test]
fn the_firmware_fifo_drops_at_its_depth_per_ac() {
    let mut cfg = bss();
    cfg.ap_queues = Some(Queues::Firmware {
        depth: [10, 10, 10, 10],
    });
    let mut mac = Mac::new(cfg, 1, 0).unwrap();
    for id in 0..15 {
        mac.enqueue(
            Time::ZERO,
            Node::Ap,
            Node::Sta(0),
            AccessCategory::Be,
            id,
            IP_LEN,
            7,
        )
        .unwrap();
    }
    for id in 100..110 {
        mac.enqueue(
            Time::ZERO,
            Node::Ap,
            Node::Sta(0),
            AccessCategory::Vi,
            id,
            IP_LEN,
            9,
        )
        .unwrap();
    }
    let events = drain(&mut mac);
    let drops = queue_drops(&events);
    assert_eq!(
        drops,
        (10..15).map(|id| (id, Time::ZERO)).collect::<Vec<_>>()
    );
    assert_eq!(mac.stats(Node::Ap).unwrap().txq_drops, 5);
    let delivered: Vec<u64> = events
        .iter()
        .filter_map(|e| match *e {
            MacEvent::Delivered { frame, .. } => Some(frame),
            _ => None,
        })
        .collect();
    let be: Vec<u64> = delivered.iter().copied().filter(|&f| f < 100).collect();
    assert_eq!(be, (0..10).collect::<Vec<_>>());
    assert_eq!(delivered.iter().filter(|&&f| f >= 100).count(), 10);
}

/// Each side keeps its own queues: with the AP on vendor firmware ([`FIRMWARE_DEPTH`] = 1424
/// frames per AC, tail drop) and the client on mac80211 (fq limit [`LIMIT`] = 8192 packets per
/// interface, `fq_init`), 9000 frames queued at once each way lose 9000 − 1424 downlink frames
/// at the AP and 9000 − 8192 uplink frames at the client (the fattest flow's head: the one
/// flow here), nothing else.
#[test]
fn the_ap_runs_firmware_fifos_while_the_client_runs_mac80211() {
    let mut cfg = bss();
    cfg.ap_queues = Some(Queues::FIRMWARE);
    assert_eq!(cfg.queues, Queues::Mac80211);
    let mut mac = Mac::new(cfg, 2, 0).unwrap();
    let be = AccessCategory::Be;
    for id in 0..9000 {
        mac.enqueue(Time::ZERO, Node::Ap, Node::Sta(0), be, id, IP_LEN, 7)
            .unwrap();
        mac.enqueue(
            Time::ZERO,
            Node::Sta(0),
            Node::Ap,
            be,
            100_000 + id,
            IP_LEN,
            7,
        )
        .unwrap();
    }
    let mut events = Vec::new();
    mac.on_time(Time::ZERO, &mut events);
    let down = 9000 - u64::from(FIRMWARE_DEPTH);
    let up = 9000 - u64::from(LIMIT);
    assert_eq!(mac.stats(Node::Ap).unwrap().txq_drops, down);
    assert_eq!(mac.stats(Node::Sta(0)).unwrap().txq_drops, up);
    // The AP's drops are the newest frames (tail drop), the client's the oldest (head drop).
    let drops = queue_drops(&events);
    let ap: Vec<u64> = drops.iter().map(|d| d.0).filter(|&f| f < 100_000).collect();
    assert_eq!(ap, (u64::from(FIRMWARE_DEPTH)..9000).collect::<Vec<_>>());
    let sta: Vec<u64> = drops
        .iter()
        .map(|d| d.0)
        .filter(|&f| f >= 100_000)
        .collect();
    assert_eq!(sta, (100_000..100_000 + up).collect::<Vec<_>>());
}

/// A FIFO of no frames is refused, naming the AC.
#[test]
fn a_firmware_fifo_of_depth_zero_is_refused() {
    let mut cfg = bss();
    cfg.ap_queues = Some(Queues::Firmware {
        depth: [1424, 1424, 0, 1424],
    });
    assert_eq!(
        Mac::new(cfg, 1, 0).unwrap_err(),
        MacError::FirmwareDepth(AccessCategory::Vi)
    );
}

/// DSCP → AC per side: where a side maps (the default both ways) a frame goes in the AC of
/// Linux's `cfg80211_classify8021d` with RFC 8325's exceptions (CS1 → BK, 0 → BE, CS5 → VI,
/// EF → VO: the four rrul marks); where it does not, every frame is AC_BE.
#[test]
fn dscp_maps_to_an_ac_only_on_the_sides_that_map_it() {
    use AccessCategory::{Be, Bk, Vi, Vo};
    let rrul = [(8u8, Bk), (0, Be), (40, Vi), (46, Vo)];
    for (ap, sta) in [(true, true), (true, false), (false, true), (false, false)] {
        let mut cfg = bss();
        cfg.ap_dscp_to_ac = ap;
        cfg.sta_dscp_to_ac = sta;
        let mac = Mac::new(cfg, 1, 0).unwrap();
        for (dscp, ac) in rrul {
            assert_eq!(ac_of_dscp(dscp), ac);
            let expect = |maps: bool| if maps { ac } else { Be };
            assert_eq!(mac.access_category(Node::Ap, dscp), expect(ap), "AP {dscp}");
            assert_eq!(
                mac.access_category(Node::Sta(0), dscp),
                expect(sta),
                "station {dscp}"
            );
        }
    }
}

/// The AP contends with the EDCA table it is given: one VI frame from an idle AP starts at
/// AIFS[VI] + k·slot after the medium went idle, with the same backoff draw k under either
/// table (both have CWmin 7 for VI and the same seed), so the AP's own table
/// (dot11QAPEDCATable, AIFSN 1; hostapd's `tx_queue_data2_aifs=1`) starts exactly one slot
/// (9 µs) before the stations' table (dot11EDCATable, AIFSN 2), IEEE 802.11-2020 Table 9-155.
#[test]
fn the_ap_contends_with_its_edca_table() {
    let start = |edca: [_; 4]| {
        let mut cfg = bss();
        cfg.ap_edca = edca;
        let mut mac = Mac::new(cfg, 5, 0).unwrap();
        mac.enqueue(
            Time::ZERO,
            Node::Ap,
            Node::Sta(0),
            AccessCategory::Vi,
            0,
            IP_LEN,
            1,
        )
        .unwrap();
        drain(&mut mac)
            .iter()
            .find_map(|e| match *e {
                MacEvent::Transmit { start, .. } => Some(start),
                _ => None,
            })
            .unwrap()
    };
    let ap = start(AccessCategory::ALL.map(AccessCategory::ap_params));
    let sta = start(AccessCategory::ALL.map(AccessCategory::station_params));
    assert_eq!(sta - ap, Dur::from_micros(9));
}
