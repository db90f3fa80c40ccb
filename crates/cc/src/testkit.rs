//! Test-only driver: a minimal ACK-clocked transport around one controller.
//!
//! Contract: [`Pipe`] sends whole segments as cwnd allows, delivers one ACK per segment after an
//! RTT chosen by the test (as a function of the send time), optionally spaced by a bottleneck
//! gap, and calls the controller hooks in the order the crate documentation prescribes
//! (`pkts_acked`, then `cong_avoid` when cwnd-limited and not in recovery). Losses are scripted:
//! [`Pipe::fast_loss`] runs an instantaneous fast recovery (ssthresh, `Recovery`, cwnd =
//! ssthresh, `CompleteCwr`, `Open`).

use std::collections::VecDeque;

use crate::{AckInfo, CaState, CongestionControl, CwndEvent, CwndState, Dur, Time};

pub(crate) struct Pipe<C: CongestionControl> {
    pub cc: C,
    pub st: CwndState,
    pub now: Time,
    pub una: u64,
    pub nxt: u64,
    /// Send time of each segment in flight, oldest first.
    in_flight: VecDeque<Time>,
    last_arrival: Time,
    /// Minimum spacing between ACK arrivals (a bottleneck); zero for none.
    pub ack_gap: Dur,
    pub paced: bool,
    /// Value of `AckInfo::is_cwnd_limited`.
    pub cwnd_limited: bool,
    srtt: Option<Dur>,
    min_rtt: Option<Dur>,
}

impl<C: CongestionControl> Pipe<C> {
    pub fn new(cc: C, st: CwndState) -> Self {
        let mut p = Pipe {
            cc,
            st,
            now: Time::ZERO,
            una: 0,
            nxt: 0,
            in_flight: VecDeque::new(),
            last_arrival: Time::ZERO,
            ack_gap: Dur::ZERO,
            paced: false,
            cwnd_limited: true,
            srtt: None,
            min_rtt: None,
        };
        p.cc.init(Time::ZERO, &mut p.st);
        p
    }

    /// Send a full window spread evenly over `spread` from now (no ACKs processed).
    pub fn prime(&mut self, spread: Dur) {
        let n = u64::from(self.st.cwnd);
        for i in 0..n {
            self.in_flight
                .push_back(self.now + Dur::from_nanos(spread.as_nanos() * i / n));
        }
        self.nxt += n;
    }

    fn ack_info(&self, rtt: Option<Dur>) -> AckInfo {
        let in_flight = u32::try_from(self.in_flight.len()).unwrap_or(u32::MAX);
        AckInfo {
            acked_sacked: 1,
            pkts_acked: 1,
            rtt,
            srtt: self.srtt,
            min_rtt: self.min_rtt,
            in_flight,
            prior_in_flight: in_flight + 1,
            is_cwnd_limited: self.cwnd_limited,
            paced: self.paced,
            snd_nxt: self.nxt,
            snd_una: self.una,
            ca_state: Some(CaState::Open),
            ..AckInfo::default()
        }
    }

    /// Deliver the next ACK; the RTT of a segment is `rtt(send_time)`.
    pub fn step(&mut self, rtt: &dyn Fn(Time) -> Dur) {
        if self.in_flight.is_empty() {
            self.in_flight.push_back(self.now);
            self.nxt += 1;
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
        let ack = self.ack_info(Some(sample));
        self.cc.pkts_acked(self.now, &mut self.st, &ack);
        self.cc.cong_avoid(self.now, &mut self.st, 1, &ack);
        assert!(self.st.cwnd >= 1);
        while self.nxt < self.una + u64::from(self.st.cwnd) {
            self.in_flight.push_back(self.now);
            self.nxt += 1;
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

    /// An instantaneous fast recovery at the current time.
    pub fn fast_loss(&mut self) {
        let ack = self.ack_info(None);
        self.st.ssthresh = self.cc.ssthresh(self.now, &self.st, &ack);
        self.cc.set_state(self.now, &mut self.st, CaState::Recovery);
        self.st.cwnd = self.st.ssthresh;
        self.st.cwnd_cnt = 0;
        self.cc
            .cwnd_event(self.now, &mut self.st, CwndEvent::CompleteCwr);
        self.cc.set_state(self.now, &mut self.st, CaState::Open);
    }
}
