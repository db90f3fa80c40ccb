//! What a scenario file may name, with the parameters of each: the data behind `cclab list`.
//!
//! Contract: [`Target`] is one list (`controllers`, `qdiscs`, `presets`, `elements`, `rates`, `udp`, `tests`,
//! `ecn`, `slow-starts`, `metrics`); [`render`] prints its names, or with `params` every entry's
//! declaration (plain text or Markdown). The declarations live next to the code that checks them
//! ([`crate::scenario::controllers`], [`crate::scenario::qdisc::QDISCS`],
//! [`crate::scenario::presets`]); the short lists with no keys (tests, ECN modes, slow starts,
//! metrics) are declared here, and a test keeps them in step with the names the code accepts.
//! The README's key tables are `render(target, true, true)` between marker comments.

use std::fmt::Write as _;

use cclab_sim::Dur;

use crate::scenario::params::{self, Declared, Entry, Kind, Param};
use crate::scenario::{controllers, elements, presets, profiles, qdisc, rates, udp};

/// A list `cclab list` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `controller = …`.
    Controllers,
    /// `topology.qdisc = …`.
    Qdiscs,
    /// `topology.preset = …`.
    Presets,
    /// Network elements on a link's path (none yet; see [`crate::scenario::elements`]).
    Elements,
    /// `[[links]] rate = …`: rates that change over time.
    Rates,
    /// `[[udp]] kind = …`: UDP sources without congestion control.
    Udp,
    /// `test.name = …`.
    Tests,
    /// `ecn = …`.
    Ecn,
    /// `slow_start = …`.
    SlowStarts,
    /// `requests = …` and the request/response keys of `[[flows]]`.
    Workloads,
    /// `analysis.metrics = […]`.
    Metrics,
    /// `topology.profile = …` (named paths of the dumbbell).
    Profiles,
    /// `stack = …` of a flow, with the keys of the rules a stack sets.
    Stacks,
}

impl Target {
    /// Every list, in the README's order.
    pub const ALL: [Target; 13] = [
        Target::Controllers,
        Target::Qdiscs,
        Target::Presets,
        Target::Elements,
        Target::Rates,
        Target::Udp,
        Target::Tests,
        Target::Ecn,
        Target::SlowStarts,
        Target::Workloads,
        Target::Metrics,
        Target::Profiles,
        Target::Stacks,
    ];

    /// The name on the command line (`cclab list <name>`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Target::Controllers => "controllers",
            Target::Qdiscs => "qdiscs",
            Target::Presets => "presets",
            Target::Elements => "elements",
            Target::Rates => "rates",
            Target::Udp => "udp",
            Target::Tests => "tests",
            Target::Ecn => "ecn",
            Target::SlowStarts => "slow-starts",
            Target::Workloads => "workloads",
            Target::Metrics => "metrics",
            Target::Profiles => "profiles",
            Target::Stacks => "stacks",
        }
    }

    /// The list called `name`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The entries of this list.
    #[must_use]
    pub fn entries(self) -> Vec<&'static dyn Declared> {
        fn all<D: Declared + 'static>(list: &'static [&'static D]) -> Vec<&'static dyn Declared> {
            list.iter().map(|d| *d as &dyn Declared).collect()
        }
        match self {
            Target::Controllers => all(controllers::ALL),
            Target::Qdiscs => all(qdisc::QDISCS),
            Target::Presets => all(presets::ALL),
            Target::Elements => all(elements::ALL),
            Target::Rates => all(rates::ALL),
            Target::Udp => all(udp::ALL),
            Target::Tests => all(TESTS),
            Target::Ecn => all(ECN_MODES),
            Target::Stacks => all(STACKS),
            Target::SlowStarts => all(SLOW_STARTS),
            Target::Workloads => all(crate::scenario::workload::WORKLOADS),
            Target::Metrics => crate::suite::METRICS
                .iter()
                .map(|m| m as &dyn Declared)
                .collect(),
            Target::Profiles => profiles::PROFILES
                .iter()
                .map(|p| p as &dyn Declared)
                .collect(),
        }
    }
}

/// `cclab list <target>`: the names, one a line (metrics with their definitions); with `params`
/// every entry with its keys, as plain text or, with `markdown`, as the README's tables.
#[must_use]
pub fn render(target: Target, params: bool, markdown: bool) -> String {
    if target == Target::Profiles && params {
        return profiles::table(markdown);
    }
    let mut entries = target.entries();
    if params && target == Target::Elements {
        entries.push(&elements::EVERY); // the keys every kind takes
    }
    if params && target == Target::Udp {
        entries.push(&udp::EVERY);
    }
    match (params, markdown) {
        (true, true) => params::markdown(&entries),
        (true, false) => params::table(&entries),
        (false, _) => {
            let mut s = String::new();
            // Names padded to the longest and two spaces, so that none runs into its text.
            let width = entries.iter().map(|e| e.name().len()).max().unwrap_or(0) + 2;
            for e in &entries {
                if target == Target::Metrics || target == Target::Profiles {
                    let _ = writeln!(s, "{:<width$}{}", e.name(), e.doc());
                } else {
                    let _ = write!(s, "{}", e.name());
                    if target == Target::Controllers {
                        for (alias, _) in cclab_cc::CONTROLLER_ALIASES
                            .iter()
                            .filter(|(_, name)| *name == e.name())
                        {
                            let _ = write!(s, " (alias: {alias})");
                        }
                    }
                    let _ = writeln!(s);
                }
            }
            s
        }
    }
}

const LENGTH: Param = Param {
    name: "length",
    kind: Kind::Duration {
        max: cclab_sim::Dur::MAX,
    },
    unit: "",
    default: "60s",
    doc: "transfer period (the run lasts length + 2·delay)",
    source: "Flent `-l` (default 60 s)",
};
const DELAY: Param = Param {
    name: "delay",
    kind: Kind::Duration {
        max: cclab_sim::Dur::MAX,
    },
    unit: "",
    default: "5s",
    doc: "ping-only time before and after the transfers",
    source: "Flent `-d` (default 5 s)",
};
const STEP: Param = Param {
    name: "step",
    kind: Kind::Duration {
        max: cclab_sim::Dur::MAX,
    },
    unit: "",
    default: "200ms",
    doc: "sampling step of the series",
    source: "Flent `-s` (default 0.2 s)",
};
const START_JITTER: Param = Param {
    name: "start_jitter",
    kind: Kind::Duration {
        max: cclab_sim::Dur::MAX,
    },
    unit: "",
    default: "10ms",
    doc: "bulk transfers start within [delay, delay + start_jitter)",
    source: "netperf start-up spread",
};
const TEST_KEYS: &[Param] = &[LENGTH, DELAY, STEP, START_JITTER];

/// The Flent-equivalent tests (`[test] name = …`) and the keys of `[test]`.
pub const TESTS: &[&Entry] = &[
    &Entry {
        name: "tcp_upload",
        doc: "one upload and an ICMP ping",
        source: "Flent tcp_upload",
        params: TEST_KEYS,
    },
    &Entry {
        name: "tcp_8up",
        doc: "eight uploads and an ICMP ping",
        source: "Flent tcp_8up",
        params: TEST_KEYS,
    },
    &Entry {
        name: "rrul",
        doc: "4 uploads + 4 downloads in four DSCP classes, 3 UDP probes, an ICMP ping",
        source: "Flent rrul",
        params: TEST_KEYS,
    },
    &Entry {
        name: "rrul_be",
        doc: "`rrul` with every flow and probe best effort",
        source: "Flent rrul_be",
        params: TEST_KEYS,
    },
    &Entry {
        name: "rtt_fair",
        doc: "per server one upload, one download and an ICMP ping (preset rtt_fair)",
        source: "Flent rtt_fair",
        params: TEST_KEYS,
    },
];

/// ECN modes of a flow (`ecn = …`).
pub const ECN_MODES: &[&Entry] = &[
    &Entry {
        name: "off",
        doc: "Not-ECT: congestion is signalled by drops only (default, except Prague)",
        source: "RFC 3168",
        params: &[],
    },
    &Entry {
        name: "classic",
        doc: "ECT(0), one ECE-until-CWR signal per window, a Reno-like response",
        source: "RFC 3168 §6.1",
        params: &[],
    },
    &Entry {
        name: "l4s",
        doc: "ECT(1) with Accurate ECN feedback of every CE mark (Prague's mode)",
        source: "RFC 9331; draft-ietf-tcpm-accurate-ecn",
        params: &[],
    },
];

/// The rule keys of a stack (`cclab list stacks --params`), with `d` as their defaults, in the
/// order of the keys.
const fn stack_rules(d: [&'static str; 12]) -> [Param; 12] {
    [
        Param {
            name: "loss_detection",
            kind: Kind::Choice(&["rack", "dupthresh"]),
            unit: "",
            default: d[0],
            doc: "loss detection between timeouts: RACK (RFC 8985) or RFC 6675's duplicate-ACK threshold 3 and IsLost",
            source: "Linux tcp_rack_detect_loss; ns-3 TcpSocketBase::DupAck, TcpTxBuffer::IsLost",
        },
        Param {
            name: "tlp",
            kind: Kind::Bool,
            unit: "",
            default: d[1],
            doc: "tail-loss probes (RFC 8985 §7)",
            source: "Linux tcp_schedule_loss_probe; ns-3 has none",
        },
        Param {
            name: "rto_rule",
            kind: Kind::Choice(&["linux", "rfc6298"]),
            unit: "",
            default: d[2],
            doc: "RTO = SRTT + max(4 RTTVAR, rto_min) (linux) or max(SRTT + max(1 ms, 4 RTTVAR), rto_min), doubling to 60 s, backoff and timer restarted only by ACKs of new data (rfc6298)",
            source: "Linux tcp_set_rto; ns-3 TcpSocketBase::EstimateRtt, ReTxTimeout, NewAck",
        },
        Param {
            name: "rto_min",
            kind: Kind::Duration {
                max: Dur::from_secs(60),
            },
            unit: "",
            default: d[3],
            doc: "the RTO's floor",
            source: "Linux TCP_RTO_MIN; ns-3 TcpSocketBase::MinRto",
        },
        Param {
            name: "ts_clock",
            kind: Kind::Duration {
                max: Dur::from_secs(60),
            },
            unit: "",
            default: d[4],
            doc: "0: RTT samples from send times; else from the timestamp echo on a clock of this granularity (Karn: none when the oldest acknowledged segment was retransmitted)",
            source: "ns-3 TcpOptionTS::NowToTsValue, TcpSocketBase::EstimateRtt",
        },
        Param {
            name: "cc_rtt",
            kind: Kind::Choice(&["sample", "srtt"]),
            unit: "",
            default: d[5],
            doc: "the RTT the controller gets and the minimum RTT: the ACK's sample or the smoothed RTT",
            source: "ns-3.37 TcpSocketBase::EstimateRtt (m_lastRtt = GetEstimate())",
        },
        Param {
            name: "quickack",
            kind: Kind::Bool,
            unit: "",
            default: d[6],
            doc: "the receiver's quick-ACK mode (the first 16 ACKs immediate)",
            source: "Linux tcp_incr_quickack; ns-3 TcpSocketBase::ReceivedData has none",
        },
        Param {
            name: "sack_compression",
            kind: Kind::Bool,
            unit: "",
            default: d[7],
            doc: "the receiver compresses ACKs of out-of-order data",
            source: "Linux tcp_sack_compress; ns-3 has none",
        },
        Param {
            name: "host_offloads",
            kind: Kind::Bool,
            unit: "",
            default: d[8],
            doc: "the socket uses its host's TSQ and TSO",
            source: "Linux tcp_small_queue_check, tcp_tso_autosize; ns-3 has neither",
        },
        Param {
            name: "undo",
            kind: Kind::Bool,
            unit: "",
            default: d[9],
            doc: "undo of spurious reductions (DSACK, RFC 2883)",
            source: "Linux tcp_try_undo_*; ns-3 has none",
        },
        Param {
            name: "frto",
            kind: Kind::Bool,
            unit: "",
            default: d[10],
            doc: "F-RTO (RFC 5682)",
            source: "Linux tcp_frto = 2; ns-3 has none",
        },
        Param {
            name: "delayed_ack",
            kind: Kind::Duration {
                max: Dur::from_millis(499),
            },
            unit: "",
            default: d[11],
            doc: "the receiver's delayed-ACK timer",
            source: "Linux TCP_DELACK_MIN; ns-3 TcpSocket::DelAckTimeout",
        },
    ]
}

/// Linux's rules ([`cclab_sim::TcpRules::LINUX`] and the flow defaults).
const LINUX_RULES: [Param; 12] = stack_rules([
    "rack", "true", "linux", "200ms", "0ms", "sample", "true", "true", "true", "true", "true",
    "40ms",
]);

/// ns-3.37's rules ([`cclab_sim::TcpRules::NS3`] and `stack::Resolved`'s defaults).
const NS3_RULES: [Param; 12] = stack_rules([
    "dupthresh",
    "false",
    "rfc6298",
    "1s",
    "1ms",
    "srtt",
    "false",
    "false",
    "false",
    "false",
    "false",
    "200ms",
]);

/// TCP stacks of a flow (`stack = …`): each entry's keys are the rules it sets, with the
/// stack's value as default (a flow may override each, for ablations); kept in step with
/// [`crate::scenario::stack::Stack`] by a test.
pub const STACKS: &[&Entry] = &[
    &Entry {
        name: "linux",
        doc: crate::scenario::stack::Stack::DOCS[0].1,
        source: "Linux v6.x net/ipv4/",
        params: &LINUX_RULES,
    },
    &Entry {
        name: "ns3",
        doc: crate::scenario::stack::Stack::DOCS[1].1,
        source: "ns-3.37 src/internet/model/tcp-socket-base.cc",
        params: &NS3_RULES,
    },
];

/// Slow-start variants of Reno, NewReno and CUBIC (`slow_start = …`).
pub const SLOW_STARTS: &[&Entry] = &[
    &Entry {
        name: "standard",
        doc: "exponential growth until loss or ssthresh",
        source: "RFC 5681 §3.1",
        params: &[],
    },
    &Entry {
        name: "hystart",
        doc: "leaves on an ACK-train length or a delay increase (CUBIC's default)",
        source: "Ha & Rhee 2011; Linux tcp_cubic.c",
        params: &[],
    },
    &Entry {
        name: "hystart++",
        doc: "leaves on a delay increase, then Conservative Slow Start",
        source: "RFC 9406",
        params: &[],
    },
    &Entry {
        name: "jumpstart",
        doc: "no slow start: the first window is the transfer up to rcv_wnd, paced over the \
              first RTT (jumpstart_rtt without a handshake), then congestion avoidance",
        source: "Liu, Allman, Jin & Wang, PFLDnet 2007",
        params: &[],
    },
    &Entry {
        name: "suss",
        doc: "HyStart whose first rounds grow 4x when the ACK train predicts room, the extra \
              segments paced over the round (at most 3 such rounds)",
        source: "Arghavani, Zhang, Eyers & Arghavani, SIGCOMM 2024; SUSSdeveloper/SUSS patch",
        params: &[],
    },
    &Entry {
        name: "careful_resume",
        doc: "standard slow start until the initial window is acknowledged, then (RTT \
              confirmed) a jump to min(max_jump, saved_cwnd/2) paced over one RTT, validated \
              by its ACKs or left by a Safe Retreat to PipeSize/2",
        source: "RFC 9959 (draft-ietf-tsvwg-careful-resume-24) §3, §4",
        params: &controllers::CAREFUL_RESUME_PARAMS,
    },
    &Entry {
        name: "chirping",
        doc: "Paced Chirping: trains of packets with shrinking gaps (chirps) estimate the \
              capacity from where their queueing delay rises; cwnd follows the chirps, then \
              congestion avoidance at the estimate",
        source: "Misund & Briscoe, INFOCOM GI 2019; JoakimMisund/PacedChirping",
        params: &controllers::CHIRPING_PARAMS,
    },
];

/// A study metric (`analysis.metrics = […]`): its name and definition ([`crate::suite::METRICS`]).
impl Declared for (&'static str, &'static str) {
    fn name(&self) -> &'static str {
        self.0
    }
    fn doc(&self) -> &'static str {
        self.1
    }
    fn source(&self) -> &'static str {
        "defined by cclab over Flent's series and the run's summary"
    }
    fn params(&self) -> &'static [Param] {
        &[]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Overrides;

    fn names(target: Target) -> Vec<&'static str> {
        target.entries().iter().map(|e| e.name()).collect()
    }

    /// Every list declares exactly the names the code accepts.
    #[test]
    fn declarations_name_what_the_code_accepts() {
        assert_eq!(names(Target::Controllers), cclab_cc::CONTROLLERS);
        let qdiscs: Vec<&str> = std::iter::once(qdisc::FIFO)
            .chain(cclab_sim::AqmConfig::NAMES)
            .collect();
        assert_eq!(names(Target::Qdiscs), qdiscs);
        assert_eq!(names(Target::Presets), crate::scenario::PRESETS);
        assert_eq!(names(Target::Tests), crate::suite::TESTS);
        assert_eq!(names(Target::Ecn), cclab_cc::EcnMode::NAMES);
        assert_eq!(names(Target::Stacks), crate::scenario::stack::Stack::NAMES);
        assert_eq!(names(Target::SlowStarts), cclab_cc::SLOW_STARTS);
        let metrics: Vec<&str> = crate::suite::METRICS.iter().map(|(m, _)| *m).collect();
        assert_eq!(names(Target::Metrics), metrics);
        assert_eq!(names(Target::Profiles), profiles::NAMES);
        for t in Target::ALL {
            assert_eq!(Target::from_name(t.name()), Some(t));
        }
    }

    /// `cclab list metrics` keeps every name apart from its definition, and `cclab list
    /// controllers` shows the aliases next to the name they stand for.
    #[test]
    fn plain_lists_separate_names_and_show_aliases() {
        let text = render(Target::Metrics, false, false);
        for ((name, doc), line) in crate::suite::METRICS.iter().zip(text.lines()) {
            let rest = line
                .strip_prefix(name)
                .expect("the line starts with the name");
            assert!(
                rest.starts_with("  ") && rest.trim_start() == *doc,
                "{line}"
            );
        }
        let text = render(Target::Controllers, false, false);
        assert!(text.lines().any(|l| l == "bbr1 (alias: bbr)"), "{text}");
    }

    /// The keys the preset tables accept (as the parser lists them for an unknown key) are the
    /// declared keys plus `preset`.
    #[test]
    fn preset_declarations_are_the_parsers_keys() {
        for preset in presets::ALL {
            let text = format!(
                "name = \"t\"\n[topology]\npreset = \"{}\"\nzzz = 1\n",
                preset.decl.name
            );
            let e = crate::scenario::parse(&text, "t.toml", &Overrides::default())
                .expect_err("unknown key")
                .to_string();
            let listed = e
                .split("expected one of: ")
                .nth(1)
                .and_then(|rest| rest.split(" (did you mean").next())
                .unwrap_or_else(|| panic!("{e}"));
            let mut declared = vec!["preset"];
            declared.extend(preset.decl.params.iter().map(|p| p.name));
            let mut listed: Vec<&str> = listed.split(", ").collect();
            listed.sort_unstable();
            declared.sort_unstable();
            assert_eq!(listed, declared, "{}", preset.decl.name);
        }
    }

    /// The defaults `cclab list stacks --params` shows are the stacks' own rules.
    #[test]
    fn stack_rule_defaults_are_the_stacks_rules() {
        use crate::scenario::stack::Stack;
        use crate::units::parse_duration;
        use cclab_sim::{CcRtt, LossDetection, RtoRule};
        for (params, stack) in [(&LINUX_RULES, Stack::Linux), (&NS3_RULES, Stack::Ns3)] {
            let r = stack.rules();
            let get = |n: &str| params.iter().find(|p| p.name == n).expect(n).default;
            let dur = |n: &str| parse_duration(get(n)).expect(n);
            let undo = stack.undo();
            assert_eq!(
                get("loss_detection"),
                match r.loss_detection {
                    LossDetection::Rack => "rack",
                    LossDetection::DupThresh => "dupthresh",
                }
            );
            assert_eq!(
                get("rto_rule"),
                match r.rto_rule {
                    RtoRule::Linux => "linux",
                    RtoRule::Rfc6298 => "rfc6298",
                }
            );
            assert_eq!(
                get("cc_rtt"),
                match r.cc_rtt {
                    CcRtt::Sample => "sample",
                    CcRtt::Smoothed => "srtt",
                }
            );
            for (key, value) in [
                ("tlp", r.tlp),
                ("quickack", r.quickack),
                ("sack_compression", r.sack_compression),
                ("host_offloads", r.host_offloads),
                ("undo", undo),
                ("frto", undo),
            ] {
                assert_eq!(get(key), value.to_string(), "{key}");
            }
            assert_eq!(dur("rto_min"), r.rto_min);
            assert_eq!(dur("ts_clock"), r.ts_clock);
            assert_eq!(dur("delayed_ack"), stack.delayed_ack());
        }
    }
}
