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
