//! Stack profiles: the flow key `stack` and the keys of the rules it sets.
//!
//! Contract: [`resolve`] reads `stack` (`linux`, the default, or `ns3`) and the per-rule keys
//! (`loss_detection`, `tlp`, `rto_min`, `rto_rule`, `ts_clock`, `cc_rtt`, `quickack`,
//! `sack_compression`, `host_offloads`) of one flow table: the stack gives every rule its
//! default ([`cclab_sim::TcpRules::LINUX`] or [`cclab_sim::TcpRules::NS3`]) and each key the
//! file gives overrides one rule, so an ablation switches one mechanism of a stack on or off.
//! The stack also sets the defaults of `undo`, `frto` and `delayed_ack` (ns-3: no undo, no
//! F-RTO, `DelAckTimeout` 200 ms) and which variant of the controller runs
//! ([`Stack::controller`]). Errors name the key and the valid values.

use cclab_cc::CcSpec;
use cclab_sim::{CcRtt, Dur, LossDetection, RtoRule, TcpRules};
use toml::Spanned;

use super::error::{Source, unknown_choice};
use super::raw::RawFlow;
use super::{DEFAULT_DELAYED_ACK, ScenarioError};
use crate::units::fmt_dur;

/// A TCP implementation whose rules a flow follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stack {
    /// Linux v6.x (`net/ipv4/`), the model's reference.
    #[default]
    Linux,
    /// ns-3.37's `TcpSocketBase` and its congestion controls (`src/internet/model/`).
    Ns3,
}

/// ns-3's `TcpSocket::DelAckTimeout` default (`src/internet/model/tcp-socket.cc`).
pub const NS3_DELAYED_ACK: Dur = Dur::from_millis(200);

/// The largest `rto_min` and `ts_clock` a file may give (RFC 6298 §2.4 asks for 1 s; 60 s is
/// ns-3's largest RTO).
pub const MAX_RULE_DURATION: Dur = Dur::from_secs(60);

impl Stack {
    /// Names accepted by the `stack` key, in variant order.
    pub const NAMES: [&'static str; 2] = ["linux", "ns3"];

    /// What each stack stands for, for `cclab list stacks`.
    pub const DOCS: [(&'static str, &'static str); 2] = [
        (
            "linux",
            "Linux v6.x TCP (net/ipv4/): RACK-TLP, DSACK and F-RTO undo, 200 ms minimum RTO, \
             microsecond RTT samples, 40 ms delayed ACK with quick-ACK mode, SACK compression, \
             TSQ and TSO; Linux's controllers",
        ),
        (
            "ns3",
            "ns-3.37 TcpSocketBase (src/internet/model/tcp-socket-base.cc): RFC 6675 \
             duplicate-ACK threshold 3 and IsLost, retransmission on partial ACKs, no TLP, no \
             undo, no F-RTO, RTO max(SRTT + max(1 ms, 4 RTTVAR), 1 s) backing off to 60 s, RTT \
             from a millisecond timestamp echo with controllers seeing the smoothed RTT, 200 ms \
             delayed ACK without quick-ACK, no SACK compression, no TSQ or TSO; ns-3's variants \
             of the controllers where they differ",
        ),
    ];

    /// The stack's name, as in [`Stack::NAMES`].
    #[must_use]
    pub fn name(self) -> &'static str {
        Stack::NAMES[self as usize]
    }

    /// The rules of the stack.
    #[must_use]
    pub fn rules(self) -> TcpRules {
        match self {
            Stack::Linux => TcpRules::LINUX,
            Stack::Ns3 => TcpRules::NS3,
        }
    }

    /// Whether the stack undoes spurious reductions and has F-RTO (the defaults of `undo` and
    /// `frto`): Linux does, ns-3 has neither.
    #[must_use]
    pub fn undo(self) -> bool {
        self == Stack::Linux
    }

    /// The stack's delayed-ACK timer (the default of `delayed_ack`).
    #[must_use]
    pub fn delayed_ack(self) -> Dur {
        match self {
            Stack::Linux => DEFAULT_DELAYED_ACK,
            Stack::Ns3 => NS3_DELAYED_ACK,
        }
    }

    /// The controller as this stack runs it ([`CcSpec::for_ns3`] for ns-3), except for the
    /// controller keys in `given` that the stack's variant would set: the file's value wins,
    /// so a study can switch one rule of ns-3's variant back (`tcp_friendliness` of CUBIC,
    /// `ecn_response` of BBRv3).
    #[must_use]
    pub fn controller(self, cc: &CcSpec, given: &[&str]) -> CcSpec {
        let mut out = match self {
            Stack::Linux => return cc.clone(),
            Stack::Ns3 => cc.for_ns3(),
        };
        match (&mut out, cc) {
            (CcSpec::Cubic(o), CcSpec::Cubic(c)) if given.contains(&"tcp_friendliness") => {
                o.tcp_friendliness = c.tcp_friendliness;
            }
            (CcSpec::Bbr3(o), CcSpec::Bbr3(c)) if given.contains(&"ecn_response") => {
                o.ecn_response = c.ecn_response;
            }
            _ => {}
        }
        out
    }
}

/// A flow's stack and the rules resolved from it and the per-rule keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub stack: Stack,
    pub rules: TcpRules,
}

fn choice<T: Copy>(
    src: &Source<'_>,
    what: &str,
    key: &str,
    raw: Option<&Spanned<String>>,
    noun: &str,
    choices: &[(&str, T)],
    default: T,
) -> Result<T, ScenarioError> {
    let Some(v) = raw else {
        return Ok(default);
    };
    match choices.iter().find(|(n, _)| *n == v.get_ref().as_str()) {
        Some(&(_, t)) => Ok(t),
        None => {
            let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
            Err(src.error(
                Some(v.span()),
                format!("{what}.{key}"),
                unknown_choice(noun, v.get_ref(), &names),
            ))
        }
    }
}

fn duration(
    src: &Source<'_>,
    what: &str,
    key: &str,
    raw: Option<&Spanned<crate::units::TimeValue>>,
    positive: bool,
    default: Dur,
) -> Result<Dur, ScenarioError> {
    let Some(v) = raw else {
        return Ok(default);
    };
    let d = v.get_ref().0;
    if d > MAX_RULE_DURATION || (positive && d == Dur::ZERO) {
        let low = if positive { "above 0" } else { "at least 0" };
        return Err(src.error(
            Some(v.span()),
            format!("{what}.{key}"),
            format!(
                "must be {low} and at most {}, got {}",
                fmt_dur(MAX_RULE_DURATION),
                fmt_dur(d)
            ),
        ));
    }
    Ok(d)
}

/// The stack of flow table `f` (called `what` in messages) and its rules.
pub(crate) fn resolve(
    src: &Source<'_>,
    what: &str,
    f: &RawFlow,
) -> Result<Resolved, ScenarioError> {
    let stacks = [("linux", Stack::Linux), ("ns3", Stack::Ns3)];
    let stack = choice(
        src,
        what,
        "stack",
        f.stack.as_ref(),
        "stack",
        &stacks,
        Stack::Linux,
    )?;
    let d = stack.rules();
    let flag =
        |b: &Option<Spanned<bool>>, default: bool| b.as_ref().map_or(default, |v| *v.get_ref());
    let rules = TcpRules {
        loss_detection: choice(
            src,
            what,
            "loss_detection",
            f.loss_detection.as_ref(),
            "loss detection",
            &[
                ("rack", LossDetection::Rack),
                ("dupthresh", LossDetection::DupThresh),
            ],
            d.loss_detection,
        )?,
        tlp: flag(&f.tlp, d.tlp),
        rto_rule: choice(
            src,
            what,
            "rto_rule",
            f.rto_rule.as_ref(),
            "RTO rule",
            &[("linux", RtoRule::Linux), ("rfc6298", RtoRule::Rfc6298)],
            d.rto_rule,
        )?,
        rto_min: duration(src, what, "rto_min", f.rto_min.as_ref(), true, d.rto_min)?,
        ts_clock: duration(
            src,
            what,
            "ts_clock",
            f.ts_clock.as_ref(),
            false,
            d.ts_clock,
        )?,
        cc_rtt: choice(
            src,
            what,
            "cc_rtt",
            f.cc_rtt.as_ref(),
            "controller RTT",
            &[("sample", CcRtt::Sample), ("srtt", CcRtt::Smoothed)],
            d.cc_rtt,
        )?,
        quickack: flag(&f.quickack, d.quickack),
        sack_compression: flag(&f.sack_compression, d.sack_compression),
        host_offloads: flag(&f.host_offloads, d.host_offloads),
    };
    Ok(Resolved { stack, rules })
}
