//! [`Net`]: one sender over a packet-level path, on the transport kit.
//!
//! Contract: the sender keeps a SACK scoreboard of whole segments, samples delivery rate with
//! the kit's [`RateSampler`] (Linux `tcp_rate.c`), runs the kit's [`Recovery`] state machine on
//! every ACK (`tcp_ack` → `tcp_fastretrans_alert` → `tcp_cong_control`), paces at the
//! controller's rate with Linux's EDT rule (`tcp_update_skb_after_send`), emulates
//! `tcp_cwnd_validate` for `is_cwnd_limited` and `tcp_rate_check_app_limited` for app-limited
//! marks, raises `CA_EVENT_TX_START` as the simulator's sender does (`tcp_event_data_sent`), and
//! retransmits on an RTO (RFC 6298 with Linux's 200 ms floor and exponential backoff).
//!
//! The [`Path`] is one FIFO bottleneck of `rate_bps` with a drop-tail buffer, then `rtt` of
//! propagation; ACKs are never lost or queued, one per delivered segment. As the path never
//! reorders, a segment is lost as soon as a later transmission is acknowledged. Optional: a
//! drop of one scripted segment, an outage, seeded random loss, a token-bucket policer, CE
//! marks on an even fraction of packets (reported with the ACK, as AccECN does), ACKs released
//! in batches (aggregation), an application writing at a set rate, and a sender CPU that only
//! runs part of the time (while descheduled it neither sends nor reads ACKs). Every field of
//! the path may be changed between runs: the bottleneck and loss fields apply to packets sent
//! from then on, the CPU schedule at once.

use std::collections::VecDeque;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::kit::{AckSignals, RateSampler, Recovery, TxRecord};
use crate::num::{saturating_u32, u64_to_f64};
use crate::{AckInfo, CaState, CongestionControl, CwndState, Dur, RateSample, SentInfo, Time};

/// Initial window (Linux `TCP_INIT_CWND`).
pub(crate) const IW: u32 = 10;

/// The path and the sending host.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Path {
    /// Bottleneck rate C in bit/s of payload (headers are not modelled).
    pub rate_bps: u64,
    /// Base RTT R (all propagation; ACKs are not queued).
    pub rtt: Dur,
    /// Segment size in bytes.
    pub mss: u32,
    /// Drop-tail limit of the bottleneck in packets, counting the one in service (None:
    /// unlimited).
    pub buffer: Option<usize>,
    /// Probability that a packet is lost before the bottleneck (seeded, independent).
    pub loss: f64,
    /// Token-bucket policer before the bottleneck: (rate bit/s, depth bytes).
    pub policer: Option<(u64, u64)>,
    /// Drop the first new segment sent at or after this time.
    pub drop_at: Option<Time>,
    /// Drop every packet sent in this interval (an outage, to force an RTO).
    pub blackout: Option<(Time, Time)>,
    /// CE-mark `num` of every `den` packets through the bottleneck, evenly spread.
    pub ce: Option<(u64, u64)>,
    /// ACKs are released in batches at multiples of this interval (ACK aggregation).
    pub ack_batch: Option<Dur>,
    /// The sender's CPU runs for `on` at the start of every `period`: (on, period).
    pub cpu: Option<(Dur, Dur)>,
}

impl Path {
    /// A clean path of `mbps` Mbit/s and `rtt_ms` ms carrying `mss`-byte segments.
    pub fn new(mbps: u64, rtt_ms: u64, mss: u32) -> Path {
        Path {
            rate_bps: mbps * 1_000_000,
            rtt: Dur::from_millis(rtt_ms),
            mss,
            buffer: None,
            loss: 0.0,
            policer: None,
            drop_at: None,
            blackout: None,
            ce: None,
            ack_batch: None,
            cpu: None,
        }
    }

    /// C·R in packets.
    pub fn bdp(&self) -> f64 {
        u64_to_f64(self.rate_bps) * self.rtt.as_secs_f64() / f64::from(8 * self.mss)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SegState {
    InFlight,
    /// Marked lost, waiting for its retransmission.
    Lost,
    Delivered,
}

/// A segment and the `tcp_rate` record of its latest transmission.
#[derive(Clone, Copy, Debug)]
struct Seg {
    state: SegState,
    /// Counted in `lost_out` (Linux `TCPCB_LOST`: from the loss mark until delivered).
    lost: bool,
    /// Global order of the latest transmission.
    tx: u64,
    rec: TxRecord,
}

/// One ACK that delivered data, as handed to the controller.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ack {
    /// cwnd before the ACK was processed.
    pub cwnd_before: u32,
    /// Segments newly marked lost by this ACK.
    pub losses: u32,
    /// The congestion state after the ACK.
    pub ca_state: CaState,
    pub rs: RateSample,
    pub ack: AckInfo,
}

/// A segment marked lost, with the controller around `on_packet_lost`: its state name and
/// the value of [`Net::loss_watch`] before and after.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LossRec {
    pub at: Time,
    pub before: &'static str,
    pub after: &'static str,
    pub watch_before: u64,
    pub watch_after: u64,
}

/// An ACK on its way back: arrival time, segment, transmission order, CE mark.
#[derive(Clone, Copy, Debug)]
struct Arrival {
    at: Time,
    seq: u64,
    tx: u64,
    ce: bool,
}

/// The sender, its controller and the path.
pub(crate) struct Net<C: CongestionControl> {
    pub path: Path,
    pub cc: C,
    pub st: CwndState,
    pub now: Time,
    /// The congestion state machine (the kit's `tcp_input.c` rules).
    pub rec: Recovery,
    /// Delivery-rate sampling and the delivered, lost and CE counters (the kit's `tcp_rate.c`).
    pub rate: RateSampler,
    /// Optional probe of the controller recorded around every `on_packet_lost` ([`LossRec`]).
    pub loss_watch: Option<fn(&C) -> u64>,
    // Sender (Linux tcp_sock fields).
    una: u64,
    nxt: u64,
    /// The scoreboard from SND.UNA on.
    segs: VecDeque<Seg>,
    in_flight: u32,
    lost_out: u32,
    /// Transmissions in flight in send order: (tx order, seq).
    order: VecDeque<(u64, u64)>,
    lost_q: VecDeque<u64>,
    tx_count: u64,
    wstamp: Time,
    last_send: Time,
    srtt: Option<Dur>,
    rttvar: Dur,
    min_rtt: Option<Dur>,
    backoff: u32,
    last_progress: Time,
    is_cwnd_limited: bool,
    cwnd_usage_seq: u64,
    /// The application writes at `bps` from segment `seq0` at `t0`: (t0, seq0, bps).
    app: Option<(Time, u64, u64)>,
    // Bottleneck.
    acks: VecDeque<Arrival>,
    queue: VecDeque<Time>,
    last_dep: Time,
    tokens: u128,
    token_t: Time,
    scripted_drop_done: bool,
    rng: ChaCha8Rng,
    ce_counter: u64,
    // Counters.
    /// Packets the path dropped.
    pub drops: u64,
    pub rtos: u64,
    /// Recovery episodes entered.
    pub recoveries: u64,
    /// Packet-timed rounds (a round ends when a segment sent after its start is delivered).
    pub rounds: u64,
    next_round_delivered: u64,
    pub losses: Vec<LossRec>,
}

impl<C: CongestionControl> Net<C> {
    /// The sender with controller `cc` (initialised here at time 0) on `path`; `seed` seeds
    /// the path's random loss.
    pub fn new(mut cc: C, path: Path, seed: u64) -> Net<C> {
        let mut st = CwndState::new(IW, path.mss);
        cc.init(Time::ZERO, &mut st);
        let tokens = path
            .policer
            .map_or(0, |(_, d)| u128::from(d) * 1_000_000_000);
        Net {
            path,
            cc,
            st,
            now: Time::ZERO,
            rec: Recovery::new(IW),
            rate: RateSampler::new(),
            loss_watch: None,
            una: 0,
            nxt: 0,
            segs: VecDeque::new(),
            in_flight: 0,
            lost_out: 0,
            order: VecDeque::new(),
            lost_q: VecDeque::new(),
            tx_count: 0,
            wstamp: Time::ZERO,
            last_send: Time::ZERO,
            srtt: None,
            rttvar: Dur::ZERO,
            min_rtt: None,
            backoff: 0,
            last_progress: Time::ZERO,
            is_cwnd_limited: false,
            cwnd_usage_seq: 0,
            app: None,
            acks: VecDeque::new(),
            queue: VecDeque::new(),
            last_dep: Time::ZERO,
            tokens,
            token_t: Time::ZERO,
            scripted_drop_done: false,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x5eed),
            ce_counter: 0,
            drops: 0,
            rtos: 0,
            recoveries: 0,
            rounds: 0,
            next_round_delivered: 0,
            losses: Vec::new(),
        }
    }

    /// The controller's statistic `key` (NaN if it does not export it).
    pub fn stat(&self, key: &str) -> f64 {
        let mut v = f64::NAN;
        self.cc.stats(&mut |k, x| {
            if k == key {
                v = x;
            }
        });
        v
    }

    /// From now on the application writes at `bps` (bulk before).
    pub fn set_app_rate(&mut self, bps: u64) {
        self.app = Some((self.now, self.nxt, bps));
    }

    /// Payload delivered per second since (`delivered`, `from`), in bit/s.
    pub fn goodput_bps(&self, delivered: u64, from: Time) -> f64 {
        u64_to_f64(self.rate.delivered() - delivered) * f64::from(8 * self.path.mss)
            / (self.now - from).as_secs_f64()
    }

    /// When the application has written segment `seq`.
    fn data_time(&self, seq: u64) -> Time {
        match self.app {
            None => Time::ZERO,
            Some((t0, seq0, bps)) => {
                let bits = u128::from(seq.saturating_sub(seq0)) * u128::from(8 * self.path.mss);
                let ns = (bits * 1_000_000_000).div_ceil(u128::from(bps));
                t0 + Dur::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
            }
        }
    }

    fn cpu_active(&self, t: Time) -> bool {
        self.path
            .cpu
            .is_none_or(|(on, period)| t.as_nanos() % period.as_nanos() < on.as_nanos())
    }

    /// The first instant at or after `t` when the sender runs.
    fn cpu_next(&self, t: Time) -> Time {
        match self.path.cpu {
            Some((_, period)) if !self.cpu_active(t) => {
                Time((t.as_nanos() / period.as_nanos() + 1) * period.as_nanos())
            }
            _ => t,
        }
    }

    /// RFC 6298 §2 with Linux's floor (`TCP_RTO_MIN` = 200 ms) and exponential backoff (§5.5).
    fn rto(&self) -> Dur {
        let base = self.srtt.map_or(Dur::from_secs(1), |s| {
            (s + Dur::from_nanos(4 * self.rttvar.as_nanos())).max(Dur::from_millis(200))
        });
        Dur::from_nanos(base.as_nanos() << self.backoff.min(6))
    }

    fn seg(&mut self, seq: u64) -> &mut Seg {
        let i = usize::try_from(seq - self.una).expect("a window fits memory");
        &mut self.segs[i]
    }

    /// The oldest segment marked lost and not yet retransmitted.
    fn next_lost(&mut self) -> Option<u64> {
        while let Some(&s) = self.lost_q.front() {
            if s >= self.una && self.seg(s).state == SegState::Lost {
                return Some(s);
            }
            self.lost_q.pop_front();
        }
        None
    }

    /// The bottleneck: the ACK's arrival time and CE mark for a packet handed to it now, or
    /// None if it is dropped.
    fn transmit(&mut self, new_data: bool) -> Option<(Time, bool)> {
        let now = self.now;
        let random_drop = self.path.loss > 0.0 && self.rng.random::<f64>() < self.path.loss;
        if let Some(t) = self.path.drop_at
            && new_data
            && now >= t
            && !self.scripted_drop_done
        {
            self.scripted_drop_done = true;
            return None;
        }
        if random_drop || self.path.blackout.is_some_and(|(a, b)| now >= a && now < b) {
            return None;
        }
        if let Some((rate, depth)) = self.path.policer {
            let depth = u128::from(depth) * 1_000_000_000;
            let dt = u128::from((now - self.token_t).as_nanos());
            self.tokens = (self.tokens + dt * u128::from(rate / 8)).min(depth);
            self.token_t = now;
            let cost = u128::from(self.path.mss) * 1_000_000_000;
            if self.tokens < cost {
                return None;
            }
            self.tokens -= cost;
        }
        while self.queue.front().is_some_and(|&d| d <= now) {
            self.queue.pop_front();
        }
        if self.path.buffer.is_some_and(|b| self.queue.len() >= b) {
            return None;
        }
        let serialization = Dur::serialization(u64::from(self.path.mss), self.path.rate_bps);
        let dep = now.max(self.last_dep) + serialization;
        self.last_dep = dep;
        self.queue.push_back(dep);
        self.ce_counter += 1;
        let ce = self
            .path
            .ce
            .is_some_and(|(num, den)| (self.ce_counter * num) % den < num);
        let at = dep + self.path.rtt;
        let at = match self.path.ack_batch {
            Some(b) => Time(at.as_nanos().div_ceil(b.as_nanos()) * b.as_nanos()),
            None => at,
        };
        Some((at, ce))
    }

    /// Send one segment now: the retransmission `retransmit`, else new data.
    fn send_one(&mut self, retransmit: Option<u64>) {
        let now = self.now;
        let fresh_flight = self.una == self.nxt;
        let seq = match retransmit {
            Some(s) => s,
            None => {
                if fresh_flight && self.tx_count > 0 {
                    // tcp_event_data_sent as the simulator's sender raises it: TX_START (and
                    // the idle restart for a controller that does not set cwnd itself).
                    let (idle, rto) = (now - self.last_send, self.rto());
                    let app_limited = self.rate.is_app_limited();
                    self.rec.on_tx_start(
                        now,
                        &mut self.cc,
                        &mut self.st,
                        idle,
                        rto,
                        IW,
                        app_limited,
                    );
                }
                self.nxt += 1;
                self.segs.push_back(Seg {
                    state: SegState::InFlight,
                    lost: false,
                    tx: 0,
                    rec: TxRecord::default(),
                });
                self.nxt - 1
            }
        };
        self.tx_count += 1;
        self.in_flight += 1;
        let (tx, in_flight) = (self.tx_count, self.in_flight);
        let rec = self
            .rate
            .on_sent(now, fresh_flight, in_flight, retransmit.is_some());
        let seg = self.seg(seq);
        seg.state = SegState::InFlight;
        seg.tx = tx;
        seg.rec = rec;
        self.order.push_back((tx, seq));
        self.rec.on_sent(1);
        if self.cc.wants_packet_sent() {
            let sent = SentInfo {
                seq,
                bytes: self.path.mss,
                in_flight,
                is_retrans: retransmit.is_some(),
                is_app_limited: rec.is_app_limited,
            };
            self.cc.on_packet_sent(now, &self.st, &sent);
        }
        match self.transmit(retransmit.is_none()) {
            Some((at, ce)) => self.acks.push_back(Arrival { at, seq, tx, ce }),
            None => self.drops += 1,
        }
        self.last_send = now;
        // tcp_update_skb_after_send: EDT pacing once 10 segments are out, with up to half a
        // packet time of credit for lateness.
        let prior = self.wstamp;
        self.wstamp = self.wstamp.max(now);
        if let Some(rate) = self.cc.pacing_rate()
            && self.tx_count >= 10
            && rate > 0
            && rate != u64::MAX
        {
            let len = Dur::serialization(u64::from(self.path.mss), rate.saturating_mul(8));
            let credit = self.wstamp - prior;
            let len = len - Dur::from_nanos((len.as_nanos() / 2).min(credit.as_nanos()));
            self.wstamp += len;
        }
    }

    /// Send what cwnd, pacing, the CPU and the application allow now.
    fn try_send(&mut self) {
        while self.cpu_active(self.now) && self.now >= self.wstamp && self.in_flight < self.st.cwnd
        {
            if let Some(s) = self.next_lost() {
                self.send_one(Some(s));
            } else if self.data_time(self.nxt) <= self.now {
                self.send_one(None);
            } else {
                break;
            }
        }
    }

    /// After every event: Linux `tcp_rate_check_app_limited` and the cwnd-limited part of
    /// `tcp_cwnd_validate`.
    fn after_event(&mut self) {
        let has_data = self.next_lost().is_some() || self.data_time(self.nxt) <= self.now;
        if !has_data && self.in_flight < self.st.cwnd {
            self.rate.mark_app_limited(self.in_flight);
        }
        let blocked = has_data && self.in_flight >= self.st.cwnd;
        if blocked || self.una >= self.cwnd_usage_seq {
            self.is_cwnd_limited = blocked;
            self.cwnd_usage_seq = self.nxt;
        }
    }

    /// The next time the sender could transmit, if cwnd allows it.
    fn next_send_time(&mut self) -> Option<Time> {
        if self.in_flight >= self.st.cwnd {
            return None;
        }
        let mut t = self.now.max(self.wstamp);
        if self.next_lost().is_none() {
            t = t.max(self.data_time(self.nxt));
        }
        Some(self.cpu_next(t))
    }

    fn mark_lost(&mut self, seq: u64) {
        let now = self.now;
        let seg = self.seg(seq);
        seg.state = SegState::Lost;
        let newly = !seg.lost;
        seg.lost = true;
        let rec = seg.rec;
        self.in_flight -= 1;
        self.lost_out += u32::from(newly);
        let info = self.rate.on_lost(&rec);
        self.lost_q.push_back(seq);
        let before = self.cc.state();
        let watch_before = self.loss_watch.map_or(0, |w| w(&self.cc));
        self.cc.on_packet_lost(now, &mut self.st, &info);
        self.losses.push(LossRec {
            at: now,
            before,
            after: self.cc.state(),
            watch_before,
            watch_after: self.loss_watch.map_or(0, |w| w(&self.cc)),
        });
    }

    /// One ACK for transmission `tx` of segment `seq`; the ACK handed to the controller
    /// unless it acknowledged nothing new (the original and its retransmission both arrived).
    fn on_ack(&mut self, a: Arrival) -> Option<Ack> {
        let now = self.now;
        let prior_in_flight = self.in_flight;
        let cwnd_before = self.st.cwnd;
        let prior_una = self.una;
        let lost_before = self.rate.lost();
        let dup = a.seq < self.una || self.seg(a.seq).state == SegState::Delivered;
        let mut rate_ack = self.rate.begin_ack();
        let mut rtt = None;
        if !dup {
            let seg = *self.seg(a.seq);
            self.in_flight -= u32::from(seg.state == SegState::InFlight);
            self.lost_out -= u32::from(seg.lost);
            let mut rec = seg.rec;
            self.rate.on_delivered(&mut rate_ack, &mut rec, a.seq);
            let s = self.seg(a.seq);
            s.state = SegState::Delivered;
            s.lost = false;
            s.rec = rec;
            self.rate.add_delivered_ce(u64::from(a.ce));
            self.last_progress = now;
            // RTT (Karn: none from a retransmitted segment, nor from an older transmission).
            if seg.tx == a.tx && !seg.rec.is_retrans {
                let r = now - seg.rec.sent_time;
                rtt = Some(r);
                self.backoff = 0;
                match self.srtt {
                    None => {
                        self.srtt = Some(r);
                        self.rttvar = Dur::from_nanos(r.as_nanos() / 2);
                    }
                    Some(s) => {
                        let err = s.as_nanos().abs_diff(r.as_nanos());
                        self.rttvar = Dur::from_nanos((self.rttvar.as_nanos() * 3 + err) / 4);
                        self.srtt = Some(Dur::from_nanos((s.as_nanos() * 7 + r.as_nanos()) / 8));
                    }
                }
                self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
            }
        }
        // Loss detection: the path is FIFO, so every transmission sent before this one and
        // not yet delivered was dropped.
        while let Some(&(t, s)) = self.order.front() {
            if t > a.tx {
                break;
            }
            self.order.pop_front();
            if t < a.tx && s >= self.una {
                let seg = *self.seg(s);
                if seg.tx == t && seg.state == SegState::InFlight {
                    self.mark_lost(s);
                }
            }
        }
        while self
            .segs
            .front()
            .is_some_and(|s| s.state == SegState::Delivered)
        {
            self.segs.pop_front();
            self.una += 1;
        }
        let losses = saturating_u32(self.rate.lost() - lost_before);
        // The state machine (the path never reorders, so nothing counts as SACKed), then the
        // delivery-rate sample (tcp_rate_gen) and the controller, through the kit.
        let acked = u32::from(!dup);
        let sig = AckSignals {
            snd_una: self.una,
            snd_nxt: self.nxt,
            una_advanced: self.una > prior_una,
            lost_out: self.lost_out,
            in_flight: self.in_flight,
            acked_sacked: acked,
            newly_lost: losses,
            ecn_echo: a.ce && !dup,
            cwnd_limited: self.is_cwnd_limited,
            ..AckSignals::default()
        };
        let mut ack = AckInfo {
            acked_sacked: acked,
            pkts_acked: acked,
            rtt,
            srtt: self.srtt,
            min_rtt: self.min_rtt,
            in_flight: self.in_flight,
            prior_in_flight,
            is_cwnd_limited: self.is_cwnd_limited,
            paced: self.cc.wants_pacing(),
            snd_nxt: self.nxt,
            snd_una: self.una,
            ca_state: Some(self.rec.state()),
            total_lost: self.rate.lost(),
            wstamp: self.wstamp,
            total_delivered_ce: self.rate.delivered_ce(),
            ce_reduction: false,
        };
        let t = self.rec.on_ack(now, &mut self.cc, &mut self.st, &sig, &ack);
        self.recoveries += u64::from(t.entered_recovery);
        if dup {
            return None;
        }
        let mut rs = self.rate.generate(now, &rate_ack, losses, self.min_rtt);
        rs.rtt = rtt;
        self.st.app_limited = self.rate.is_app_limited();
        self.rec
            .cong_control(now, &mut self.cc, &mut self.st, &rs, &sig, &mut ack);
        assert!(self.st.cwnd >= 1);
        if rs.interval.is_some() && rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = self.rate.delivered();
            self.rounds += 1;
        }
        Some(Ack {
            cwnd_before,
            losses,
            ca_state: self.rec.state(),
            rs,
            ack,
        })
    }

    /// Retransmission timeout (`tcp_enter_loss`, through the kit: ssthresh and `CA_EVENT_LOSS`
    /// for a new episode, every segment in flight marked lost, cwnd = in flight + 1, Loss).
    fn on_rto(&mut self) {
        let now = self.now;
        self.rtos += 1;
        self.backoff += 1;
        self.rec.rto_begin(
            now,
            &mut self.cc,
            &mut self.st,
            self.una,
            &AckInfo::default(),
        );
        while let Some((t, s)) = self.order.pop_front() {
            if s >= self.una {
                let seg = *self.seg(s);
                if seg.tx == t && seg.state == SegState::InFlight {
                    self.mark_lost(s);
                }
            }
        }
        self.rec
            .enter_loss(now, &mut self.cc, &mut self.st, self.in_flight, self.nxt);
        self.last_progress = now;
    }

    /// Process the next event (an ACK arrival, a send opportunity, the RTO) if it is due by
    /// `end`, else move the clock to `end`; returns the ACK handed to the controller, if any.
    pub fn step_until(&mut self, end: Time) -> Option<Ack> {
        let t_ack = self.acks.front().map(|a| self.cpu_next(a.at));
        let t_send = self.next_send_time();
        let t_rto = (self.in_flight > 0).then(|| self.cpu_next(self.last_progress + self.rto()));
        let next = [t_ack, t_send, t_rto].into_iter().flatten().min();
        let Some(t) = next.filter(|&t| t <= end) else {
            self.now = self.now.max(end);
            return None;
        };
        self.now = self.now.max(t);
        let mut out = None;
        if t_ack == Some(t) {
            let a = self.acks.pop_front().expect("an arrival");
            out = self.on_ack(a);
        } else if t_rto == Some(t) {
            self.on_rto();
        }
        self.try_send();
        self.after_event();
        out
    }

    /// Process the next event, however far ahead.
    pub fn step(&mut self) -> Option<Ack> {
        self.step_until(Time(u64::MAX))
    }

    /// Run until `end`; `each` sees the network after every ACK handed to the controller.
    pub fn run(&mut self, end: Time, each: &mut dyn FnMut(&Net<C>, &Ack)) {
        while self.now < end {
            if let Some(a) = self.step_until(end) {
                each(self, &a);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Ack, Net, Path};
    use crate::num::u64_to_f64;
    use crate::{AckInfo, CongestionControl, CwndState, Dur, RateSample, Time};

    /// Keeps cwnd at a fixed window (it sets cwnd itself, so no reduction touches it); when
    /// `wants_sent`, it counts the transmissions it hears of and the retransmissions among them.
    #[derive(Clone, Debug, Default)]
    struct Fixed {
        cwnd: u32,
        wants_sent: bool,
        sent: u64,
        retrans: u64,
    }

    fn fixed(cwnd: u32) -> Fixed {
        Fixed {
            cwnd,
            ..Fixed::default()
        }
    }

    impl CongestionControl for Fixed {
        fn name(&self) -> &'static str {
            "fixed"
        }
        fn cong_avoid(&mut self, _now: Time, _st: &mut CwndState, _acked: u32, _ack: &AckInfo) {}
        fn ssthresh(&mut self, _now: Time, st: &CwndState, _ack: &AckInfo) -> u32 {
            st.cwnd
        }
        fn cong_control(
            &mut self,
            _now: Time,
            st: &mut CwndState,
            _rs: &RateSample,
            _ack: &AckInfo,
        ) -> bool {
            st.cwnd = self.cwnd;
            true
        }
        fn state(&self) -> &'static str {
            "fixed"
        }
        fn wants_packet_sent(&self) -> bool {
            self.wants_sent
        }
        fn on_packet_sent(&mut self, _now: Time, _st: &CwndState, sent: &crate::SentInfo) {
            self.sent += 1;
            self.retrans += u64::from(sent.is_retrans);
            assert!(sent.in_flight >= 1 && sent.bytes == MSS);
        }
    }

    const MSS: u32 = 1000;

    /// 10 Mbit/s, 20 ms, 1000-byte segments: 0.8 ms per packet, BDP 25 packets.
    fn path() -> Path {
        Path::new(10, 20, MSS)
    }

    fn secs(s: f64) -> Time {
        Time::from_secs_f64(s)
    }

    /// Goodput from `from` to `to` of a fixed window `w` on `path`.
    fn goodput(path: Path, w: u32, from: f64, to: f64) -> f64 {
        let mut n = Net::new(fixed(w), path, 1);
        n.run(secs(from), &mut |_, _| {});
        let d = n.rate.delivered();
        n.run(secs(to), &mut |_, _| {});
        n.goodput_bps(d, secs(from))
    }

    /// A window below the BDP is delivered once per RTT of propagation plus one packet time
    /// (10 packets per 20.8 ms = 3.846 Mbit/s); a window above it fills the bottleneck (C). 1 %:
    /// a measurement window of 2 s holds ≈ 100 RTTs, so the partial RTT at its edges is < 1 %.
    #[test]
    fn a_fixed_window_gets_window_over_rtt_up_to_the_bottleneck_rate() {
        let small = goodput(path(), 10, 1.0, 3.0);
        let expect = 10.0 * 8.0 * f64::from(MSS) / 0.0208;
        assert!((small / expect - 1.0).abs() < 0.01, "{small} vs {expect}");
        let large = goodput(path(), 50, 1.0, 3.0);
        assert!((large / 10e6 - 1.0).abs() < 0.01, "{large}");
    }

    /// Drop-tail, once the unpaced start-up burst is over: a standing queue of W − BDP = 5
    /// packets fits a 10-packet buffer; W = 60 (queue 35) overflows it, and every dropped
    /// packet is found lost (by the next ACK: the path is FIFO).
    #[test]
    fn the_buffer_drops_what_does_not_fit() {
        for (w, drops) in [(30, false), (60, true)] {
            let mut p = path();
            p.buffer = Some(10);
            let mut n = Net::new(fixed(w), p, 1);
            n.run(secs(1.0), &mut |_, _| {});
            let (d0, l0) = (n.drops, n.rate.lost());
            n.run(secs(3.0), &mut |_, _| {});
            let (d, l) = (n.drops - d0, n.rate.lost() - l0);
            assert_eq!(d > 0, drops, "window {w}: {d} drops");
            assert!(l.abs_diff(d) <= u64::from(w), "{l} lost, {d} dropped");
        }
    }

    /// Random loss: the dropped fraction of ≈ 25 000 transmissions is p = 5 % within 3σ
    /// (σ = √(p(1 − p)/n) ≈ 0.14 %); another seed drops other packets.
    #[test]
    fn random_loss_drops_the_configured_fraction_from_the_seed() {
        let run = |seed| {
            let mut p = path();
            p.loss = 0.05;
            let mut n = Net::new(fixed(50), p, seed);
            n.run(secs(20.0), &mut |_, _| {});
            n
        };
        let n = run(1);
        let frac = u64_to_f64(n.drops) / u64_to_f64(n.tx_count);
        let sigma = (0.05 * 0.95 / u64_to_f64(n.tx_count)).sqrt();
        assert!(n.tx_count > 20_000, "{}", n.tx_count);
        assert!((frac - 0.05).abs() < 3.0 * sigma, "{frac}");
        assert_eq!(run(1).drops, n.drops);
        assert_ne!(run(2).drops, n.drops);
    }

    /// CE marks on 1 of every 4 packets, evenly spread: the delivered CE count reaching the
    /// controller is a quarter of the delivered count, to one mark.
    #[test]
    fn ce_marks_an_even_fraction() {
        let mut p = path();
        p.ce = Some((1, 4));
        let mut n = Net::new(fixed(20), p, 1);
        n.run(secs(2.0), &mut |n, a: &Ack| {
            let (ce, all) = (a.ack.total_delivered_ce, n.rate.delivered());
            assert!((4 * ce).abs_diff(all) <= 4, "{ce} of {all}");
        });
    }

    /// The application writes 2 Mbit/s from t = 1 s: once the bulk window sent before is
    /// delivered, goodput is that rate (one packet in 2 s is 0.4 %), and the sender marks its
    /// samples app-limited.
    #[test]
    fn an_application_rate_limits_the_sender() {
        let mut n = Net::new(fixed(50), path(), 1);
        n.run(secs(1.0), &mut |_, _| {});
        n.set_app_rate(2_000_000);
        n.run(secs(2.0), &mut |_, _| {});
        let d = n.rate.delivered();
        let mut limited = 0;
        n.run(secs(4.0), &mut |_, a| {
            limited += u32::from(a.rs.is_app_limited)
        });
        let g = n.goodput_bps(d, secs(2.0));
        assert!((g / 2e6 - 1.0).abs() < 0.01, "{g}");
        assert!(limited > 400, "{limited} app-limited samples");
    }

    /// A sender whose CPU runs 2 ms of every 10 ms reads ACKs only then; ACKs released in
    /// 4 ms batches arrive only at multiples of 4 ms.
    #[test]
    fn cpu_windows_and_ack_batches_gate_the_acks() {
        let mut p = path();
        p.cpu = Some((Dur::from_millis(2), Dur::from_millis(10)));
        let mut n = Net::new(fixed(50), p, 1);
        n.run(secs(1.0), &mut |n, _| {
            assert!(
                n.now.as_nanos() % 10_000_000 < 2_000_000,
                "ACK at {}",
                n.now
            );
        });
        let mut p = path();
        p.ack_batch = Some(Dur::from_millis(4));
        let mut n = Net::new(fixed(50), p, 1);
        n.run(secs(1.0), &mut |n, _| {
            assert_eq!(n.now.as_nanos() % 4_000_000, 0, "ACK at {}", n.now);
        });
    }

    /// A controller that wants `on_packet_sent` hears of every transmission, in order, with the
    /// retransmissions flagged; a lossy path makes some.
    #[test]
    fn on_packet_sent_reports_every_transmission() {
        let mut p = path();
        p.loss = 0.02;
        let cc = Fixed {
            wants_sent: true,
            ..fixed(20)
        };
        let mut n = Net::new(cc, p, 1);
        n.run(secs(2.0), &mut |_, _| {});
        assert_eq!(n.cc.sent, n.tx_count);
        assert_eq!(
            n.cc.retrans,
            n.tx_count - n.nxt,
            "one per extra transmission"
        );
        assert!(n.cc.retrans > 0);
    }

    /// An outage of 1 s: the RTO fires (RFC 6298: srtt + 4·rttvar, at least 200 ms) and backs
    /// off (twice the previous interval) while the path is dark; afterwards every segment is
    /// delivered and the sender is Open again.
    #[test]
    fn an_outage_fires_backed_off_rtos_and_recovers() {
        let mut p = path();
        p.blackout = Some((secs(1.0), secs(2.0)));
        let mut n = Net::new(fixed(10), p, 1);
        n.run(secs(1.0), &mut |_, _| {});
        let mut fired = Vec::new();
        while n.now < secs(2.0) {
            let before = n.rtos;
            n.step();
            if n.rtos > before {
                fired.push(n.now);
            }
        }
        assert!(fired.len() >= 2, "{fired:?}");
        assert!(fired[0] >= secs(1.0) + Dur::from_millis(200));
        let (a, b) = (fired[1] - fired[0], fired[0] - secs(1.0));
        assert!(a > b, "backoff: {a} after {b}");
        n.run(secs(6.0), &mut |_, _| {});
        assert_eq!(n.rec.state(), crate::CaState::Open);
        assert!(n.rate.delivered() > 1_000 && n.una + 10 >= n.nxt);
    }
}
