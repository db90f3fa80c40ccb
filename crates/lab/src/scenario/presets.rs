//! Topology preset declarations: what `topology.preset` accepts and the keys of each preset's
//! `[topology]` table.
//!
//! Contract: [`PRESETS`] documents every preset and its keys once; `cclab list presets --params`
//! and the README's preset tables print it. The values are parsed by the preset's raw table
//! (`raw::RawDumbbell`, `raw::RawAccess`) and checked by its module ([`super::dumbbell`],
//! [`super::access`]); a test keeps the raw tables' keys and these declarations in step.

use super::params::{Entry, Kind, Param};

const RATE: Kind = Kind::Other {
    ty: "rate",
    range: "bit/s, or e.g. \"100Mbit\", \"1.5Gbit\"",
    quoted: true,
};
const DURATION: Kind = Kind::Duration {
    max: cclab_sim::Dur::MAX,
};
const BUFFER: Kind = Kind::Other {
    ty: "buffer",
    range: "\"1bdp\", \"333p\", \"50ms\", \"500KB\", {packets = 333}, …",
    quoted: true,
};
const QDISC: Kind = Kind::Other {
    ty: "qdisc",
    range: "a name (`cclab list qdiscs`) or a table with `kind` and parameters",
    quoted: true,
};
const PROBABILITY: Kind = Kind::Float {
    min: 0.0,
    min_open: false,
    max: 1.0,
    max_open: true,
};
const PACKETS: Kind = Kind::Int {
    min: 1,
    max: 1_000_000,
};

const fn key(
    name: &'static str,
    kind: Kind,
    default: &'static str,
    doc: &'static str,
    source: &'static str,
) -> Param {
    Param {
        name,
        kind,
        unit: "",
        default,
        doc,
        source,
    }
}

const NIC_RATE: Param = key(
    "nic_rate",
    RATE,
    "10Gbit",
    "every host's NIC line rate",
    "a 10 GbE host",
);
const DRIVER_QUEUE: Param = Param {
    unit: "packets",
    ..key(
        "driver_queue",
        PACKETS,
        "1000",
        "NIC driver queue of every host",
        "Linux `txqueuelen` = 1000",
    )
};

/// Keys of the `access` preset (`rtt_fair` has the same, with four servers by default).
const ACCESS_KEYS: &[Param] = &[
    key(
        "rate",
        RATE,
        "none",
        "access rate, both directions (required unless up_rate and down_rate are given)",
        "Flent test setups",
    ),
    key("up_rate", RATE, "rate", "uplink rate", "—"),
    key("down_rate", RATE, "rate", "downlink rate", "—"),
    key(
        "delay",
        DURATION,
        "required",
        "one-way delay of the access line",
        "—",
    ),
    key(
        "buffer",
        BUFFER,
        "1bdp",
        "both directions' buffers; BDP at the shortest base RTT of the servers",
        "the BDP rule of thumb",
    ),
    key("up_buffer", BUFFER, "buffer", "uplink buffer", "—"),
    key("down_buffer", BUFFER, "buffer", "downlink buffer", "—"),
    key(
        "qdisc",
        QDISC,
        "fifo",
        "both directions' queue discipline",
        "—",
    ),
    key("up_qdisc", QDISC, "qdisc", "uplink queue discipline", "—"),
    key(
        "down_qdisc",
        QDISC,
        "qdisc",
        "downlink queue discipline",
        "—",
    ),
    key(
        "loss",
        PROBABILITY,
        "0",
        "Bernoulli loss on the uplink",
        "—",
    ),
    key(
        "down_loss",
        PROBABILITY,
        "0",
        "Bernoulli loss on the downlink",
        "—",
    ),
    key(
        "server_delays",
        Kind::Other {
            ty: "list",
            range: "durations, one per server",
            quoted: false,
        },
        "[\"0ms\"]",
        "one-way delay behind the access line, per server (rtt_fair: 0, 10, 30, 70 ms)",
        "Flent rtt_fair",
    ),
    key(
        "server_rate",
        RATE,
        "none",
        "servers' link rate (default: their NICs only)",
        "—",
    ),
    NIC_RATE,
    DRIVER_QUEUE,
];

/// Every topology preset.
pub const PRESETS: &[&Entry] = &[
    &Entry {
        name: "dumbbell",
        doc: "senders → left router → bottleneck → right router → receivers; takes [[flows]]",
        source: "the classic congestion-control test bed",
        params: &[
            key("rate", RATE, "required", "bottleneck rate", "—"),
            key(
                "delay",
                DURATION,
                "required",
                "bottleneck one-way propagation delay",
                "—",
            ),
            key(
                "buffer",
                BUFFER,
                "1bdp",
                "bottleneck buffer; BDP at the shortest base RTT of the flows",
                "the BDP rule of thumb",
            ),
            key("qdisc", QDISC, "fifo", "bottleneck queue discipline", "—"),
            key(
                "loss",
                PROBABILITY,
                "0",
                "Bernoulli loss on the bottleneck (data direction)",
                "—",
            ),
            key(
                "reverse_rate",
                RATE,
                "rate",
                "rate of the ACK direction (large buffer, no loss)",
                "—",
            ),
            key(
                "access_rate",
                RATE,
                "none",
                "access links' rate (default: pure delay lines)",
                "—",
            ),
            NIC_RATE,
            DRIVER_QUEUE,
            key(
                "drops",
                Kind::Other {
                    ty: "tables",
                    range: "[[topology.drops]] flow = name or index, seq, nth",
                    quoted: false,
                },
                "none",
                "scripted drops instead of `loss`",
                "—",
            ),
        ],
    },
    &Entry {
        name: "access",
        doc: "a client behind an access bottleneck and its servers; runs a Flent [test]",
        source: "Flent test setups",
        params: ACCESS_KEYS,
    },
    &Entry {
        name: "rtt_fair",
        doc: "`access` with four servers at 0, 10, 30 and 70 ms; runs a Flent [test]",
        source: "Flent rtt_fair",
        params: ACCESS_KEYS,
    },
];
