//! Request/response flows in the engine: the client at the flow's receiving host, the
//! server's requests, SYNs and responses at its sending host ([`crate::tcp::exchange`] has
//! the model).
//!
//! Contract: only flows with `FlowConfig::requests` reach this file. The ordinary data and ACK
//! paths stay as they are: a flow's client is looked at when the flow starts, when a control
//! segment (SYN, SYN-ACK) or a request arrives, when the client's own timer fires, and when
//! the receiver's in-order data reaches the end the server has written (the test the engine
//! makes for every sized flow's completion anyway), never per data segment or ACK.

use cclab_cc::{Dur, Time};

use super::{Deferred, Event, Simulation, id32};
use crate::config::TCP_IP_HEADER_BYTES;
use crate::packet::{Packet, Payload};
use crate::rng;
use crate::tcp::exchange::{Client, ClientOut, carried_ack, request};
use crate::tcp::handshake::{SYN_WIRE_BYTES, answer_syn};
use crate::tcp::sender::Sender;

/// The client of a request/response flow and the server's bookkeeping.
#[derive(Debug)]
pub(super) struct ClientRt {
    pub client: Client,
    /// The client's pending wake-up (stale events do not match it).
    wake: Option<Time>,
    /// Requests the server has answered.
    served: u32,
    /// The exchange the server's current connection was opened for.
    conn_for: u32,
    /// When the server last sent a SYN-ACK (its ACK's arrival gives the server's first RTT).
    synack_sent: Time,
    /// Segment where the response in progress ends (known to the client application, as an
    /// HTTP client knows the Content-Length).
    resp_end: u64,
}

impl ClientRt {
    pub(super) fn new(client: Client) -> Self {
        ClientRt {
            client,
            wake: None,
            served: 0,
            conn_for: 0,
            synack_sent: Time::ZERO,
            resp_end: u64::MAX,
        }
    }
}

impl Simulation {
    fn cr(&mut self, f: usize) -> &mut ClientRt {
        self.flows[f]
            .client
            .as_deref_mut()
            .expect("a request/response flow")
    }

    /// Flow `f` starts: without a handshake the server's socket exists already (it starts
    /// now, with nothing to send); the client begins its first exchange.
    #[cold]
    #[inline(never)]
    pub(super) fn client_start(&mut self, f: usize) {
        if !self.cfg.flows[f].handshake {
            self.run_sender(f, Sender::start);
        }
        self.client_begin(f);
    }

    /// The client begins its next exchange now (after its think time, or at the start).
    fn client_begin(&mut self, f: usize) {
        let now = self.now;
        if self.cr(f).client.opens_connection() && !self.cr(f).client.done.is_empty() {
            // The old connection's last acknowledgement leaves; its receiver is done.
            if let Some(a) = self.flows[f].receiver.take_pending_ack() {
                self.send_ack(f, a);
            }
            self.flows[f].receiver.reopen();
            self.flows[f].rcv_wake = None;
        }
        let rcv_nxt = self.flows[f].receiver.rcv_nxt();
        let out = self.cr(f).client.begin(now, rcv_nxt);
        self.client_send(f, out);
        self.rearm_client(f);
    }

    /// Put what the client hands back on the wire (from the receiving host, on the ACK route).
    fn client_send(&mut self, f: usize, out: ClientOut) {
        let (payload, bytes) = match out {
            ClientOut::None | ClientOut::Begin => return,
            ClientOut::Syn(syn) => (syn, SYN_WIRE_BYTES),
            ClientOut::Request { index, tx_count } => {
                if tx_count == 0 {
                    let bytes = self.cr(f).client.response_bytes(index).unwrap_or(0);
                    let mss = u64::from(self.flows[f].mss);
                    let base = self.flows[f].receiver.rcv_nxt();
                    self.cr(f).resp_end = base + bytes.div_ceil(mss).max(1);
                }
                let ack = self.flows[f].receiver.take_pending_ack();
                let size = self.cr(f).client.request_size() + TCP_IP_HEADER_BYTES;
                (request(index, tx_count, ack), size)
            }
        };
        self.send_control(f, 2 * id32(f) + 1, self.flows[f].dst, payload, bytes);
    }

    fn rearm_client(&mut self, f: usize) {
        let d = self.cr(f).client.deadline();
        let cr = self.cr(f);
        if d == cr.wake {
            return;
        }
        cr.wake = d;
        if let Some(t) = d {
            let t = t.max(self.now);
            self.cr(f).wake = Some(t);
            self.schedule(t, Event::ClientWake(id32(f)));
        }
    }

    /// The client's timer of flow `f`, due at `due`.
    #[cold]
    #[inline(never)]
    pub(super) fn client_wake(&mut self, f: usize, due: Time) {
        if self.cr(f).wake != Some(due) {
            return; // stale
        }
        let h = self.flows[f].dst;
        if !self.runs(h) {
            self.defer(h, Deferred::ClientWake(id32(f), due));
            return;
        }
        self.cr(f).wake = None;
        let now = self.now;
        let rcv_nxt = self.flows[f].receiver.rcv_nxt();
        let out = self.cr(f).client.on_wake(now, rcv_nxt);
        if out == ClientOut::Begin {
            self.client_begin(f);
            return;
        }
        self.client_send(f, out);
        self.rearm_client(f);
    }

    /// In-order data of flow `f` reached the end its server has written: for a
    /// request/response flow, the response may be complete; otherwise the sized transfer is.
    #[cold]
    #[inline(never)]
    pub(super) fn transfer_done(&mut self, f: usize) {
        if self.flows[f].client.is_none() {
            self.flows[f].completed_at = Some(self.now);
            return;
        }
        let delivered = self.flows[f].receiver.segments_delivered;
        let now = self.now;
        let cr = self.cr(f);
        if !cr.client.waiting() || delivered < cr.resp_end {
            return; // a straggler of an earlier response
        }
        cr.resp_end = u64::MAX;
        match cr.client.on_response(now) {
            Some(t) if t <= now => self.client_begin(f),
            Some(_) => self.rearm_client(f),
            None => {
                if self.cr(f).client.finished() {
                    self.flows[f].completed_at = Some(now);
                }
            }
        }
    }

    /// A SYN of request/response flow `f` reaches its server at host `h`: a SYN for the next
    /// exchange's connection replaces the server's socket by a new one; every SYN is answered.
    #[cold]
    #[inline(never)]
    pub(super) fn server_syn(&mut self, f: usize, h: u32, syn: &Payload) {
        let persistent = self.cfg.flows[f]
            .requests
            .as_ref()
            .is_some_and(|r| r.persistent);
        let (served, conn_for) = (self.cr(f).served, self.cr(f).conn_for);
        if !persistent && self.flows[f].sender.is_started() && served > conn_for {
            let seed = rng::cc_seed(self.cfg.seed, id32(f));
            let fresh = self.flows[f].sender.reopen(&self.cfg.flows[f], seed);
            self.flows[f].sender = fresh;
            self.flows[f].snd_wake = None;
            self.cr(f).conn_for = served;
        }
        self.cr(f).synack_sent = self.now;
        if let Some(syn_ack) = answer_syn(syn) {
            self.send_control(f, 2 * id32(f), h, syn_ack, SYN_WIRE_BYTES);
        }
    }

    /// A SYN-ACK of request/response flow `f` reaches its client.
    #[cold]
    #[inline(never)]
    pub(super) fn client_syn_ack(&mut self, f: usize, tsecr: Time) {
        let now = self.now;
        let rcv_nxt = self.flows[f].receiver.rcv_nxt();
        let out = self.cr(f).client.on_syn_ack(now, tsecr, rcv_nxt);
        self.client_send(f, out);
        self.rearm_client(f);
    }

    /// A request of flow `f` reaches its server: its acknowledgement goes to the sender; the
    /// handshake's ACK it carries establishes the server's side; a request not yet answered is
    /// answered with its response.
    #[cold]
    #[inline(never)]
    pub(super) fn server_request(&mut self, f: usize, pkt: &Packet) {
        let req = &pkt.payload;
        let &Payload::Request { index, .. } = req else {
            return;
        };
        if let Some(ack) = carried_ack(req) {
            // Consumed as the ACK it carries, by the engine's one ACK path (a second call of
            // the sender's ACK handler would keep the compiler from inlining it into the hot
            // one).
            let mut a = *pkt;
            a.payload = ack;
            self.consume(&a);
        }
        if !self.flows[f].sender.is_started() {
            let rtt = self.now.saturating_since(self.cr(f).synack_sent);
            self.run_sender(f, |s, now, out| s.accept(now, rtt.max(Dur(1)), out));
        }
        if index != self.cr(f).served {
            return; // a duplicate of a request already answered
        }
        self.cr(f).served += 1;
        let Some(bytes) = self.cr(f).client.response_bytes(index) else {
            return;
        };
        self.run_sender(f, |s, now, out| s.write_response(now, bytes, out));
    }
}
