//! The `[host]` and `[flows.host]` tables: the Linux sender host model of a flow's sending host
//! (TSQ, pacing shift, qdisc, TSO, CPU schedule).
//!
//! Contract: [`resolve`] turns a raw table into a checked [`HostConfig`], starting from `base`
//! (Linux defaults, or the scenario's `[host]` table for a flow's own table), so a flow's table
//! only names what differs. Every error names the file, line and field, and lists the valid
//! choices.
//!
//! ```toml
//! [host]                          # every sending host; a [flows.host] table overrides per flow
//! tsq = true                      # TCP Small Queues (default true)
//! pacing_shift = 10               # sk_pacing_shift, 6..=12 (Linux 10; Wi-Fi drivers 7 or 8)
//! limit_output_bytes = "1MiB"     # tcp_limit_output_bytes; caps unpaced sockets (newer kernels: 4MiB)
//! qdisc = "pfifo_fast"            # pfifo_fast | fq
//! fq_limit = 10000                # fq: packets in the qdisc
//! fq_flow_limit = 100             # fq: packets per flow
//! fq_quantum = 3028               # fq: bytes per round-robin turn (2·MTU)
//! fq_initial_quantum = 15140      # fq: first turn of a new flow (10·MTU)
//! tso = "post-5.18"               # post-5.18 | pre-5.18 | off
//! gso_max_size = "64KiB"
//! min_tso_segs = 2
//! cpu_share = 0.3                 # hypervisor share of one CPU, (0, 1]; absent = always running
//! cpu_timeslice = "10ms"          # runs this long in every timeslice/share
//! cpu_offset = "0ms"              # where in its period the host is at t = 0
//! cpu_max = "30ms 100ms"          # or: a CFS bandwidth quota per period (cgroup v2 `cpu.max`)
//! cpu_load = "busy"               # how the guest uses either cap: busy: it always has work (runs
//!                                 # the timeslice/quota at the start of each period) | network:
//!                                 # it runs only for its packets, a CFS quota charged per packet
//! cpu_cost = "4us"                # network: CPU time per packet received and segment sent;
//!                                 # softirq: CPU time per packet of the backlog at resume
//!                                 # and per data segment sent
//! cpu_resume = "instant"          # what waited for a descheduled host runs when it runs again:
//!                                 # instant: all at that instant | softirq: wheel timers, then
//!                                 # one packet after another (cpu_cost each, and each segment
//!                                 # sent) in NET_RX rounds, the other timers between
//! preset = "vm"                   # plain (default) | vm: a virtual machine's virtio-net path
//! tx_ring = 256                   # vm: TX virtqueue descriptors (QEMU tx_queue_size)
//! rx_ring = 256                   # vm: RX virtqueue descriptors (QEMU rx_queue_size)
//! napi_tx = true                  # vm: TX completions in the guest's NAPI; false: orphaned
//! tap_queue = 500                 # vm: the tap's tx_queue_len, packets
//! vhost_wakeup = "20us"           # vm: from the guest's kick until an idle vhost worker runs
//! ```

use cclab_cc::Tas;
use cclab_sim::{CpuSchedule, Dur, FqConfig, HostConfig, HostQdisc, ResumeWork, TsoRule};
use toml::Spanned;

use super::ScenarioError;
use super::error::{Source, unknown_choice};
use super::raw::RawHost;
use crate::units::fmt_dur;

/// `qdisc` values.
pub const QDISCS: &[&str] = &["pfifo_fast", "fq"];
/// `cpu_load` values.
pub const CPU_LOADS: &[&str] = &["busy", "network"];
/// CPU time per packet of a `network` guest: the "1 GHz per 1 Gbit/s" rule of thumb for
/// Linux TCP (Foong et al., "TCP Performance Re-Visited", ISPASS 2003: about one cycle per
/// bit) at 3 GHz for a 1500-byte packet, 12,000 cycles. TSO and GRO make a modern stack several
/// times cheaper per packet and a VM's exits dearer: set `cpu_cost` from a measurement.
pub const DEFAULT_CPU_COST: Dur = Dur::from_micros(4);
/// `cpu_resume` values.
pub const CPU_RESUMES: &[&str] = &["instant", "softirq"];
/// `preset` values.
pub const HOST_PRESETS: &[&str] = &["plain", "vm"];
/// `tso` values.
pub const TSO_RULES: &[&str] = &["post-5.18", "pre-5.18", "off"];
/// Default CPU timeslice when only `cpu_share` is given (the 10 ms case of the 2BRobust study of
/// BBR under sender CPU contention, which ran 1, 10 and 20 ms timeslices).
pub const DEFAULT_CPU_TIMESLICE: Dur = Dur::from_millis(10);

/// Resolve `raw` on top of `base`; `what` prefixes field names in errors (e.g. `flows[0].host`).
pub(crate) fn resolve(
    src: &Source<'_>,
    what: &str,
    raw: &Spanned<RawHost>,
    base: &HostConfig,
) -> Result<HostConfig, ScenarioError> {
    let r = raw.get_ref();
    let mut h = base.clone();
    if let Some(v) = &r.tsq {
        h.tsq = *v.get_ref();
    }
    if let Some(v) = &r.pacing_shift {
        let shift = src.ranged_u32(
            Some(v),
            format!("{what}.pacing_shift"),
            u32::from(*Tas::RANGE.start())..=u32::from(*Tas::RANGE.end()),
            "(2^-shift s of data)",
            0,
        )?;
        h.pacing_shift = shift as u8;
    }
    if let Some(v) = &r.limit_output_bytes {
        let b = v.get_ref().0;
        if b == 0 {
            return Err(src.error(
                Some(v.span()),
                format!("{what}.limit_output_bytes"),
                "must be positive (Linux default 1MiB, 4MiB from 6.16)",
            ));
        }
        h.limit_output_bytes = b;
    }
    let mut fq = match h.qdisc {
        HostQdisc::Fq(c) => c,
        HostQdisc::PfifoFast => FqConfig::default(),
    };
    if let Some(q) = &r.qdisc {
        h.qdisc = match q.get_ref().as_str() {
            "pfifo_fast" => HostQdisc::PfifoFast,
            "fq" => HostQdisc::Fq(fq),
            other => {
                let mut msg = unknown_choice("qdisc", other, QDISCS);
                if other == super::qdisc::FIFO || cclab_sim::AqmConfig::NAMES.contains(&other) {
                    msg.push_str(&format!(
                        "; `{other}` is a bottleneck queue discipline: set it with \
                         `topology.qdisc`"
                    ));
                }
                return Err(src.error(Some(q.span()), format!("{what}.qdisc"), msg));
            }
        };
    }
    let fq_keys = [
        r.fq_limit.as_ref().map(Spanned::span),
        r.fq_flow_limit.as_ref().map(Spanned::span),
        r.fq_quantum.as_ref().map(Spanned::span),
        r.fq_initial_quantum.as_ref().map(Spanned::span),
    ];
    if let Some(span) = fq_keys.into_iter().flatten().next() {
        if h.qdisc == HostQdisc::PfifoFast {
            return Err(src.error(
                Some(span),
                what.to_owned(),
                "fq_* settings need `qdisc = \"fq\"`",
            ));
        }
        fq.limit = src.ranged_u32(
            r.fq_limit.as_ref(),
            format!("{what}.fq_limit"),
            1..=1_000_000,
            "packets",
            fq.limit,
        )?;
        fq.flow_limit = src.ranged_u32(
            r.fq_flow_limit.as_ref(),
            format!("{what}.fq_flow_limit"),
            1..=1_000_000,
            "packets",
            fq.flow_limit,
        )?;
        for (v, field, slot) in [
            (&r.fq_quantum, "fq_quantum", &mut fq.quantum),
            (
                &r.fq_initial_quantum,
                "fq_initial_quantum",
                &mut fq.initial_quantum,
            ),
        ] {
            if let Some(v) = v {
                match u32::try_from(v.get_ref().0) {
                    Ok(b) if (64..=1 << 20).contains(&b) => *slot = b,
                    _ => {
                        return Err(src.error(
                            Some(v.span()),
                            format!("{what}.{field}"),
                            format!("must be between 64 B and 1 MiB, got {} B", v.get_ref().0),
                        ));
                    }
                }
            }
        }
        h.qdisc = HostQdisc::Fq(fq);
    }
    if let Some(t) = &r.tso {
        match t.get_ref().as_str() {
            "post-5.18" => {
                h.tso.enabled = true;
                h.tso.rule = TsoRule::Post518;
            }
            "pre-5.18" => {
                h.tso.enabled = true;
                h.tso.rule = TsoRule::Pre518;
            }
            "off" => h.tso.enabled = false,
            other => {
                return Err(src.error(
                    Some(t.span()),
                    format!("{what}.tso"),
                    unknown_choice("TSO rule", other, TSO_RULES),
                ));
            }
        }
    }
    if let Some(v) = &r.gso_max_size {
        match u32::try_from(v.get_ref().0) {
            Ok(b) if (4096..=512 * 1024).contains(&b) => h.tso.gso_max_size = b,
            _ => {
                return Err(src.error(
                    Some(v.span()),
                    format!("{what}.gso_max_size"),
                    format!(
                        "must be between 4 KiB and 512 KiB (BIG TCP), got {} B",
                        v.get_ref().0
                    ),
                ));
            }
        }
    }
    h.tso.min_tso_segs = src.ranged_u32(
        r.min_tso_segs.as_ref(),
        format!("{what}.min_tso_segs"),
        1..=64,
        "segments",
        h.tso.min_tso_segs,
    )?;
    let mut cap = None;
    if r.cpu_timeslice.is_some() || r.cpu_offset.is_some() || r.cpu_share.is_some() {
        let base_cpu = h
            .cpu
            .or(h.cfs.map(|c| c.schedule()))
            .unwrap_or(CpuSchedule {
                timeslice: DEFAULT_CPU_TIMESLICE,
                share: 1.0,
                offset: Dur::ZERO,
            });
        let mut cpu = base_cpu;
        if let Some(s) = &r.cpu_share {
            let v = *s.get_ref();
            if !(v > 0.0 && v <= 1.0) {
                return Err(src.error(
                    Some(s.span()),
                    format!("{what}.cpu_share"),
                    format!("must be in (0, 1] (a fraction of one CPU), got {v}"),
                ));
            }
            cpu.share = v;
        } else if h.cpu.is_none() && h.cfs.is_none() {
            let span = r
                .cpu_timeslice
                .as_ref()
                .map(Spanned::span)
                .or(r.cpu_offset.as_ref().map(Spanned::span));
            return Err(src.error(
                span,
                format!("{what}.cpu_share"),
                "cpu_timeslice and cpu_offset need a `cpu_share`",
            ));
        }
        if let Some(t) = &r.cpu_timeslice {
            let v = t.get_ref().0;
            if v < Dur::from_micros(10) || v > Dur::from_secs(10) {
                return Err(src.error(
                    Some(t.span()),
                    format!("{what}.cpu_timeslice"),
                    format!("must be between 10us and 10s, got {}", fmt_dur(v)),
                ));
            }
            cpu.timeslice = v;
        }
        if let Some(o) = &r.cpu_offset {
            cpu.offset = o.get_ref().0;
        }
        // The simulator's own bound (a period timeslice/share that fits in time), checked here
        // so that `check` finds what `run` would.
        if let Err(problem) = cpu.validate() {
            let span = r.cpu_share.as_ref().map(Spanned::span);
            return Err(src.error(span, format!("{what}.cpu_share"), problem));
        }
        cap = Some(cpu);
    }
    if let Some(m) = &r.cpu_max {
        if let Some(span) = r
            .cpu_share
            .as_ref()
            .map(Spanned::span)
            .or(r.cpu_timeslice.as_ref().map(Spanned::span))
            .or(r.cpu_offset.as_ref().map(Spanned::span))
        {
            return Err(src.error(
                Some(span),
                format!("{what}.cpu_max"),
                "give either `cpu_max` (a quota per period) or `cpu_share`/`cpu_timeslice`, not both",
            ));
        }
        cap = Some(
            parse_cpu_max(m.get_ref())
                .map_err(|e| src.error(Some(m.span()), format!("{what}.cpu_max"), e))?,
        );
    }
    cpu_load(src, what, r, &mut h, cap)?;
    cpu_resume(src, what, r, &mut h)?;
    virtio(src, what, r, &mut h)?;
    Ok(h)
}

/// `cpu_load`: how the guest uses the CPU cap `cap` (this table's `cpu_share`/`cpu_timeslice`
/// or `cpu_max`; `None`: the base's, if it has one).
fn cpu_load(
    src: &Source<'_>,
    what: &str,
    r: &RawHost,
    h: &mut HostConfig,
    cap: Option<CpuSchedule>,
) -> Result<(), ScenarioError> {
    let inherited = h.cpu.or(h.cfs.map(|c| c.schedule()));
    let Some(cpu) = cap.or(inherited) else {
        if let Some(span) = r
            .cpu_load
            .as_ref()
            .map(Spanned::span)
            .or(r.cpu_cost.as_ref().map(Spanned::span))
        {
            return Err(src.error(
                Some(span),
                what.to_owned(),
                "cpu_load and cpu_cost describe how a guest uses a CPU cap: they need \
                 `cpu_share` or `cpu_max`",
            ));
        }
        return Ok(());
    };
    if cap.is_none() && r.cpu_load.is_none() && r.cpu_cost.is_none() {
        return Ok(()); // the base's cap and load as they are
    }
    let base_load = if h.cfs.is_some() { "network" } else { "busy" };
    let load = r
        .cpu_load
        .as_ref()
        .map_or(base_load, |l| l.get_ref().as_str());
    match load {
        "busy" => {
            let softirq = r
                .cpu_resume
                .as_ref()
                .map_or(matches!(h.resume, ResumeWork::Softirq { .. }), |v| {
                    v.get_ref() == "softirq"
                });
            if let Some(c) = r.cpu_cost.as_ref().filter(|_| !softirq) {
                return Err(src.error(
                    Some(c.span()),
                    format!("{what}.cpu_cost"),
                    "a busy guest spends its whole share whatever its packets cost: cpu_cost \
                     needs `cpu_load = \"network\"` or `cpu_resume = \"softirq\"`",
                ));
            }
            h.cpu = Some(cpu);
            h.cfs = None;
        }
        "network" => {
            let cost = r
                .cpu_cost
                .as_ref()
                .map(|c| c.get_ref().0)
                .or(h.cfs.map(|c| c.cost))
                .unwrap_or(DEFAULT_CPU_COST);
            let span = r
                .cpu_cost
                .as_ref()
                .map(Spanned::span)
                .or(r.cpu_load.as_ref().map(Spanned::span))
                .or(r.cpu_max.as_ref().map(Spanned::span));
            if cost >= cpu.timeslice {
                return Err(src.error(
                    span,
                    format!("{what}.cpu_cost"),
                    format!(
                        "a packet's CPU time {} must be below the quota {}",
                        fmt_dur(cost),
                        fmt_dur(cpu.timeslice)
                    ),
                ));
            }
            if cpu.offset != Dur::ZERO {
                return Err(src.error(
                    r.cpu_offset.as_ref().map(Spanned::span),
                    format!("{what}.cpu_offset"),
                    "a CFS quota's periods start at time 0: cpu_offset needs `cpu_load = \"busy\"`",
                ));
            }
            h.cpu = None;
            h.cfs = Some(cclab_sim::CfsBandwidth {
                quota: cpu.timeslice,
                period: cpu.period(),
                cost,
            });
        }
        other => {
            return Err(src.error(
                r.cpu_load.as_ref().map(Spanned::span),
                format!("{what}.cpu_load"),
                unknown_choice("cpu load", other, CPU_LOADS),
            ));
        }
    }
    Ok(())
}

/// `cpu_resume`: how the capped host works off what waited for it ([`ResumeWork`]); with
/// `softirq` a packet of the backlog and a data segment sent take `cpu_cost` (this table's, else the inherited one, else the
/// `network` load's, else [`DEFAULT_CPU_COST`]).
fn cpu_resume(
    src: &Source<'_>,
    what: &str,
    r: &RawHost,
    h: &mut HostConfig,
) -> Result<(), ScenarioError> {
    let span = r
        .cpu_resume
        .as_ref()
        .map(Spanned::span)
        .or(r.cpu_cost.as_ref().map(Spanned::span));
    let softirq = match r.cpu_resume.as_ref().map(|v| v.get_ref().as_str()) {
        None => matches!(h.resume, ResumeWork::Softirq { .. }),
        Some("instant") => false,
        Some("softirq") => true,
        Some(other) => {
            return Err(src.error(
                span,
                format!("{what}.cpu_resume"),
                unknown_choice("cpu resume", other, CPU_RESUMES),
            ));
        }
    };
    if !softirq {
        h.resume = ResumeWork::Instant;
        return Ok(());
    }
    let Some(slice) = h.cpu.map(|c| c.timeslice).or(h.cfs.map(|c| c.quota)) else {
        return Err(src.error(
            span,
            format!("{what}.cpu_resume"),
            "cpu_resume describes how a descheduled host goes on: it needs `cpu_share` or \
             `cpu_max`",
        ));
    };
    let inherited = match h.resume {
        ResumeWork::Softirq { cost } => Some(cost),
        ResumeWork::Instant => None,
    };
    let cost = r
        .cpu_cost
        .as_ref()
        .map(|c| c.get_ref().0)
        .or(h.cfs.map(|c| c.cost))
        .or(inherited)
        .unwrap_or(DEFAULT_CPU_COST);
    if cost == Dur::ZERO || cost >= slice {
        return Err(src.error(
            r.cpu_cost.as_ref().map(Spanned::span).or(span),
            format!("{what}.cpu_cost"),
            format!(
                "a packet's CPU time {} must be positive and below the timeslice {}",
                fmt_dur(cost),
                fmt_dur(slice)
            ),
        ));
    }
    h.resume = ResumeWork::Softirq { cost };
    Ok(())
}

/// `cpu_max = "QUOTA PERIOD"` (cgroup v2 `cpu.max`, durations with units; `max` = no limit):
/// the host runs for the quota at the start of every period (a CFS bandwidth quota of a guest
/// that is always runnable: `tg_set_cfs_bandwidth`, throttled when the quota is spent until
/// the period timer refills it, `sched_cfs_period_timer`).
fn parse_cpu_max(s: &str) -> Result<CpuSchedule, String> {
    let form = "expected \"QUOTA PERIOD\" with units, e.g. \"30ms 100ms\" or \"1ms 3.33ms\"";
    let mut parts = s.split_whitespace();
    let (Some(q), Some(p), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(format!("`{s}`: {form}"));
    };
    let dur = |x: &str| {
        crate::units::parse_duration(x).map_err(|e| format!("`{x}` in `{s}`: {e}; {form}"))
    };
    let period = dur(p)?;
    if q == "max" {
        return Ok(CpuSchedule {
            timeslice: period.max(Dur(1)),
            share: 1.0,
            offset: Dur::ZERO,
        });
    }
    let quota = dur(q)?;
    // Linux's bounds: quota and period at least 1 ms, period at most 1 s (`min_cfs_quota_period`,
    // `max_cfs_quota_period`, kernel/sched/core.c); this model accepts any positive quota
    // up to the period, so that shares of short timeslices can be written exactly.
    if period < Dur::from_micros(100) || period > cclab_sim::CfsBandwidth::MAX_PERIOD {
        return Err(format!(
            "period {} must be between 100us and 1s (Linux: 1ms..1s)",
            fmt_dur(period)
        ));
    }
    if quota == Dur::ZERO || quota > period {
        return Err(format!(
            "quota {} must be positive and at most the period {} (one CPU)",
            fmt_dur(quota),
            fmt_dur(period)
        ));
    }
    Ok(CpuSchedule::from_quota(quota, period))
}

/// `preset` and the virtio keys.
fn virtio(
    src: &Source<'_>,
    what: &str,
    r: &RawHost,
    h: &mut HostConfig,
) -> Result<(), ScenarioError> {
    if let Some(p) = &r.preset {
        h.virtio = match p.get_ref().as_str() {
            "plain" => None,
            "vm" => Some(h.virtio.unwrap_or_default()),
            other => {
                return Err(src.error(
                    Some(p.span()),
                    format!("{what}.preset"),
                    unknown_choice("host preset", other, HOST_PRESETS),
                ));
            }
        };
    }
    let spans = [
        r.tx_ring.as_ref().map(Spanned::span),
        r.rx_ring.as_ref().map(Spanned::span),
        r.napi_tx.as_ref().map(Spanned::span),
        r.tap_queue.as_ref().map(Spanned::span),
        r.vhost_wakeup.as_ref().map(Spanned::span),
    ];
    let Some(span) = spans.into_iter().flatten().next() else {
        return Ok(());
    };
    let Some(mut v) = h.virtio else {
        return Err(src.error(
            Some(span),
            what.to_owned(),
            "tx_ring, rx_ring, napi_tx, tap_queue and vhost_wakeup describe a virtual machine's \
             NIC: they need `preset = \"vm\"`",
        ));
    };
    v.tx_ring = src.ranged_u32(
        r.tx_ring.as_ref(),
        format!("{what}.tx_ring"),
        1..=32_768,
        "descriptors (virtio allows up to 32768)",
        v.tx_ring,
    )?;
    v.rx_ring = src.ranged_u32(
        r.rx_ring.as_ref(),
        format!("{what}.rx_ring"),
        1..=32_768,
        "descriptors (virtio allows up to 32768)",
        v.rx_ring,
    )?;
    v.tap_queue = src.ranged_u32(
        r.tap_queue.as_ref(),
        format!("{what}.tap_queue"),
        1..=1_000_000,
        "packets",
        v.tap_queue,
    )?;
    if let Some(n) = &r.napi_tx {
        v.napi_tx = *n.get_ref();
    }
    if let Some(w) = &r.vhost_wakeup {
        let d = w.get_ref().0;
        if d >= cclab_sim::VirtioConfig::MAX_VHOST_WAKEUP {
            return Err(src.error(
                Some(w.span()),
                format!("{what}.vhost_wakeup"),
                format!("must be below 1s, got {}", fmt_dur(d)),
            ));
        }
        v.vhost_wakeup = d;
    }
    h.virtio = Some(v);
    Ok(())
}
