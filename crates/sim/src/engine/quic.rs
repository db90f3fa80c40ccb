//! The endpoints of QUIC flows ([`crate::quic`]): start, stop, the sender's and the receiver's
//! timers, and the packets they consume.
//!
//! Contract: a QUIC flow's [`FlowRt`](super::FlowRt) holds its QUIC endpoints in `quic` (its
//! TCP sender and receiver are built but never run). Its timers use the flow's event slots
//! (2f: sender, 2f + 1: receiver) with their own event kinds, so the TCP entry points are
//! untouched. Its packets go to the host's egress like TCP's ACKs (no TSQ: UDP; no TSO; no TX
//! completion is reported), every entry point defers itself while its host is descheduled.
//! The entry points are never inlined, so that the engine's TCP paths (`consume`, `flush`)
//! compile as they would without QUIC.

use cclab_cc::{EcnMode, Time};

use super::{Deferred, Event, Simulation, id32};
use crate::config::{FlowId, QuicConfig};
use crate::packet::{Ecn, Owner, Packet, Payload};
use crate::quic::{ACK_PACKET_BYTES, AckFrame, Receiver, Sender, Sent};

/// The QUIC endpoints of a flow.
#[derive(Debug)]
pub(super) struct QuicRt {
    pub sender: Sender,
    pub receiver: Receiver,
    /// ECN codepoint of the data packets (RFC 9000 §13.4.1: ECT(0) for classic ECN).
    pub ecn: Ecn,
    /// IP/UDP bytes an ACK-only packet adds.
    pub ack_overhead: u32,
    /// Packets to send (reused buffer).
    pub out: Vec<Sent>,
}

impl QuicRt {
    pub(super) fn new(cfg: &crate::config::FlowConfig, q: &QuicConfig, cc_seed: u64) -> Self {
        let sender = Sender::new(cfg, q, cc_seed);
        let ecn = match sender.ecn_mode() {
            EcnMode::Off => Ecn::NotEct,
            EcnMode::Classic => Ecn::Ect0,
            EcnMode::L4s => Ecn::Ect1,
        };
        QuicRt {
            sender,
            receiver: Receiver::new(q),
            ecn,
            ack_overhead: q.ip_udp_overhead,
            out: Vec::new(),
        }
    }
}

impl Simulation {
    fn qrt(&mut self, f: usize) -> &mut QuicRt {
        self.flows[f].quic.as_mut().expect("a QUIC flow")
    }

    /// Run one QUIC sender operation at `now`, send its packets and rearm its timer.
    fn run_quic_sender(&mut self, f: usize, op: impl FnOnce(&mut Sender, Time, &mut Vec<Sent>)) {
        let now = self.now;
        let q = self.qrt(f);
        let mut out = std::mem::take(&mut q.out);
        op(&mut q.sender, now, &mut out);
        let ecn = q.ecn;
        let (src, dscp) = (self.flows[f].src, self.flows[f].dscp);
        for s in out.drain(..) {
            let pkt = Packet {
                route: 2 * id32(f),
                hop: 0,
                wire_bytes: s.wire_bytes,
                owner: Owner::Flow(FlowId(id32(f))),
                skb_bytes: 0,
                dscp,
                ecn,
                payload: Payload::QuicData {
                    pn: s.pn,
                    chunk: s.chunk,
                },
            };
            self.host_send(src, pkt);
        }
        self.qrt(f).out = out;
        if let Some(w) = self.qrt(f).sender.next_wakeup() {
            let w = w.max(self.now);
            if self.flows[f].snd_wake.is_none_or(|p| w < p) {
                self.flows[f].snd_wake = Some(w);
                self.events
                    .arm(2 * id32(f), w, Event::QuicSenderWake(id32(f)));
            }
        }
    }

    #[inline(never)]
    pub(super) fn quic_start(&mut self, f: usize) {
        self.run_quic_sender(f, Sender::start);
    }

    #[inline(never)]
    pub(super) fn quic_stop(&mut self, f: usize) {
        let now = self.now;
        self.qrt(f).sender.stop_app(now);
        self.check_quic_done(f);
    }

    #[inline(never)]
    pub(super) fn quic_sender_wake(&mut self, f: usize, due: Time) {
        if self.flows[f].snd_wake != Some(due) {
            return; // stale
        }
        let h = self.flows[f].src;
        if !self.runs(h) {
            self.defer(h, Deferred::QuicSenderWake(id32(f), due));
            return;
        }
        self.flows[f].snd_wake = None;
        self.run_quic_sender(f, Sender::on_wake);
    }

    #[inline(never)]
    pub(super) fn quic_receiver_wake(&mut self, f: usize, due: Time) {
        if self.flows[f].rcv_wake != Some(due) {
            return;
        }
        let h = self.flows[f].dst;
        if !self.runs(h) {
            self.defer(h, Deferred::QuicReceiverWake(id32(f), due));
            return;
        }
        self.flows[f].rcv_wake = None;
        let now = self.now;
        if let Some(a) = self.qrt(f).receiver.on_timer(now) {
            self.send_quic_ack(f, a);
        }
        self.rearm_quic_receiver(f);
    }

    fn rearm_quic_receiver(&mut self, f: usize) {
        if let Some(w) = self.qrt(f).receiver.ack_deadline() {
            let w = w.max(self.now);
            if self.flows[f].rcv_wake.is_none_or(|p| w < p) {
                self.flows[f].rcv_wake = Some(w);
                self.events
                    .arm(2 * id32(f) + 1, w, Event::QuicReceiverWake(id32(f)));
            }
        }
    }

    fn send_quic_ack(&mut self, f: usize, a: AckFrame) {
        let overhead = self.qrt(f).ack_overhead;
        let pkt = Packet {
            route: 2 * id32(f) + 1,
            hop: 0,
            wire_bytes: ACK_PACKET_BYTES + overhead,
            owner: Owner::Flow(FlowId(id32(f))),
            skb_bytes: 0,
            dscp: self.flows[f].dscp,
            // ACK-only packets are not ack-eliciting; quicly sends them ECT like the rest,
            // but a queue marking them would change nothing here: Not-ECT, as TCP's pure ACKs.
            ecn: Ecn::NotEct,
            payload: Payload::QuicAck(a),
        };
        self.host_send(self.flows[f].dst, pkt);
    }

    /// A QUIC data packet of flow `f` reaches its receiver.
    #[inline(never)]
    pub(super) fn consume_quic_data(&mut self, f: usize, pn: u64, chunk: u64, ecn: Ecn) {
        self.stats.data_packets_delivered += 1;
        let now = self.now;
        if let Some(a) = self.qrt(f).receiver.on_packet(now, pn, chunk, ecn) {
            self.send_quic_ack(f, a);
        }
        self.check_quic_done(f);
        self.rearm_quic_receiver(f);
    }

    /// A QUIC ACK of flow `f` reaches its sender.
    #[inline(never)]
    pub(super) fn consume_quic_ack(&mut self, f: usize, a: &AckFrame) {
        self.run_quic_sender(f, |s, now, out| s.on_ack(now, a, out));
    }

    fn check_quic_done(&mut self, f: usize) {
        let q = self.qrt(f);
        // Only a sized transfer completes (as for TCP flows).
        if let Some(n) = q.sender.total_chunks()
            && q.receiver.chunks_delivered >= n
            && self.flows[f].size.is_some()
            && self.flows[f].completed_at.is_none()
        {
            self.flows[f].completed_at = Some(self.now);
        }
    }
}
