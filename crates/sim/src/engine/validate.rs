//! Validation of a [`SimConfig`] before a run.
//!
//! Contract: [`validate`] returns a [`ConfigError`] naming the first inconsistent part of the
//! configuration (a node that does not exist, a rate of zero, a bad delay change …) and never
//! panics; a configuration it accepts does not make the engine panic.

use cclab_cc::{Dur, Time};

use crate::config::{
    ConfigError, LossConfig, MAX_LINK_DELAY, NodeId, NodeKind, QueueConfig, QueueLimit, SimConfig,
};

pub(super) fn validate(cfg: &SimConfig) -> Result<(), ConfigError> {
    let n = cfg.nodes.len();
    let node = |what: String, id: NodeId| -> Result<(), ConfigError> {
        if (id.0 as usize) < n {
            Ok(())
        } else {
            Err(ConfigError::NoSuchNode {
                what,
                node: id.0,
                count: n,
            })
        }
    };
    let invalid = |what: String, problem: &str| ConfigError::Invalid {
        what,
        problem: problem.into(),
    };
    if cfg.duration == Dur::ZERO {
        return Err(invalid("duration".into(), "must be positive"));
    }
    if cfg.sample_interval == Dur::ZERO {
        return Err(invalid("sample_interval".into(), "must be positive"));
    }
    for (i, e) in cfg.elements.iter().enumerate() {
        node(format!("element {i}"), e.node)?;
        if let Some(problem) = e.spec.problem() {
            return Err(invalid(format!("element {i}"), &problem));
        }
        if let Some(from) = e.select.from {
            node(format!("element {i} (from)"), from)?;
        }
        if let Some(f) = e
            .select
            .flows
            .iter()
            .find(|f| f.0 as usize >= cfg.flows.len())
        {
            return Err(invalid(
                format!("element {i}"),
                &format!("selects flow {} of {}", f.0, cfg.flows.len()),
            ));
        }
    }
    for (i, nd) in cfg.nodes.iter().enumerate() {
        if nd.kind == NodeKind::Host
            && let Err(problem) = nd.host.validate()
        {
            return Err(invalid(format!("node {i} `{}` host", nd.name), &problem));
        }
    }
    for (i, l) in cfg.links.iter().enumerate() {
        let what = format!("link {i} `{}`", l.name);
        node(what.clone(), l.from)?;
        node(what.clone(), l.to)?;
        if l.rate_bps == Some(0) {
            return Err(invalid(what, "rate must be positive"));
        }
        match &l.queue {
            QueueConfig::DropTail { limit } => {
                if matches!(limit, QueueLimit::Packets(0) | QueueLimit::Bytes(0)) {
                    return Err(invalid(what, "queue limit must be positive"));
                }
            }
            QueueConfig::Aqm(a) => {
                if let Err(problem) = a.validate() {
                    return Err(invalid(format!("{what} {}", a.name()), &problem));
                }
            }
        }
        if let LossConfig::Bernoulli { p } = l.loss
            && !(0.0..=1.0).contains(&p)
        {
            return Err(invalid(what, "loss probability must be within [0, 1]"));
        }
        if !matches!(l.loss, LossConfig::Bernoulli { .. })
            && let Some(problem) = l.loss.problem()
        {
            return Err(invalid(what, &problem));
        }
        if l.rate_shape.is_some() && l.rate_bps.is_none() {
            return Err(invalid(
                what,
                "a time-varying rate needs the nominal rate_bps too",
            ));
        }
        if let Some(j) = &l.jitter {
            if l.rate_bps.is_none() || !matches!(l.queue, QueueConfig::DropTail { .. }) {
                return Err(invalid(
                    what,
                    "a jitter needs a rate and a drop-tail queue (put a `jitter` element behind an AQM link)",
                ));
            }
            if !(0.0..=1.0).contains(&j.correlation) {
                return Err(invalid(what, "jitter correlation must be in [0, 1]"));
            }
        }
        let end = Time::ZERO + cfg.duration;
        let mut prev: Option<Time> = None;
        for &(t, d) in &l.delay_changes {
            if prev.is_some_and(|p| t <= p) {
                return Err(invalid(
                    what,
                    "delay change times must be strictly increasing",
                ));
            }
            if t > end {
                return Err(invalid(
                    what,
                    &format!(
                        "delay change at {:.9} s is after the end of the run ({:.9} s)",
                        t.as_secs_f64(),
                        end.as_secs_f64()
                    ),
                ));
            }
            if d > MAX_LINK_DELAY {
                return Err(invalid(
                    what,
                    &format!(
                        "delay change to {:.9} s exceeds the maximum of {} s",
                        d.as_secs_f64(),
                        MAX_LINK_DELAY.as_secs_f64()
                    ),
                ));
            }
            prev = Some(t);
        }
    }
    for (i, f) in cfg.flows.iter().enumerate() {
        let what = format!("flow {i} `{}`", f.name);
        node(what.clone(), f.src)?;
        node(what.clone(), f.dst)?;
        if f.src == f.dst {
            return Err(invalid(what, "source and destination are the same node"));
        }
        for id in [f.src, f.dst] {
            if cfg.nodes[id.0 as usize].kind != NodeKind::Host {
                return Err(invalid(what, "flows must start and end at hosts"));
            }
        }
        if !(64..=65_000).contains(&f.mss) {
            return Err(invalid(what, "mss must be within 64..=65000 bytes"));
        }
        if !(1..=1_000_000).contains(&f.initial_window) {
            return Err(invalid(
                what,
                "initial window must be within 1..=1000000 segments",
            ));
        }
        if f.ack_every == 0 {
            return Err(invalid(what, "ack_every must be at least 1"));
        }
        if f.size == Some(0) {
            return Err(invalid(what, "size must be positive"));
        }
        if f.app_rate_bps == Some(0) {
            return Err(invalid(what, "app_rate_bps must be positive"));
        }
        if f.stop.is_some_and(|s| s <= f.start) {
            return Err(invalid(what, "stop must be after start"));
        }
        if let Some(r) = &f.reader {
            if r.rate_bps == 0 || r.chunk == 0 || r.rcvbuf.is_some_and(|b| b < 2 * u64::from(f.mss))
            {
                return Err(invalid(
                    what,
                    "a reader needs a positive rate and read size and a buffer of at least 2 mss",
                ));
            }
            if f.rcv_wnd.is_some() || f.requests.is_some() {
                return Err(invalid(
                    what,
                    "a reader's buffer sets the window: no rcv_wnd or requests with it",
                ));
            }
        }
        if let Some(r) = &f.requests {
            if r.responses.is_empty() || r.responses.contains(&0) {
                return Err(invalid(
                    what,
                    "requests need at least one response, each positive",
                ));
            }
            if r.request_size == 0 || r.request_size > f.mss {
                return Err(invalid(
                    what,
                    "request_size must be within 1..=mss (one segment)",
                ));
            }
            if f.size.is_some() || f.app_rate_bps.is_some() || f.fast_open {
                return Err(invalid(
                    what,
                    "requests set the application: no size, app_rate_bps or fast_open with them",
                ));
            }
            if !r.persistent && !f.handshake {
                return Err(invalid(
                    what,
                    "a new connection per request (persistent = false) needs the handshake",
                ));
            }
        }
        if let crate::config::Transport::Quic(q) = &f.transport {
            check_quic(&what, f, q)?;
        }
    }
    for (i, p) in cfg.probes.iter().enumerate() {
        let what = format!("probe {i} `{}`", p.name);
        node(what.clone(), p.src)?;
        node(what.clone(), p.dst)?;
        if p.interval == Dur::ZERO {
            return Err(invalid(what, "interval must be positive"));
        }
        if p.src == p.dst {
            return Err(invalid(what, "source and destination are the same node"));
        }
    }
    for (i, u) in cfg.udp.iter().enumerate() {
        let what = format!("udp source {i} `{}`", u.name);
        node(what.clone(), u.src)?;
        node(what.clone(), u.dst)?;
        if u.src == u.dst {
            return Err(invalid(what, "source and destination are the same node"));
        }
        for end in [u.src, u.dst] {
            if cfg.nodes[end.0 as usize].kind != NodeKind::Host {
                return Err(invalid(
                    what,
                    "source and destination must be hosts, not routers",
                ));
            }
        }
        u.validate().map_err(|p| invalid(what, &p))?;
    }
    validate_wifi(cfg)
}

/// The Wi-Fi BSSs: nodes and links exist and fit the layout, each link is the hop of one BSS
/// only and carries nothing of its own, and the MAC accepts its parameters.
fn validate_wifi(cfg: &SimConfig) -> Result<(), ConfigError> {
    let invalid = |what: String, problem: String| ConfigError::Invalid { what, problem };
    let mut taken = vec![false; cfg.links.len()];
    for (b, w) in cfg.wifi.iter().enumerate() {
        let what = format!("wifi {b} `{}`", w.name);
        if w.ap.0 as usize >= cfg.nodes.len() {
            return Err(ConfigError::NoSuchNode {
                what,
                node: w.ap.0,
                count: cfg.nodes.len(),
            });
        }
        if w.stations.is_empty() || w.stations.len() != w.mac.stations.len() {
            return Err(invalid(
                what,
                format!(
                    "{} stations but {} station PHYs: one of each per station, at least one",
                    w.stations.len(),
                    w.mac.stations.len()
                ),
            ));
        }
        for (i, s) in w.stations.iter().enumerate() {
            let what = format!("{what} station {i}");
            if s.node.0 as usize >= cfg.nodes.len() || s.node == w.ap {
                return Err(invalid(
                    what,
                    format!("node {} is not a node other than the AP", s.node.0),
                ));
            }
            for (dir, l, from, to) in [
                ("uplink", s.uplink, s.node, w.ap),
                ("downlink", s.downlink, w.ap, s.node),
            ] {
                let Some(lc) = cfg.links.get(l.0 as usize) else {
                    return Err(invalid(
                        what,
                        format!(
                            "{dir} is link {}, but only {} links exist",
                            l.0,
                            cfg.links.len()
                        ),
                    ));
                };
                if lc.from != from || lc.to != to {
                    return Err(invalid(
                        what,
                        format!(
                            "{dir} link `{}` must go from node {} to node {}",
                            lc.name, from.0, to.0
                        ),
                    ));
                }
                let plain = lc.rate_bps.is_none()
                    && lc.rate_shape.is_none()
                    && lc.delay == Dur::ZERO
                    && lc.delay_changes.is_empty()
                    && lc.jitter.is_none()
                    && matches!(lc.loss, LossConfig::None)
                    && !lc.monitor;
                if !plain {
                    return Err(invalid(
                        what,
                        format!(
                            "{dir} link `{}` is a Wi-Fi hop: no rate, delay, jitter, loss or \
                             monitor of its own (the MAC decides)",
                            lc.name
                        ),
                    ));
                }
                let t = &mut taken[l.0 as usize];
                if *t {
                    return Err(invalid(
                        what,
                        format!("link `{}` is already a Wi-Fi hop", lc.name),
                    ));
                }
                *t = true;
            }
        }
        crate::wifi::mac::Mac::new(w.mac.clone(), 0, 0)
            .map_err(|e| invalid(what.clone(), e.to_string()))?;
    }
    Ok(())
}

/// A QUIC flow's options, and the TCP features it does not model.
fn check_quic(
    what: &str,
    f: &crate::config::FlowConfig,
    q: &crate::config::QuicConfig,
) -> Result<(), ConfigError> {
    let bad = |m: &str| {
        Err(ConfigError::Invalid {
            what: what.to_owned(),
            problem: m.to_owned(),
        })
    };
    if f.requests.is_some()
        || f.app_rate_bps.is_some()
        || f.rcv_wnd.is_some()
        || f.reader.is_some()
        || f.fast_open
    {
        return bad("a QUIC flow supports no requests, app_rate_bps, rcv_wnd, reader or fast_open");
    }
    if !(1200..=65_527).contains(&q.datagram_bytes) {
        // RFC 9000 §14: at least 1200 bytes; at most a UDP payload.
        return bad("QUIC datagram_bytes must be within 1200..=65527");
    }
    if q.framing_bytes >= q.datagram_bytes {
        return bad("QUIC framing_bytes must leave stream payload in a datagram");
    }
    if q.ip_udp_overhead > 1000 {
        return bad("QUIC ip_udp_overhead must be at most 1000 bytes");
    }
    if q.ack_eliciting_threshold == 0 {
        return bad("QUIC ack_eliciting_threshold must be at least 1");
    }
    if q.clock_granularity.0 == 0 || q.clock_granularity > Dur::from_secs(1) {
        return bad("QUIC clock_granularity must be within 1 ns..=1 s");
    }
    if q.max_ack_delay > Dur::from_secs(16) || q.initial_rtt.0 == 0 {
        // RFC 9000 §18.2: max_ack_delay below 2^14 ms.
        return bad("QUIC max_ack_delay must be below 16 s and initial_rtt positive");
    }
    Ok(())
}
