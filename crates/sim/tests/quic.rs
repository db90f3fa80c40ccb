//! QUIC flows end to end ([`cclab_sim::quic`]): the goodput ceiling of 1280-byte datagrams on a
//! quicly-like path, complete delivery under random loss, and the results in TCP's shapes.

use cclab_cc::num::u64_to_f64;
use cclab_cc::{CcSpec, Dur};
use cclab_sim::net::loss::LossConfig;
use cclab_sim::topology::Dumbbell;
use cclab_sim::{QueueLimit, QuicConfig, Results, Simulation, Transport};

const RATE: u64 = 20_000_000;

/// One QUIC flow with controller `cc` on a 20 Mbit/s dumbbell with a 20 ms one-way bottleneck
/// delay (access delays 0, so the base RTT is 40 ms) and a one-BDP FIFO (100 kB of 1280-byte
/// datagrams: 78 packets). ACKs cross the empty reverse link unqueued.
fn quicly_path(cc: &str, secs: u64, loss: f64, size: Option<u64>) -> Results {
    let mut d = Dumbbell::new(RATE, Dur::from_millis(20), QueueLimit::Bytes(100_000));
    d.duration = Dur::from_secs(secs);
    if loss > 0.0 {
        d.loss = LossConfig::Bernoulli { p: loss };
    }
    let f = d.add_flow(CcSpec::default_for(cc).unwrap(), Dur::ZERO);
    f.transport = Transport::Quic(QuicConfig::default());
    f.size = size;
    Simulation::new(d.build()).unwrap().run()
}

/// The goodput ceiling: a saturated flow delivers at most the link rate times the stream
/// payload share of a datagram, (1280 − 28) / 1280 = 97.81 % (no IP/UDP header counted, as in
/// quicly's simulator), and Reno or CUBIC with a one-BDP buffer keeps the link busy, so the
/// second half of the run gets within 2 % of it (the sawtooth never drains a one-BDP buffer
/// with β ≥ 0.5; the 2 % cover the sample grid and the drops' retransmissions).
#[test]
fn goodput_tops_out_at_the_datagram_payload_share() {
    let share = f64::from(QuicConfig::default().payload_bytes()) / 1280.0;
    assert!((share - 0.978_1).abs() < 1e-4);
    let ceiling = u64_to_f64(RATE) * share;
    for cc in ["reno", "cubic"] {
        let r = quicly_path(cc, 30, 0.0, None);
        let s = &r.flows[0].summary;
        assert!(
            s.goodput_bps <= ceiling,
            "{cc}: {} > {ceiling}",
            s.goodput_bps
        );
        let g = &r.flows[0].series.goodput_bps;
        let half = &g[g.len() / 2..];
        let mean = half.iter().sum::<f64>() / half.len() as f64;
        assert!(
            mean >= 0.98 * ceiling && mean <= ceiling * 1.001,
            "{cc}: second-half goodput {mean} against ceiling {ceiling}"
        );
        assert!(
            s.segments_lost > 0,
            "{cc}: the buffer overflowed at some point"
        );
        let q = s.quic.expect("QUIC counters");
        assert!(q.acks_received > 0 && q.acks_sent >= q.acks_received);
    }
}

/// Under 2 % random loss a sized transfer still completes, every byte delivered in order
/// exactly once to the application, with losses declared and retransmitted.
#[test]
fn a_sized_transfer_completes_under_random_loss() {
    for cc in ["reno", "cubic", "bbr1"] {
        let size = 2_000_000;
        let r = quicly_path(cc, 60, 0.02, Some(size));
        let s = &r.flows[0].summary;
        assert!(s.complete, "{cc}: {s:?}");
        assert_eq!(s.bytes_delivered, size, "{cc}");
        assert!(s.segments_lost > 0 && s.retransmits > 0, "{cc}");
        assert!(s.fct_s.is_some());
    }
}

/// A sized transfer whose application stops before the end never counts as complete: it
/// delivers what was sent before the stop, and keeps its size (as a TCP flow does).
#[test]
fn a_sized_transfer_stopped_early_is_not_complete() {
    let mut d = Dumbbell::new(RATE, Dur::from_millis(20), QueueLimit::Bytes(100_000));
    d.duration = Dur::from_secs(10);
    let f = d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::ZERO);
    f.transport = Transport::Quic(QuicConfig::default());
    // 20 MB take at least 8 s at 20 Mbit/s; the application stops after 2 s.
    f.size = Some(20_000_000);
    f.stop = Some(cclab_cc::Time::ZERO + Dur::from_secs(2));
    let r = Simulation::new(d.build()).unwrap().run();
    let s = &r.flows[0].summary;
    assert!(!s.complete, "{s:?}");
    assert!(s.fct_s.is_none());
    assert!(s.bytes_delivered > 0 && s.bytes_delivered < 20_000_000);
}

/// ECN end to end: a QUIC flow sending ECT(0) through FQ-CoDel (which marks ECT packets
/// instead of dropping them) gets CE counts echoed in its ACK frames and answers them with
/// window reductions (RFC 9002 §7.1), losing no packet to the AQM.
#[test]
fn ce_marks_are_echoed_and_answered() {
    let mut d = Dumbbell::new(RATE, Dur::from_millis(20), QueueLimit::Bytes(1_000_000));
    d.duration = Dur::from_secs(20);
    d.aqm = cclab_sim::AqmConfig::default_for("fq_codel");
    let f = d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::ZERO);
    f.transport = Transport::Quic(QuicConfig::default());
    f.ecn = cclab_cc::EcnMode::Classic;
    let r = Simulation::new(d.build()).unwrap().run();
    let s = &r.flows[0].summary;
    assert_eq!(s.ecn, "classic");
    assert!(s.ce_echoes > 0 && s.ce_delivered == s.ce_echoes, "{s:?}");
    assert!(s.ecn_reductions > 0, "{s:?}");
    assert_eq!(r.queues[0].summary.aqm_drops, 0);
    assert!(r.queues[0].summary.ce_marks >= s.ce_echoes);
}

/// quicly's setting: a millisecond clock and paced sending (2·cwnd/srtt, bursts of 8) still
/// fill the link to the datagram ceiling within 2 % over the second half (the pacer runs at
/// twice the window's rate, so it never holds the flow below the link rate), and the pacing
/// rate is reported.
#[test]
fn a_paced_flow_on_a_millisecond_clock_fills_the_link() {
    let mut d = Dumbbell::new(RATE, Dur::from_millis(20), QueueLimit::Bytes(100_000));
    d.duration = Dur::from_secs(30);
    let f = d.add_flow(CcSpec::default_for("reno").unwrap(), Dur::ZERO);
    f.transport = Transport::Quic(QuicConfig {
        clock_granularity: Dur::from_millis(1),
        ..QuicConfig::default()
    });
    f.pacing = cclab_sim::PacingMode::On;
    let r = Simulation::new(d.build()).unwrap().run();
    let s = &r.flows[0].summary;
    let ceiling = u64_to_f64(RATE) * 1252.0 / 1280.0;
    let g = &r.flows[0].series.goodput_bps;
    let half = &g[g.len() / 2..];
    let mean = half.iter().sum::<f64>() / half.len() as f64;
    assert!(
        mean >= 0.98 * ceiling && mean <= 1.001 * ceiling,
        "{mean} vs {ceiling}"
    );
    assert!(
        r.flows[0]
            .series
            .pacing_rate_bps
            .iter()
            .any(Option::is_some)
    );
    assert!(s.goodput_bps <= ceiling);
}

/// quicly's jumpstart window (`-j`) over QUIC: a larger first window, paced. With cclab's Jump
/// Start on a QUIC flow (no handshake, so it paces over its `fallback_rtt`, the path's 40 ms)
/// a transfer of W = 200 datagrams goes out as one flight paced evenly over one RTT; the pacing
/// rate, 200 · 1280 B / 40 ms = 51 Mbit/s, is below the 100 Mbit/s bottleneck, so nothing
/// queues. So the last datagram leaves at (W − 1)/W · RTT and reaches the receiver half an RTT
/// plus its serialisation (1280 B at 100 Mbit/s: 0.10 ms) later: FCT = (W − 1)/W · RTT +
/// RTT/2 + 0.10 ms ≈ 1.5 RTT. Tolerance 0.5 ms, 2.5 pacing gaps of 0.2 ms: a flight paced over
/// more or less than one RTT, or sent in a burst that queues (200 datagrams at 100 Mbit/s take
/// 20 ms), fails. Standard slow start from QUIC's initial window of 10 needs
/// ⌈log₂(W/10 + 1)⌉ − 1 = 4 more rounds: FCT ≥ 4.5 RTT, at least 3 × Jump Start's.
#[test]
fn a_jumpstart_window_goes_out_paced_over_one_rtt() {
    let rtt = Dur::from_millis(40);
    let fct = |cc: CcSpec, n: u64| {
        let mut d = Dumbbell::new(100_000_000, Dur(rtt.0 / 2), QueueLimit::Packets(10_000));
        d.duration = Dur::from_secs(5);
        let f = d.add_flow(cc, Dur::ZERO);
        let q = QuicConfig::default();
        f.size = Some(n * u64::from(q.payload_bytes()));
        f.transport = Transport::Quic(q);
        let r = Simulation::new(d.build()).unwrap().run();
        let s = &r.flows[0].summary;
        assert_eq!(s.retransmits, 0);
        s.fct_s.expect("completes")
    };
    let n = 200u64;
    let t = rtt.as_secs_f64();
    let js = fct(
        CcSpec::NewReno {
            slow_start: cclab_cc::SlowStartKind::JumpStart {
                fallback_rtt: Some(rtt),
            },
            rules: cclab_cc::RenoRules::LINUX,
        },
        n,
    );
    let want = (u64_to_f64(n) - 1.0) / u64_to_f64(n) * t + t / 2.0 + 1280.0 * 8.0 / 1e8;
    eprintln!("QUIC Jump Start FCT {js:.5} s, theory {want:.5} s");
    assert!((js - want).abs() < 0.0005, "Jump Start FCT {js} vs {want}");
    let ss = fct(CcSpec::default_for("newreno").unwrap(), n);
    let bound = ((u64_to_f64(n) / 10.0 + 1.0).log2().ceil() - 1.0) * t + t / 2.0;
    eprintln!("QUIC slow start FCT {ss:.5} s (bound {bound:.3} s)");
    assert!(ss >= bound && ss >= 3.0 * js, "slow start {ss}");
}
