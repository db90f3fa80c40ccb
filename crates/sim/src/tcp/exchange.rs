//! A request/response workload on one flow: the client (the flow's receiving host) sends a
//! request, the server (its sending host) answers with a response of a given size; several
//! exchanges follow one another, on one persistent connection or a new connection each.
//!
//! Contract: [`Client`] is the client application and its socket's sending side, a sans-IO
//! state machine driven by the engine with `now`. [`Client::begin`] starts the next exchange
//! and returns what to send ([`ClientOut`]: a SYN when the exchange opens a connection, else
//! the request); [`Client::on_syn_ack`] opens the connection and sends the request;
//! [`Client::on_response`] is called when the whole response has arrived in order and says
//! when the next exchange begins; [`Client::on_wake`] runs the timers ([`Client::deadline`]:
//! think time, the SYN's retransmission, the request's retransmission). The server side is
//! the flow's [`super::sender::Sender`]: the engine passes it the ACK a request carries, and
//! its application writes the exchange's response ([`super::sender::Sender::write_response`])
//! when the request arrives.
//!
//! Model (what a Linux client and server do, simplified where stated):
//! - **Request.** One data segment of `request_size` payload bytes (at most one MSS), sent on
//!   the flow's ACK path (through the client host's qdisc and NIC, the reverse links, queues
//!   and elements) and not ECN-capable. It carries the client's pending delayed ACK, which
//!   Linux sends on the next data segment and then cancels its timer (`tcp_event_ack_sent`);
//!   with none pending the request carries no new acknowledgement.
//! - **Request loss.** The response's first segment acknowledges the request (the server
//!   writes at once, so its ACK rides on the response and no pure ACK is sent for it). If no
//!   response segment has arrived in order when the client's RTO expires, the request is sent
//!   again and the RTO doubles (RFC 6298 §5.4–5.6, `tcp_retransmit_timer`). The client's RTO
//!   comes from its own RTT estimator: the handshake's sample when it made one (RFC 6298
//!   §2.2), else the initial 1 s (§2.1); the request's acknowledgement gives no further sample
//!   (simplification). The server answers a request once; a duplicate is ignored.
//! - **Response.** Written whole when the request arrives (the server application never
//!   waits); its segments follow the previous response's in the connection's sequence space.
//!   The exchange completes when the client holds its last byte.
//! - **Persistent connection.** Every exchange after the first reuses the connection: no
//!   handshake, and the server's congestion state (cwnd, ssthresh, the controller's state,
//!   SRTT) carries over, subject to the restart after idle when the server sent nothing for
//!   longer than its RTO (`FlowConfig::slow_start_after_idle`, Linux `tcp_cwnd_restart`).
//! - **New connection per exchange** (`persistent = false`, needs the handshake): the client
//!   sends its pending ACK (the close of the old connection would carry it; FIN and TIME-WAIT
//!   are not modelled), then a SYN; the server answers with a SYN-ACK, and the request carries
//!   the handshake's ACK, which establishes the server's side with the RTT from SYN-ACK to
//!   ACK (`tcp_synack_rtt_meas`). The server's socket starts afresh (window, controller, RTT;
//!   Linux's per-destination metrics cache, `tcp_metrics`, is not modelled: with the default
//!   `tcp_no_ssthresh_metrics_save` = 1 it would restore no window state anyway). The new
//!   connection's initial sequence number continues the old one's sequence space, so the old
//!   connection's stragglers are old duplicates to it.
//! - **Response time.** From the exchange's start (the SYN when it opens a connection, else
//!   the request's first transmission) to the arrival of the response's last byte at the
//!   client: the time a client application waits for its answer.
//!
//! Not modelled: pipelining (one request outstanding at a time), requests longer than one
//! segment, the server's processing time, the client's own congestion window (one segment
//! never needs more than the initial window), and FIN/connection teardown.

use cclab_cc::{Dur, Time};

use super::handshake::Handshake;
use super::rtt::{RTO_MAX, RttEstimator};
use crate::config::RequestConfig;
use crate::packet::Payload;

/// What the client puts on the wire now.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ClientOut {
    /// Nothing.
    None,
    /// The think time is over: the caller begins the next exchange ([`Client::begin`]) once
    /// it has closed the old connection if the exchange opens a new one.
    Begin,
    /// A SYN opening the exchange's connection.
    Syn(Payload),
    /// The request of exchange `index` (transmission `tx_count`): the engine completes it with
    /// the receiver's pending ACK ([`request`]).
    Request {
        /// Which exchange.
        index: u32,
        /// Which transmission.
        tx_count: u32,
    },
}

/// One completed exchange.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exchange {
    /// Which exchange (0 = the first).
    pub index: u32,
    /// When it began: the SYN of its connection, or its request.
    pub began: Time,
    /// When the response's last byte arrived.
    pub completed: Time,
    /// Response payload bytes.
    pub response_bytes: u64,
    /// It opened a connection (its response time includes the handshake).
    pub opened_connection: bool,
    /// Transmissions of its request.
    pub request_transmissions: u32,
    /// Retransmissions of its SYN.
    pub syn_retransmissions: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Waiting to begin the next exchange at this time (think time).
    Thinking(Time),
    /// Opening the exchange's connection.
    Connecting,
    /// Request sent, waiting for the response.
    Waiting,
    /// Every exchange is done (or the application stopped).
    Done,
}

/// The client of a request/response flow.
#[derive(Debug)]
pub struct Client {
    cfg: RequestConfig,
    handshake: bool,
    /// The exchange in progress, or the next one.
    next: u32,
    phase: Phase,
    /// No exchange begins at or after this time (the flow's `stop`).
    stop: Option<Time>,
    connecting: Option<Handshake>,
    /// The connection is open (one exchange ran on it, or its handshake completed).
    open: bool,
    rtt: RttEstimator,
    backoff: u32,
    began: Time,
    opened: bool,
    req_tx: u32,
    req_timer: Option<Time>,
    syn_retrans: u32,
    /// `rcv_nxt` when the request left: the response has begun to arrive once it moved on.
    req_base: u64,
    /// The completed exchanges, in order.
    pub done: Vec<Exchange>,
    /// Response bytes received whole.
    pub bytes_done: u64,
}

impl Client {
    /// A client running `cfg`'s exchanges, opening connections with a handshake when
    /// `handshake`, beginning none at or after `stop`.
    #[must_use]
    pub fn new(cfg: &RequestConfig, handshake: bool, stop: Option<Time>) -> Self {
        Client {
            cfg: cfg.clone(),
            handshake,
            next: 0,
            phase: Phase::Thinking(Time::MAX),
            stop,
            connecting: None,
            open: false,
            rtt: RttEstimator::default(),
            backoff: 0,
            began: Time::ZERO,
            opened: false,
            req_tx: 0,
            req_timer: None,
            syn_retrans: 0,
            req_base: 0,
            done: Vec::new(),
            bytes_done: 0,
        }
    }

    /// Exchanges in all.
    #[must_use]
    pub fn exchanges(&self) -> u32 {
        u32::try_from(self.cfg.responses.len()).unwrap_or(u32::MAX)
    }

    /// Every exchange completed.
    #[must_use]
    pub fn finished(&self) -> bool {
        self.done.len() == self.cfg.responses.len()
    }

    /// The response size of exchange `index`.
    #[must_use]
    pub fn response_bytes(&self, index: u32) -> Option<u64> {
        self.cfg.responses.get(index as usize).copied()
    }

    /// Payload bytes of a request.
    #[must_use]
    pub fn request_size(&self) -> u32 {
        self.cfg.request_size
    }

    /// The exchange waits for its response (the response's completion counts only then).
    #[must_use]
    pub fn waiting(&self) -> bool {
        self.phase == Phase::Waiting
    }

    /// The next exchange opens a new connection (its SYN is about to leave): the receiver and,
    /// when its SYN arrives, the server's sender start afresh.
    #[must_use]
    pub fn opens_connection(&self) -> bool {
        self.handshake && (!self.open || !self.cfg.persistent)
    }

    /// Begin the next exchange at `now`: a SYN when it opens a connection, else the request
    /// (`rcv_nxt`: where its response will begin).
    pub fn begin(&mut self, now: Time, rcv_nxt: u64) -> ClientOut {
        if self.finished() || self.stop.is_some_and(|s| now >= s) {
            self.phase = Phase::Done;
            return ClientOut::None;
        }
        self.began = now;
        self.syn_retrans = 0;
        if self.opens_connection() {
            let (h, syn) = Handshake::connect(now, false);
            self.connecting = Some(h);
            self.open = false;
            self.opened = true;
            self.rtt = RttEstimator::default();
            self.backoff = 0;
            self.phase = Phase::Connecting;
            return ClientOut::Syn(syn);
        }
        self.opened = false;
        self.open = true;
        self.send_request(now, rcv_nxt)
    }

    fn send_request(&mut self, now: Time, rcv_nxt: u64) -> ClientOut {
        self.phase = Phase::Waiting;
        self.req_tx = 0;
        self.req_base = rcv_nxt;
        self.req_timer = Some(now + self.rto());
        ClientOut::Request {
            index: self.next,
            tx_count: 0,
        }
    }

    /// The RTO in force: RFC 6298 §2 with Linux's bounds, doubled per timeout (§5.5).
    fn rto(&self) -> Dur {
        Dur(self.rtt.rto().0.saturating_mul(1 << self.backoff.min(16))).min(RTO_MAX)
    }

    /// A SYN-ACK echoing `tsecr` arrives at `now`: the connection opens (the handshake's RTT
    /// seeds the client's RTO) and the request leaves, carrying the handshake's ACK.
    pub fn on_syn_ack(&mut self, now: Time, tsecr: Time, rcv_nxt: u64) -> ClientOut {
        let Some(h) = &mut self.connecting else {
            return ClientOut::None;
        };
        let Some(est) = h.on_syn_ack(now, tsecr, false) else {
            return ClientOut::None;
        };
        self.syn_retrans = h.retransmissions();
        self.connecting = None;
        self.open = true;
        self.rtt.sample(now, est.rtt);
        self.send_request(now, rcv_nxt)
    }

    /// The whole response of the exchange in progress has arrived at `now`. Returns when the
    /// next exchange begins (`None`: none does).
    pub fn on_response(&mut self, now: Time) -> Option<Time> {
        if self.phase != Phase::Waiting {
            return None;
        }
        let bytes = self.response_bytes(self.next).unwrap_or(0);
        self.done.push(Exchange {
            index: self.next,
            began: self.began,
            completed: now,
            response_bytes: bytes,
            opened_connection: self.opened,
            request_transmissions: self.req_tx + 1,
            syn_retransmissions: self.syn_retrans,
        });
        self.bytes_done += bytes;
        self.next += 1;
        self.req_timer = None;
        self.backoff = 0;
        if self.finished() {
            self.phase = Phase::Done;
            return None;
        }
        let at = now + self.cfg.think_time;
        self.phase = Phase::Thinking(at);
        Some(at)
    }

    /// When [`Client::on_wake`] is due, if ever.
    #[must_use]
    pub fn deadline(&self) -> Option<Time> {
        match self.phase {
            Phase::Thinking(t) if t != Time::MAX => Some(t),
            Phase::Connecting => self.connecting.and_then(|h| h.deadline()),
            Phase::Waiting => self.req_timer,
            _ => None,
        }
    }

    /// The client's timers at `now` (`rcv_nxt`: the receiver's next expected segment): the
    /// next exchange begins, or the SYN or the request is sent again.
    pub fn on_wake(&mut self, now: Time, rcv_nxt: u64) -> ClientOut {
        match self.phase {
            Phase::Thinking(t) if now >= t => ClientOut::Begin,
            Phase::Connecting => match self.connecting.as_mut().and_then(|h| h.on_timeout(now)) {
                Some(syn) => ClientOut::Syn(syn),
                None => ClientOut::None,
            },
            Phase::Waiting => match self.req_timer {
                Some(t) if now >= t => {
                    if rcv_nxt > self.req_base {
                        // The response has begun: it acknowledged the request.
                        self.req_timer = None;
                        return ClientOut::None;
                    }
                    self.req_tx += 1;
                    self.backoff += 1;
                    self.req_timer = Some(now + self.rto());
                    ClientOut::Request {
                        index: self.next,
                        tx_count: self.req_tx,
                    }
                }
                _ => ClientOut::None,
            },
            _ => ClientOut::None,
        }
    }
}

/// The request payload of exchange `index`, transmission `tx_count`, carrying `ack` (the
/// receiver's pending ACK, [`super::receiver::Receiver::take_pending_ack`]) if any.
#[must_use]
pub fn request(index: u32, tx_count: u32, ack: Option<Payload>) -> Payload {
    match ack {
        Some(Payload::Ack {
            ack,
            tsecr,
            ece,
            ce_count,
            ..
        }) => Payload::Request {
            index,
            tx_count,
            acks: true,
            ece,
            ce_count,
            ack,
            tsecr,
        },
        _ => Payload::Request {
            index,
            tx_count,
            acks: false,
            ece: false,
            ce_count: 0,
            ack: 0,
            tsecr: Time::ZERO,
        },
    }
}

/// The acknowledgement a request carries, as the pure ACK the server's sender takes.
#[must_use]
pub fn carried_ack(req: &Payload) -> Option<Payload> {
    match *req {
        Payload::Request {
            acks: true,
            ack,
            tsecr,
            ece,
            ce_count,
            ..
        } => Some(Payload::Ack {
            ack,
            sack: crate::packet::SackBlocks::default(),
            dsack: false,
            tsecr,
            ece,
            ce_count,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(persistent: bool) -> RequestConfig {
        RequestConfig {
            responses: vec![1000, 2000],
            request_size: 100,
            think_time: Dur::from_millis(5),
            persistent,
        }
    }

    const MS: fn(u64) -> Dur = Dur::from_millis;

    /// Without an RTT sample the request's RTO is RFC 6298's initial 1 s, and each timeout
    /// doubles it (§5.5): retransmissions at 1 s and 3 s.
    #[test]
    fn a_lost_request_is_sent_again_after_the_rto_with_backoff() {
        let mut c = Client::new(&cfg(true), false, None);
        let t0 = Time::ZERO;
        assert_eq!(
            c.begin(t0, 0),
            ClientOut::Request {
                index: 0,
                tx_count: 0
            }
        );
        assert_eq!(c.deadline(), Some(t0 + Dur::from_secs(1)));
        let out = c.on_wake(t0 + Dur::from_secs(1), 0);
        assert_eq!(
            out,
            ClientOut::Request {
                index: 0,
                tx_count: 1
            }
        );
        assert_eq!(c.deadline(), Some(t0 + Dur::from_secs(3)));
        // The response begins before the next timeout: no third transmission.
        assert_eq!(c.on_wake(t0 + Dur::from_secs(3), 1), ClientOut::None);
        assert_eq!(c.deadline(), None);
    }

    /// With a handshake the client's RTO is seeded from it (RFC 6298 §2.2, Linux floor): a
    /// 40 ms round trip gives 40 + max(4 · 20, 200) = 240 ms.
    #[test]
    fn the_handshake_seeds_the_request_rto() {
        let mut c = Client::new(&cfg(true), true, None);
        let ClientOut::Syn(Payload::Syn { tsval, .. }) = c.begin(Time::ZERO, 0) else {
            panic!("a SYN first")
        };
        let now = Time::ZERO + MS(40);
        assert!(matches!(
            c.on_syn_ack(now, tsval, 0),
            ClientOut::Request { index: 0, .. }
        ));
        assert_eq!(c.deadline(), Some(now + MS(240)));
    }

    /// A persistent connection opens once; without persistence every exchange opens one. The
    /// think time separates a response's arrival from the next exchange.
    #[test]
    fn persistence_decides_which_exchanges_open_a_connection() {
        for persistent in [true, false] {
            let mut c = Client::new(&cfg(persistent), true, None);
            let ClientOut::Syn(Payload::Syn { tsval, .. }) = c.begin(Time::ZERO, 0) else {
                panic!()
            };
            c.on_syn_ack(Time::ZERO + MS(10), tsval, 0);
            let next = c.on_response(Time::ZERO + MS(30));
            assert_eq!(next, Some(Time::ZERO + MS(35)));
            assert_eq!(c.on_wake(Time::ZERO + MS(35), 1), ClientOut::Begin);
            let out = c.begin(Time::ZERO + MS(35), 1);
            assert_eq!(matches!(out, ClientOut::Syn(_)), !persistent, "{out:?}");
            assert!(c.done[0].opened_connection);
            assert_eq!(c.done[0].began, Time::ZERO);
        }
    }
}
