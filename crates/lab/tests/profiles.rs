//! Named profiles that bring more than a rate, a delay and a buffer (Pantheon's calibrated
//! scenarios: traces, loss, policers, ACK paths), and the `per_rtt` loss whose flight N is
//! derived from the path: each resolves, runs, and keeps to what its parameters allow.

use cclab_lab::catalog::{Target, render};
use cclab_lab::scenario::profiles::{PANTHEON, PROFILES, Profile};
use cclab_lab::{Overrides, Scenario, parse};
use cclab_sim::net::ElementSpec;
use cclab_sim::net::loss::per_rtt_probability;
use cclab_sim::{LossConfig, Results, Simulation};

/// Bytes one mahimahi delivery opportunity carries (`mm-link(1)`).
const OPPORTUNITY_BYTES: f64 = 1500.0;

fn scenario(
    topology: &str,
    flows: &str,
    duration: &str,
    elements: &str,
) -> Result<Scenario, String> {
    parse(
        &format!(
            "name = \"p\"\nduration = \"{duration}\"\n[topology]\npreset = \"dumbbell\"\n\
             {topology}\n{flows}\n{elements}"
        ),
        "p.toml",
        &Overrides::default(),
    )
    .map_err(|e| e.to_string())
}

const CUBIC: &str = "[[flows]]\ncontroller = \"cubic\"\n";

fn run(s: &Scenario) -> Results {
    Simulation::new(s.to_sim_config()).unwrap().run()
}

fn pantheon() -> impl Iterator<Item = &'static Profile> {
    PROFILES.iter().filter(|p| p.source == PANTHEON)
}

/// Opportunities a trace offers in its first `ms` milliseconds (no loop within `ms`).
fn opportunities_until(text: &str, ms: u64) -> usize {
    text.lines()
        .filter(|l| l.trim().parse::<u64>().is_ok_and(|t| t <= ms))
        .count()
}

/// Every Pantheon profile resolves and runs 2 s of a greedy CUBIC flow, and the bottleneck
/// never delivers more than the profile allows: a constant link at most its rate (the link
/// serialises each packet in `wire·8/rate`, rounded to the nanosecond: 1e-5 of a 1500-byte
/// packet at 100 Mbit/s at most, so 1e-4 of slack), a trace link at most 1500 bytes per
/// opportunity up to the end, a policed line at most a full bucket plus the token rate × time
/// (the token-bucket bound, tc-police(8)).
#[test]
fn every_pantheon_profile_runs_within_its_rate() {
    assert_eq!(pantheon().count(), 18);
    for p in pantheon() {
        let s = scenario(&format!("profile = \"{}\"", p.name), CUBIC, "2s", "")
            .unwrap_or_else(|e| panic!("{}: {e}", p.name));
        let r = run(&s);
        let q = &r.queues[0];
        assert_eq!(q.name, "bottleneck");
        let bytes = q.summary.throughput_bps * r.duration_s / 8.0;
        #[expect(clippy::cast_precision_loss, reason = "rates below 2^53")]
        let rate = p.rate_bps as f64;
        let bound = if let Some(t) = p.extras.trace {
            #[expect(clippy::cast_precision_loss, reason = "a few hundred opportunities")]
            let n = opportunities_until(&t.text(), 2_000) as f64;
            n * OPPORTUNITY_BYTES
        } else if let Some(burst) = p.extras.policer_burst {
            #[expect(clippy::cast_precision_loss, reason = "a bucket below 2^53 bytes")]
            let burst = burst as f64;
            rate / 8.0 * r.duration_s + burst
        } else {
            rate / 8.0 * r.duration_s * (1.0 + 1e-4)
        };
        assert!(
            bytes <= bound,
            "{}: {bytes} bytes through the bottleneck, at most {bound}",
            p.name
        );
        assert!(bytes > 0.0, "{}: nothing delivered", p.name);
        let f = &r.flows[0].summary;
        if p.extras.loss > 0.0 {
            assert!(q.summary.link_losses > 0, "{}: the profile's loss", p.name);
        }
        assert!(f.bytes_delivered > 0, "{}", p.name);
    }
}

/// A greedy CUBIC flow through `pantheon-7` (a 12 Mbit/s policer, 20 ms RTT, bucket of one BDP
/// = 30 000 bytes) for 30 s. Upper bound: the token bucket passes at most a full bucket plus
/// 12 Mbit/s × 30 s (tc-police(8)), of which payload is mss/wire = 1448/1500. Lower bound: the
/// line has no queue, so the RTT stays the base RTT and the bucket empties (the only way to
/// lose a packet) only while the window exceeds the BDP; CUBIC then keeps β = 717/1024 of it
/// (Linux `beta`, RFC 9438 §4.6), so after a loss the window, hence the rate, stays at or above
/// 0.7 of the BDP's, barring a timeout (the run has none); slow start's ramp is a few RTTs of
/// 30 s. So goodput ≥ 0.7 of the payload rate.
#[test]
fn a_greedy_flow_gets_the_policer_rate() {
    let s = scenario("profile = \"pantheon-7\"", CUBIC, "30s", "").unwrap();
    let r = run(&s);
    let f = &r.flows[0].summary;
    assert_eq!(f.rto_count, 0, "the bound assumes no timeout");
    let goodput = f.goodput_bps;
    let payload = 12e6 * 1448.0 / 1500.0;
    let upper = payload + 30_000.0 * 8.0 / 30.0;
    assert!(
        goodput <= upper && goodput >= 717.0 / 1024.0 * payload,
        "goodput {goodput} bit/s, policer payload rate {payload}"
    );
    let policer = s.to_sim_config();
    assert!(
        policer.elements.iter().any(|e| matches!(
            e.spec,
            ElementSpec::Policer {
                rate_bps: 12_000_000,
                burst_bytes: 30_000
            }
        )),
        "the profile places its policer"
    );
    let d = s.describe();
    assert!(
        d.contains("element on left (profile): Policer"),
        "`cclab check` shows it: {d}"
    );
}

/// What the file gives wins over the profile: its own `rate` replaces the trace, its `loss`
/// the profile's loss.
#[test]
fn keys_given_override_the_profile_extras() {
    let s = scenario("profile = \"pantheon-1\"", CUBIC, "1s", "").unwrap();
    let cfg = s.to_sim_config();
    assert!(cfg.links[0].rate_shape.is_some());
    assert_eq!(cfg.links[0].loss, LossConfig::Bernoulli { p: 0.0477 });
    let s = scenario(
        "profile = \"pantheon-1\"\nrate = \"1Mbit\"\nloss = 0",
        CUBIC,
        "1s",
        "",
    )
    .unwrap();
    let cfg = s.to_sim_config();
    assert!(cfg.links[0].rate_shape.is_none());
    assert_eq!(cfg.links[0].rate_bps, Some(1_000_000));
    assert_eq!(cfg.links[0].loss, LossConfig::None);
}

/// A misspelt profile is the usual located error with a suggestion.
#[test]
fn a_bad_profile_name_suggests_the_closest() {
    let e = scenario("profile = \"pantheon-19\"", CUBIC, "1s", "").unwrap_err();
    assert!(e.contains("p.toml:5:"), "{e}");
    assert!(e.contains("topology.profile"), "{e}");
    assert!(e.contains("unknown profile `pantheon-19`"), "{e}");
    assert!(e.contains("did you mean `pantheon-1"), "{e}");
}

/// `cclab list profiles` prints each profile with its doc line.
#[test]
fn list_profiles_prints_the_docs() {
    let out = render(Target::Profiles, false, false);
    for p in PROFILES {
        let line = out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(p.name))
            .unwrap_or_else(|| panic!("no line for {}", p.name));
        assert!(line.ends_with(p.doc), "{line}");
    }
}

/// `per_rtt` without `flight` on the `LTE` profile (30 Mbit/s, 60 ms RTT, 120 ms buffer) with
/// 1280-byte packets (mss 1228 + 52 bytes of headers), the packet size of quicly's simulator:
/// N = 225 000 / 1280 + 450 000 / 1280 = 175.78125 + 351.5625 = 527.34375 packets (the
/// published table: 175.8 + 351.6), and the per-packet probability is exactly
/// 1 − (1 − P)^(1/N).
#[test]
fn per_rtt_takes_its_flight_from_the_path() {
    let s = scenario(
        "profile = \"LTE\"",
        "[[flows]]\ncontroller = \"cubic\"\nmss = 1228\n",
        "1s",
        "[[elements]]\nnode = \"right\"\nkind = \"loss\"\nmodel = \"per_rtt\"\np_flight = 0.1\n",
    )
    .unwrap();
    let cfg = s.to_sim_config();
    let ElementSpec::Loss {
        model: LossConfig::PerRtt { p_flight, flight },
    } = cfg.elements[0].spec
    else {
        panic!("{:?}", cfg.elements[0].spec)
    };
    let n = 225_000.0 / 1280.0 + 450_000.0 / 1280.0;
    assert_eq!(n, 527.343_75);
    assert_eq!(flight, n);
    assert!((flight - (175.8 + 351.6)).abs() <= 0.1);
    assert_eq!(
        per_rtt_probability(p_flight, flight),
        1.0 - (1.0 - 0.1_f64).powf(1.0 / 527.343_75)
    );
    // A `flight` in the file wins.
    let s = scenario(
        "profile = \"LTE\"",
        CUBIC,
        "1s",
        "[[elements]]\nnode = \"right\"\nkind = \"loss\"\nmodel = \"per_rtt\"\np_flight = 0.1\n\
         flight = 100\n",
    )
    .unwrap();
    assert!(matches!(
        s.to_sim_config().elements[0].spec,
        ElementSpec::Loss {
            model: LossConfig::PerRtt { flight: 100.0, .. }
        }
    ));
}

/// A bottleneck with an AQM has no fixed buffer: `per_rtt` then needs `flight`, and the error
/// says so at the element.
#[test]
fn per_rtt_without_a_fixed_buffer_asks_for_flight() {
    let e = scenario(
        "rate = \"10Mbit\"\ndelay = \"10ms\"\nqdisc = \"codel\"",
        CUBIC,
        "1s",
        "[[elements]]\nnode = \"right\"\nkind = \"loss\"\nmodel = \"per_rtt\"\np_flight = 0.1\n",
    )
    .unwrap_err();
    assert!(e.contains("elements[0].flight"), "{e}");
    assert!(
        e.contains("qdisc `codel`") && e.contains("give `flight`"),
        "{e}"
    );
}
