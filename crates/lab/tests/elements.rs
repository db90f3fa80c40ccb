//! `[[elements]]` in a scenario file: each entry puts a declared network element on a node of
//! the preset, in file order, and reaches the simulator; mistakes are located errors.

use cclab_lab::{Overrides, parse};
use cclab_sim::Simulation;
use cclab_sim::net::ElementSpec;

const BASE: &str = "name = \"e\"\nduration = \"3s\"\n[topology]\npreset = \"dumbbell\"\n\
                    rate = \"20Mbit\"\ndelay = \"10ms\"\n[[flows]]\ncontroller = \"cubic\"\n\
                    [[probes]]\ninterval = \"100ms\"\n";

fn with(elements: &str) -> Result<cclab_lab::Scenario, String> {
    parse(
        &format!("{BASE}{elements}"),
        "e.toml",
        &Overrides::default(),
    )
    .map_err(|e| e.to_string())
}

/// A delay on the right router adds twice its delay to every ping RTT (request and reply both
/// cross it), and the elements reach the simulator's configuration in file order.
#[test]
fn elements_reach_the_simulator_in_order() {
    let sc = with(
        "[[elements]]\nnode = \"right\"\nkind = \"delay\"\ndelay = \"5ms\"\n\
         [[elements]]\nnode = \"left\"\nkind = \"jitter\"\nbase = \"1ms\"\nspread = \"2ms\"\n\
         reorder = false\n",
    )
    .unwrap();
    let cfg = sc.to_sim_config();
    let specs: Vec<&ElementSpec> = cfg.elements.iter().map(|e| &e.spec).collect();
    assert_eq!(specs.len(), 2);
    assert_eq!(
        *specs[0],
        ElementSpec::Delay {
            delay: cclab_sim::Dur::from_millis(5)
        }
    );
    assert!(matches!(
        specs[1],
        ElementSpec::Jitter { reorder: false, .. }
    ));
    assert_eq!(cfg.nodes[cfg.elements[0].node.0 as usize].name, "right");
    let plain = Simulation::new(with("").unwrap().to_sim_config())
        .unwrap()
        .run();
    let delayed = Simulation::new(
        with("[[elements]]\nnode = \"right\"\nkind = \"delay\"\ndelay = \"5ms\"\n")
            .unwrap()
            .to_sim_config(),
    )
    .unwrap()
    .run();
    let (a, b) = (&plain.probes[0].rtt_ms, &delayed.probes[0].rtt_ms);
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(
        (min(b) - min(a) - 10.0).abs() < 1e-6,
        "{} -> {}",
        min(a),
        min(b)
    );
}

/// Errors name the file, the line, the entry and the key, and suggest the valid values.
#[test]
fn element_mistakes_are_located_errors() {
    let e = with("[[elements]]\nnode = \"rigth\"\nkind = \"delay\"\n").unwrap_err();
    assert!(
        e.contains("e.toml:12:") && e.contains("elements[0].node") && e.contains("`right`"),
        "{e}"
    );
    let e = with("[[elements]]\nnode = \"right\"\nkind = \"jiter\"\n").unwrap_err();
    assert!(
        e.contains("elements[0].kind") && e.contains("did you mean `jitter`"),
        "{e}"
    );
    let e = with("[[elements]]\nnode = \"right\"\nkind = \"loss\"\np = 2\n").unwrap_err();
    assert!(e.contains("elements[0].p"), "{e}");
    let e = with("[[elements]]\nnode = \"right\"\nkind = \"loss\"\ndelay = \"1ms\"\n").unwrap_err();
    assert!(
        e.contains("elements[0].delay") && e.contains("delay"),
        "{e}"
    );
    let e = with("[[elements]]\nkind = \"pass\"\n").unwrap_err();
    assert!(
        e.contains("elements[0].node") && e.contains("needs `node`"),
        "{e}"
    );
}

/// The README's example of changing conditions reaches the simulator as written: a held
/// outage on the link from `left` into `right`, Gilbert–Elliott loss on the data of flow 0 (by
/// index, and the same by name), and a normal jitter in order; the run completes and is
/// deterministic.
#[test]
fn changing_conditions_reach_the_simulator() {
    use cclab_sim::net::{Distribution, JitterDist, OutageMode, PacketKind};
    use cclab_sim::{FlowId, LossConfig, Time};
    let text = "[[elements]]\nnode = \"right\"\nkind = \"outage\"\nfrom = \"left\"\n\
                intervals = [[\"1s\", \"300ms\"]]\nmode = \"hold\"\n\
                [[elements]]\nnode = \"right\"\nkind = \"loss\"\nmodel = \"gilbert_elliott\"\n\
                p = 0.01\nr = 0.3\nflows = [0]\npackets = \"data\"\n\
                [[elements]]\nnode = \"left\"\nkind = \"jitter\"\ndelay = \"20ms\"\n\
                jitter = \"5ms\"\ndistribution = \"normal\"\nreorder = false\n";
    let cfg = with(text).unwrap().to_sim_config();
    let e = &cfg.elements;
    let left = cfg.nodes.iter().position(|n| n.name == "left").unwrap();
    assert_eq!(e[0].select.from.map(|n| n.0 as usize), Some(left));
    assert_eq!(
        e[0].spec,
        ElementSpec::Outage {
            intervals: vec![(Time(1_000_000_000), cclab_sim::Dur::from_millis(300))],
            mode: OutageMode::Hold,
        }
    );
    assert_eq!(
        e[1].spec,
        ElementSpec::Loss {
            model: LossConfig::GilbertElliott {
                p: 0.01,
                r: 0.3,
                bad_loss: 1.0,
                good_loss: 0.0,
            }
        }
    );
    assert_eq!(e[1].select.flows, vec![FlowId(0)]);
    assert_eq!(e[1].select.packets, PacketKind::Data);
    assert_eq!(
        e[2].spec,
        ElementSpec::Jitter {
            dist: JitterDist::Netem {
                distribution: Distribution::Normal,
                mu: cclab_sim::Dur::from_millis(20),
                sigma: cclab_sim::Dur::from_millis(5),
            },
            correlation: 0.0,
            reorder: false,
        }
    );
    let by_name = with(&text.replace(
        "flows = [0]",
        &format!("flows = [\"{}\"]", cfg.flows[0].name),
    ))
    .unwrap()
    .to_sim_config();
    assert_eq!(by_name.elements[1].select, e[1].select);
    let a = Simulation::new(cfg.clone()).unwrap().run();
    assert!(a.flows[0].summary.bytes_delivered > 100_000);
    assert_eq!(a, Simulation::new(cfg).unwrap().run());
}

/// Invalid parameters of the new elements and of the selector keys are located errors that say
/// what is wrong and what is valid.
#[test]
fn changing_conditions_mistakes_are_located_errors() {
    let el = |body: &str| with(&format!("[[elements]]\nnode = \"right\"\n{body}")).unwrap_err();
    let cases = [
        (
            "kind = \"jitter\"\nbase = \"1ms\"\ndistribution = \"pareto\"\n",
            "elements[0].distribution",
            "`delay` (μ) and `jitter` (σ)",
        ),
        (
            "kind = \"jitter\"\nbase = \"1ms\"\njitter = \"1ms\"\n",
            "elements[0].base",
            "not both",
        ),
        (
            "kind = \"jitter\"\ndelay = \"1ms\"\ncorrelation = 1.5\n",
            "elements[0].correlation",
            "[0, 1]",
        ),
        (
            "kind = \"loss\"\nr = 0.5\n",
            "elements[0].r",
            "belongs to model gilbert_elliott",
        ),
        (
            "kind = \"loss\"\nmodel = \"four_state\"\np13 = 0.6\np14 = 0.5\n",
            "elements[0].p14",
            "p13 + p14 exceeds 1",
        ),
        (
            "kind = \"loss\"\np13 = 0.1\n",
            "elements[0].p13",
            "belongs to model four_state",
        ),
        (
            "kind = \"loss\"\nmodel = \"per_rtt\"\np_flight = 1\nflight = 10\n",
            "elements[0].p_flight",
            "[0, 1)",
        ),
        (
            "kind = \"loss\"\nmodel = \"gilbert\"\n",
            "elements[0].model",
            "gilbert_elliott",
        ),
        (
            "kind = \"outage\"\nintervals = [[\"1s\", \"1s\"], [\"1.5s\", \"1s\"]]\n",
            "elements[0].intervals",
            "starts before",
        ),
        (
            "kind = \"outage\"\nintervals = [[\"1s\"]]\n",
            "elements[0].intervals[0]",
            "[time, duration]",
        ),
        (
            "kind = \"delay_schedule\"\nsteps = [[\"2s\", \"1ms\"], [\"1s\", \"2ms\"]]\n",
            "elements[0].steps",
            "increase",
        ),
        (
            "kind = \"delay_schedule\"\nwave = \"sine\"\nperiod = 0\n",
            "elements[0].period",
            "positive",
        ),
        (
            "kind = \"delay_schedule\"\namplitude = \"1ms\"\n",
            "elements[0].amplitude",
            "needs `wave",
        ),
        (
            "kind = \"pass\"\nfrom = \"right\"\n",
            "elements[0].from",
            "its neighbours are: left",
        ),
        (
            "kind = \"pass\"\npackets = \"ack\"\n",
            "elements[0].packets",
            "did you mean `acks`",
        ),
        (
            "kind = \"pass\"\nflows = [\"nobody\"]\n",
            "elements[0].flows[0]",
            "unknown flow",
        ),
        (
            "kind = \"pass\"\nflows = [3]\n",
            "elements[0].flows[0]",
            "index in 0..1",
        ),
    ];
    for (body, field, says) in cases {
        let e = el(body);
        assert!(
            e.contains("e.toml:") && e.contains(field) && e.contains(says),
            "{body}: {e}"
        );
    }
}
