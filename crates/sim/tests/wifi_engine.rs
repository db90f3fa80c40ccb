//! Wi-Fi in whole runs: TCP, UDP and probes over a BSS (the engine's `wifi.rs` around the MAC
//! of `wifi/mac.rs`), on the access topology with the client as the BSS's only station.
//!
//! Each test states its tolerance and why.

use cclab_cc::num::{u64_to_f64, usize_to_f64};
use cclab_cc::{CcSpec, Dur};
use cclab_sim::access::{Access, CLIENT, Direction, server_node};
use cclab_sim::wifi::ampdu::{MpduFormat, ampdu_subframe_len};
use cclab_sim::wifi::edca::LONG_RETRY_LIMIT;
use cclab_sim::wifi::goodput;
use cclab_sim::wifi::mac::{MacConfig, Queues, StationConfig};
use cclab_sim::wifi::phy::{self, Band, Phy, SLOT, Standard};
use cclab_sim::{
    FlowConfig, NodeId, ProbeConfig, QueueLimit, Results, SimConfig, Simulation, UdpConfig,
};

fn he80() -> Phy {
    Phy::new(Standard::He, Band::Ghz5, 11, 2, 80, 800).expect("valid HE PHY")
}

fn ht40() -> Phy {
    Phy::new(Standard::Ht, Band::Ghz5, 7, 2, 40, 400).expect("valid HT PHY")
}

/// The client on Wi-Fi (`station`), the AP on a 1 Gbit/s Ethernet line with 0.5 ms one-way
/// delay, one server.
fn hybrid(station: StationConfig, secs: u64) -> Access {
    let mut a = Access::new(
        1_000_000_000,
        1_000_000_000,
        Dur::from_micros(500),
        QueueLimit::Packets(1000),
        QueueLimit::Packets(1000),
    );
    a.duration = Dur::from_secs(secs);
    a.wifi = Some(MacConfig::new(vec![station]));
    a
}

fn run(cfg: SimConfig) -> Results {
    Simulation::new(cfg).expect("valid").run()
}

fn bulk(cc: &str) -> FlowConfig {
    FlowConfig::bulk(
        "f",
        NodeId(0),
        NodeId(0),
        CcSpec::default_for(cc).expect("known controller"),
    )
}

/// A saturated UDP uplink builds A-MPDUs of the Block Ack window and reaches the goodput of the
/// analytic cycle model (`wifi::goodput`, Bianchi's cycle without contention): one A-MPDU of N
/// subframes per access, AIFS + CWmin/2 slots of mean backoff, SIFS and the Block Ack. The
/// window sets N = 1, 8, 32, 64 (and 256 for HE). Tolerance 1 %: the only randomness is the
/// backoff (uniform 0..=15 slots, standard deviation 4.6 slots per cycle, so over the ≥ 300
/// cycles of a run its mean is within 0.5 slot = 4.5 µs of 7.5 slots, under 1 % of any cycle
/// here); the A-MPDU and Block Ack durations are exact.
#[test]
fn saturated_udp_uplink_meets_the_cycle_model() {
    let size = 1500u32;
    let sub = u32::try_from(ampdu_subframe_len(MpduFormat::QOS_CCMP.mpdu_len(size))).unwrap();
    for (phy, windows, ba_bytes) in [
        (ht40(), &[1u16, 8, 32, 42][..], phy::BLOCK_ACK_64_BYTES),
        (he80(), &[1, 8, 32, 64][..], phy::BLOCK_ACK_64_BYTES),
        (he80(), &[256][..], phy::BLOCK_ACK_256_BYTES),
    ] {
        for &n in windows {
            let mut st = StationConfig::new(phy);
            st.ba_window = n;
            let mut a = hybrid(st, 1);
            // The line behind the AP must not be the bottleneck (HE at N = 256 carries more than
            // 1 Gbit/s).
            a.up_rate_bps = 10_000_000_000;
            let mut cfg = a.build().unwrap();
            let cbr = UdpConfig::cbr("u", CLIENT, server_node(0), 2_000_000_000, size);
            cfg.udp.push(cbr);
            let r = run(cfg);
            let sta = &r.wifi[0].nodes[1];
            // Every access carries a full window once the queue holds one: the source adds a
            // frame every 6 µs, so a window of 256 takes 1.5 ms to fill, while the first
            // accesses (AIFS, backoff and the PPDU of what is queued) come at about 0.05, 0.3 and
            // 0.9 ms: at most 4 A-MPDUs are short.
            let full = sta.ampdu_sizes.get(usize::from(n)).copied().unwrap_or(0);
            assert!(
                full + 4 >= sta.accesses,
                "N={n}: {full} of {} A-MPDUs full",
                sta.accesses
            );
            let access = goodput::Access::best_effort(Band::Ghz5, ba_bytes, 24).unwrap();
            let model = goodput::saturated(&phy, &access, u32::from(n), sub, size);
            let got = r.udp[0].summary.goodput_mbps * 1e6;
            let err = got / model.goodput_bps - 1.0;
            eprintln!(
                "{:?} N={n}: {:.1} Mbit/s vs model {:.1} ({:+.2} %)",
                phy.standard(),
                got / 1e6,
                model.goodput_bps / 1e6,
                err * 100.0
            );
            assert!(err.abs() < 0.01, "N={n}: {got} vs {}", model.goodput_bps);
        }
    }
}

/// A ping over an idle BSS: each Wi-Fi hop adds the wait for the channel (AIFS, then a backoff
/// of 0..=CWmin slots if the medium was busy or the frame arrived within AIFS of idle) and the
/// PPDU of one MPDU; the frame is delivered at the end of its PPDU. So the RTT lies between the
/// wired RTT plus two PPDUs and the wired RTT plus two (AIFS + 15 slots + PPDU). The wired part
/// is exact (serialisation on the 1 Gbit/s line both ways and the server NIC).
#[test]
fn ping_over_idle_wifi_adds_channel_access_and_ppdu() {
    let mut a = hybrid(StationConfig::new(he80()), 2);
    let p = ProbeConfig::ping("p", NodeId(0), NodeId(0), Dur::from_millis(10));
    a.add_probe(p, 0);
    let r = run(a.build().unwrap());
    let bytes = 84u64;
    let wired = a.base_rtt(0).as_secs_f64()
        + u64_to_f64(bytes * 8) / 1e9 * 2.0
        + u64_to_f64(bytes * 8) / 10e9;
    let psdu = u64::from(MpduFormat::QOS_CCMP.mpdu_len(84)) + 4; // one subframe: delimiter
    let ppdu = he80().ppdu_airtime(psdu).as_secs_f64();
    let aifs = Band::Ghz5.aifs(3).as_secs_f64();
    let lo = wired + 2.0 * ppdu;
    let hi = wired + 2.0 * (aifs + 15.0 * SLOT.as_secs_f64() + ppdu);
    let rtts = &r.probes[0].rtt_ms;
    assert_eq!(rtts.len(), 200);
    for &rtt in rtts {
        let s = rtt / 1e3;
        assert!(
            s >= lo - 1e-9 && s <= hi + 1e-9,
            "{rtt} ms outside [{}, {}]",
            lo * 1e3,
            hi * 1e3
        );
    }
    let mean = rtts.iter().sum::<f64>() / usize_to_f64(rtts.len());
    eprintln!(
        "ping: mean {mean:.4} ms in [{:.4}, {:.4}]",
        lo * 1e3,
        hi * 1e3
    );
}

/// A sized upload over Wi-Fi: every byte arrives, the MAC holds nothing at the end, and every
/// byte handed below TCP came back as a TX completion (the last trace row has nothing below
/// TCP): the MAC's Block Acks released all the TSQ budget.
#[test]
fn sized_upload_completes_and_returns_every_tx_completion() {
    let mut a = hybrid(StationConfig::new(he80()), 2);
    let mut f = bulk("cubic");
    f.size = Some(20_000_000);
    f.trace = true;
    a.add_flow(f, 0, Direction::Upload);
    let r = run(a.build().unwrap());
    let s = &r.flows[0].summary;
    assert!(s.complete, "{s:?}");
    assert_eq!(s.bytes_delivered, 20_000_000);
    assert_eq!(r.engine.data_packets_in_network, 0);
    let last = r.flows[0].trace.last().expect("traced");
    assert_eq!(last.below_tcp, 0, "{last:?}");
    let sta = &r.wifi[0].nodes[1];
    assert_eq!(sta.acked + sta.dropped, sta.mpdus_sent - sta.retries);
}

/// With TCP Small Queues binding, the sender holds fewer bytes in the MAC and so builds smaller
/// A-MPDUs: a single BBRv3 upload (and a CUBIC one) with pacing shift 10 builds smaller mean
/// aggregates than with shift 8. The mechanism is asserted (the order); the sizes are printed,
/// not asserted.
#[test]
fn a_tighter_tsq_budget_builds_smaller_aggregates() {
    for cc in ["bbr3", "cubic"] {
        let mut mean = Vec::new();
        for shift in [7u8, 8, 10] {
            let mut a = hybrid(StationConfig::new(he80()), 3);
            a.client_host.pacing_shift = shift;
            a.add_flow(bulk(cc), 0, Direction::Upload);
            let r = run(a.build().unwrap());
            let sta = &r.wifi[0].nodes[1];
            eprintln!(
                "{cc} shift {shift}: {:.1} Mbit/s, mean A-MPDU {:.1}, airtime {:.3}, srtt p50 {:.2} ms",
                r.flows[0].summary.goodput_bps / 1e6,
                sta.mean_ampdu,
                sta.airtime_share,
                r.flows[0].summary.rtt_p50_ms.unwrap_or(f64::NAN)
            );
            mean.push(sta.mean_ampdu);
        }
        assert!(mean[2] < mean[1], "{cc}: {mean:?}");
    }
}

/// Downloads cross the BSS the other way: the AP sends the data and the client the ACKs. The
/// receiver acknowledges every second full segment (RFC 1122 4.2.3.2, Linux's delayed ACK), so
/// the AP's acknowledged MPDUs are twice the client's, less the single-segment ACKs of quick-ack
/// at the start and of the delayed-ACK timer, plus the out-of-order segments of loss recovery
/// whose ACKs SACK compression holds (after three at once, at most one per 1 ms, Linux's
/// `tcp_comp_sack_delay_ns`), which push it the other way: the ratio lies in [1.9, 2.1]; the
/// AP also does most of the airtime.
#[test]
fn download_is_sent_by_the_ap() {
    let mut a = hybrid(StationConfig::new(he80()), 2);
    a.add_flow(bulk("cubic"), 0, Direction::Download);
    let r = run(a.build().unwrap());
    let (ap, sta) = (&r.wifi[0].nodes[0], &r.wifi[0].nodes[1]);
    assert_eq!((ap.role, sta.role), ("ap", "station"));
    assert!(r.flows[0].summary.goodput_bps > 100e6);
    let ratio = u64_to_f64(ap.acked) / u64_to_f64(sta.acked);
    assert!((1.9..=2.1).contains(&ratio), "{ratio}: {ap:?} {sta:?}");
    assert!(ap.airtime_s > sta.airtime_s, "{ap:?} {sta:?}");
    // The per-interval series add up to the run's totals (the run ends on a sample).
    let w = &r.wifi[0];
    assert_eq!(w.t_s.len(), 10);
    for n in &w.nodes {
        assert_eq!(n.series.retries.iter().sum::<u64>(), n.retries);
        assert_eq!(n.series.collisions.iter().sum::<u64>(), n.collisions);
        let air: f64 = n.series.airtime_share.iter().sum::<f64>() * 0.2;
        assert!((air - n.airtime_s).abs() < 1e-9, "{air} vs {}", n.airtime_s);
    }
}

/// A lost MPDU is sent again in a later A-MPDU and the recipient releases frames in order
/// (IEEE 802.11-2020 §10.25.6 reordering buffer). With a 2 % MPDU error rate both ways the MAC
/// retries and TCP sees every segment that arrives in order; a segment is lost only when the
/// MAC gives up on it (after `DRIVER_RETRY_LIMIT` = 31 failed transmissions, collisions with
/// the AP's ACKs included), so TCP's retransmissions that were needed (those the receiver did
/// not report as duplicates with D-SACK) are no more than the segments the MAC dropped.
/// Without the AP contending (a UDP uplink, so no collisions) at a 10 % error rate and the
/// standard's retry limit of 4 (`LONG_RETRY_LIMIT`), the retransmissions and drops are those of
/// the error rate: each first transmission is followed by 0.1 + 0.01 + 0.001 retransmissions
/// on average, and a fraction 10⁻⁴ of frames is dropped.
#[test]
fn lost_mpdus_are_retried_and_delivered_in_order() {
    let mut st = StationConfig::new(he80());
    st.uplink_per = 0.02;
    st.downlink_per = 0.02;
    let mut a = hybrid(st, 2);
    a.add_flow(bulk("cubic"), 0, Direction::Upload);
    let r = run(a.build().unwrap());
    let sta = &r.wifi[0].nodes[1];
    let s = &r.flows[0].summary;
    eprintln!(
        "PER 2 %: retries {} of {} MPDUs, dropped {}, TCP retransmits {}",
        sta.retries, sta.mpdus_sent, sta.dropped, s.retransmits
    );
    assert!(sta.retries > sta.mpdus_sent / 100, "{sta:?}");
    assert_eq!(s.reordered, 0, "{s:?}");
    assert!(
        s.retransmits - s.spurious_retransmits <= sta.dropped,
        "{s:?} {sta:?}"
    );
    assert!(s.goodput_bps > 100e6);

    st.uplink_per = 0.1;
    let mut a = hybrid(st, 2);
    if let Some(m) = a.wifi.as_mut() {
        m.retry_limit = LONG_RETRY_LIMIT;
    }
    let mut cfg = a.build().unwrap();
    cfg.udp.push(UdpConfig::cbr(
        "u",
        CLIENT,
        server_node(0),
        300_000_000,
        1500,
    ));
    let r = run(cfg);
    let sta = &r.wifi[0].nodes[1];
    assert_eq!(sta.collisions, 0);
    // Binomial counts: within four standard deviations.
    let first = u64_to_f64(sta.mpdus_sent - sta.retries);
    let want = first * (0.1 + 0.01 + 0.001);
    let got = u64_to_f64(sta.retries);
    let sd = (u64_to_f64(sta.mpdus_sent) * 0.1 * 0.9).sqrt();
    let drops = u64_to_f64(sta.dropped);
    eprintln!(
        "retries {got} vs {want:.0} (sd {sd:.0}); drops {drops} vs {:.1}",
        first * 1e-4
    );
    assert!((got - want).abs() < 4.0 * sd, "{got} vs {want}");
    assert!(
        (drops - first * 1e-4).abs() < 4.0 * (first * 1e-4).sqrt(),
        "{drops}"
    );
    assert_eq!(r.udp[0].summary.lost, sta.dropped);
}

/// DSCP selects the access category as Linux does (`cfg80211_classify8021d` with the RFC 8325
/// exceptions: EF = 46 → UP 6 → AC_VO), and each AC has its own queues. Under a bulk upload:
/// - with one FIFO per AC (`Queues::Fifo`) a best-effort ping waits behind the queued data and
///   an EF ping does not: its median RTT is below the best-effort one's by at least half of the
///   latter's excess over the idle RTT;
/// - with mac80211's queues (fq_codel per txq) the best-effort ping is a flow of its own and is
///   served first (new-flow priority), so it no longer waits behind the data, only for the
///   exchange in progress and the other side's next one at each of its two hops: its median
///   RTT is below the idle RTT plus four of the longest exchanges (256 subframes + SIFS + Block
///   Ack), which the FIFO's exceeds; the EF ping still waits less (AC_VO's shorter AIFS and
///   contention window).
#[test]
fn dscp_selects_the_access_category() {
    let medians = |queues: Queues| {
        let mut a = hybrid(StationConfig::new(he80()), 3);
        if let Some(m) = a.wifi.as_mut() {
            m.queues = queues;
        }
        a.client_host.pacing_shift = 7;
        a.add_flow(bulk("cubic"), 0, Direction::Upload);
        let be = ProbeConfig::ping("be", NodeId(0), NodeId(0), Dur::from_millis(10));
        let mut ef = be.clone();
        ef.name = "ef".into();
        ef.dscp = 46;
        ef.start = cclab_cc::Time::ZERO + Dur::from_millis(5);
        a.add_probe(be, 0);
        a.add_probe(ef, 0);
        let r = run(a.build().unwrap());
        (
            r.probes[0].summary.rtt_p50_ms.unwrap(),
            r.probes[1].summary.rtt_p50_ms.unwrap(),
        )
    };
    let idle = 1.0; // 2 × (0.5 ms of Ethernet delay)
    let (be_fifo, ef_fifo) = medians(Queues::Fifo);
    let (be, ef) = medians(Queues::Mac80211);
    eprintln!(
        "FIFO: be {be_fifo:.3} ms, ef {ef_fifo:.3} ms; mac80211: be {be:.3} ms, ef {ef:.3} ms"
    );
    assert!(
        ef_fifo < be_fifo - 0.5 * (be_fifo - idle),
        "{be_fifo} vs {ef_fifo}"
    );
    let longest = he80().ppdu_airtime(256 * 1560) + Band::Ghz5.sifs() + Dur::from_micros(40);
    let bound = idle + 4.0 * longest.as_secs_f64() * 1e3;
    assert!(
        be < bound && bound < be_fifo,
        "{be} vs {bound} vs {be_fifo}"
    );
    assert!(ef < be, "{ef} vs {be}");
}

/// A station whose host runs the fq qdisc (EDT pacing, as BBR deployments do) sends through the
/// MAC as well: fq releases each packet when due and the MAC's Block Acks complete it, so the
/// transfer finishes with nothing left below TCP and fq's pacing spreads the sends.
#[test]
fn fq_host_on_wifi() {
    let mut a = hybrid(StationConfig::new(he80()), 2);
    a.client_host.qdisc = cclab_sim::HostQdisc::Fq(cclab_sim::FqConfig::default());
    let mut f = bulk("bbr3");
    f.size = Some(20_000_000);
    f.trace = true;
    a.add_flow(f, 0, Direction::Upload);
    let r = run(a.build().unwrap());
    let s = &r.flows[0].summary;
    assert!(s.complete, "{s:?}");
    assert_eq!(r.engine.data_packets_in_network, 0);
    assert_eq!(r.flows[0].trace.last().expect("traced").below_tcp, 0);
    eprintln!(
        "fq + bbr3: fct {:?} s, mean A-MPDU {:.1}",
        s.fct_s, r.wifi[0].nodes[1].mean_ampdu
    );
}

/// A BSS that cannot be built is refused with an error naming it and the problem, never a
/// panic: a Wi-Fi hop with a rate of its own (the MAC sets the pace), a link that is two Wi-Fi
/// hops, a station without a PHY, an AP that is not a node, and a MAC parameter the MAC
/// refuses (a retry limit of 0).
#[test]
fn a_bss_that_cannot_be_built_is_refused() {
    let valid = || {
        let mut a = hybrid(StationConfig::new(he80()), 1);
        a.add_flow(bulk("cubic"), 0, Direction::Upload);
        a.build().unwrap()
    };
    let refused = |cfg: SimConfig, needle: &str| {
        let Err(e) = Simulation::new(cfg) else {
            panic!("accepted, expected an error with `{needle}`")
        };
        let e = e.to_string();
        assert!(e.contains(needle), "`{e}` lacks `{needle}`");
        e
    };
    assert!(Simulation::new(valid()).is_ok());

    let mut c = valid();
    let up = c.wifi[0].stations[0].uplink.0 as usize;
    c.links[up].rate_bps = Some(1_000_000);
    let e = refused(c, "is a Wi-Fi hop");
    assert!(e.contains("wifi 0"), "{e}");

    let mut c = valid();
    let s = c.wifi[0].stations[0];
    c.wifi[0].stations.push(s);
    let st = c.wifi[0].mac.stations[0];
    c.wifi[0].mac.stations.push(st);
    refused(c, "already a Wi-Fi hop");

    let mut c = valid();
    c.wifi[0].mac.stations.clear();
    refused(c, "station PHYs");

    let mut c = valid();
    c.wifi[0].ap = NodeId(u32::try_from(c.nodes.len()).unwrap());
    refused(c, "wifi 0");

    let mut c = valid();
    c.wifi[0].mac.retry_limit = 0;
    refused(c, "retry limit");
}
