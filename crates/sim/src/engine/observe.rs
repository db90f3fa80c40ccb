//! Observation: the periodic sampler (per-flow and per-queue time series) and the results
//! collected at the end of a run.
//!
//! Contract: `Simulation::sample` appends one row to every series at each sample time; the
//! series of one run all have the same length. `Simulation::finish` consumes the run and reads
//! only state (nothing it does changes what was simulated).

use cclab_cc::{Dur, INFINITE_SSTHRESH};

use super::{Deferred, Simulation};
use crate::config::{LinkConfig, SimConfig};
use crate::host::cpu::CpuCap;
use crate::link::{IntervalStats, Link};
use crate::net::PacketKind;
use crate::queue::Qdisc;
use crate::results::{
    ClassSummary, ExchangeResult, ExchangeSummary, FlowResult, FlowSummary, ProbeResult,
    ProbeSummary, QueueResult, QueueSummary, QuicSummary, Results, UdpResult, UdpSummary,
};
use crate::tcp::handshake;

/// The elements whose configured delay counts in link `l`'s delay series
/// (`QueueSeries::delay_ms`): those on its far node that take data segments arriving over it.
/// `None` when the link's delay does not change during the run (no `delay_changes`, none of
/// those elements varies).
pub(super) fn delay_elements(cfg: &SimConfig, l: &LinkConfig) -> Option<Vec<usize>> {
    let elems: Vec<usize> = cfg
        .elements
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            e.node == l.to
                && e.select.from.is_none_or(|n| n == l.from)
                && e.select.packets != PacketKind::Acks
        })
        .map(|(i, _)| i)
        .collect();
    let varies =
        !l.delay_changes.is_empty() || elems.iter().any(|&e| cfg.elements[e].spec.delay_varies());
    varies.then_some(elems)
}

/// Append the controller's own values to its columns for sample row `n - 1` (a controller
/// reports its values in the same order each time: the column after the last one filled is
/// nearly always the next key's).
fn push_cc_stats(
    cols: &mut Vec<(&'static str, Vec<Option<f64>>)>,
    cc: &dyn cclab_cc::CongestionControl,
    n: usize,
) {
    let mut next = 0;
    cc.stats(&mut |k, v| {
        let same = |key: &&'static str| std::ptr::eq(*key, k) || *key == k;
        let i = if cols.get(next).is_some_and(|(key, _)| same(key)) {
            next
        } else if let Some(i) = cols.iter().position(|(key, _)| same(key)) {
            i
        } else {
            cols.push((k, Vec::new()));
            cols.len() - 1
        };
        next = i + 1;
        let col = &mut cols[i].1;
        col.resize(n - 1, None);
        col.push(Some(v));
    });
    for (_, col) in cols.iter_mut() {
        col.resize(n, None);
    }
}

/// What one sample row of a flow reads from its transport (TCP's sender, or a QUIC flow's,
/// which has no TSQ: budget `None`, shift 0, nothing below the transport).
struct FlowRow<'a> {
    st: cclab_cc::CwndState,
    srtt: Option<Dur>,
    pacing_rate: Option<u64>,
    in_flight: u32,
    delivery_rate_bps: Option<f64>,
    retransmits: u64,
    lost: u64,
    cc: &'a dyn cclab_cc::CongestionControl,
    tsq_budget: Option<u64>,
    tsq_shift: u8,
    below_tcp: u64,
}

/// Push one sample row of flow `fr` at `t` (s), `secs` after the previous one.
#[expect(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    reason = "byte counts turn into rates in f64 exactly below 2^53 bytes (9 PB); retransmits and losses in one sample interval are bounded by the segments sent in it, far below 2^32"
)]
fn push_flow_row(fr: &mut super::FlowRt, t: f64, secs: f64, now: cclab_cc::Time) {
    let bytes = fr.bytes_delivered();
    let row = match fr.quic.as_ref() {
        Some(q) => {
            let s = &q.sender;
            FlowRow {
                st: s.cwnd_state(),
                srtt: s.srtt(),
                pacing_rate: s.pacing_rate(),
                in_flight: s.in_flight(),
                delivery_rate_bps: s.last_delivery_rate_bps(),
                retransmits: s.counters.retransmits,
                lost: s.counters.lost,
                cc: s.cc(),
                tsq_budget: None,
                tsq_shift: 0,
                below_tcp: 0,
            }
        }
        None => {
            let s = &fr.sender;
            FlowRow {
                st: s.cwnd_state(),
                srtt: s.srtt(),
                pacing_rate: s.pacing_rate(),
                in_flight: s.in_flight(),
                delivery_rate_bps: s.last_delivery_rate_bps(),
                retransmits: s.counters.retransmits,
                lost: s.counters.lost,
                cc: s.cc(),
                tsq_budget: s.tsq_budget(),
                tsq_shift: s.tsq_shift(),
                below_tcp: s.below_tcp(now),
            }
        }
    };
    let series = &mut fr.series;
    series.t_s.push(t);
    series
        .goodput_bps
        .push((bytes - fr.last_bytes) as f64 * 8.0 / secs);
    series.cwnd.push(row.st.cwnd);
    series
        .ssthresh
        .push((row.st.ssthresh < INFINITE_SSTHRESH).then_some(row.st.ssthresh));
    series.srtt_ms.push(row.srtt.map(Dur::as_millis_f64));
    series
        .pacing_rate_bps
        .push(row.pacing_rate.map(|r| r as f64 * 8.0));
    series.in_flight.push(row.in_flight);
    series.delivery_rate_bps.push(row.delivery_rate_bps);
    series
        .retransmits
        .push((row.retransmits - fr.last_retrans) as u32);
    series.losses.push((row.lost - fr.last_lost) as u32);
    series.state.push(if fr.start > now {
        "not_started"
    } else {
        row.cc.state()
    });
    // A flow that has not started has no socket, so no TSQ budget (its sender's would read
    // 2^54 for a paced socket with no rate yet: `sk_pacing_rate` ~0 shifted).
    series
        .tsq_budget
        .push(if fr.start > now { None } else { row.tsq_budget });
    series.tsq_shift.push(row.tsq_shift);
    series.below_tcp.push(row.below_tcp);
    push_cc_stats(&mut fr.cc_cols, row.cc, series.t_s.len());
    fr.last_bytes = bytes;
    fr.last_retrans = row.retransmits;
    fr.last_lost = row.lost;
}

impl Simulation {
    #[expect(
        clippy::cast_precision_loss,
        reason = "byte counts turn into rates in f64 exactly below 2^53 bytes (9 PB)"
    )]
    pub(super) fn sample(&mut self) {
        if !self.wifi.is_empty() {
            self.wifi_sample();
        }
        let t = self.now.as_secs_f64();
        let secs = self.cfg.sample_interval.as_secs_f64();
        for fr in &mut self.flows {
            push_flow_row(fr, t, secs, self.now);
        }
        for ur in &mut self.udp {
            let s = &mut ur.series;
            s.t_s.push(t);
            s.sent.push(ur.sent - ur.last_sent);
            s.goodput_bps
                .push((ur.bytes_received - ur.last_bytes) as f64 * 8.0 / secs);
            s.owd_mean_ms
                .push((ur.owd_n > 0).then(|| ur.owd_sum as f64 / ur.owd_n as f64 * 1e-6));
            ur.last_sent = ur.sent;
            ur.last_bytes = ur.bytes_received;
            ur.owd_sum = 0;
            ur.owd_n = 0;
        }
        for m in &mut self.monitors {
            let link = &mut self.links[m.link];
            let tx_done = link.tx_bytes_done(self.now);
            let tx_bytes = tx_done - m.last_tx_bytes;
            m.last_tx_bytes = tx_done;
            let iv = std::mem::take(&mut link.interval);
            let s = &mut m.series;
            s.t_s.push(t);
            s.backlog_packets.push(link.backlog_packets());
            s.backlog_bytes.push(link.backlog_bytes());
            let IntervalStats {
                sojourn_sum,
                sojourn_max,
                dequeued,
                drops,
                ce_marks,
                class_sojourn,
            } = iv;
            s.ce_marks.push(ce_marks);
            if let Some(aqm) = &link.aqm {
                let names = aqm.qdisc.class_names();
                s.class_sojourn_mean_ms.resize(names.len(), Vec::new());
                for (c, col) in s.class_sojourn_mean_ms.iter_mut().enumerate() {
                    let (sum, n) = class_sojourn[c];
                    col.push((n > 0).then(|| sum as f64 / n as f64 * 1e-6));
                }
                s.class_backlog_packets.resize(names.len(), Vec::new());
                for (c, col) in s.class_backlog_packets.iter_mut().enumerate() {
                    col.push(aqm.qdisc.class_backlog(c));
                }
            }
            s.sojourn_mean_ms
                .push((dequeued > 0).then(|| sojourn_sum as f64 / dequeued as f64 * 1e-6));
            s.sojourn_max_ms
                .push((dequeued > 0).then_some(sojourn_max as f64 * 1e-6));
            s.drops.push(drops);
            s.throughput_bps.push(tx_bytes as f64 * 8.0 / secs);
            if link.has_rate_shape() {
                let from = cclab_cc::Time(self.now.0.saturating_sub(self.cfg.sample_interval.0));
                let bits = link.capacity_bits(from, self.now);
                s.capacity_bps.push(bits as f64 / secs);
            }
            if let Some(elems) = &m.delay_elements {
                let lc = &self.cfg.links[m.link];
                let mut d =
                    lc.delay_at(self.now) + lc.jitter.map_or(Dur::ZERO, |j| j.dist.centre());
                for &e in elems {
                    d += self.cfg.elements[e]
                        .spec
                        .scheduled_delay(self.now)
                        .unwrap_or(Dur::ZERO);
                }
                s.delay_ms.push(d.as_millis_f64());
            }
        }
    }

    /// The completed exchanges of request/response flow `f` with their ideal response times
    /// (`ideal.rs`); empty for other flows.
    fn exchange_results(&self, f: usize) -> Vec<ExchangeResult> {
        let (Some(c), Some(r)) = (&self.flows[f].client, &self.cfg.flows[f].requests) else {
            return Vec::new();
        };
        let links = |route: usize| -> Vec<&LinkConfig> {
            self.paths[route]
                .iter()
                .map(|&l| &self.cfg.links[l as usize])
                .collect()
        };
        let (forward, reverse) = (links(2 * f), links(2 * f + 1));
        let request_wire = r.request_size + crate::config::TCP_IP_HEADER_BYTES;
        c.client
            .done
            .iter()
            .map(|e| {
                let ideal = super::ideal::ideal_response_time(
                    &forward,
                    &reverse,
                    request_wire,
                    e.response_bytes,
                    self.flows[f].mss,
                    e.opened_connection,
                    handshake::SYN_WIRE_BYTES,
                )
                .unwrap_or(Dur(1))
                .max(Dur(1))
                .as_secs_f64();
                let t = e.completed.saturating_since(e.began).as_secs_f64();
                ExchangeResult {
                    index: e.index,
                    start_s: e.began.as_secs_f64(),
                    response_time_s: t,
                    ideal_s: ideal,
                    slowdown: t / ideal,
                    response_bytes: e.response_bytes,
                    opened_connection: e.opened_connection,
                    request_transmissions: e.request_transmissions,
                }
            })
            .collect()
    }

    /// Flow `f`'s ideal FCT (`ideal.rs`) over its data path, for a sized flow.
    fn ideal_fct(&self, f: usize) -> Option<Dur> {
        let fr = &self.flows[f];
        let path: Vec<&LinkConfig> = self.paths[2 * f]
            .iter()
            .map(|&l| &self.cfg.links[l as usize])
            .collect();
        let size = fr.size?;
        let data = super::ideal::ideal_fct(&path, size, fr.mss)?;
        let fc = &self.cfg.flows[f];
        let on_syn = fc.fast_open && size <= u64::from(handshake::syn_data_space(fr.mss));
        if !fc.handshake || on_syn {
            return Some(data);
        }
        let back: Vec<&LinkConfig> = self.paths[2 * f + 1]
            .iter()
            .map(|&l| &self.cfg.links[l as usize])
            .collect();
        let syn = handshake::SYN_WIRE_BYTES;
        Some(super::ideal::handshake_rtt(&path, &back, syn, syn) + data)
    }

    #[expect(
        clippy::cast_precision_loss,
        reason = "byte counts and nanosecond delays are exact in f64 below 2^53 (9 PB, 104 days); beyond that only the last bits of a reported statistic round"
    )]
    pub(super) fn finish(mut self) -> Results {
        let end = self.now;
        let duration = self.cfg.duration.as_secs_f64();
        let ideal: Vec<Option<f64>> = (0..self.flows.len())
            .map(|f| self.ideal_fct(f).map(Dur::as_secs_f64))
            .collect();
        let mut exchanges: Vec<Vec<ExchangeResult>> = (0..self.flows.len())
            .map(|f| self.exchange_results(f))
            .collect();
        let mut flows = Vec::with_capacity(self.flows.len());
        for (f, ((fr, fc), ideal_fct_s)) in self
            .flows
            .iter_mut()
            .zip(&self.cfg.flows)
            .zip(ideal)
            .enumerate()
        {
            let exchanges = std::mem::take(&mut exchanges[f]);
            let bytes = fr.bytes_delivered();
            let stop = fr
                .completed_at
                .unwrap_or_else(|| fr.stop.map_or(end, |s| s.min(end)));
            let active = stop.saturating_since(fr.start).as_secs_f64();
            let s = &fr.sender;
            let h = &s.rtt_hist;
            let ms = |v: Option<u64>| v.map(|x| x as f64 * 1e-6);
            let fct = fr
                .completed_at
                .map(|t| t.saturating_since(fr.start).as_secs_f64());
            let summary = FlowSummary {
                goodput_bps: if active > 0.0 {
                    bytes as f64 * 8.0 / active
                } else {
                    0.0
                },
                bytes_delivered: bytes,
                segments_sent: s.counters.segments_sent,
                retransmits: s.counters.retransmits,
                segments_lost: s.counters.lost,
                fast_recoveries: s.counters.fast_recoveries,
                rto_count: s.counters.rtos,
                tlp_count: s.counters.tlps,
                rto_times_s: s.rto_times.iter().map(|t| t.as_secs_f64()).collect(),
                rtt_mean_ms: h.mean().map(|x| x * 1e-6),
                rtt_p50_ms: ms(h.quantile(0.5)),
                rtt_p95_ms: ms(h.quantile(0.95)),
                rtt_p99_ms: ms(h.quantile(0.99)),
                fct_s: fct,
                size_bytes: fr.size,
                ideal_fct_s,
                fct_slowdown: fct.zip(ideal_fct_s).map(|(a, b)| a / b),
                complete: fr.size.is_none() || fr.completed_at.is_some(),
                min_cwnd: s.min_cwnd(),
                ecn: s.ecn_mode().name(),
                ce_delivered: s.delivered_ce(),
                ce_echoes: s.counters.ce_echoes,
                ecn_reductions: s.counters.ecn_reductions,
                loss_rate: if s.counters.segments_sent > 0 {
                    s.counters.lost as f64 / s.counters.segments_sent as f64
                } else {
                    0.0
                },
                dsacks_sent: fr.receiver.dsacks_sent,
                dsacks_received: s.counters.dsacks,
                dsack_dups: s.counters.dsack_dups,
                spurious_retransmits: s.counters.spurious_retransmits,
                full_undos: s.counters.full_undos,
                partial_undos: s.counters.partial_undos,
                dsack_undos: s.counters.dsack_undos,
                loss_undos: s.counters.loss_undos,
                spurious_rtos: s.counters.spurious_rtos,
                reordered: fr.reorder.reordered(),
                reorder_ratio: fr.reorder.ratio(),
                reorder_extent_max: fr.reorder.extent_max(),
                reorder_extent_mean: fr.reorder.extent_mean(),
                exchanges: None,
                quic: None,
            };
            let summary = match &fr.quic {
                Some(q) => quic_summary(q, summary),
                None => summary,
            };
            let summary = match (&fr.client, &fc.requests) {
                (Some(c), Some(r)) => FlowSummary {
                    size_bytes: Some(r.responses.iter().sum()),
                    complete: c.client.finished(),
                    exchanges: Some(ExchangeSummary::of(c.client.exchanges(), &exchanges)),
                    ..summary
                },
                _ => summary,
            };
            flows.push(FlowResult {
                name: fc.name.clone(),
                controller: fc.cc.name().to_owned(),
                summary,
                series: {
                    let mut series = std::mem::take(&mut fr.series);
                    series.cc_stats = std::mem::take(&mut fr.cc_cols).into_iter().collect();
                    series
                },
                trace: fr.sender.take_trace(),
                exchanges,
            });
        }
        for m in &self.monitors {
            self.links[m.link].settle(end);
        }
        let queues = self
            .monitors
            .iter_mut()
            .map(|m| {
                let link = &mut self.links[m.link];
                let tx_bytes = link.tx_bytes_done(end);
                let h = &link.sojourn;
                let ms = |v: Option<u64>| v.map(|x| x as f64 * 1e-6);
                QueueResult {
                    name: self.cfg.links[m.link].name.clone(),
                    summary: QueueSummary {
                        enqueued: link.enqueued,
                        drops: link.drops,
                        link_losses: link.link_losses,
                        delay_mean_ms: h.mean().map(|x| x * 1e-6),
                        delay_p95_ms: ms(h.quantile(0.95)),
                        delay_max_ms: ms(h.max()),
                        throughput_bps: tx_bytes as f64 * 8.0 / duration.max(1e-9),
                        max_backlog_packets: link.max_backlog,
                        discipline: link.aqm.as_ref().map_or("fifo", |a| a.qdisc.name()),
                        aqm_drops: link
                            .aqm
                            .as_ref()
                            .map_or(0, |a| a.tally.class.iter().map(|c| c.aqm_drops).sum()),
                        ce_marks: link.aqm.as_ref().map_or(0, |a| a.ce_marks()),
                        delay_p50_ms: ms(h.quantile(0.5)),
                        delay_p99_ms: ms(h.quantile(0.99)),
                        classes: link.aqm.as_ref().map_or_else(Vec::new, |a| {
                            a.qdisc
                                .class_names()
                                .iter()
                                .enumerate()
                                .map(|(c, &name)| {
                                    let t = &a.tally.class[c];
                                    let h = link.class_sojourn(c);
                                    ClassSummary {
                                        name,
                                        enqueued: t.enqueued,
                                        overflow_drops: t.overflow_drops,
                                        aqm_drops: t.aqm_drops,
                                        ce_marks: t.ce_marks,
                                        delay_mean_ms: h.mean().map(|x| x * 1e-6),
                                        delay_p50_ms: ms(h.quantile(0.5)),
                                        delay_p95_ms: ms(h.quantile(0.95)),
                                        delay_p99_ms: ms(h.quantile(0.99)),
                                        delay_max_ms: ms(h.max()),
                                    }
                                })
                                .collect()
                        }),
                    },
                    series: std::mem::take(&mut m.series),
                }
            })
            .collect();
        let probes = self
            .probes
            .iter_mut()
            .zip(&self.cfg.probes)
            .map(|(p, pc)| {
                let ms = |v: Option<u64>| v.map(|x| x as f64 * 1e-6);
                ProbeResult {
                    name: pc.name.clone(),
                    kind: pc.kind.name(),
                    dscp: pc.dscp,
                    seq: std::mem::take(&mut p.seq),
                    sent: p.next_seq,
                    summary: ProbeSummary {
                        answered: p.hist.len(),
                        rtt_mean_ms: p.hist.mean().map(|x| x * 1e-6),
                        rtt_p50_ms: ms(p.hist.quantile(0.5)),
                        rtt_p95_ms: ms(p.hist.quantile(0.95)),
                        rtt_p99_ms: ms(p.hist.quantile(0.99)),
                    },
                    t_s: std::mem::take(&mut p.t_s),
                    rtt_ms: std::mem::take(&mut p.rtt_ms),
                }
            })
            .collect();
        let udp = self
            .udp
            .iter_mut()
            .zip(&self.cfg.udp)
            .map(|(u, uc)| {
                let ms = |v: Option<u64>| v.map(|x| x as f64 * 1e-6);
                let span = u.max_seq.map_or(0, |m| m + 1);
                let lost = span.saturating_sub(u.received);
                let stop = uc.stop.map_or(end, |s| s.min(end));
                let active = stop.saturating_since(uc.start).as_secs_f64();
                UdpResult {
                    name: uc.name.clone(),
                    pattern: uc.pattern.name(),
                    dscp: uc.dscp,
                    summary: UdpSummary {
                        sent: u.sent,
                        received: u.received,
                        lost,
                        loss_rate: if span > 0 {
                            lost as f64 / span as f64
                        } else {
                            0.0
                        },
                        bytes_received: u.bytes_received,
                        goodput_mbps: if active > 0.0 {
                            u.bytes_received as f64 * 8.0 / active * 1e-6
                        } else {
                            0.0
                        },
                        ce_received: u.ce_received,
                        owd_mean_ms: u.owd.mean().map(|x| x * 1e-6),
                        owd_p50_ms: ms(u.owd.quantile(0.5)),
                        owd_p99_ms: ms(u.owd.quantile(0.99)),
                    },
                    series: std::mem::take(&mut u.series),
                }
            })
            .collect();
        for l in &mut self.links {
            l.settle(end);
        }
        let mut stats = self.stats;
        stats.peak_pending_events = self.events.peak_len() as u64;
        stats.data_packets_dropped = self.links.iter().map(|l| l.data_dropped).sum::<u64>()
            + self.fq_data_drops
            + self.vio_data_drops
            + self.elements_data_dropped()
            + self.wifi_data_dropped();
        // Inside the network: links, host qdiscs and virtio devices, and arrivals waiting for a
        // descheduled host.
        stats.data_packets_in_network = self.links.iter().map(Link::data_inside).sum::<u64>()
            + self.elements_data_inside()
            + self.wifi_data_inside()
            + self
                .hosts
                .iter()
                .map(|h| {
                    let waiting = h
                        .inbox
                        .iter()
                        .filter(|d| matches!(d, Deferred::Packet(p) if p.is_data()))
                        .count() as u64;
                    let vio = h
                        .vio
                        .as_ref()
                        .map_or(0, |v| v.packets().filter(|p| p.is_data()).count() as u64);
                    waiting + vio + h.fq.as_ref().map_or(0, |q| q.data_inside())
                })
                .sum::<u64>();
        stats.virtio_ring_peak_bytes = self
            .hosts
            .iter()
            .filter_map(|h| h.vio.as_ref().map(|v| v.peak_ring_bytes()))
            .max()
            .unwrap_or(0);
        for c in self
            .hosts
            .iter()
            .filter_map(|h| h.cpu.as_ref().and_then(CpuCap::quota))
        {
            stats.cfs_runtime_ns += c.runtime();
            stats.cfs_throttles += c.throttles();
            stats.cfs_max_overrun_ns = stats.cfs_max_overrun_ns.max(c.max_overrun());
        }
        stats.virtio_queue_stops = self
            .hosts
            .iter()
            .filter_map(|h| h.vio.as_ref().map(|v| v.stops()))
            .sum();
        for fr in &self.flows {
            stats.tsq_throttles += fr.sender.counters.tsq_throttles;
            stats.skbs_sent += fr.sender.counters.skbs;
            stats.trace_rows_dropped += fr.sender.trace_dropped();
        }
        Results {
            seed: self.cfg.seed,
            duration_s: duration,
            flows,
            queues,
            probes,
            udp,
            wifi: self.wifi_results(),
            engine: stats,
        }
    }
}

/// A QUIC flow's summary: the transport-neutral fields from its endpoints over `base` (the
/// same shapes as TCP's; `rto_count` 0, `tlp_count` = probe timeouts, `fast_recoveries` =
/// congestion episodes on loss), and its own counters in `quic`.
#[expect(
    clippy::cast_precision_loss,
    reason = "packet counts are far below 2^53"
)]
fn quic_summary(q: &super::quic::QuicRt, base: FlowSummary) -> FlowSummary {
    let s = &q.sender;
    let c = s.counters;
    let h = &s.rtt_hist;
    let ms = |v: Option<u64>| v.map(|x| x as f64 * 1e-6);
    FlowSummary {
        segments_sent: c.packets_sent,
        retransmits: c.retransmits,
        segments_lost: c.lost,
        fast_recoveries: c.recoveries,
        rto_count: 0,
        tlp_count: c.ptos,
        rto_times_s: Vec::new(),
        rtt_mean_ms: h.mean().map(|x| x * 1e-6),
        rtt_p50_ms: ms(h.quantile(0.5)),
        rtt_p95_ms: ms(h.quantile(0.95)),
        rtt_p99_ms: ms(h.quantile(0.99)),
        min_cwnd: s.min_cwnd(),
        ecn: s.ecn_mode().name(),
        ce_delivered: s.delivered_ce(),
        ce_echoes: c.ce_echoed,
        ecn_reductions: c.ecn_reductions,
        loss_rate: if c.packets_sent > 0 {
            c.lost as f64 / c.packets_sent as f64
        } else {
            0.0
        },
        dsacks_sent: 0,
        dsacks_received: 0,
        dsack_dups: 0,
        spurious_retransmits: c.spurious_losses,
        full_undos: 0,
        partial_undos: 0,
        dsack_undos: 0,
        loss_undos: 0,
        spurious_rtos: 0,
        quic: Some(QuicSummary {
            ptos: c.ptos,
            probes_sent: c.probes_sent,
            persistent_congestions: c.persistent_congestions,
            spurious_losses: c.spurious_losses,
            acks_received: c.acks_received,
            acks_sent: q.receiver.acks_sent,
            duplicate_chunks: q.receiver.dup_chunks,
        }),
        ..base
    }
}
