//! `reroute`, `ack_thin` and `ack_aggregate` in scenario files: their keys reach the
//! simulator's element, and invalid parameters are located errors naming the key.

use cclab_lab::{Overrides, parse};
use cclab_sim::net::{ElementSpec, PathSpec, SwitchMode, Switching};
use cclab_sim::{Dur, QueueLimit, Simulation, Time};

const BASE: &str = "name = \"e\"\nduration = \"3s\"\n[topology]\npreset = \"dumbbell\"\n\
                    rate = \"20Mbit\"\ndelay = \"10ms\"\n[[flows]]\ncontroller = \"cubic\"\n";

fn with(element: &str) -> Result<ElementSpec, String> {
    let sc = parse(
        &format!("{BASE}[[elements]]\nnode = \"right\"\n{element}"),
        "e.toml",
        &Overrides::default(),
    )
    .map_err(|e| e.to_string())?;
    let cfg = sc.to_sim_config();
    // Whatever parses, runs.
    assert_eq!(Simulation::new(cfg.clone()).unwrap().run().flows.len(), 1);
    Ok(cfg.elements[0].spec.clone())
}

/// Delays, rates ("none" for a delay line), a buffer resolved at each path's rate, and either
/// a period with an offset or a schedule of [time, path] pairs.
#[test]
fn reroute_keys() {
    let spec = with(
        "kind = \"reroute\"\ndelays = [\"40ms\", \"10ms\"]\nrates = [\"10Mbit\", \"none\"]\n\
         buffer = \"100p\"\nperiod = \"5s\"\noffset = \"1s\"\n",
    )
    .unwrap();
    assert_eq!(
        spec,
        ElementSpec::Reroute {
            paths: vec![
                PathSpec {
                    delay: Dur::from_millis(40),
                    rate_bps: Some(10_000_000),
                    limit: QueueLimit::Packets(100),
                },
                PathSpec {
                    delay: Dur::from_millis(10),
                    rate_bps: None,
                    limit: QueueLimit::Packets(1000),
                },
            ],
            switching: Switching::Period {
                period: Dur::from_secs(5),
                offset: Dur::from_secs(1),
            },
            mode: SwitchMode::Drain,
        }
    );
    // The README's example.
    let spec = with(
        "kind = \"reroute\"\ndelays = [\"40ms\", \"10ms\"]\nrates = [\"none\", \"10Mbit\"]\n\
         buffer = \"100p\"\nperiod = \"5s\"\n",
    )
    .unwrap();
    assert!(
        matches!(spec, ElementSpec::Reroute { ref paths, .. } if paths[1].rate_bps == Some(10_000_000))
    );
    let spec = with(
        "kind = \"reroute\"\ndelays = [\"40ms\", 0.01, \"20ms\"]\n\
         schedule = [[\"1s\", 1], [\"2s\", 2], [2.5, 0]]\n",
    )
    .unwrap();
    let ElementSpec::Reroute {
        switching, paths, ..
    } = spec
    else {
        panic!("{spec:?}")
    };
    assert_eq!(paths.len(), 3);
    assert_eq!(
        switching,
        Switching::Schedule(vec![
            (Time::from_secs_f64(1.0), 1),
            (Time::from_secs_f64(2.0), 2),
            (Time::from_secs_f64(2.5), 0)
        ])
    );
}

/// `switch` names what a switch does (default `drain`); `blackout` gives the gap of
/// `switch = "blackout"`.
#[test]
fn reroute_switch_modes() {
    let mode = |keys: &str| {
        let spec = with(&format!(
            "kind = \"reroute\"\ndelays = [\"40ms\", \"10ms\"]\nperiod = \"1s\"\n{keys}"
        ))
        .unwrap();
        let ElementSpec::Reroute { mode, .. } = spec else {
            panic!("{spec:?}")
        };
        mode
    };
    assert_eq!(mode(""), SwitchMode::Drain);
    assert_eq!(mode("switch = \"drain\"\n"), SwitchMode::Drain);
    assert_eq!(mode("switch = \"drop_queue\"\n"), SwitchMode::DropQueue);
    assert_eq!(mode("switch = \"drop_path\"\n"), SwitchMode::DropPath);
    assert_eq!(
        mode("switch = \"blackout\"\nblackout = \"50ms\"\n"),
        SwitchMode::Blackout(Dur::from_millis(50))
    );
    // Mistakes name the file, the line and the key (and the valid values or the bound).
    let cases = [
        (
            "delays = [\"40ms\", \"10ms\"]\nperiod = \"1s\"\nswitch = \"drop_old\"\n",
            "elements[0].switch",
            "drain, drop_queue, drop_path, blackout",
        ),
        (
            "delays = [\"40ms\", \"10ms\"]\nperiod = \"1s\"\nswitch = \"blackout\"\n",
            "elements[0].switch",
            "needs `blackout`",
        ),
        (
            "delays = [\"40ms\", \"10ms\"]\nperiod = \"1s\"\nblackout = \"50ms\"\n",
            "elements[0].blackout",
            "only with switch = \"blackout\"",
        ),
        (
            "delays = [\"40ms\", \"10ms\"]\nperiod = \"1s\"\nswitch = \"blackout\"\n\
             blackout = \"1s\"\n",
            "elements[0].blackout",
            "shorter than the 1 s between switches",
        ),
        (
            "delays = [\"40ms\", \"10ms\"]\nperiod = \"1s\"\nswitch = \"blackout\"\n\
             blackout = 0\n",
            "elements[0].blackout",
            "longer than 0",
        ),
    ];
    for (keys, at, what) in cases {
        let e = with(&format!("kind = \"reroute\"\n{keys}")).unwrap_err();
        let line = e.strip_prefix("e.toml:").and_then(|r| r.split(':').next());
        assert!(
            line.is_some_and(|l| l.parse::<u32>().is_ok()) && e.contains(at) && e.contains(what),
            "{keys}: {e}"
        );
    }
}

#[test]
fn reroute_mistakes_are_located_errors() {
    let cases = [
        (
            "delays = [\"40ms\"]\nperiod = \"5s\"\n",
            "elements[0].delays",
            "at least 2 paths",
        ),
        (
            "delays = [\"40ms\", \"10ms\"]\n",
            "elements[0].period",
            "`period` or `schedule`",
        ),
        (
            "delays = [\"40ms\", \"10ms\"]\nperiod = \"5s\"\nschedule = [[\"1s\", 1]]\n",
            "elements[0].schedule",
            "not both",
        ),
        (
            "delays = [\"40ms\", \"10ms\"]\nschedule = [[\"1s\", 2]]\n",
            "elements[0].schedule",
            "there are 2 paths",
        ),
        (
            "delays = [\"40ms\", \"10ms\"]\nschedule = [[\"2s\", 1], [\"1s\", 0]]\n",
            "elements[0].schedule",
            "must increase",
        ),
        (
            "delays = [\"40ms\", \"10ms\"]\nschedule = [\"1s\"]\n",
            "elements[0].schedule[0]",
            "[time, path]",
        ),
        (
            "delays = [\"40ms\", \"10ms\"]\nrates = [\"10Mbit\"]\nperiod = \"5s\"\n",
            "elements[0].rates",
            "1 rates for 2 paths",
        ),
        (
            "delays = [\"40ms\", \"10ms\"]\nrates = [\"fast\", \"none\"]\nperiod = \"5s\"\n",
            "elements[0].rates[0]",
            "",
        ),
        (
            "delays = [\"40ms\", \"10ms\"]\nperiod = 0\n",
            "elements[0].period",
            "longer than 0",
        ),
        (
            "delays = [\"40ms\", \"-1ms\"]\nperiod = \"1s\"\n",
            "elements[0].delays[1]",
            "",
        ),
    ];
    for (keys, at, what) in cases {
        let e = with(&format!("kind = \"reroute\"\n{keys}")).unwrap_err();
        assert!(
            e.starts_with("e.toml:") && e.contains(at) && e.contains(what),
            "{keys}: {e}"
        );
    }
}

#[test]
fn ack_element_keys_and_mistakes() {
    assert_eq!(
        with("kind = \"ack_thin\"\nk = 4\n").unwrap(),
        ElementSpec::AckThin {
            k: 4,
            keep_signals: true,
            hold: cclab_sim::net::ack_thin::DEFAULT_HOLD
        }
    );
    assert_eq!(
        with("kind = \"ack_aggregate\"\nperiod = \"200ms\"\nphase = \"50ms\"\n").unwrap(),
        ElementSpec::AckAggregate {
            period: Dur::from_millis(200),
            phase: Dur::from_millis(50)
        }
    );
    for (element, at) in [
        ("kind = \"ack_thin\"\nk = 0\n", "elements[0].k"),
        ("kind = \"ack_thin\"\nhold = \"-1s\"\n", "elements[0].hold"),
        ("kind = \"ack_aggregate\"\n", "elements[0].period"),
        (
            "kind = \"ack_aggregate\"\nperiod = 0\n",
            "elements[0].period",
        ),
    ] {
        let e = with(element).unwrap_err();
        assert!(e.starts_with("e.toml:") && e.contains(at), "{element}: {e}");
    }
}
