//! Opening the connection: the sender's side of the three-way handshake
//! ([`crate::tcp::handshake`]).
//!
//! Contract: with `FlowConfig::handshake`, [`Sender::start`] leaves a SYN in
//! [`Sender::take_control`] and the sender sends nothing else until [`Sender::on_syn_ack`]
//! opens the connection; [`Sender::on_wake`] runs the SYN's retransmission timer while the
//! connection is opening (its deadline is the sender's timer then, `Timer::Syn`) and
//! [`Sender::on_timer`] afterwards. When the SYN-ACK arrives, the
//! handshake's RTT sample seeds SRTT, RTTVAR, the RTO and the windowed minimum (as the first
//! sample of RFC 6298 §2.2; the histogram of RTT samples records it too), cwnd becomes 1 if
//! `tcp_init_transfer` asks for it, and the transfer starts ([`Sender::start_data`]: the
//! application's writes and the controller's `init`, which thus sees the handshake's SRTT).

use super::*;

impl Sender {
    /// The control segment (SYN) to put on the wire now, if any.
    pub fn take_control(&mut self) -> Option<Payload> {
        self.control_out.take()
    }

    /// Whether a control segment waits for [`Sender::take_control`].
    #[inline]
    #[must_use]
    pub fn has_control(&self) -> bool {
        self.control_out.is_some()
    }

    /// The connection is still opening (SYN sent, no SYN-ACK yet).
    #[must_use]
    pub fn is_connecting(&self) -> bool {
        self.connecting.is_some()
    }

    /// Payload bytes the SYN carries (TCP Fast Open: the transfer's only segment), 0 without.
    #[must_use]
    pub fn syn_data_bytes(&self) -> u32 {
        if self.syn_data { self.seg_len(0) } else { 0 }
    }

    /// A SYN-ACK echoing `tsecr` (acknowledging the SYN's data or not) arrives at `now`.
    /// Ignored unless the connection is opening.
    pub fn on_syn_ack(
        &mut self,
        now: Time,
        tsecr: Time,
        data_acked: bool,
        out: &mut Vec<Outgoing>,
    ) {
        let Some(h) = &mut self.connecting else {
            return;
        };
        let Some(open) = h.on_syn_ack(now, tsecr, data_acked && self.syn_data) else {
            return;
        };
        if open.data_acked {
            // The SYN's data is delivered and acknowledged with it (`tcp_rcv_fastopen_synack`):
            // the transfer is complete. Otherwise the segment is sent as data.
            self.snd_una = 1;
            self.snd_nxt = 1;
            self.counters.segments_sent += 1;
            self.completed_at = Some(now);
        }
        self.connecting = None;
        self.timer = None;
        self.rtt.sample(now, open.rtt);
        self.rtt_hist.record(open.rtt.max(Dur(1)).as_nanos());
        self.handshake_rtt = Some(open.rtt);
        if open.cwnd_one {
            self.st.cwnd = 1;
            self.rec.note_cwnd(&mut self.st);
        }
        self.start_data(now, out);
        self.record(now, "established");
    }

    /// The sender's wakeup at `now`: the SYN's retransmission timer while the connection is
    /// opening, otherwise [`Sender::on_timer`].
    pub fn on_wake(&mut self, now: Time, out: &mut Vec<Outgoing>) {
        let Some(h) = &mut self.connecting else {
            self.on_timer(now, out);
            return;
        };
        let syn = h.on_timeout(now);
        self.timer = h.deadline().map(|t| (Timer::Syn, t));
        if let Some(syn) = syn {
            // A SYN timeout is a retransmission timeout (`tcp_retransmit_timer`); the SYN is
            // not a data segment, so `retransmits` does not count it.
            self.control_out = Some(syn);
            self.rto_times.push(now);
            self.counters.rtos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::NodeId;
    use crate::tcp::handshake::answer_syn;
    use cclab_cc::CcSpec;
    use cclab_cc::num::u64_to_f64;

    const T0: Time = Time::ZERO;

    fn sender(cc: &str, handshake: bool) -> Sender {
        let mut cfg = FlowConfig::bulk("f", NodeId(0), NodeId(1), CcSpec::default_for(cc).unwrap());
        cfg.handshake = handshake;
        Sender::new(&cfg, 1)
    }

    /// Start at `T0`, answer the SYN after `rtt`; returns what the sender sends then.
    fn open(s: &mut Sender, rtt: Dur) -> Vec<Outgoing> {
        let mut out = Vec::new();
        s.start(T0, &mut out);
        assert!(out.is_empty(), "no data before the connection is open");
        assert_eq!(
            s.next_wakeup(),
            Some(T0 + Dur::from_secs(1)),
            "the SYN's RTO"
        );
        let syn = s.take_control().expect("a SYN");
        let Some(Payload::SynAck { tsecr, data_acked }) = answer_syn(&syn) else {
            panic!("{syn:?}")
        };
        s.on_syn_ack(T0 + rtt, tsecr, data_acked, &mut out);
        assert!(!s.is_connecting());
        out
    }

    /// RFC 6298 §2.2 on the handshake's sample R: SRTT = R, RTTVAR = R/2, RTO = SRTT +
    /// max(G, 4·RTTVAR) with Linux's 200 ms floor in place of G: 40 ms → 240 ms (the floor),
    /// 150 ms → 450 ms (4·RTTVAR = 300 ms). The windowed minimum is R, and the initial window
    /// leaves at once (data rides on the handshake's ACK).
    #[test]
    fn the_handshake_rtt_seeds_srtt_and_the_rto() {
        for (r, rto) in [(40, 240), (150, 450)] {
            let mut s = sender("newreno", true);
            let out = open(&mut s, Dur::from_millis(r));
            assert_eq!(s.srtt(), Some(Dur::from_millis(r)));
            assert_eq!(s.min_rtt(), Some(Dur::from_millis(r)));
            assert_eq!(s.rto(), Dur::from_millis(rto));
            assert_eq!(s.handshake_rtt, Some(Dur::from_millis(r)));
            assert_eq!(out.len(), 10);
            assert!(out.iter().all(|o| o.tstamp == T0 + Dur::from_millis(r)));
        }
    }

    /// BBR's `init` runs when data starts and sees the handshake's SRTT, as `bbr_init` does:
    /// the initial pacing rate is high_gain (739/256) · IW · MSS / SRTT less the 1 % margin,
    /// 2.887 · 10 · 1448 B / 40 ms · 0.99 = 1.0346 MB/s (tolerance 0.1 %: the integer
    /// bandwidth units). Without a handshake `init` has no sample and uses 1 ms, a rate 40
    /// times higher.
    #[test]
    fn bbr_init_sees_the_handshake_srtt() {
        let r = 0.040;
        let expected = 739.0 / 256.0 * 10.0 * 1448.0 / r * 0.99;
        for cc in ["bbr1", "bbr3"] {
            let mut s = sender(cc, true);
            open(&mut s, Dur::from_millis(40));
            let rate = u64_to_f64(s.sk_pacing_rate().unwrap());
            let mut plain = sender(cc, false);
            plain.start(T0, &mut Vec::new());
            let nominal = u64_to_f64(plain.sk_pacing_rate().unwrap());
            if cc == "bbr1" {
                assert!((rate / expected - 1.0).abs() < 1e-3, "{cc}: {rate} B/s");
            }
            assert!(
                (nominal / rate - 40.0).abs() < 0.1,
                "{cc}: {nominal} vs {rate}"
            );
        }
    }

    /// An application that stops before the connection opens has written nothing: nothing is
    /// sent when it opens.
    #[test]
    fn an_application_stopped_while_connecting_sends_nothing() {
        let mut s = sender("cubic", true);
        let mut out = Vec::new();
        s.start(T0, &mut out);
        s.stop_app(T0 + Dur::from_millis(10));
        let Some(Payload::SynAck { tsecr, .. }) = answer_syn(&s.take_control().unwrap()) else {
            panic!()
        };
        s.on_syn_ack(T0 + Dur::from_millis(40), tsecr, false, &mut out);
        assert!(out.is_empty());
        assert_eq!(s.next_wakeup(), None);
    }

    /// The SYN's timer: the wakeup at 1 s hands out a retransmission and re-arms at 3 s.
    #[test]
    fn the_syn_timer_retransmits() {
        let mut s = sender("cubic", true);
        let mut out = Vec::new();
        s.start(T0, &mut out);
        s.take_control().unwrap();
        s.on_wake(T0 + Dur::from_secs(1), &mut out);
        assert!(matches!(
            s.take_control(),
            Some(Payload::Syn { tx_count: 1, .. })
        ));
        assert_eq!(s.next_wakeup(), Some(T0 + Dur::from_secs(3)));
        assert!(out.is_empty());
    }
}
