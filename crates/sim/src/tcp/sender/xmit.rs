//! The transmit path (Linux `tcp_output.c`: `tcp_write_xmit`, `tcp_xmit_retransmit_queue`,
//! `tcp_update_skb_after_send`, `tcp_update_pacing_rate`, `tcp_tso_segs`): which skb goes next,
//! its size (cwnd quota, TSO goal), EDT pacing, and the per-segment record.
//!
//! Contract: [`Sender::try_send`] sends retransmissions first, then new data, while cwnd, the
//! pacing time and TSQ allow, and marks the connection app-limited when the application has
//! nothing more; every segment leaves through [`Sender::emit`], which records it for the
//! delivery-rate sampler and tells the controller (`on_packet_sent`).

use super::*;

/// Linux: pacing starts after this many data segments (`tcp_update_skb_after_send`).
pub(super) const PACING_MIN_SEGS: u64 = 10;
/// Linux `sysctl_tcp_pacing_ss_ratio` (percent).
pub(super) const PACING_SS_RATIO: u64 = 200;
/// Linux `sysctl_tcp_pacing_ca_ratio` (percent).
pub(super) const PACING_CA_RATIO: u64 = 120;

impl Sender {
    /// The TSQ shift in force: the controller's override, else the host's.
    #[must_use]
    pub fn tsq_shift(&self) -> u8 {
        self.cc.pacing_shift().unwrap_or(self.st.pacing_shift)
    }

    /// Segments per skb the socket would build now (1 without TSO).
    #[must_use]
    pub fn tso_goal(&self) -> u32 {
        if !self.host.tso.enabled {
            return 1;
        }
        if let Some(n) = self.cc_tso_segs() {
            return n.clamp(1, GSO_MAX_SEGS);
        }
        let min_segs = self.min_tso_segs();
        tso_autosize(
            self.pacing_rate,
            self.tsq_shift(),
            self.rtt.min_rtt(),
            self.mss,
            min_segs,
            &self.host.tso,
        )
    }

    /// `segs` (> 1) limited to the TSO goal; the autosizing is skipped when `segs` is within
    /// its floor (the goal is never below it), as it is for most ACK-clocked skbs.
    #[inline]
    pub(super) fn tso_limit(&self, segs: u32) -> u32 {
        if !self.host.tso.enabled {
            return 1;
        }
        if let Some(n) = self.cc_tso_segs() {
            return segs.min(n.clamp(1, GSO_MAX_SEGS));
        }
        let floor = self.min_tso_segs();
        if segs <= floor {
            return segs;
        }
        segs.min(tso_autosize(
            self.pacing_rate,
            self.tsq_shift(),
            self.rtt.min_rtt(),
            self.mss,
            floor,
            &self.host.tso,
        ))
    }

    /// The controller's own TSO size (`tso_segs` hook), asked only of one that wants pacing or
    /// may pace itself (the trait's promise lets the others be skipped).
    #[inline]
    fn cc_tso_segs(&self) -> Option<u32> {
        if self.cc_rate {
            self.cc.tso_segs(&self.st)
        } else {
            None
        }
    }

    /// The floor of TSO autosizing: the controller's (`min_tso_segs` hook), else the host's.
    fn min_tso_segs(&self) -> u32 {
        let own = if self.cc_rate {
            self.cc.min_tso_segs()
        } else {
            None
        };
        own.unwrap_or(self.host.tso.min_tso_segs).max(1)
    }

    pub(super) fn update_pacing_rate(&mut self) {
        if !self.need_rate && !self.cc_paces_now() {
            return; // no rule of this socket reads the rate
        }
        if self.cc_rate
            && let Some(r) = self.cc.pacing_rate()
        {
            self.pacing_rate = Some(r);
            return;
        }
        // tcp_update_pacing_rate.
        let Some(srtt) = self.rtt.srtt() else {
            self.pacing_rate = None;
            return;
        };
        let ratio = if self.st.cwnd < self.st.ssthresh / 2 {
            PACING_SS_RATIO
        } else {
            PACING_CA_RATIO
        };
        let packets_out = self.snd_nxt - self.snd_una;
        let segs = u64::from(self.st.cwnd).max(packets_out);
        let num = u64::from(self.mss) * segs * ratio;
        let srtt_ns = srtt.as_nanos().max(1);
        // num · 10^9 / 100 / srtt, exactly; in u64 when it fits (it does for any realistic
        // window), else in u128.
        let bytes_per_s = match num.checked_mul(10_000_000) {
            Some(n) => n / srtt_ns,
            None => u64::try_from(u128::from(num) * 10_000_000 / u128::from(srtt_ns))
                .unwrap_or(u64::MAX),
        };
        self.pacing_rate = Some(bytes_per_s);
    }

    pub(super) fn try_send(&mut self, now: Time, out: &mut Vec<Outgoing>) {
        if !self.started {
            return;
        }
        self.settle_completions(now);
        self.tsq_throttled = false;
        self.tsq_wake = None;
        // Take what a rate-limited application has written by now.
        self.app_refresh(now);
        loop {
            let lost = self.next_lost();
            let has_new = self.snd_nxt < self.app_end;
            if lost.is_none() && !has_new {
                // tcp_rate_check_app_limited. Checked before the pacing gate: with nothing to
                // send there is nothing to pace (Linux arms no pacing timer without data), and
                // a rate-limited application is marked app-limited as soon as TCP has sent
                // all it was given, not one pacing interval later.
                let in_flight = self.in_flight();
                if in_flight < self.st.cwnd {
                    self.rate.mark_app_limited(in_flight);
                    self.cwnd_limited = false;
                }
                break;
            }
            if self.pacing != PacingStatus::Fq && self.is_paced() && self.wstamp > now {
                self.pace_at = Some(self.wstamp);
                return;
            }
            let in_flight = self.in_flight();
            if in_flight >= self.st.cwnd {
                self.cwnd_limited = true;
                break;
            }
            let stamp = self.wstamp.max(now);
            let hdr = u64::from(TCP_IP_HEADER_BYTES);
            let (segs, payload) = match lost {
                Some(seq) => {
                    // tcp_xmit_retransmit_queue: one segment, TSQ limit doubled.
                    let len = self.seg_len(seq);
                    if self.tsq_blocks(u64::from(len) + hdr, 1) {
                        break;
                    }
                    self.lost_q.pop();
                    self.retransmit(now, stamp, seq, out);
                    // `tcp_retransmit_skb`: one more retransmission a DSACK may undo.
                    self.rec.on_retransmit(1);
                    (1, len)
                }
                None => {
                    // tcp_write_xmit: an skb of up to the TSO goal, within the cwnd quota and
                    // the receive window (`tcp_snd_wnd_test`).
                    let mut left = self.app_end - self.snd_nxt;
                    if let Some(wnd) = self.rcv_wnd_segs {
                        left = left.min((self.snd_una + wnd).saturating_sub(self.snd_nxt));
                        if left == 0 {
                            self.cwnd_limited = false;
                            if self.adv_wnd.is_some() {
                                self.check_probe_timer(now);
                            }
                            break;
                        }
                    }
                    let mut segs = cwnd_quota(self.st.cwnd, in_flight);
                    segs = segs.min(saturating_u32(left));
                    if segs > 1 {
                        segs = self.tso_limit(segs);
                    }
                    let payload = match self.total_segs {
                        Some(_) => {
                            (segs - 1) * self.mss + self.seg_len(self.snd_nxt + u64::from(segs) - 1)
                        }
                        None => segs * self.mss,
                    };
                    if self.host.tsq && self.below_tcp > 0 {
                        let skb = u64::from(payload) + u64::from(segs) * hdr;
                        if self.tsq_blocks(skb, 0) {
                            break;
                        }
                    }
                    self.transmit_new(now, stamp, segs, out);
                    for _ in 1..segs {
                        self.transmit_new(now, stamp, 0, out);
                    }
                    (segs, payload)
                }
            };
            self.after_skb(now, stamp, segs, payload, out);
            self.rec.on_sent(segs);
        }
    }

    /// `tcp_update_skb_after_send`: after an skb of `segs` segments and `payload` bytes stamped
    /// `stamp` (= max(EDT, now)), a paced socket moves its EDT on by payload / rate, less up to
    /// half of that as credit for lateness, once 10 data segments have been sent (from the
    /// first one while the controller asks for pacing, `paces_now`; a controller that sets the
    /// gap per segment is asked for its rate again first, and gets no credit). Marks the
    /// skb's last segment in `out` with the skb's wire bytes.
    #[inline]
    pub(super) fn after_skb(
        &mut self,
        now: Time,
        stamp: Time,
        segs: u32,
        payload: u32,
        out: &mut [Outgoing],
    ) {
        if let Some(last) = out.last_mut() {
            last.skb_bytes = payload + segs * TCP_IP_HEADER_BYTES;
        }
        let prior = self.wstamp;
        self.wstamp = stamp;
        self.counters.skbs += 1;
        if self.cc_gap_per_seg {
            self.gap_set_per_segment();
        }
        if self.is_paced()
            && let Some(rate) = self.pacing_rate
            && rate > 0
            && (self.data_segs_out >= PACING_MIN_SEGS || self.cc_paces_now())
        {
            let credit = if self.cc_gap_per_seg {
                Dur::ZERO
            } else {
                self.wstamp.saturating_since(prior)
            };
            // Linux paces the payload length (`skb->len` in `tcp_update_skb_after_send`).
            let len_ns = u64::from(payload) * 1_000_000_000 / rate;
            let len_ns = len_ns - (len_ns / 2).min(credit.0);
            self.wstamp += Dur(len_ns);
        }
        if self.trace_tx {
            self.record(now, "xmit");
        }
    }

    /// The controller set the gap after this skb in `on_packet_sent`: its rate again. Out of
    /// line, so that [`Sender::after_skb`] stays small enough to be inlined for every other
    /// controller.
    #[cold]
    #[inline(never)]
    fn gap_set_per_segment(&mut self) {
        self.update_pacing_rate();
    }

    /// Send the next new segment stamped `stamp`; `skb_segs` as in [`Outgoing`].
    #[inline]
    pub(super) fn transmit_new(
        &mut self,
        now: Time,
        stamp: Time,
        skb_segs: u32,
        out: &mut Vec<Outgoing>,
    ) {
        let seq = self.snd_nxt;
        if self.snd_nxt == self.snd_una {
            // Restart after idle (tcp_cwnd_restart, Linux `tcp_slow_start_after_idle` = 1), except
            // for controllers that set cwnd themselves (`tcp_slow_start_after_idle_check` returns
            // early when the controller has `cong_control`). Only after this connection sent
            // data (`data_segs_out`; a Fast Open SYN's segment is not counted, and a transfer
            // it completed sends nothing more).
            if self.data_segs_out > 0 && self.slow_start_after_idle {
                let idle = now.saturating_since(self.last_send);
                self.rec.on_tx_start(
                    now,
                    self.cc.as_mut(),
                    &mut self.st,
                    idle,
                    self.rtt.rto(),
                    self.initial_window,
                    self.rate.is_app_limited(),
                );
            }
        }
        let fresh = self.snd_nxt == self.snd_una;
        self.snd_nxt += 1;
        self.segs.push_back(Seg::default());
        self.emit(now, stamp, seq, fresh, skb_segs, out);
    }

    pub(super) fn retransmit(&mut self, now: Time, stamp: Time, seq: u64, out: &mut Vec<Outgoing>) {
        let i = slot(seq - self.snd_una);
        self.segs[i].flags |= F_RETRANS | F_EVER_RETRANS;
        self.segs[i].tx_count += 1;
        self.retrans_out += 1;
        self.counters.retransmits += 1;
        self.emit(now, stamp, seq, false, 1, out);
    }

    /// Put segment `seq` on the wire with departure stamp `stamp`. `fresh_flight`: nothing was
    /// outstanding before it.
    #[inline]
    pub(super) fn emit(
        &mut self,
        now: Time,
        stamp: Time,
        seq: u64,
        fresh_flight: bool,
        skb_segs: u32,
        out: &mut Vec<Outgoing>,
    ) {
        // in_flight already counts this segment, as BBRv3's tx_in_flight does.
        let in_flight = self.in_flight();
        let app_limited = self.rate.is_app_limited();
        let i = slot(seq - self.snd_una);
        let tx_count = self.segs[i].tx_count;
        // tcp_rate_skb_sent: a fresh flight restarts the rate clocks (at the skb's stamp).
        self.segs[i].rec = self
            .rate
            .on_sent(stamp, fresh_flight, in_flight, tx_count > 0);
        // RFC 3168 §6.1.5 (Linux `tcp_ecn_send`): classic ECN sends retransmissions Not-ECT;
        // Accurate ECN keeps them ECT (RFC 9768 allows it; Linux for ECN-needing controllers).
        // The CWR flag rides on the next new segment.
        let ecn = match self.ecn {
            EcnMode::Off => Ecn::NotEct,
            EcnMode::Classic if tx_count > 0 => Ecn::NotEct,
            EcnMode::Classic => Ecn::Ect0,
            EcnMode::L4s => Ecn::Ect1,
        };
        let cwr = self.cwr_pending && tx_count == 0;
        if cwr {
            self.cwr_pending = false;
        }
        self.tsorted.push_back((seq, stamp));
        let len = self.seg_len(seq);
        if self.cc_wants_sent {
            let sent = SentInfo {
                seq,
                bytes: len,
                in_flight,
                is_retrans: tx_count > 0,
                is_app_limited: app_limited,
            };
            self.cc.on_packet_sent(now, &self.st, &sent);
        }
        let wire = len + TCP_IP_HEADER_BYTES;
        out.push(Outgoing {
            payload: Payload::Data {
                seq,
                tx_count,
                tsval: stamp,
                cwr,
            },
            wire_bytes: wire,
            tstamp: stamp,
            skb_segs,
            skb_bytes: 0,
            ecn,
        });
        if !self.host.instant_completion {
            self.below_tcp += u64::from(wire);
        }
        self.counters.segments_sent += 1;
        self.data_segs_out += 1;
        self.last_send = now;
        // Arm the RTO / probe timer if none is pending (tcp_event_new_data_sent / rearm).
        if self.timer.is_none() {
            self.rearm_timer(now);
        }
    }
}
