//! The endpoints: TCP flows (start, stop, sender and receiver timers, TSQ kicks and TX
//! completions), the packets hosts consume, latency probes and UDP sources.
//!
//! Contract: every entry point runs at the engine's `now` on behalf of one host, and defers
//! itself (`Simulation::defer`) while that host's CPU schedule has it descheduled. A sender's
//! outgoing segments go to its host's egress (`egress.rs`) and its timer is re-armed after
//! every operation; each endpoint keeps at most one useful pending timer event.

use cclab_cc::Time;

use super::slack::Side;
use super::{Deferred, Event, Simulation, id32};
use crate::config::{ACK_WIRE_BYTES, FlowId, ProbeId, UdpId};
use crate::packet::{Ecn, Owner, Packet, Payload};
use crate::tcp::handshake::{SYN_WIRE_BYTES, TFO_COOKIE_OPTION_BYTES, answer_syn};
use crate::tcp::sender::{Outgoing, Sender, TxNote};

impl Simulation {
    // ----- flows -----

    pub(super) fn flow_start(&mut self, f: usize) {
        let h = self.flows[f].src;
        if !self.runs(h) {
            self.defer(h, Deferred::FlowStart(id32(f)));
            return;
        }
        if self.flows[f].client.is_some() {
            self.client_start(f);
            return;
        }
        if self.flows[f].quic.is_some() {
            self.quic_start(f);
            return;
        }
        self.run_sender(f, Sender::start);
    }

    /// Run one sender operation at `now`, put what it sends on the network and rearm its timer.
    #[inline]
    pub(super) fn run_sender(
        &mut self,
        f: usize,
        op: impl FnOnce(&mut Sender, Time, &mut Vec<Outgoing>),
    ) {
        let mut out = std::mem::take(&mut self.out);
        op(&mut self.flows[f].sender, self.now, &mut out);
        if self.flows[f].sender.has_control() {
            self.send_syn(f);
        }
        self.flush(f, &mut out);
        self.out = out;
        self.rearm_sender(f);
    }

    pub(super) fn flow_stop(&mut self, f: usize) {
        let h = self.flows[f].src;
        if !self.runs(h) {
            self.defer(h, Deferred::FlowStop(id32(f)));
            return;
        }
        if self.flows[f].quic.is_some() {
            self.quic_stop(f);
            return;
        }
        self.flows[f].sender.stop_app(self.now);
    }

    /// The sender's wakeup that was due at `due` (stale if it waited for a descheduled host and
    /// was re-armed meanwhile).
    pub(super) fn sender_wake(&mut self, f: usize, due: Time) {
        if self.flows[f].snd_wake != Some(due) {
            return; // stale
        }
        let h = self.flows[f].src;
        if !self.runs(h) {
            self.defer(h, Deferred::SenderWake(id32(f), due));
            return;
        }
        self.flows[f].snd_wake = None;
        if let Some(t) = self.early_wake(f, Side::Sender) {
            self.arm_wake(f, Side::Sender, Some(t));
            return;
        }
        self.run_sender(f, Sender::on_wake);
    }

    pub(super) fn receiver_wake(&mut self, f: usize, due: Time) {
        if self.flows[f].rcv_wake != Some(due) {
            return;
        }
        let h = self.flows[f].dst;
        if !self.runs(h) {
            self.defer(h, Deferred::ReceiverWake(id32(f), due));
            return;
        }
        self.flows[f].rcv_wake = None;
        if let Some(t) = self.early_wake(f, Side::Receiver) {
            self.arm_wake(f, Side::Receiver, Some(t));
            return;
        }
        if let Some(ack) = self.flows[f].receiver.on_delack_timer(self.now) {
            self.send_ack(f, ack);
        }
        self.rearm_receiver(f);
    }

    /// Arm flow `f`'s sender wake-up for its next wakeup (late by its host's timer slack,
    /// `slack.rs`), unless one is armed no later.
    pub(super) fn rearm_sender(&mut self, f: usize) {
        if self.slack.is_empty() {
            let next = self.flows[f].sender.next_wakeup();
            self.arm_wake(f, Side::Sender, next);
        } else {
            self.rearm_sender_slack(f);
        }
    }

    /// Arm flow `f`'s receiver wake-up for its ACK timers, as [`Simulation::rearm_sender`].
    pub(super) fn rearm_receiver(&mut self, f: usize) {
        if self.slack.is_empty() {
            let next = self.flows[f].receiver.delack_deadline();
            self.arm_wake(f, Side::Receiver, next);
        } else {
            self.rearm_receiver_slack(f);
        }
    }

    /// [`Simulation::rearm_sender`] with timer slack: out of line, so that the path of ideal
    /// hosts stays as small as without it (one function per side: each is on a hot path of
    /// its own).
    #[inline(never)]
    fn rearm_sender_slack(&mut self, f: usize) {
        let next = self.sender_fire(f);
        self.arm_wake(f, Side::Sender, next);
    }

    /// [`Simulation::rearm_receiver`] with timer slack, out of line as
    /// [`Simulation::rearm_sender_slack`].
    #[inline(never)]
    fn rearm_receiver_slack(&mut self, f: usize) {
        let next = self.receiver_fire(f);
        self.arm_wake(f, Side::Receiver, next);
    }

    /// Arm flow `f`'s wake-up of `side` at `next`, unless one is armed no later.
    #[inline(always)]
    pub(super) fn arm_wake(&mut self, f: usize, side: Side, next: Option<Time>) {
        if let Some(w) = next {
            let w = w.max(self.now);
            let fr = &mut self.flows[f];
            let (armed, slot, ev) = match side {
                Side::Sender => (&mut fr.snd_wake, 2 * id32(f), Event::SenderWake(id32(f))),
                Side::Receiver => (
                    &mut fr.rcv_wake,
                    2 * id32(f) + 1,
                    Event::ReceiverWake(id32(f)),
                ),
            };
            if armed.is_none_or(|p| w < p) {
                *armed = Some(w);
                self.events.arm(slot, w, ev);
            }
        }
    }

    // ----- TX completions and TSQ -----

    /// The device reports that `bytes` of flow `f`'s data complete at `at` (see `host/`).
    #[inline]
    pub(super) fn tx_complete(&mut self, f: usize, at: Time, bytes: u32) {
        match self.flows[f].sender.tx_completed(at, bytes, self.now) {
            TxNote::None => {}
            TxNote::Rearm => self.rearm_sender(f),
            TxNote::Kick => {
                if !self.flows[f].kick_queued {
                    self.flows[f].kick_queued = true;
                    self.kicks.push(id32(f));
                }
            }
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn run_kicks(&mut self) {
        let mut i = 0;
        while i < self.kicks.len() {
            let f = self.kicks[i] as usize;
            self.flows[f].kick_queued = false;
            self.sender_kick(f);
            i += 1;
        }
        self.kicks.clear();
    }

    /// The TSQ tasklet of flow `f`'s socket.
    pub(super) fn sender_kick(&mut self, f: usize) {
        let h = self.flows[f].src;
        if !self.runs(h) {
            self.defer(h, Deferred::TsqKick(id32(f)));
            return;
        }
        self.run_sender(f, Sender::tsq_kick);
    }

    #[inline]
    pub(super) fn send_ack(&mut self, f: usize, ack: Payload) {
        let pkt = Packet {
            route: 2 * id32(f) + 1,
            hop: 0,
            wire_bytes: ACK_WIRE_BYTES,
            owner: Owner::Flow(FlowId(id32(f))),
            skb_bytes: 0,
            dscp: self.flows[f].dscp,
            // Pure ACKs are not ECN-capable (RFC 3168 §6.1.4).
            ecn: Ecn::NotEct,
            payload: ack,
        };
        self.host_send(self.flows[f].dst, pkt);
    }

    /// A SYN (on the data route, from the sender's host) or SYN-ACK (on the ACK route, from
    /// the receiver's host) of flow `f`: through the host's qdisc like an ACK, not
    /// ECN-capable (RFC 3168 §6.1.1); a request/response client's request too
    /// ([`crate::tcp::exchange`]).
    pub(super) fn send_control(
        &mut self,
        f: usize,
        route: u32,
        host: u32,
        payload: Payload,
        bytes: u32,
    ) {
        let pkt = Packet {
            route,
            hop: 0,
            wire_bytes: bytes,
            owner: Owner::Flow(FlowId(id32(f))),
            skb_bytes: 0,
            dscp: self.flows[f].dscp,
            ecn: Ecn::NotEct,
            payload,
        };
        self.host_send(host, pkt);
    }

    /// Send the SYN flow `f`'s sender has made (its first, or a retransmission).
    #[cold]
    #[inline(never)]
    fn send_syn(&mut self, f: usize) {
        let Some(syn) = self.flows[f].sender.take_control() else {
            return;
        };
        if syn == Payload::WindowProbe {
            self.send_window_probe(f);
            return;
        }
        let data = match syn {
            Payload::Syn { data: true, .. } => {
                TFO_COOKIE_OPTION_BYTES + self.flows[f].sender.syn_data_bytes()
            }
            _ => 0,
        };
        self.send_control(
            f,
            2 * id32(f),
            self.flows[f].src,
            syn,
            SYN_WIRE_BYTES + data,
        );
    }

    /// A SYN of flow `f` reaches its receiver's host `h`: a Fast Open SYN's segment is
    /// delivered at once (`tcp_fastopen_add_skb`; the SYN-ACK acknowledges it, so the
    /// receiver's own ACK is not sent), and the SYN is answered. Out of the ACK and data paths.
    #[cold]
    #[inline(never)]
    fn consume_syn(&mut self, f: usize, h: u32, syn: &Payload) {
        if self.flows[f].client.is_some() {
            self.server_syn(f, h, syn);
            return;
        }
        if let &Payload::Syn {
            tsval, data: true, ..
        } = syn
        {
            let now = self.now;
            let fr = &mut self.flows[f];
            let _ = fr.receiver.on_data(now, 0, tsval, Ecn::NotEct, false);
            if fr.completed_at.is_none()
                && let Some(n) = fr.sender.total_segments()
                && fr.receiver.segments_delivered >= n
            {
                fr.completed_at = Some(now);
            }
        }
        if let Some(syn_ack) = answer_syn(syn) {
            self.send_control(f, 2 * id32(f) + 1, h, syn_ack, SYN_WIRE_BYTES);
        }
    }

    /// A SYN-ACK of flow `f` reaches its sender.
    #[cold]
    #[inline(never)]
    fn consume_syn_ack(&mut self, f: usize, tsecr: Time, data_acked: bool) {
        if self.flows[f].client.is_some() {
            self.client_syn_ack(f, tsecr);
            return;
        }
        self.run_sender(f, |s, now, out| {
            s.on_syn_ack(now, tsecr, data_acked, out);
        });
    }

    /// Route of probe `p`'s requests (`+ 1`: its replies).
    pub(super) fn probe_route(&self, p: usize) -> u32 {
        2 * id32(self.flows.len() + p)
    }

    #[inline]
    pub(super) fn consume(&mut self, pkt: &Packet) {
        let route = &self.routes[pkt.route as usize];
        let h = route.dst;
        if route.dst_sched {
            if !self.runs(h) {
                self.defer(h, Deferred::Packet(*pkt));
                return;
            }
            self.charge(h, 1);
        }
        match (pkt.owner, &pkt.payload) {
            (Owner::Flow(FlowId(f)), Payload::Data { .. }) => {
                let f = f as usize;
                if let Some(a) = self.deliver_data(f, pkt) {
                    self.send_ack(f, a);
                }
                self.rearm_receiver(f);
            }
            (Owner::Flow(FlowId(f)), syn @ &Payload::Syn { .. }) => {
                self.consume_syn(f as usize, h, syn);
            }
            (Owner::Flow(FlowId(f)), &Payload::SynAck { tsecr, data_acked }) => {
                self.consume_syn_ack(f as usize, tsecr, data_acked);
            }
            (Owner::Flow(FlowId(f)), payload @ Payload::Ack { .. }) => {
                self.run_sender(f as usize, |s, now, out| s.on_ack(now, payload, out));
            }
            (Owner::Flow(FlowId(f)), Payload::Request { .. }) => {
                self.server_request(f as usize, pkt);
            }
            (Owner::Flow(FlowId(f)), &Payload::QuicData { pn, chunk }) => {
                self.consume_quic_data(f as usize, pn, chunk, pkt.ecn);
            }
            (Owner::Flow(FlowId(f)), Payload::QuicAck(a)) => {
                self.consume_quic_ack(f as usize, a);
            }
            (Owner::Flow(FlowId(f)), Payload::WindowProbe) => {
                self.consume_window_probe(f as usize);
            }
            (Owner::Probe(ProbeId(p)), &Payload::ProbeRequest { seq, sent }) => {
                let reply = Packet {
                    route: self.probe_route(p as usize) + 1,
                    hop: 0,
                    wire_bytes: self.probes[p as usize].size,
                    owner: pkt.owner,
                    skb_bytes: 0,
                    dscp: pkt.dscp,
                    ecn: Ecn::NotEct,
                    payload: Payload::ProbeReply { seq, sent },
                };
                self.host_send(h, reply);
            }
            (Owner::Probe(ProbeId(p)), &Payload::ProbeReply { seq, sent }) => {
                let rtt = self.now.saturating_since(sent);
                let pr = &mut self.probes[p as usize];
                pr.t_s.push(sent.as_secs_f64());
                pr.seq.push(seq);
                pr.rtt_ms.push(rtt.as_millis_f64());
                pr.hist.record(rtt.as_nanos());
            }
            (Owner::Udp(UdpId(u)), &Payload::Udp { seq, sent }) => {
                let owd = self.now.saturating_since(sent).as_nanos();
                let ur = &mut self.udp[u as usize];
                ur.received += 1;
                ur.bytes_received += u64::from(pkt.wire_bytes);
                ur.ce_received += u64::from(pkt.ecn == Ecn::Ce);
                ur.max_seq = Some(ur.max_seq.map_or(seq, |m| m.max(seq)));
                ur.owd.record(owd);
                ur.owd_sum += owd;
                ur.owd_n += 1;
            }
            _ => {}
        }
    }

    /// Data segment `pkt` of flow `f` reaches its receiver: the ACK to send now, if any (the
    /// caller sends it and re-arms the receiver's timer).
    #[inline]
    pub(super) fn deliver_data(&mut self, f: usize, pkt: &Packet) -> Option<Payload> {
        let &Payload::Data {
            seq,
            tsval,
            cwr,
            tx_count,
        } = &pkt.payload
        else {
            return None;
        };
        self.stats.data_packets_delivered += 1;
        let now = self.now;
        let fr = &mut self.flows[f];
        if tx_count == 0 {
            fr.reorder.on_arrival(seq);
        }
        let ack = fr.receiver.on_data(now, seq, tsval, pkt.ecn, cwr);
        if fr.completed_at.is_none()
            && let Some(n) = fr.sender.total_segments()
            && fr.receiver.segments_delivered >= n
        {
            self.transfer_done(f);
        }
        ack
    }

    pub(super) fn on_probe_send(&mut self, p: usize) {
        let h = self.probes[p].src;
        if !self.runs(h) {
            self.defer(h, Deferred::ProbeSend(id32(p)));
            return;
        }
        let now = self.now;
        let pr = &mut self.probes[p];
        if pr.stop.is_some_and(|s| now >= s) {
            return;
        }
        let seq = pr.next_seq;
        pr.next_seq += 1;
        let (size, dscp, next) = (pr.size, pr.dscp, now + pr.interval);
        let pkt = Packet {
            route: self.probe_route(p),
            hop: 0,
            wire_bytes: size,
            owner: Owner::Probe(ProbeId(id32(p))),
            skb_bytes: 0,
            dscp,
            ecn: Ecn::NotEct,
            payload: Payload::ProbeRequest { seq, sent: now },
        };
        self.host_send(h, pkt);
        self.schedule(next, Event::ProbeSend(id32(p)));
    }

    /// UDP source `u` sends the datagram due now and schedules the next.
    pub(super) fn on_udp_send(&mut self, u: usize) {
        let h = self.udp[u].src;
        if !self.runs(h) {
            self.defer(h, Deferred::UdpSend(id32(u)));
            return;
        }
        let now = self.now;
        let ur = &mut self.udp[u];
        let seq = ur.sent;
        ur.sent += 1;
        let pkt = Packet {
            route: ur.route,
            hop: 0,
            wire_bytes: ur.size,
            owner: Owner::Udp(UdpId(id32(u))),
            skb_bytes: 0,
            dscp: ur.dscp,
            ecn: ur.ecn,
            payload: Payload::Udp { seq, sent: now },
        };
        // A datagram that waited for a descheduled host leaves late; the schedule does not
        // shift (the next one is still due at its own time, or at once if that passed).
        let next = ur.source.next(now);
        self.host_send(h, pkt);
        if let Some(t) = next {
            self.schedule(t.max(now), Event::UdpSend(id32(u)));
        }
    }
}

impl Simulation {
    /// Send the zero-window probe flow `f`'s sender has made (a header-only segment; the
    /// sender's persist timer, `crate::tcp::sender`).
    #[cold]
    #[inline(never)]
    fn send_window_probe(&mut self, f: usize) {
        let bytes = crate::config::TCP_IP_HEADER_BYTES;
        self.send_control(
            f,
            2 * id32(f),
            self.flows[f].src,
            Payload::WindowProbe,
            bytes,
        );
    }

    /// A zero-window probe of flow `f` reaches its receiver: it answers with an ACK carrying
    /// its window (`crate::tcp::receiver::rcvbuf`).
    #[cold]
    #[inline(never)]
    fn consume_window_probe(&mut self, f: usize) {
        let now = self.now;
        if let Some(ack) = self.flows[f].receiver.on_window_probe(now) {
            self.send_ack(f, ack);
        }
        self.rearm_receiver(f);
    }
}
