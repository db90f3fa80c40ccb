//! [`Pipe`]: a minimal ACK-clocked transport around one controller, on the transport kit.
//!
//! Contract: [`Pipe`] sends whole segments as cwnd allows and delivers one ACK per segment
//! after an RTT chosen by the test (as a function of the send time), optionally spaced by a
//! bottleneck gap. Every ACK goes through [`Recovery::on_ack`] and [`Recovery::cong_control`]
//! (`pkts_acked`, then `cong_avoid` when cwnd-limited outside a reduction). Congestion events
//! are scripted through the same state machine: [`Pipe::fast_loss`] runs an instantaneous fast
//! recovery (a loss marked, Recovery entered with the controller's ssthresh, the recovery point
//! reached at once: cwnd = ssthresh, `CompleteCwr`, Open); [`Pipe::ack`] and [`Pipe::ack_ce`]
//! (an ACK of any size with CE marks counted as AccECN reports them), [`Pipe::loss`],
//! [`Pipe::end_reduction`], [`Pipe::rto`], [`Pipe::undo`] and [`Pipe::idle`] drive single
//! events for scripted and property tests. Each ACK carries a rate sample of what it delivered
//! (no interval: the pipe has no delivery clock).
//! Every segment the pipe sends in its window clock is reported through `on_packet_sent` to a
//! controller that wants it (`wants_packet_sent`).

use std::collections::VecDeque;

use crate::kit::{AckSignals, Recovery};
use crate::{AckInfo, CaState, CongestionControl, CwndState, Dur, RateSample, SentInfo, Time};

pub(crate) struct Pipe<C: CongestionControl> {
    pub now: Time,
    pub una: u64,
    pub nxt: u64,
    pub st: CwndState,
    /// Send time of each segment in flight, oldest first (the window clock of [`Pipe::step`];
    /// the single events leave it empty and count SND.NXT − SND.UNA as in flight).
    in_flight: VecDeque<Time>,
    last_arrival: Time,
    /// Minimum spacing between ACK arrivals (a bottleneck); zero for none.
    pub ack_gap: Dur,
    pub paced: bool,
    /// Value of `AckInfo::is_cwnd_limited`.
    pub cwnd_limited: bool,
    /// Segments the single events keep in flight after each ACK: cwnd (`None`) or a fixed
    /// window chosen by the test.
    pub window: Option<u64>,
    /// The smoothed RTT (the single events set it to their RTT).
    pub srtt: Option<Dur>,
    /// Segments delivered, and those of them that carried CE.
    pub delivered: u64,
    pub delivered_ce: u64,
    /// Packet-timed rounds seen by the single events (RFC 9406 §4.2's rule: a round ends when
    /// an ACK reaches the SND.NXT recorded at its start), and that SND.NXT.
    pub rounds: u64,
    round_end: Option<u64>,
    min_rtt: Option<Dur>,
    /// The congestion state machine of the kit.
    pub rec: Recovery,
    pub cc: C,
}

impl<C: CongestionControl> Pipe<C> {
    /// A pipe around `cc` with window state `st`; the controller's `init` runs at time 0.
    pub fn new(cc: C, st: CwndState) -> Self {
        let mut p = Pipe {
            now: Time::ZERO,
            una: 0,
            nxt: 0,
            rec: Recovery::new(st.cwnd),
            st,
            in_flight: VecDeque::new(),
            last_arrival: Time::ZERO,
            ack_gap: Dur::ZERO,
            paced: false,
            cwnd_limited: true,
            window: None,
            srtt: None,
            delivered: 0,
            delivered_ce: 0,
            rounds: 0,
            round_end: None,
            min_rtt: None,
            cc,
        };
        p.cc.init(Time::ZERO, &mut p.st);
        p
    }

    /// Send a full window spread evenly over `spread` from now (no ACKs processed).
    pub fn prime(&mut self, spread: Dur) {
        let n = u64::from(self.st.cwnd);
        for i in 0..n {
            self.send(self.now + Dur::from_nanos(spread.as_nanos() * i / n));
        }
    }

    /// Send the next new segment at `at`, telling the controller (`on_packet_sent`) if it
    /// wants to know, as the TCP sender does.
    fn send(&mut self, at: Time) {
        self.in_flight.push_back(at);
        let seq = self.nxt;
        self.nxt += 1;
        if self.cc.wants_packet_sent() {
            let sent = SentInfo {
                seq,
                bytes: self.st.mss,
                in_flight: self.flight(),
                is_retrans: false,
                is_app_limited: false,
            };
            self.cc.on_packet_sent(at, &self.st, &sent);
        }
    }

    /// Segments in flight: SND.NXT − SND.UNA (nothing is lost or SACKed in the pipe).
    fn flight(&self) -> u32 {
        u32::try_from(self.nxt - self.una).unwrap_or(u32::MAX)
    }

    fn ack_info(&self, acked: u32, rtt: Option<Dur>) -> AckInfo {
        let in_flight = self.flight();
        AckInfo {
            acked_sacked: acked,
            pkts_acked: acked,
            rtt,
            srtt: self.srtt,
            min_rtt: self.min_rtt,
            in_flight,
            prior_in_flight: in_flight + acked,
            is_cwnd_limited: self.cwnd_limited,
            paced: self.paced,
            snd_nxt: self.nxt,
            snd_una: self.una,
            ca_state: Some(self.rec.state()),
            total_delivered_ce: self.delivered_ce,
            ..AckInfo::default()
        }
    }

    fn signals(&self, acked: u32, una_advanced: bool) -> AckSignals {
        AckSignals {
            snd_una: self.una,
            snd_nxt: self.nxt,
            una_advanced,
            in_flight: self.flight(),
            acked_sacked: acked,
            cwnd_limited: self.cwnd_limited,
            ..AckSignals::default()
        }
    }

    /// One ACK through the kit: the state machine, then `tcp_cong_control` with a sample of
    /// what the ACK delivered.
    fn process(&mut self, sig: &AckSignals, rtt: Option<Dur>) {
        let acked = sig.acked_sacked;
        self.delivered += u64::from(acked);
        let mut ack = self.ack_info(acked, rtt);
        self.rec
            .on_ack(self.now, &mut self.cc, &mut self.st, sig, &ack);
        let rs = RateSample {
            delivered: u64::from(acked),
            acked_sacked: acked,
            total_delivered: self.delivered,
            rtt,
            ..RateSample::default()
        };
        self.rec
            .cong_control(self.now, &mut self.cc, &mut self.st, &rs, sig, &mut ack);
    }

    /// Deliver the next ACK; the RTT of a segment is `rtt(send_time)`.
    pub fn step(&mut self, rtt: &dyn Fn(Time) -> Dur) {
        if self.in_flight.is_empty() {
            self.send(self.now);
        }
        let sent = self.in_flight.pop_front().expect("segment in flight");
        let arrival = (sent + rtt(sent))
            .max(self.last_arrival + self.ack_gap)
            .max(self.now);
        self.now = arrival;
        self.last_arrival = arrival;
        self.una += 1;
        let sample = arrival - sent;
        // RFC 6298 smoothing (α = 1/8).
        self.srtt = Some(match self.srtt {
            None => sample,
            Some(s) => Dur::from_nanos((s.as_nanos() * 7 + sample.as_nanos()) / 8),
        });
        self.min_rtt = Some(self.min_rtt.map_or(sample, |m| m.min(sample)));
        let sig = self.signals(1, true);
        self.process(&sig, Some(sample));
        assert!(self.st.cwnd >= 1);
        while self.nxt < self.una + u64::from(self.st.cwnd) {
            self.send(self.now);
        }
    }

    /// Deliver ACKs until `until`; `each` sees the pipe after every ACK.
    pub fn run_until(
        &mut self,
        until: Time,
        rtt: &dyn Fn(Time) -> Dur,
        each: &mut dyn FnMut(&Pipe<C>),
    ) {
        while self.now < until {
            self.step(rtt);
            each(self);
        }
    }

    /// An instantaneous fast recovery at the current time: a loss is marked (Recovery with the
    /// controller's ssthresh), and the recovery point is reached at once (cwnd = ssthresh,
    /// `CompleteCwr`, Open).
    pub fn fast_loss(&mut self) {
        self.loss();
        if self.rec.state() == CaState::Recovery {
            self.end_reduction();
        }
    }

    /// The state machine sees the recovery point reached without an ACK of data (the window in
    /// flight is left as it is): Recovery and CWR end (cwnd = ssthresh unless the controller
    /// sets it, `CompleteCwr`), Loss ends; Open.
    pub fn end_reduction(&mut self) {
        let sig = AckSignals {
            snd_una: self.rec.high_seq() + 1,
            ..self.signals(0, false)
        };
        let ack = self.ack_info(0, None);
        self.rec
            .on_ack(self.now, &mut self.cc, &mut self.st, &sig, &ack);
    }

    /// An ACK `gap` after the previous event that delivers `acked` segments with RTT `rtt`
    /// (a scripted event: the pipe's own window clock is not used).
    pub fn ack(&mut self, acked: u32, rtt: Dur, gap: Dur) {
        self.ack_ce(acked, 0, rtt, gap);
    }

    /// [`Pipe::ack`] where `ce` of the `acked` segments carried CE: the count reaches the
    /// controller as `total_delivered_ce` and the ACK echoes ECE.
    pub fn ack_ce(&mut self, acked: u32, ce: u32, rtt: Dur, gap: Dur) {
        if self.opens_round(acked) {
            self.round_end = Some(self.nxt);
            self.rounds += 1;
        }
        self.now += gap;
        self.una += u64::from(acked);
        self.nxt = self.nxt.max(self.una);
        self.srtt = Some(rtt);
        self.min_rtt = Some(rtt);
        self.in_flight.clear();
        self.delivered_ce += u64::from(ce);
        let sig = AckSignals {
            ecn_echo: ce > 0,
            ..self.signals(acked, acked > 0)
        };
        self.process(&sig, Some(rtt));
        let window = self.window.unwrap_or(u64::from(self.st.cwnd));
        let nxt = self.nxt.max(self.una + window);
        self.rec
            .on_sent(u32::try_from(nxt - self.nxt).unwrap_or(u32::MAX));
        self.nxt = nxt;
    }

    /// Whether a single-event ACK of `acked` segments would open a new round.
    pub fn opens_round(&self, acked: u32) -> bool {
        self.round_end
            .is_none_or(|end| self.una + u64::from(acked) >= end)
    }

    /// An ACK that reaches the end of the current reduction episode (beyond `high_seq`), with
    /// RTT `rtt`: Recovery, CWR and Loss end.
    pub fn recovery_exit(&mut self, rtt: Dur) {
        let to = self.rec.high_seq() + 1;
        let acked = to.saturating_sub(self.una);
        self.ack(u32::try_from(acked).unwrap_or(u32::MAX), rtt, Dur::ZERO);
    }

    /// An ACK that marks one segment lost: Recovery (or nothing, if already reducing).
    pub fn loss(&mut self) {
        let sig = AckSignals {
            lost_out: 1,
            newly_lost: 1,
            ..self.signals(0, false)
        };
        let ack = self.ack_info(0, None);
        self.rec
            .on_ack(self.now, &mut self.cc, &mut self.st, &sig, &ack);
    }

    /// A retransmission timeout (`tcp_enter_loss`): everything in flight is lost.
    pub fn rto(&mut self) {
        let ack = self.ack_info(0, None);
        self.rec
            .rto_begin(self.now, &mut self.cc, &mut self.st, self.una, &ack);
        self.in_flight.clear();
        self.rec
            .enter_loss(self.now, &mut self.cc, &mut self.st, 0, self.nxt);
    }

    /// The last reduction was spurious (Linux `tcp_undo_cwnd_reduction`): cwnd from the
    /// controller's `undo_cwnd`, ssthresh at least what it was, state Open.
    pub fn undo(&mut self) {
        self.rec.undo(self.now, &mut self.cc, &mut self.st);
    }

    /// The connection was idle for `idle` and sends again (`CA_EVENT_TX_START`).
    pub fn idle(&mut self, idle: Dur) {
        self.now += idle;
        let rto = self.srtt.map_or(Dur::from_secs(1), |s| {
            Dur::from_nanos(s.as_nanos().saturating_mul(3)).max(Dur::from_millis(200))
        });
        self.rec
            .on_tx_start(self.now, &mut self.cc, &mut self.st, idle, rto, 10, false);
    }
}

#[cfg(test)]
mod tests {
    use super::Pipe;
    use crate::{AckInfo, CongestionControl, CwndState, Dur, SentInfo, Time};

    /// Counts `on_packet_sent` calls and checks they come in sequence order.
    #[derive(Clone, Debug, Default)]
    struct Counting {
        wants: bool,
        sent: u64,
        next_seq: u64,
    }

    impl CongestionControl for Counting {
        fn name(&self) -> &'static str {
            "counting"
        }
        fn cong_avoid(&mut self, _now: Time, _st: &mut CwndState, _acked: u32, _ack: &AckInfo) {}
        fn ssthresh(&mut self, _now: Time, st: &CwndState, _ack: &AckInfo) -> u32 {
            st.cwnd / 2
        }
        fn state(&self) -> &'static str {
            "counting"
        }
        fn wants_packet_sent(&self) -> bool {
            self.wants
        }
        fn on_packet_sent(&mut self, _now: Time, _st: &CwndState, sent: &SentInfo) {
            assert_eq!(sent.seq, self.next_seq);
            self.next_seq += 1;
            self.sent += 1;
        }
    }

    /// A controller that wants the per-segment hook hears of every segment, in order; one that
    /// does not (the default) is never called.
    #[test]
    fn on_packet_sent_reaches_the_controllers_that_want_it() {
        for wants in [true, false] {
            let cc = Counting {
                wants,
                ..Counting::default()
            };
            let mut p = Pipe::new(cc, CwndState::new(10, 1448));
            p.prime(Dur::from_millis(10));
            assert_eq!(p.nxt, 10);
            assert_eq!(p.cc.sent, if wants { 10 } else { 0 });
        }
    }
}
