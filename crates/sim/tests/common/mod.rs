//! Helpers shared by the simulator's integration tests (each test file includes this module with
//! `mod common;` and uses what it needs).

#![allow(dead_code, reason = "each test file uses a different subset")]

use cclab_cc::num::usize_to_f64;
use cclab_sim::{FlowResult, TracePoint};

/// Mean goodput of a flow over the samples with `t` in (from, to], bit/s.
#[must_use]
pub fn goodput_between(f: &FlowResult, from: f64, to: f64) -> f64 {
    let v: Vec<f64> = f
        .series
        .t_s
        .iter()
        .zip(&f.series.goodput_bps)
        .filter(|(t, _)| **t > from + 1e-9 && **t <= to + 1e-9)
        .map(|(_, g)| *g)
        .collect();
    v.iter().sum::<f64>() / usize_to_f64(v.len())
}

/// Jain's fairness index of `x`: (Σx)² / (n·Σx²), 1 for equal shares, 1/n for one taker.
#[must_use]
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (usize_to_f64(x.len()) * s2)
}

/// Send times (seconds) of new segments in order, `(seq, t)`, from a sender trace's `xmit` rows
/// (one segment per skb with TSO off; a retransmission does not advance SND.NXT and is skipped).
#[must_use]
pub fn new_sends(tr: &[TracePoint]) -> Vec<(u64, f64)> {
    let mut nxt = 0;
    let mut out = Vec::new();
    for p in tr.iter().filter(|p| p.event == "xmit") {
        for seq in nxt..p.snd_nxt {
            out.push((seq, p.t_s));
        }
        nxt = nxt.max(p.snd_nxt);
    }
    out
}
