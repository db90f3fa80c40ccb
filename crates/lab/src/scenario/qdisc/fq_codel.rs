//! FQ-CoDel (RFC 8290; Linux `sch_fq_codel.c`): its keys, its [`AqmConfig`] and its description.

use cclab_sim::AqmConfig;
use cclab_sim::queue::FqCodelParams;

use super::{
    Component, Qdisc, U32_MAX, ce_threshold, count, dur, flag, fmt_dur, packet_limit,
    packet_limit_param, size, size_u32, size_u64,
};

/// FQ-CoDel.
pub(super) const FQ_CODEL: Qdisc = Qdisc {
    decl: Component {
        name: "fq_codel",
        doc: "FQ-CoDel: DRR over hashed flow queues, CoDel in each",
        source: "RFC 8290; Linux sch_fq_codel.c",
        params: &[
            dur(
                "target",
                "5ms",
                "CoDel target of each flow queue",
                "RFC 8290 §5.2; Linux fq_codel_init",
            ),
            dur(
                "interval",
                "100ms",
                "CoDel interval of each flow queue",
                "RFC 8290 §5.2; Linux fq_codel_init",
            ),
            packet_limit_param("10240", "Linux fq_codel_init `sch->limit` = 10240"),
            flag(
                "ecn",
                "true",
                "mark ECN-capable packets instead of dropping them",
                "Linux fq_codel_init (on)",
            ),
            ce_threshold("Linux fq_codel `ce_threshold` (CODEL_DISABLED_THRESHOLD)"),
            count(
                "flows",
                FqCodelParams::MAX_FLOWS as i64,
                "buckets",
                "1024",
                "number of flow queues (hash buckets)",
                "Linux fq_codel_init `flows_cnt` = 1024; fq_codel_change refuses more than 65536",
            ),
            size(
                "memory_limit",
                "32MiB",
                "most bytes of packet memory before drops",
                "Linux fq_codel_init `memory_limit` = 32 MiB",
            ),
            size(
                "quantum",
                "1514B",
                "bytes a flow queue may send per DRR round",
                "Linux fq_codel_init `quantum` = psched_mtu",
            ),
            count(
                "drop_batch",
                U32_MAX,
                "packets",
                "64",
                "packets dropped at once from the fattest queue on overflow",
                "Linux fq_codel_init `drop_batch_size` = 64",
            ),
        ],
        build: |v| {
            let d = FqCodelParams::default();
            Ok(Some(AqmConfig::FqCodel(FqCodelParams {
                flows: v.u32("flows").unwrap_or(d.flows),
                limit: packet_limit(v, "fq_codel", d.limit)?,
                memory_limit: size_u64(v, "memory_limit", d.memory_limit)?,
                quantum: size_u32(v, "quantum", d.quantum)?,
                drop_batch: v.u32("drop_batch").unwrap_or(d.drop_batch),
                target: v.duration("target").unwrap_or(d.target),
                interval: v.duration("interval").unwrap_or(d.interval),
                ecn: v.bool("ecn").unwrap_or(d.ecn),
                ce_threshold: v.duration("ce_threshold").or(d.ce_threshold),
            })))
        },
    },
    describe: |cfg| {
        let AqmConfig::FqCodel(p) = cfg else {
            return Vec::new();
        };
        let d = FqCodelParams::default();
        let mut parts = vec![
            format!("target {}", fmt_dur(p.target)),
            format!("interval {}", fmt_dur(p.interval)),
            format!("limit {} packets", p.limit),
        ];
        if p.flows != d.flows {
            parts.push(format!("flows {}", p.flows));
        }
        if p.memory_limit != d.memory_limit {
            parts.push(format!("memory_limit {} bytes", p.memory_limit));
        }
        if p.quantum != d.quantum {
            parts.push(format!("quantum {} bytes", p.quantum));
        }
        if p.drop_batch != d.drop_batch {
            parts.push(format!("drop_batch {}", p.drop_batch));
        }
        if p.ecn {
            parts.push("ecn".to_owned());
        }
        if let Some(c) = p.ce_threshold {
            parts.push(format!("ce_threshold {}", fmt_dur(c)));
        }
        parts
    },
};
