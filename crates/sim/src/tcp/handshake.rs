//! The TCP three-way handshake (RFC 9293 §3.5): the client's SYN, the server's SYN-ACK, and the
//! client's ACK, which rides on its first data segment.
//!
//! Contract: [`Handshake`] is the client's `SYN-SENT` state, a sans-IO state machine.
//! [`Handshake::connect`] returns it with the SYN to send at `now`; the caller sends every
//! [`Payload::Syn`] it hands back, wakes it at [`Handshake::deadline`] with
//! [`Handshake::on_timeout`] (which may hand back a retransmission) and passes it the SYN-ACK
//! with [`Handshake::on_syn_ack`], which returns [`Established`] once: the RTT sample the
//! connection starts with and whether the transfer starts with a window of one segment. The
//! server's side is [`answer_syn`]: every SYN it receives is answered with a SYN-ACK at once.
//! SYN and SYN-ACK are control segments without payload ([`SYN_WIRE_BYTES`]) that cross the
//! same hosts, links and queues as data and ACKs; they are not ECN-capable (RFC 3168 §6.1.1).
//! With TCP Fast Open (RFC 7413) the first SYN carries the flow's first segment when the
//! caller asks ([`syn_data_space`] bounds it) and the SYN-ACK acknowledges it.
//!
//! Rules (Linux v6.x, `net/ipv4/`):
//! - the SYN is retransmitted when the initial RTO of 1 s expires (RFC 6298 §2.1, Linux
//!   `TCP_TIMEOUT_INIT`), the timeout doubling each time up to `TCP_RTO_MAX`
//!   (`tcp_retransmit_timer`); after `tcp_syn_retries` = 6 retransmissions the next expiry
//!   (127 s after the first SYN) abandons the connection (`tcp_write_timeout`), and nothing is
//!   ever sent;
//! - the RTT sample is taken from the timestamp echo of the SYN-ACK
//!   (`tcp_rcv_synsent_state_process` → `tcp_ack` → `tcp_clean_rtx_queue` →
//!   `tcp_ack_update_rtt`, which uses TSecr when the SYN was retransmitted and the
//!   sequence-based sample is withheld by Karn's rule, RFC 6298 §3 / RFC 7323 §4.1). The server
//!   echoes the TSval of the SYN it answers (the simulator's receiver echoes the latest
//!   segment, [`super::receiver`]), so the sample is the round trip
//!   of that SYN, retransmitted or not. It seeds SRTT = R, RTTVAR = R/2 (RFC 6298 §2.2) and the
//!   windowed minimum (`tcp_update_rtt_min`). A SYN-ACK whose echo lies outside
//!   [first SYN, now] is ignored (Linux drops it, `tcp_rcv_synsent_state_process`);
//! - window after a retransmitted SYN (`tcp_init_transfer`): cwnd = 1 when more than one SYN
//!   retransmission occurred (`tp->total_retrans > 1`) and the timeout was not spurious
//!   (`tp->undo_marker`: `tcp_try_undo_spurious_syn` clears it when the SYN-ACK echoes the
//!   first SYN's timestamp); otherwise the initial window. (RFC 5681 §3.1 requires IW = 1
//!   after any lost SYN or SYN-ACK; Linux keeps `TCP_INIT_CWND` after a single retransmission
//!   because RFC 6298 shortened the initial RTO to 1 s, and this follows Linux);
//! - the handshake ACK travels on the first data segment: an application blocked on the
//!   connection has data waiting (`sk_write_pending`), so Linux delays the ACK for it to ride
//!   on that data (`tcp_rcv_synsent_state_process`); data thus leaves at the SYN-ACK's
//!   arrival, one round trip after the SYN.
//!
//! Not modelled: the server's own SYN-ACK retransmission timer (`reqsk_timer_handler`): a lost
//! SYN-ACK is repaired by the client's SYN retransmission, which the server answers at once
//! (`tcp_check_req` → `inet_rtx_syn_ack`), so one lost SYN-ACK costs the same 1 s as one lost
//! SYN; the server's timer would fire at about the same instant. Fast Open cookie requests and
//! fallbacks (the client is assumed to hold a cookie the server accepts) and the RFC 6298 §5.7
//! fallback to a 3 s RTO (taken only when the handshake yields no RTT
//! sample, which with timestamps does not happen) are not modelled.

use cclab_cc::{Dur, Time};

use super::rtt::{RTO_INIT, RTO_MAX};
use crate::packet::Payload;

/// Wire bytes of a SYN or SYN-ACK: 20 (IP) + 20 (TCP) + 20 of options as Linux sends them
/// (`tcp_syn_options`/`tcp_synack_options`, `net/ipv4/tcp_output.c`: MSS 4, SACK-permitted
/// packed with timestamps 12, NOP + window scale 4).
pub const SYN_WIRE_BYTES: u32 = 60;

/// Bytes a TCP Fast Open cookie option adds to a SYN: kind, length and an 8-byte cookie,
/// padded to 12 (RFC 7413 §4.1.1; Linux `TCPOLEN_EXP_FASTOPEN_BASE` and
/// `TCP_FASTOPEN_COOKIE_SIZE`, aligned by `tcp_options_write`).
pub const TFO_COOKIE_OPTION_BYTES: u32 = 12;

/// Payload bytes a Fast Open SYN can carry with data segments of `mss` payload bytes: Linux
/// `tcp_send_syn_data` gives the SYN `__tcp_mtu_to_mss(pmtu) − MAX_TCP_OPTION_SPACE` bytes,
/// the path MTU (here `mss` + 52 header bytes) less 40 header bytes and 40 option bytes.
#[must_use]
pub fn syn_data_space(mss: u32) -> u32 {
    (mss + crate::config::TCP_IP_HEADER_BYTES).saturating_sub(80)
}

/// Linux `sysctl_tcp_syn_retries` default (`TCP_SYN_RETRIES`, include/net/tcp.h).
pub const SYN_RETRIES: u32 = 6;

/// The connection is open: what the transfer starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Established {
    /// The handshake's RTT sample (SYN-ACK arrival − send time of the SYN it echoes).
    pub rtt: Dur,
    /// The transfer starts with cwnd = 1 (`tcp_init_transfer`).
    pub cwnd_one: bool,
    /// The SYN-ACK acknowledged the Fast Open SYN's data.
    pub data_acked: bool,
}

/// The client's `SYN-SENT` state.
#[derive(Clone, Copy, Debug)]
pub struct Handshake {
    /// Send time of the first SYN (Linux `tp->retrans_stamp`).
    first_sent: Time,
    /// SYN retransmissions so far (Linux `tp->total_retrans` before the connection opens).
    retrans: u32,
    /// The SYN timed out (Linux `tp->undo_marker`, set by `tcp_enter_loss`).
    undo_marker: bool,
    /// When the retransmission timer expires (`None`: abandoned or established).
    timer: Option<Time>,
    /// The SYN-ACK arrived.
    established: bool,
}

impl Handshake {
    /// Open a connection at `now`: the state and the SYN to send, with the first segment when
    /// `data` (TCP Fast Open with a cookie; only the first SYN carries it, a retransmitted SYN
    /// is a plain one as in Linux, where the data waits in the write queue).
    #[must_use]
    pub fn connect(now: Time, data: bool) -> (Self, Payload) {
        let h = Handshake {
            first_sent: now,
            retrans: 0,
            undo_marker: false,
            timer: Some(now + RTO_INIT),
            established: false,
        };
        (h, syn(now, 0, data))
    }

    /// When [`Handshake::on_timeout`] is due.
    #[must_use]
    pub fn deadline(&self) -> Option<Time> {
        self.timer
    }

    /// SYN retransmissions sent.
    #[must_use]
    pub fn retransmissions(&self) -> u32 {
        self.retrans
    }

    /// The connection was abandoned (`tcp_syn_retries` exhausted).
    #[must_use]
    pub fn abandoned(&self) -> bool {
        !self.established && self.timer.is_none()
    }

    /// The retransmission timer at `now`: the SYN to send again, or `None` (not due, or the
    /// connection is abandoned).
    pub fn on_timeout(&mut self, now: Time) -> Option<Payload> {
        match self.timer {
            Some(t) if now >= t => {}
            _ => return None,
        }
        if self.retrans == SYN_RETRIES {
            self.timer = None;
            return None;
        }
        self.retrans += 1;
        self.undo_marker = true;
        // The timeout doubles per retransmission (`tcp_retransmit_timer`), capped at RTO_MAX.
        let rto = Dur(RTO_INIT.0.saturating_mul(1 << self.retrans)).min(RTO_MAX);
        self.timer = Some(now + rto);
        Some(syn(now, self.retrans, false))
    }

    /// A SYN-ACK echoing `tsecr` arrives at `now`: the connection opens (once; a duplicate or
    /// an echo outside [first SYN, now] returns `None`).
    pub fn on_syn_ack(&mut self, now: Time, tsecr: Time, data_acked: bool) -> Option<Established> {
        if self.established || self.timer.is_none() || tsecr < self.first_sent || tsecr > now {
            return None;
        }
        self.established = true;
        self.timer = None;
        // `tcp_try_undo_spurious_syn`: the echo of the first SYN proves the timeout spurious.
        let undo_marker = self.undo_marker && tsecr != self.first_sent;
        Some(Established {
            rtt: now.saturating_since(tsecr),
            cwnd_one: self.retrans > 1 && undo_marker,
            data_acked,
        })
    }
}

/// The SYN sent at `now` (`tx_count` 0 = the original), with data or not.
fn syn(now: Time, tx_count: u32, data: bool) -> Payload {
    Payload::Syn {
        tsval: now,
        tx_count,
        data,
    }
}

/// The server's answer to a SYN: a SYN-ACK echoing its TSval (`tcp_v4_send_synack`; a
/// retransmitted SYN is answered again, `tcp_check_req` → `inet_rtx_syn_ack`), acknowledging
/// a Fast Open SYN's data (the server holds the key of the client's cookie and accepts it,
/// RFC 7413 §4.2.2; Linux `tcp_try_fastopen`). `None` for anything that is not a SYN.
#[must_use]
pub fn answer_syn(syn: &Payload) -> Option<Payload> {
    match *syn {
        Payload::Syn { tsval, data, .. } => Some(Payload::SynAck {
            tsecr: tsval,
            data_acked: data,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Time {
        Time::ZERO + Dur::from_millis(ms)
    }

    /// Without loss: one SYN, the sample is the SYN-ACK's round trip, IW kept.
    #[test]
    fn an_answered_syn_opens_with_its_round_trip() {
        let (mut h, s) = Handshake::connect(at(5), false);
        assert_eq!(h.deadline(), Some(at(1005)));
        let a = answer_syn(&s).unwrap();
        let Payload::SynAck { tsecr, .. } = a else {
            panic!("{a:?}")
        };
        let e = h.on_syn_ack(at(45), tsecr, false).unwrap();
        assert_eq!(e.rtt, Dur::from_millis(40));
        assert!(!e.cwnd_one);
        assert_eq!(h.deadline(), None);
        assert!(!h.abandoned());
        // A duplicate SYN-ACK changes nothing.
        assert_eq!(h.on_syn_ack(at(46), tsecr, false), None);
    }

    /// RFC 6298 §5.5 backoff from the 1 s initial RTO: retransmissions at 1, 3, 7, 15, 31, 63 s
    /// after the first SYN, and the connection abandoned at 127 s (`tcp_syn_retries` = 6).
    #[test]
    fn syn_timeouts_double_and_give_up_after_six_retransmissions() {
        let (mut h, _) = Handshake::connect(at(0), false);
        assert_eq!(h.on_timeout(at(999)), None, "not due");
        let mut sent = Vec::new();
        while let Some(t) = h.deadline() {
            if let Some(Payload::Syn {
                tsval, tx_count, ..
            }) = h.on_timeout(t)
            {
                assert_eq!(tx_count, h.retransmissions());
                sent.push(tsval.0 / 1_000_000_000);
            }
        }
        assert_eq!(sent, [1, 3, 7, 15, 31, 63]);
        assert!(h.abandoned());
        assert_eq!(h.on_syn_ack(at(130_000), at(63_000), false), None);
    }

    /// `tcp_init_transfer`: cwnd = 1 only after more than one retransmission, and not when the
    /// SYN-ACK echoes the first SYN (the timeouts were spurious); the sample is the round trip
    /// of the SYN echoed.
    #[test]
    fn window_of_one_after_two_real_syn_retransmissions() {
        let (mut h, _) = Handshake::connect(at(0), false);
        h.on_timeout(at(1000)).unwrap();
        let e = h.on_syn_ack(at(1040), at(1000), false).unwrap();
        assert_eq!(
            (e.rtt, e.cwnd_one),
            (Dur::from_millis(40), false),
            "one retransmission"
        );

        let (mut h, _) = Handshake::connect(at(0), false);
        h.on_timeout(at(1000)).unwrap();
        h.on_timeout(at(3000)).unwrap();
        let e = h.on_syn_ack(at(3040), at(3000), false).unwrap();
        assert_eq!(
            (e.rtt, e.cwnd_one),
            (Dur::from_millis(40), true),
            "two retransmissions"
        );

        let (mut h, _) = Handshake::connect(at(0), false);
        h.on_timeout(at(1000)).unwrap();
        h.on_timeout(at(3000)).unwrap();
        let e = h.on_syn_ack(at(3500), at(0), false).unwrap();
        assert_eq!(
            (e.rtt, e.cwnd_one),
            (Dur::from_millis(3500), false),
            "spurious"
        );
    }

    /// Only the first SYN carries Fast Open data; the SYN-ACK of a data SYN acknowledges it.
    #[test]
    fn only_the_first_syn_carries_fast_open_data() {
        let (mut h, s) = Handshake::connect(at(0), true);
        assert!(matches!(s, Payload::Syn { data: true, .. }));
        assert!(matches!(
            answer_syn(&s),
            Some(Payload::SynAck {
                data_acked: true,
                ..
            })
        ));
        let r = h.on_timeout(at(1000)).unwrap();
        assert!(matches!(r, Payload::Syn { data: false, .. }));
        assert!(matches!(
            answer_syn(&r),
            Some(Payload::SynAck {
                data_acked: false,
                ..
            })
        ));
        // 1448-byte segments: a SYN carries at most 1500 − 40 − 40 = 1420 bytes.
        assert_eq!(syn_data_space(1448), 1420);
    }

    /// An echo that no SYN carried is ignored.
    #[test]
    fn an_echo_outside_the_handshake_is_ignored() {
        let (mut h, _) = Handshake::connect(at(10), false);
        assert_eq!(h.on_syn_ack(at(50), at(5), false), None);
        assert_eq!(h.on_syn_ack(at(50), at(60), false), None);
        assert!(h.on_syn_ack(at(50), at(10), false).is_some());
    }
}
