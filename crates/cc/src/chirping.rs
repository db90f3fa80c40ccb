//! Paced Chirping (Misund and Briscoe, "Paced Chirping: Rapid flow start with very low queuing
//! delay", IEEE INFOCOM Global Internet Symposium 2019; the authors' Linux code,
//! `JoakimMisund/PacedChirping`, `latest/module/paced_chirping.c` for the congestion-control
//! side and `latest/changes.diff` for the `tcp_output.c` side): a slow-start replacement that
//! probes the path with *chirps*, short trains of packets whose gaps shrink through the train,
//! reads from the ACKs where the queueing delay starts to rise, and takes that rate as the
//! available capacity.
//!
//! Contract: [`Chirping`] is a [`crate::SlowStart`] variant of the loss-based hosts (Reno,
//! NewReno, CUBIC). It starts at [`Chirping::on_connection_start`] (a transport that never
//! reports the connection start gets standard slow start) and then owns `cwnd` until it exits:
//! - it sets the gap after every segment: the host forwards [`Chirping::on_packet_sent`] and
//!   answers [`Chirping::pacing_rate`] = segment bytes / gap, which the transport re-reads after
//!   each segment (`CongestionControl::sets_gap_per_segment`); while it chirps it asks for
//!   pacing ([`Chirping::paces_now`]) and one segment per skb ([`Chirping::tso_segs`]: the Linux
//!   patch skips `tcp_mss_split_point` while `tp->is_chirping`);
//! - `cwnd` follows what the chirps put in flight: `cwnd = in_flight + segments the scheduled
//!   chirps may still send` (the patch's `tcp_write_xmit` stops when `new_chirp` refuses; its
//!   `snd_cwnd` only grows by N per chirp and never limits, this model lets cwnd be the gate);
//! - the host's slow-start growth is off while it runs ([`Chirping::grow`] returns 0: the
//!   code's `dctcp_cong_avoid` returns while `pc_state` is set).
//!
//! Rules (function names are the code's):
//! - *Chirp shape* (`dctcp_new_chirp`, `tcp_update_skb_after_send` in the patch): a chirp of N
//!   packets with average gap g and geometry G starts with gap G·g and each following gap is
//!   `step = 2·(G−1)·g/N` shorter, so the N−1 gaps run linearly from G·g down to
//!   G·g − (N−2)·step (G = 2, N = 16: 2g … g/4, mean 1.125·g): the rates swept go from
//!   1/(G·g) to about 4/g. (The paper's figure calls the spacing geometric; the code's is this
//!   arithmetic one, which is what is modelled.) After the last packet the sender waits a guard
//!   interval `max(g, srtt/M − chirp length)` (g when that is negative or no RTT is known), so
//!   the M chirps of a round spread over one RTT and the queue drains between chirps. Chirps 0
//!   and 1 have 5 packets, chirps 2 and 3 have 8, then `CHIRP_SIZE` (16).
//! - *Queueing delay* (`dctcp_acked`): every cumulatively acknowledged packet of a chirp gets
//!   `q = RTT sample − min RTT` (µs, the code's `rtt_us − tcp_min_rtt`); packets are matched to
//!   their chirp by sequence number (the code counts ACKed packets in order and notes that it
//!   assumes no loss or reordering).
//! - *Excursions* (`analyze_chirp`): an excursion starts at packet i when q[i] < q[i+1] and
//!   goes on while the delay stays above its start by more than 5/8 of the largest rise seen in
//!   it; an excursion of at least L packets (L = 5) that ends inside the chirp is a transient
//!   queue, and each of its packets whose delay still rose gets its own gap as estimate; an
//!   excursion still running at the chirp's end marks persistent queueing from its start l:
//!   all its packets get gap s[l]; every other packet gets s[l] (l = the last packet when no
//!   excursion ran to the end: the chirp's highest rate did not build a queue). The chirp's
//!   estimate is the mean over its N−1 gaps, and the running gap estimate g moves half way to it
//!   (`update_gap_avg`, `GAP_AVG_SHIFT` = 1), bounded to 30 µs … 10 ms.
//! - *Rounds* (`start_new_round`): round 0 is chirps 0 and 1 (M = 2); round 1 starts when chirp
//!   0 has been analysed, every later round at the first ACK of the round's first chirp; from
//!   chirp 6 on, a round that sent all its M chirps makes the next one `M·gain` (gain 2).
//! - *Exit* (`should_terminate`, then the `STATE_TRANSITION` branch of `dctcp_acked` and
//!   `exit_paced_chirping`): once the chirps of a round last at least an srtt together
//!   (`srtt ≤ round_length`), the sender paces at mss/min(g, 5 ms) with cwnd = max(2·min_rtt/g,
//!   10) for min_rtt/g more ACKs (about one window of the estimated BDP), then hands over:
//!   `cwnd = max(packets_out, 2)`, `ssthresh = cwnd`, pacing back to the socket's own setting,
//!   and the host runs congestion avoidance.
//! - *Congestion*: the paper sets losses and ECN aside ("not central to proving the concept");
//!   the code leaves chirping on an RTO (`dctcp_state`, `TCP_CA_Loss`) and ignores ECE while
//!   chirping (`disable_cwr_upon_ece`). Here any loss, ECN reduction or RTO ends chirping at
//!   once and the host responds from the current window (`in_flight` plus the scheduled
//!   chirps), as it would to a loss in slow start.
//!
//! Choices where the code depends on Linux's socket internals: its `enough_data_committed`
//! check (no more than a chirp below TCP) is left to the transport's TSQ; when a sized transfer
//! has fewer unsent segments than the next chirp, they leave without gaps and are not analysed
//! (`enough_data_for_chirp` false: "Send immediately"); the code's `pacing_shift` of 5 is not
//! applied (the host's shift stays); lateness is not credited against a chirp's gaps (the code
//! credits OS jitter; a simulated sender leaves on time).
//!
//! Units: gaps and delays in nanoseconds except `q` (µs, as the code), windows in segments.

use std::collections::VecDeque;

use crate::{AckInfo, ConnStart, CwndState, Dur, StatSink};

/// Fixed-point shift of gain and geometry (`G_G_SHIFT` = 10: 1.0 = 1024).
pub const G_G_SHIFT: u32 = 10;
/// Fixed-point shift of M, the chirps of a round (`M_SHIFT` = 4).
const M_SHIFT: u32 = 4;
/// Chirps in the first round (`init_paced_chirping`: `M = 2 << M_SHIFT`).
const INITIAL_M: u32 = 2 << M_SHIFT;
/// M grows only from this chirp on (`start_new_round`: `chirp_number >= 6`).
const GROW_M_FROM_CHIRP: u32 = 6;
/// Sizes of the first chirps (`dctcp_new_chirp`: chirps 0–1 have 5 packets, 2–3 have 8).
const FIRST_CHIRP_SIZES: [u32; 4] = [5, 5, 8, 8];
/// Bounds of the gap estimate (`update_gap_avg`: "min 30us, max 10ms").
pub const MIN_GAP: Dur = Dur::from_micros(30);
/// See [`MIN_GAP`].
pub const MAX_GAP: Dur = Dur::from_millis(10);
/// Longest gap the exit pacing uses (`dctcp_acked`: `min(5000000U, gap_avg_ns)`).
const MAX_EXIT_GAP: Dur = Dur::from_millis(5);
/// Smallest cwnd at the exit (`dctcp_acked`: `max(round_start << 1, 10U)`).
const MIN_EXIT_CWND: u32 = 10;

/// Paced Chirping's parameters (the code's constants and module parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChirpingConfig {
    /// Packets per chirp from chirp 4 on (`CHIRP_SIZE` = 16).
    pub chirp_size: u32,
    /// The gap estimate before the first chirp (`init_paced_chirping`: 200 µs).
    pub initial_gap: Dur,
    /// First gap of a chirp over its average gap, × 1024 (`dctcp_pc_initial_geometry` =
    /// 2 << 10, clamped to 1…3 by `init_paced_chirping`).
    pub geometry: u32,
    /// Growth of the chirps per round, × 1024 (`dctcp_pc_initial_gain` = 2 << 10, at least 1).
    pub gain: u32,
    /// Packets of rising delay that make an excursion (`dctcp_pc_L` = 5).
    pub excursion_len: u32,
}

impl ChirpingConfig {
    /// The code's defaults.
    pub const DEFAULT: ChirpingConfig = ChirpingConfig {
        chirp_size: 16,
        initial_gap: Dur::from_micros(200),
        geometry: 2 << G_G_SHIFT,
        gain: 2 << G_G_SHIFT,
        excursion_len: 5,
    };
}

impl Default for ChirpingConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// One chirp: where it is in the sequence space, its gaps and the delays its ACKs showed.
#[derive(Clone, Debug)]
struct Chirp {
    number: u32,
    /// First segment.
    begin: u64,
    /// Packets.
    n: u32,
    /// Packets sent so far.
    sent: u32,
    /// `gaps[i]`: scheduled gap before packet i, ns (`gaps[0]` unused).
    gaps: Vec<u64>,
    /// Gap after the last packet, ns.
    guard: u64,
    /// Queueing delay of each packet, µs, once its ACK came.
    qdelay: Vec<Option<u64>>,
}

impl Chirp {
    fn end(&self) -> u64 {
        self.begin + u64::from(self.n)
    }
}

/// Where Paced Chirping is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Before the transport reported the connection start: standard slow start.
    Waiting,
    /// Sending chirps (`STATE_ACTIVE`).
    Chirping,
    /// Pacing at the estimate for about one BDP of ACKs (`STATE_TRANSITION`).
    Transition {
        /// ACKs to wait for (the code's `round_start` = min_rtt/g).
        target: u32,
        /// ACKs counted so far.
        acks: u32,
        /// Pacing rate, bytes/s.
        rate: u64,
    },
    /// Handed over to the host (or ended by congestion).
    Done,
}

/// Paced Chirping state of one connection.
#[derive(Clone, Debug)]
pub struct Chirping {
    cfg: ChirpingConfig,
    phase: Phase,
    /// Gap estimate, ns (`gap_avg_ns`).
    gap_avg: u64,
    /// Number of the next chirp (`chirp_number`).
    chirp_number: u32,
    /// Chirps per round × 16 (`M`).
    m: u32,
    /// First chirp of the round (`round_start`).
    round_start: u32,
    /// Chirps scheduled in the round (`round_sent`).
    round_sent: u32,
    /// Sum of the round's chirp lengths, ns (`round_length_us`).
    round_length: u64,
    /// Scheduled and not yet analysed chirps, oldest first (`chirp_list`).
    chirps: VecDeque<Chirp>,
    /// The chirps may send up to this segment (exclusive): cwnd = in_flight + (this − SND.NXT).
    allow_end: u64,
    /// Unsent segments of the transfer to send without gaps (fewer than a chirp).
    tail_left: u64,
    /// Segments of the transfer, if sized.
    transfer_segs: Option<u64>,
    /// Next new segment the controller expects (SND.NXT as it saw it).
    next_seq: u64,
    /// SND.UNA as of the last ACK.
    una: u64,
    /// Smoothed RTT (`tp->srtt_us`), once known.
    srtt: Option<Dur>,
    /// Pacing rate for the gap after the last segment, bytes/s.
    rate: Option<u64>,
    /// Chirps analysed, and of them the ones that gave an estimate.
    analysed: u32,
    /// The last chirp's own estimate, ns.
    last_estimate: Option<u64>,
}

impl Chirping {
    /// Paced Chirping with `cfg`.
    #[must_use]
    pub fn new(cfg: ChirpingConfig) -> Self {
        Chirping {
            cfg,
            phase: Phase::Waiting,
            gap_avg: cfg.initial_gap.as_nanos(),
            chirp_number: 0,
            m: INITIAL_M,
            round_start: 0,
            round_sent: 0,
            round_length: 0,
            chirps: VecDeque::new(),
            allow_end: 0,
            tail_left: 0,
            transfer_segs: None,
            next_seq: 0,
            una: 0,
            srtt: None,
            rate: None,
            analysed: 0,
            last_estimate: None,
        }
    }

    /// The parameters.
    #[must_use]
    pub fn config(&self) -> ChirpingConfig {
        self.cfg
    }

    /// The gap estimate (`gap_avg_ns`).
    #[must_use]
    pub fn gap_estimate(&self) -> Dur {
        Dur::from_nanos(self.gap_avg)
    }

    /// The capacity estimate mss / gap, bytes/s.
    #[must_use]
    pub fn rate_estimate(&self, mss: u32) -> u64 {
        gap_to_rate(u64::from(mss), self.gap_avg)
    }

    /// Chirps sent so far.
    #[must_use]
    pub fn chirps_sent(&self) -> u32 {
        self.chirp_number
    }

    /// Whether chirps are being sent.
    #[must_use]
    pub fn is_chirping(&self) -> bool {
        self.phase == Phase::Chirping
    }

    /// Whether Paced Chirping still owns the window (chirping or pacing at its estimate).
    #[must_use]
    pub fn is_active(&self) -> bool {
        matches!(self.phase, Phase::Chirping | Phase::Transition { .. })
    }

    /// Whether Paced Chirping has handed over to the host.
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// Packets of chirp `number` (`dctcp_new_chirp`).
    fn size_of(&self, number: u32) -> u32 {
        let n = usize::try_from(number)
            .ok()
            .and_then(|i| FIRST_CHIRP_SIZES.get(i).copied())
            .unwrap_or(self.cfg.chirp_size);
        n.min(self.cfg.chirp_size).max(2)
    }

    /// `init_paced_chirping`: chirping starts with round 0.
    pub fn on_connection_start(&mut self, st: &mut CwndState, info: &ConnStart) {
        if self.phase != Phase::Waiting {
            return;
        }
        self.phase = Phase::Chirping;
        self.srtt = info.first_rtt.filter(|d| d.as_nanos() > 0);
        let mss = u64::from(st.mss.max(1));
        self.transfer_segs = info.transfer_bytes.map(|b| b.div_ceil(mss).max(1));
        self.grant(0);
        st.cwnd = self.window(0, 0, st);
    }

    /// Let the round's M chirps go from `base` on (the chirp in progress, if any, first).
    fn grant(&mut self, snd_nxt: u64) {
        let base = match self.chirps.back() {
            Some(c) if c.sent < c.n => c.end(),
            _ => snd_nxt.max(self.next_seq),
        };
        let chirps = self.m >> M_SHIFT;
        let segs: u64 = (0..chirps)
            .map(|k| u64::from(self.size_of(self.chirp_number.saturating_add(k))))
            .sum();
        self.allow_end = base + segs;
    }

    /// cwnd while chirping: what is in flight plus what the scheduled chirps may still send.
    fn window(&self, in_flight: u32, snd_nxt: u64, st: &CwndState) -> u32 {
        let left = self.allow_end.saturating_sub(snd_nxt.max(self.next_seq));
        let w = u64::from(in_flight) + left;
        u32::try_from(w).unwrap_or(u32::MAX).clamp(1, st.cwnd_clamp)
    }

    /// `start_new_round`. Returns true when the round that ends was full (see
    /// [`Chirping::round_was_full`]).
    fn start_new_round(&mut self, snd_nxt: u64) -> bool {
        let full = self.round_was_full();
        if self.chirp_number >= GROW_M_FROM_CHIRP && self.round_sent >= self.m >> M_SHIFT {
            let m = (u64::from(self.m) * u64::from(self.cfg.gain)) >> G_G_SHIFT;
            self.m = u32::try_from(m).unwrap_or(u32::MAX).max(1 << M_SHIFT);
        }
        self.round_start = self.chirp_number;
        self.round_sent = 0;
        self.round_length = 0;
        self.grant(snd_nxt);
        full
    }

    /// The round that ends sent its chirps back to back (their spreading interval srtt/M was
    /// shorter than a chirp) and still had chirps left when the next round began: the chirps
    /// already fill the round trip. This is the state `should_terminate` (`srtt ≤
    /// round_length`) looks for; on a path without jitter or cross traffic the chirps, sent at
    /// 1/(1.125·g) ≤ C, never queue, a round lasts exactly one RTT and the sum of its chirp
    /// lengths, which leaves out the gaps between chirps, stays just below srtt, so the code's
    /// test alone would never end chirping there. Only from chirp 6 on, where M may grow.
    fn round_was_full(&self) -> bool {
        let m = u64::from((self.m >> M_SHIFT).max(1));
        let back_to_back = self.srtt.is_some_and(|s| {
            let chirp = u64::from(self.cfg.chirp_size) * self.gap_avg;
            s.as_nanos() / m <= chirp
        });
        self.chirp_number >= GROW_M_FROM_CHIRP
            && self.round_sent > 0
            && self.round_sent < self.m >> M_SHIFT
            && back_to_back
    }

    /// `dctcp_new_chirp`: schedule the next chirp, its first packet being `seq`. Returns false
    /// when the round has all its chirps.
    fn new_chirp(&mut self, seq: u64) -> bool {
        if self.round_sent >= self.m >> M_SHIFT {
            return false;
        }
        let n = self.size_of(self.chirp_number);
        if let Some(total) = self.transfer_segs
            && total.saturating_sub(seq) < u64::from(n)
        {
            // `enough_data_for_chirp` false: what is left goes at once, unanalysed.
            self.tail_left = total.saturating_sub(seq);
            return true;
        }
        let g = self.gap_avg;
        let geometry = u64::from(self.cfg.geometry);
        let one = 1u64 << G_G_SHIFT;
        let step = (2 * (geometry.saturating_sub(one)) * g / u64::from(n)) >> G_G_SHIFT;
        let first = (g * geometry) >> G_G_SHIFT;
        let mut gaps = Vec::with_capacity(usize::try_from(n).unwrap_or(0));
        gaps.push(0);
        for i in 1..u64::from(n) {
            gaps.push(first.saturating_sub((i - 1) * step));
        }
        let length: u64 = gaps.iter().sum();
        let per_chirp = self
            .srtt
            .map_or(0, |s| s.as_nanos() / u64::from((self.m >> M_SHIFT).max(1)));
        let guard = if per_chirp > length {
            (per_chirp - length).max(g)
        } else {
            g
        };
        self.chirps.push_back(Chirp {
            number: self.chirp_number,
            begin: seq,
            n,
            sent: 0,
            gaps,
            guard,
            qdelay: vec![None; usize::try_from(n).unwrap_or(0)],
        });
        self.chirp_number += 1;
        self.round_sent += 1;
        self.round_length += length;
        true
    }

    /// A segment left (the patch's chirp branch of `tcp_update_skb_after_send`): count it in
    /// its chirp and set the gap after it.
    pub fn on_packet_sent(&mut self, seq: u64, bytes: u32, is_retrans: bool) {
        if self.phase != Phase::Chirping || is_retrans || seq < self.next_seq {
            return;
        }
        self.next_seq = seq + 1;
        if self.tail_left > 0 {
            self.tail_left -= 1;
            self.rate = Some(u64::MAX);
            return;
        }
        let in_progress = self.chirps.back().is_some_and(|c| c.sent < c.n);
        if !in_progress && !self.new_chirp(seq) {
            return; // outside any chirp (a probe beyond the window): no gap of its own
        }
        if self.tail_left > 0 {
            self.tail_left -= 1;
            self.rate = Some(u64::MAX);
            return;
        }
        let Some(c) = self.chirps.back_mut() else {
            return;
        };
        c.sent += 1;
        let gap = match c.gaps.get(usize::try_from(c.sent).unwrap_or(usize::MAX)) {
            Some(&g) if c.sent < c.n => g,
            _ => c.guard,
        };
        self.rate = Some(gap_to_rate(u64::from(bytes.max(1)), gap));
    }

    /// Per ACK (`dctcp_acked`): record queueing delays, analyse finished chirps, start rounds,
    /// decide the exit; keeps cwnd at what the chirps allow. `delay_min` is the host's minimum
    /// RTT, used when the transport gives none.
    pub fn on_ack(&mut self, st: &mut CwndState, ack: &AckInfo, delay_min: Option<Dur>) {
        match self.phase {
            Phase::Waiting | Phase::Done => {}
            Phase::Chirping => {
                if ack.srtt.is_some() {
                    self.srtt = ack.srtt;
                }
                if let (Some(rtt), Some(min)) = (ack.rtt, ack.min_rtt.or(delay_min)) {
                    let q = rtt.as_micros().saturating_sub(min.as_micros());
                    let full = self.record(q, ack);
                    if self.analyse_finished(st, ack) {
                        return;
                    }
                    if full {
                        self.begin_transition(st, ack);
                        return;
                    }
                }
                self.una = self.una.max(ack.snd_una);
                st.cwnd = self.window(ack.in_flight, ack.snd_nxt, st);
            }
            Phase::Transition { target, acks, rate } => {
                if ack.rtt.is_none() {
                    return;
                }
                if acks > target {
                    let packets_out = ack.snd_nxt.saturating_sub(ack.snd_una);
                    let w = u32::try_from(packets_out).unwrap_or(u32::MAX).max(2);
                    st.cwnd = w.min(st.cwnd_clamp);
                    st.ssthresh = st.cwnd;
                    self.finish();
                } else {
                    self.phase = Phase::Transition {
                        target,
                        acks: acks + 1,
                        rate,
                    };
                }
            }
        }
    }

    /// The delay `q` (µs) for every segment this ACK newly acknowledges cumulatively; the
    /// first ACK of a round's first chirp (from chirp 2 on) starts the next round.
    fn record(&mut self, q: u64, ack: &AckInfo) -> bool {
        let from = self.una;
        let to = ack.snd_una;
        if to <= from {
            return false;
        }
        let mut new_round = false;
        for c in &mut self.chirps {
            if c.end() <= from || c.begin >= to {
                continue;
            }
            let fresh = c.qdelay.iter().all(Option::is_none);
            for seq in from.max(c.begin)..to.min(c.end()) {
                if let Ok(i) = usize::try_from(seq - c.begin) {
                    c.qdelay[i] = Some(q);
                }
            }
            if fresh && c.number >= 2 && c.number == self.round_start {
                new_round = true;
            }
        }
        self.una = to;
        if new_round {
            return self.start_new_round(ack.snd_nxt);
        }
        false
    }

    /// Analyse the chirps at the head whose packets are all sent and acknowledged; returns true
    /// when chirping ended (the transition began).
    fn analyse_finished(&mut self, st: &mut CwndState, ack: &AckInfo) -> bool {
        while let Some(c) = self.chirps.front() {
            if c.sent < c.n || c.end() > self.una {
                break;
            }
            let c = self.chirps.pop_front().expect("front exists");
            let estimate = if c.qdelay.iter().all(Option::is_some) {
                let q: Vec<u64> = c.qdelay.iter().map(|d| d.unwrap_or(0)).collect();
                analyze_chirp(&q, &c.gaps, self.cfg.excursion_len)
            } else {
                None
            };
            self.analysed += 1;
            self.last_estimate = estimate;
            if let Some(e) = estimate {
                self.update_gap_avg(e);
            }
            if c.number == 0 {
                let _ = self.start_new_round(ack.snd_nxt);
            }
            if self.should_terminate() {
                self.begin_transition(st, ack);
                return true;
            }
        }
        false
    }

    /// `update_gap_avg`: bound the estimate to 30 µs … 10 ms and move half way to it.
    fn update_gap_avg(&mut self, estimate: u64) {
        let e = estimate.clamp(MIN_GAP.as_nanos(), MAX_GAP.as_nanos());
        self.gap_avg = if self.gap_avg == 0 {
            e
        } else {
            self.gap_avg - (self.gap_avg >> 1) + (e >> 1)
        };
    }

    /// `should_terminate`: the round's chirps last at least an srtt.
    fn should_terminate(&self) -> bool {
        self.srtt.is_some_and(|s| s.as_nanos() <= self.round_length)
    }

    /// The exit branch of `dctcp_acked`: pace at the estimate, cwnd two estimated BDPs, for
    /// one estimated BDP of ACKs.
    fn begin_transition(&mut self, st: &mut CwndState, ack: &AckInfo) {
        let gap = self.gap_avg.clamp(1, MAX_EXIT_GAP.as_nanos());
        let rate = gap_to_rate(u64::from(st.mss.max(1)), gap);
        let min_rtt = ack.min_rtt.map_or(0, Dur::as_nanos);
        let target = u32::try_from(min_rtt / self.gap_avg.max(1)).unwrap_or(u32::MAX);
        st.cwnd = target
            .saturating_mul(2)
            .max(MIN_EXIT_CWND)
            .min(st.cwnd_clamp);
        self.chirps.clear();
        self.tail_left = 0;
        self.phase = Phase::Transition {
            target,
            acks: 0,
            rate,
        };
    }

    /// `exit_paced_chirping` without the window (a congestion event: the host sets it).
    fn finish(&mut self) {
        self.phase = Phase::Done;
        self.chirps.clear();
        self.rate = None;
        self.tail_left = 0;
    }

    /// A loss, ECN reduction or RTO ends Paced Chirping (module documentation).
    pub fn on_congestion(&mut self) {
        if self.phase != Phase::Done {
            self.finish();
        }
    }

    /// Growth from the host's slow start: none while chirping owns the window
    /// (`dctcp_cong_avoid`), standard slow start before the connection start.
    pub fn grow(&mut self, st: &mut CwndState, acked: u32) -> u32 {
        match self.phase {
            Phase::Waiting => st.slow_start(acked),
            Phase::Chirping | Phase::Transition { .. } => 0,
            // After the hand-over ssthresh = cwnd, so the host is in congestion avoidance; a
            // later slow start (after an RTO) is the standard one.
            Phase::Done => st.slow_start(acked),
        }
    }

    /// The pacing rate: per-segment gaps while chirping, the estimate in the transition.
    #[must_use]
    pub fn pacing_rate(&self) -> Option<u64> {
        match self.phase {
            Phase::Chirping => self.rate,
            Phase::Transition { rate, .. } => Some(rate),
            Phase::Waiting | Phase::Done => None,
        }
    }

    /// Whether the sender must pace now (chirping and the transition: the code switches
    /// `sk_pacing_status` to `SK_PACING_NEEDED` until `exit_paced_chirping`).
    #[must_use]
    pub fn paces_now(&self) -> bool {
        self.is_active()
    }

    /// One segment per skb while chirping (the patch skips `tcp_mss_split_point`).
    #[must_use]
    pub fn tso_segs(&self) -> Option<u32> {
        (self.phase == Phase::Chirping).then_some(1)
    }

    /// Emit `chirping_phase` (0 waiting, 1 chirping, 2 transition, 3 done), `chirping_gap_us`,
    /// `chirping_chirps`, `chirping_round_chirps` (M), `chirping_analysed`.
    pub fn stats(&self, sink: StatSink<'_>) {
        let phase = match self.phase {
            Phase::Waiting => 0.0,
            Phase::Chirping => 1.0,
            Phase::Transition { .. } => 2.0,
            Phase::Done => 3.0,
        };
        sink("chirping_phase", phase);
        sink(
            "chirping_gap_us",
            self.gap_estimate().as_millis_f64() * 1000.0,
        );
        sink("chirping_chirps", f64::from(self.chirp_number));
        sink("chirping_round_chirps", f64::from(self.m >> M_SHIFT));
        sink("chirping_analysed", f64::from(self.analysed));
    }
}

/// Bytes/s that space `bytes` by `gap_ns` (`gap_to_Bps_ns`); unlimited for a zero gap.
fn gap_to_rate(bytes: u64, gap_ns: u64) -> u64 {
    if gap_ns == 0 {
        return u64::MAX;
    }
    let r = u128::from(bytes) * 1_000_000_000 / u128::from(gap_ns);
    u64::try_from(r).unwrap_or(u64::MAX).max(1)
}

/// `analyze_chirp`: the gap estimate of one chirp from its packets' queueing delays `q` (any
/// unit) and scheduled gaps `s` (`s[i]` before packet i, ns; `s[0]` unused), with excursions of
/// at least `l` packets; `None` for fewer than two packets. See the module documentation.
#[must_use]
pub fn analyze_chirp(q: &[u64], s: &[u64], l: u32) -> Option<u64> {
    let n = q.len().min(s.len());
    if n < 2 {
        return None;
    }
    let l = usize::try_from(l).unwrap_or(usize::MAX);
    // e[i]: the gap packet i contributes, 0 = the chirp's default.
    let mut e = vec![0u64; n];
    let mut start = 0usize;
    let mut count = 0usize;
    let mut max_rise = 0u64;
    for i in 1..n {
        let rise = q[i].checked_sub(q[start]);
        match rise {
            Some(r) if count > 0 && r > (max_rise >> 1) + (max_rise >> 3) => {
                max_rise = max_rise.max(r);
                count += 1;
            }
            _ => {
                // The excursion (if any) ended before packet i.
                if count >= l {
                    for j in start..start + count {
                        if q[j] < q[j + 1] {
                            e[j] = s[j];
                        }
                    }
                }
                count = 0;
                start = 0;
                max_rise = 0;
            }
        }
        if count == 0 && i + 1 < n && q[i] < q[i + 1] {
            start = i;
            max_rise = 0;
            count = 1;
        }
    }
    // An excursion still running at the end: persistent queueing from its start.
    let mut default = n - 1;
    if count > 0 && start + count == n {
        for x in &mut e[start..n] {
            *x = s[start];
        }
        default = start;
    }
    let sum: u128 = (1..n)
        .map(|i| u128::from(if e[i] == 0 { s[default] } else { e[i] }))
        .sum();
    let gaps = u128::try_from(n - 1).unwrap_or(u128::MAX);
    u64::try_from(sum / gaps).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `analyze_chirp` on an ideal queue: packets whose gap is below the service time τ queue
    /// behind their predecessor, so from the first such packet on the delay rises to the end
    /// (an unterminated excursion from l): every packet gets s[l], the last gap ≥ τ.
    #[test]
    fn an_excursion_to_the_end_gives_the_gap_where_the_queue_starts() {
        // 16 packets, gaps 320 − 20·(i−1) (g = 160, G = 2, step g/8), service time τ = 105.
        let s: Vec<u64> = std::iter::once(0)
            .chain((1..16u64).map(|i| 320 - (i - 1) * 20))
            .collect();
        let tau = 105u64;
        // Fluid queue: q[i] = max(0, q[i−1] + τ − s[i]).
        let mut q = vec![0u64; 16];
        for i in 1..16 {
            q[i] = (q[i - 1] + tau).saturating_sub(s[i]);
        }
        let l = (1..16).find(|&i| s[i + 1] < tau).unwrap();
        assert_eq!(analyze_chirp(&q, &s, 5), Some(s[l]));
        assert!(s[l] >= tau && s[l] < tau + 20);
    }

    /// No queue at all: the chirp's highest rate fitted, every packet gets the last gap.
    #[test]
    fn no_excursion_gives_the_smallest_gap() {
        let s = [0, 400, 320, 240, 160];
        assert_eq!(analyze_chirp(&[7, 7, 7, 7, 7], &s, 5), Some(160));
        assert_eq!(analyze_chirp(&[1], &s[..1], 5), None);
    }

    /// A short transient excursion (< L packets) that ends inside the chirp is ignored; one of
    /// ≥ L packets gives its rising packets their own gaps.
    #[test]
    fn transient_excursions_count_only_from_l_packets() {
        let s = [0, 10, 20, 30, 40, 50, 60, 70, 80];
        // Rise over packets 1..=3, back to 0 at 4: 3 packets < L = 5: all get s[8] = 80.
        let q = [0, 0, 5, 9, 0, 0, 0, 0, 0];
        assert_eq!(analyze_chirp(&q, &s, 5), Some(80));
        // The same with L = 3: packets 1 and 2 (delay still rising) get 10 and 20.
        assert_eq!(analyze_chirp(&q, &s, 3), Some((10 + 20 + 6 * 80) / 8));
    }

    /// The chirp schedule of `dctcp_new_chirp`: chirp 0 has 5 packets, gaps 2g − k·2g/5 (g =
    /// 200 µs: 400, 320, 240, 160 µs), the guard is g without an RTT; the rate after each packet
    /// spaces that packet's bytes by the gap; round 0 allows chirps 0 and 1 (cwnd 10).
    #[test]
    fn the_first_chirps_follow_the_code_schedule() {
        let mut c = Chirping::new(ChirpingConfig::DEFAULT);
        let mut st = CwndState::new(10, 1448);
        c.on_connection_start(&mut st, &ConnStart::default());
        assert_eq!(st.cwnd, 10);
        assert!(c.paces_now() && c.tso_segs() == Some(1));
        let mut gaps = Vec::new();
        for seq in 0..10 {
            c.on_packet_sent(seq, 1448, false);
            let rate = c.pacing_rate().unwrap();
            gaps.push(1448 * 1_000_000_000 / rate);
        }
        assert_eq!(
            gaps,
            [
                400_000, 320_000, 240_000, 160_000, 200_000, 400_000, 320_000, 240_000, 160_000,
                200_000
            ]
        );
        assert_eq!(c.chirps_sent(), 2);
    }

    /// The estimate moves half way (`GAP_AVG_SHIFT` = 1) and is bounded to 30 µs … 10 ms.
    #[test]
    fn the_gap_estimate_is_a_bounded_half_way_average() {
        let mut c = Chirping::new(ChirpingConfig::DEFAULT);
        c.update_gap_avg(100_000);
        assert_eq!(c.gap_estimate(), Dur::from_micros(150));
        c.update_gap_avg(1);
        assert_eq!(c.gap_estimate(), Dur::from_micros(90));
        c.update_gap_avg(u64::MAX / 4);
        assert_eq!(c.gap_estimate(), Dur::from_micros(5045));
    }

    /// Congestion ends chirping: no pacing, no owned window, standard growth afterwards.
    #[test]
    fn congestion_ends_chirping() {
        let mut c = Chirping::new(ChirpingConfig::DEFAULT);
        let mut st = CwndState::new(10, 1448);
        c.on_connection_start(&mut st, &ConnStart::default());
        assert_eq!(c.grow(&mut st, 3), 0);
        c.on_congestion();
        assert!(c.is_done() && !c.paces_now() && c.pacing_rate().is_none());
        let w = st.cwnd;
        assert_eq!(c.grow(&mut st, 3), 0);
        assert_eq!(st.cwnd, w + 3);
    }
}
