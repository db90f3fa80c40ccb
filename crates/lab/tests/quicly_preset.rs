//! The `quicly` preset against quicly's simulator model (h2o/quicly `t/simulator.c`): the RTT
//! sits on the data path before the bottleneck, ACKs return at once, the capacity is rate ×
//! buffer in bytes, loss happens after the bottleneck, flows may have their own RTTs, and the
//! seventeen quicly profiles resolve to the numbers of their table.

use cclab_lab::scenario::profiles::{self, PROFILES};
use cclab_lab::scenario::quicly::{self as qp, QuiclyPreset};
use cclab_lab::{Overrides, Scenario, parse};
use cclab_sim::queue::Admission;
use cclab_sim::{AqmConfig, Dur, LossConfig, QueueConfig, Results, Simulation};

fn scenario(topology: &str, rest: &str, duration: &str) -> Result<Scenario, String> {
    parse(
        &format!(
            "name = \"q\"\nduration = \"{duration}\"\n[topology]\npreset = \"quicly\"\n\
             {topology}\n{rest}"
        ),
        "q.toml",
        &Overrides::default(),
    )
    .map_err(|e| e.to_string())
}

fn preset(s: &Scenario) -> &QuiclyPreset {
    s.topology.get::<QuiclyPreset>().expect("a quicly preset")
}

fn run(s: &Scenario) -> Results {
    Simulation::new(s.to_sim_config()).unwrap().run()
}

const CUBIC: &str = "[[flows]]\ncontroller = \"cubic\"\n";

/// The quicly profiles are the first seventeen of the list, and each resolves to the
/// capacity `rate/8 × buffer` truncated to bytes (`net_bottleneck_init`), and to a full flight
/// N = (BDP + capacity) in 1280-byte packets from the profile's own rate, RTT and buffer (to
/// 1e-9 relative; the profiles' own test ties those to the reference table's packet counts).
#[test]
fn quicly_profiles_resolve_to_their_capacity_and_flight() {
    let quicly: Vec<&str> = PROFILES
        .iter()
        .filter(|p| p.source == profiles::QUICLY)
        .map(|p| p.name)
        .collect();
    assert_eq!(quicly, qp::PROFILES);
    // N = (BDP at rate × rtt + capacity) / 1280 from the profile's own numbers; that those
    // reproduce the reference table's packet counts is `profiles`' own test.
    for name in qp::PROFILES {
        let s = scenario(&format!("profile = \"{name}\""), CUBIC, "1s").unwrap();
        let p = preset(&s);
        let prof = profiles::find(name).unwrap();
        let cclab_lab::units::BufferSpec::Time(b) = prof.buffer else {
            panic!("{name}: a quicly profile's buffer is a time")
        };
        // Exact integer arithmetic, independent of the preset's: floor(rate·ns / 8e9).
        let want = u128::from(prof.rate_bps) * u128::from(b.as_nanos()) / 8_000_000_000;
        assert_eq!(u128::from(p.queue.capacity_bytes), want, "{name}");
        assert_eq!(p.rtt, prof.rtt, "{name}");
        #[expect(clippy::cast_precision_loss, reason = "exact small values")]
        let n_want = (prof.rate_bps as f64 / 8.0 * prof.rtt.as_secs_f64() + want as f64) / 1280.0;
        let n = p.full_flight();
        assert!(
            (n - n_want).abs() <= 1e-9 * n_want,
            "{name}: N = {n}, want {n_want}"
        );
    }
    // A Pantheon profile is not a quicly profile: a located error listing the valid ones.
    let e = scenario("profile = \"pantheon-1\"", CUBIC, "1s").unwrap_err();
    assert!(e.contains("topology.profile") && e.contains("DSL"), "{e}");
}

/// ACKs return without delay and the data path holds the whole RTT: a ping's RTT is the
/// profile's RTT plus the serialisation of the ping at the bottleneck only (64 bytes at
/// 30 Mbit/s = 17.1 µs), to the nanosecond; a probe with 10 ms of access delay sees 20 ms more
/// (flows and probes may have their own RTTs). Every ping of the idle path (the one flow
/// starts after the last ping returns) sees the same RTT. Ideal host timing: the timing
/// model's latencies would add microseconds to each ping.
#[test]
fn base_rtt_is_the_profile_rtt_plus_serialisation_and_per_flow_rtts_differ() {
    let s = scenario(
        "profile = \"DSL\"",
        "[[flows]]\ncontroller = \"cubic\"\nstart = \"1.99s\"\n\
         [[probes]]\ninterval = \"100ms\"\n[[probes]]\ninterval = \"100ms\"\naccess_delay = \"10ms\"\n\
         [timing]\nmodel = \"ideal\"\n",
        "2s",
    )
    .unwrap();
    let r = run(&s);
    let size = s.to_sim_config().probes[0].size;
    assert_eq!(size, 64, "the ping's wire size");
    let ser = Dur::serialization(u64::from(size), 30_000_000).as_nanos() as f64 / 1e6;
    for (probe, rtt_ms) in r.probes.iter().zip([30.0, 50.0]) {
        assert!(
            probe.rtt_ms.len() >= 15,
            "{}: {} pings",
            probe.name,
            probe.rtt_ms.len()
        );
        for x in &probe.rtt_ms {
            // The recorded RTT is in ms from nanosecond times: 1e-9 of slack.
            assert!((x - (rtt_ms + ser)).abs() < 1e-6, "{}: {x} ms", probe.name);
        }
    }
    // The flows' declared base RTTs follow the same rule.
    let s = scenario(
        "rtt = \"40ms\"\nrate = \"10Mbit\"",
        "[[flows]]\ncontroller = \"cubic\"\n[[flows]]\ncontroller = \"reno\"\naccess_delay = \"5ms\"\n",
        "1s",
    )
    .unwrap();
    let cfg = s.to_sim_config();
    let delay = |name: &str| cfg.links.iter().find(|l| l.name == name).unwrap().delay;
    assert_eq!(delay("s0->left"), Dur::from_millis(40));
    assert_eq!(delay("s1->left"), Dur::from_millis(50));
    for l in &cfg.links {
        if !l.name.ends_with("->left") || l.name == "bottleneck_reverse" {
            assert_eq!(l.delay, Dur::ZERO, "{}", l.name);
        }
        if l.name != "bottleneck" {
            assert_eq!(l.rate_bps, None, "{}", l.name);
        }
    }
}

/// The preset's queue is quicly's: the capacity and admission rule as configured (default:
/// by the flows' largest packet, 1500 wire bytes for TCP's 1448-byte MSS), CoDel when asked,
/// loss per RTT with N from the path, and errors located at the key.
#[test]
fn queue_and_loss_keys_resolve() {
    let s = scenario("profile = \"DSL\"", CUBIC, "1s").unwrap();
    let p = preset(&s);
    assert_eq!(p.queue.capacity_bytes, 187_500);
    assert_eq!(p.queue.admission, Admission::Largest(1500));
    assert!(p.queue.codel.is_none());
    assert_eq!(p.loss, LossConfig::None);
    let s = scenario(
        "profile = \"DSL\"\nadmission = \"arrival\"\naqm = \"codel\"\nloss_per_rtt = 0.1",
        CUBIC,
        "1s",
    )
    .unwrap();
    let p = preset(&s);
    assert_eq!(p.queue.admission, Admission::Arrival);
    let c = p.queue.codel.as_ref().unwrap();
    assert_eq!(
        (c.target, c.interval, c.standing_bytes, c.ecn),
        (Dur::from_millis(5), Dur::from_millis(100), 1514, false)
    );
    let LossConfig::PerRtt { p_flight, flight } = p.loss else {
        panic!("per-RTT loss expected")
    };
    assert_eq!(p_flight, 0.1);
    assert!((flight - 234.375).abs() < 1e-9, "{flight}");
    let cfg = s.to_sim_config();
    assert!(matches!(
        &cfg.links[0].queue,
        QueueConfig::Aqm(AqmConfig::Quicly(q)) if q.capacity_bytes == 187_500
    ));
    assert_eq!(cfg.links[0].delay, Dur::ZERO);
    for (topology, key) in [
        (
            "profile = \"DSL\"\nloss = 0.01\nloss_per_rtt = 0.05",
            "topology.loss_per_rtt",
        ),
        ("profile = \"DSL\"\necn = true", "topology.ecn"),
        ("profile = \"DSL\"\naqm = \"red\"", "topology.aqm"),
        (
            "profile = \"DSL\"\nadmission = \"biggest\"",
            "topology.admission",
        ),
        ("rate = \"10Mbit\"", "topology.rtt"),
        ("profile = \"DSL\"\nbuffer = \"100B\"", "topology.buffer"),
    ] {
        let e = scenario(topology, CUBIC, "1s").unwrap_err();
        assert!(e.contains(key), "{topology}: {e}");
    }
}

/// Loss sits after the bottleneck, so a lost packet has used its link time: a UDP source at
/// 1.5 × the 10 Mbit/s rate with 30 % loss delivers 0.7 × the rate (the link sends at its
/// rate and loses 30 % of it; the one TCP flow starts after the UDP source stops), where loss before the queue would deliver the whole rate
/// (1.05 × rate offered after the loss). Binomial noise on ~8 300 packets: σ ≈ 0.5 % of the
/// rate, so 2 % of slack.
#[test]
fn loss_after_the_bottleneck_uses_link_time() {
    let s = scenario(
        "rate = \"10Mbit\"\nrtt = \"20ms\"\nbuffer = \"50ms\"\nloss = 0.3",
        "[[flows]]\ncontroller = \"cubic\"\nstart = \"9.95s\"\n\
         [[udp]]\nkind = \"cbr\"\nrate = \"15Mbit\"\nsize = 1500\nstop = \"9.9s\"\n",
        "10s",
    )
    .unwrap();
    let r = run(&s);
    let u = &r.udp[0].summary;
    let ratio = u.goodput_mbps / 10.0;
    assert!((ratio - 0.7).abs() < 0.02, "delivered {ratio} of the rate");
    let q = &r.queues[0].summary;
    assert!(q.link_losses > 0 && q.drops > 0, "{q:?}");
}

/// CoDel keeps the standing queue near its target where the tail-drop FIFO fills its buffer:
/// one CUBIC flow on DSL (50 ms of buffer), median sojourn below 10 ms (target 5 ms; CoDel's
/// sawtooth lets it exceed the target between drops) against more than 10 ms for tail drop;
/// with ECN off nothing is marked.
#[test]
fn codel_holds_the_queue_near_its_target() {
    let fifo = run(&scenario("profile = \"DSL\"", CUBIC, "20s").unwrap());
    let codel = run(&scenario("profile = \"DSL\"\naqm = \"codel\"", CUBIC, "20s").unwrap());
    let f = &fifo.queues[0].summary;
    let c = &codel.queues[0].summary;
    assert!(f.delay_p50_ms.unwrap() > 10.0, "{f:?}");
    assert!(c.delay_p50_ms.unwrap() < 10.0, "{c:?}");
    assert!(c.aqm_drops > 0 && c.ce_marks == 0, "{c:?}");
}
