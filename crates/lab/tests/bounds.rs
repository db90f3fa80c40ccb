//! Bounds on what a scenario may ask of the simulator per packet or per run, beyond the README's
//! counting bounds: the elements on one node (a profile's included), the duplicators of a
//! scenario and fq_codel's flow buckets.
//! Each is a located error at its bound and a working run below it.

use cclab_lab::scenario::elements::{MAX_DUPLICATORS, MAX_ELEMENTS_PER_NODE};
use cclab_lab::{Overrides, parse};
use cclab_sim::Simulation;

const BASE: &str = "name = \"b\"\nduration = \"100ms\"\n[topology]\npreset = \"dumbbell\"\n\
                    rate = \"20Mbit\"\ndelay = \"10ms\"\n";

fn scenario(topology: &str, rest: &str) -> Result<cclab_lab::Scenario, String> {
    parse(
        &format!("{BASE}{topology}[[flows]]\ncontroller = \"cubic\"\n{rest}"),
        "b.toml",
        &Overrides::default(),
    )
    .map_err(|e| e.to_string())
}

fn passes(node: &str, n: usize) -> String {
    format!("[[elements]]\nnode = \"{node}\"\nkind = \"pass\"\n").repeat(n)
}

/// A node holds at most `MAX_ELEMENTS_PER_NODE` elements: at the bound the scenario runs, one
/// more is an error at the extra entry's `node` (before, 10,000 overflowed the stack in `run`
/// and `check` accepted them); a profile's elements count too, and other nodes have their own.
#[test]
fn elements_per_node_are_bounded() {
    assert_eq!(MAX_ELEMENTS_PER_NODE, 1_000);
    let sc = scenario("", &passes("right", 1_000)).unwrap();
    let r = Simulation::new(sc.to_sim_config()).unwrap().run();
    assert!(r.flows[0].summary.bytes_delivered > 0);
    let e = scenario(
        "",
        &format!("{}{}", passes("left", 1_000), passes("right", 1_001)),
    )
    .expect_err("1001 on `right`");
    // Entry 2000 (0-based) starts on line 6009 of the file: 9 lines before the elements, 3 a
    // table.
    assert!(
        e.starts_with("b.toml:6010:8: elements[2000].node: ")
            && e.contains("`right`")
            && e.contains("1000"),
        "{e}"
    );
    // pantheon-7 puts a policer on `left`: 999 of the file's fit, 1000 do not.
    let profile = "profile = \"pantheon-7\"\n";
    let short = |t: &str| t.replace("rate = \"20Mbit\"\ndelay = \"10ms\"\n", "");
    let p = |rest: &str| {
        parse(
            &short(&format!(
                "{BASE}{profile}[[flows]]\ncontroller = \"cubic\"\n{rest}"
            )),
            "b.toml",
            &Overrides::default(),
        )
        .map_err(|e| e.to_string())
    };
    p(&passes("left", 999)).unwrap();
    let e = p(&passes("left", 1_000)).expect_err("1000 with the profile's");
    assert!(
        e.contains("elements[999].node") && e.contains("profile"),
        "{e}"
    );
}

/// fq_codel has at most Linux's 65,536 buckets: more is an error at `topology.qdisc` naming
/// the bound (before, `flows = 4294967295` passed `check` and aborted the run allocating
/// 446 GB); 65,536 buckets cost no state until packets reach them.
#[test]
fn fq_codel_flows_are_bounded() {
    for flows in ["65537", "1000000", "4294967295"] {
        let e = scenario(
            &format!("qdisc = {{ kind = \"fq_codel\", flows = {flows} }}\n"),
            "",
        )
        .expect_err(flows);
        assert!(
            e.starts_with("b.toml:7:") && e.contains("flows") && e.contains("65536"),
            "{e}"
        );
    }
    let sc = scenario("qdisc = { kind = \"fq_codel\", flows = 65536 }\n", "").unwrap();
    let r = Simulation::new(sc.to_sim_config()).unwrap().run();
    assert!(r.flows[0].summary.bytes_delivered > 0);
}

/// A scenario has at most `MAX_DUPLICATORS` duplicators: four that copy every packet run (data
/// and ACKs copied 16 times each), a fifth is an error at its `kind` (before, forty made a
/// 100 ms run never end: 2^40 copies of a segment).
#[test]
fn duplicators_are_bounded() {
    assert_eq!(MAX_DUPLICATORS, 4);
    let dup =
        |node: &str| format!("[[elements]]\nnode = \"{node}\"\nkind = \"duplicate\"\np = 1.0\n");
    let four = format!("{}{}", dup("right").repeat(3), dup("left"));
    let sc = scenario("", &four).unwrap();
    let r = Simulation::new(sc.to_sim_config()).unwrap().run();
    assert!(r.flows[0].summary.bytes_delivered > 0);
    let e = scenario("", &format!("{four}{}", dup("left"))).expect_err("five");
    assert!(
        e.starts_with("b.toml:27:8: elements[4].kind: ") && e.contains("at most 4"),
        "{e}"
    );
}
