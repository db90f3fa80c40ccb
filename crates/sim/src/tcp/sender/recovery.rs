//! ACK processing and loss recovery (Linux `tcp_ack`, `tcp_fastretrans_alert`,
//! `tcp_retransmit_timer`, `tcp_enter_loss`), on cclab-cc's transport kit.
//!
//! Contract: [`Sender::on_ack`] runs the steps of `tcp_ack` in order — scoreboard, ECN feedback,
//! RTT, RACK, the TLP outcome, the congestion state machine ([`cclab_cc::kit::Recovery`]), the
//! delivery-rate sample ([`cclab_cc::kit::RateSampler`]), the controller, then transmission and
//! timers. [`Sender::on_timer`] runs the reordering, probe and retransmission timers.

use super::rack::RACK_RECOVERY_THRESH;
use super::*;

impl Sender {
    /// Count a DSACK for `block` (Linux `tcp_dsack_seen`, net/ipv4/tcp_input.c): its segments
    /// are duplicates received; while the duplicates counted do not exceed the retransmissions
    /// sent, they are retransmissions that were not needed. Returns whether the DSACK is valid
    /// (not a network duplicate nor empty).
    fn dsack_seen(&mut self, block: SeqRange) -> bool {
        let segs = block.end.saturating_sub(block.start);
        if segs == 0 {
            return false;
        }
        self.counters.dsack_dups += segs;
        if self.counters.dsack_dups > self.counters.retransmits {
            return false;
        }
        self.counters.spurious_retransmits += segs;
        // RACK widens its window only for DSACKs that reordering may explain: not without
        // reordering seen, nor for a loss probe's retransmission (`FLAG_DSACK_TLP`).
        let tlp = segs == 1 && self.tlp_high_seq == Some(block.end);
        if self.rack_reo_adapt && self.reordering_seen && !tlp {
            self.rack_dsack_seen = true;
            self.rack_reo_refresh();
        }
        // `undo_retrans`: a DSACK for data already acknowledged counts all its segments
        // (`tcp_check_dsack`, "forgotten data"); for data still queued, its retransmitted
        // segments (`tcp_sacktag_one`, `TCPCB_RETRANS`).
        if block.end <= self.snd_una {
            self.rec.on_dsack_retrans(block.end, saturating_u32(segs));
        } else {
            let lo = block.start.max(self.snd_una);
            let hi = block.end.min(self.snd_nxt);
            let retransmitted = (lo..hi)
                .filter(|&q| self.segs[slot(q - self.snd_una)].has(F_EVER_RETRANS))
                .count();
            if retransmitted > 0 {
                self.rec
                    .on_dsack_retrans(block.end, saturating_u32(retransmitted as u64));
            }
        }
        true
    }

    /// Process an ACK arriving at `now`.
    pub fn on_ack(&mut self, now: Time, ack: &Payload, out: &mut Vec<Outgoing>) {
        // The SACK blocks stay where they are (a copy of them on every ACK is not free).
        let &Payload::Ack {
            ack,
            sack: ref packed,
            dsack,
            tsecr,
            ece,
            ce_count,
        } = ack
        else {
            return;
        };
        let mut dsack_valid = false;
        if dsack && !packed.is_empty() && ack <= self.snd_nxt && self.started {
            // Counted on old ACKs too: Linux reads their SACK blocks (`tcp_ack`'s `old_ack`
            // path runs `tcp_sacktag_write_queue`, which counts the DSACK).
            dsack_valid = self.note_dsack(packed.get(ack, 0));
        }
        if ack > self.snd_nxt || ack < self.snd_una || !self.started {
            return; // old or invalid
        }
        if let Some(w) = packed.window()
            && self.on_window_ack(now, ack, w, out)
        {
            return;
        }
        let prior_in_flight = self.in_flight();
        // Whether the socket paces, as the ACK arrives: read here, while little is live, since
        // the controller's answer may take a call (a controller that paces itself).
        let paced = self.is_paced();
        let prior_una = self.snd_una;
        let prior_high_seq = self.rec.high_seq();
        let prior_fack = self.fack;
        // ns-3 takes no RTT sample when the oldest unacknowledged segment was retransmitted
        // (`EstimateRtt`, `!h.retx`), even from the timestamp echo.
        let head_retx = self.rules.ts_clock > Dur::ZERO
            && self.segs.front().is_some_and(|s| s.has(F_EVER_RETRANS));
        let mut rs = self.rate.begin_ack();
        let mut times = AckedTimes::default();
        self.sacktag(now, ack, packed, dsack, &mut rs, prior_fack, &mut times);
        // F-RTO (its only reader) is told of never-retransmitted data delivered.
        let frto = self.rec.frto();
        if frto {
            times.orig_first_end = times.orig_first_end.min(self.orig_cum_end(ack));
        }
        self.clean_rtx_queue(now, ack, &mut rs, prior_fack, &mut times);
        let AckedTimes {
            mut rtt_first,
            rtt_last,
            sack_first,
            any_retrans_acked,
            retrans_cum_acked,
            orig_first_end,
            newly_sacked,
        } = times;
        // RACK's reordering window (Linux `tcp_rack_update_reo_wnd`, after
        // `tcp_clean_rtx_queue`): only work when a DSACK is pending or the window is wide.
        if self.rack_reo_due {
            self.rack_update_reo_wnd(rs.prior().map(|p| p.delivered));
        }
        // Karn (Linux FLAG_RETRANS_DATA_ACKED): no sequence RTT from a cumulative ACK that also
        // covers retransmitted data.
        if retrans_cum_acked {
            rtt_first = None;
        }
        let una_advanced = self.snd_una > prior_una;
        let acked_sacked = saturating_u32(rs.delivered(&self.rate));
        // ECN feedback (Linux `tcp_ack`: FLAG_ECE from `tcp_ecn_rcv_ecn_echo`, or the AccECN
        // counter's change from `tcp_accecn_process`).
        let ce_signal = match self.ecn {
            EcnMode::Off => false,
            EcnMode::Classic => {
                if ece {
                    self.rate.add_delivered_ce(u64::from(acked_sacked));
                }
                ece
            }
            EcnMode::L4s => {
                let delta = ce_count.wrapping_sub(self.last_ce_count);
                self.last_ce_count = ce_count;
                self.rate.add_delivered_ce(u64::from(delta));
                delta > 0
            }
        };
        if ce_signal {
            self.counters.ce_echoes += 1;
        }

        // RTT (Linux tcp_ack_update_rtt: cum-acked first, then SACK, then the TS echo).
        let seq_rtt = rtt_first.or(sack_first).map(|t| now.saturating_since(t));
        let ts_rtt = (any_retrans_acked && (una_advanced || acked_sacked > 0))
            .then(|| now.saturating_since(tsecr));
        // Linux `tcp_ack_update_rtt`: the minimum takes the newest segment's RTT (`ca_rtt`), the
        // smoothed RTT the oldest's (`seq_rtt`), both only when a Karn-safe sample exists.
        let mut ca_rtt = None;
        if self.rules.ts_clock > Dur::ZERO {
            ca_rtt = self.ts_clock_rtt(now, tsecr, una_advanced && !head_retx);
        } else if let Some(r) = seq_rtt.or(ts_rtt) {
            let ca = if seq_rtt.is_some() {
                rtt_last.map_or(r, |t| now.saturating_since(t))
            } else {
                r
            };
            self.rtt.smooth(r);
            self.rtt_hist.record(ca.as_nanos());
            let ca = match self.rules.cc_rtt {
                CcRtt::Sample => ca,
                CcRtt::Smoothed => self.rtt.srtt().unwrap_or(ca),
            };
            self.rtt.min_sample(now, ca.max(Dur(1)));
            self.backoff = 0;
            ca_rtt = Some(ca);
        }
        // ns-3 `NewAck`: every ACK of new data recomputes the RTO, ending its backoff.
        if una_advanced && self.rules.rto_rule == RtoRule::Rfc6298 {
            self.backoff = 0;
        }

        // Loss detection on this ACK: RACK, or RFC 6675's duplicate-ACK threshold.
        let lost_before = self.rate.lost();
        match self.rules.loss_detection {
            LossDetection::Rack => {
                if self.rack_advanced {
                    self.rack_advanced = false;
                    self.rack_detect_loss(now);
                }
            }
            LossDetection::DupThresh => {
                self.rack_advanced = false;
                self.dupthresh_detect_loss(now, newly_sacked, una_advanced);
            }
        }

        let tlp_reduce = self.tlp_ack(ack, dsack, una_advanced, acked_sacked);

        // Recovery state machine (tcp_fastretrans_alert, simplified to SACK + RACK).
        let newly_lost = saturating_u32(self.rate.lost() - lost_before);
        let sig = AckSignals {
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            una_advanced,
            sacked_out: self.sacked_out,
            lost_out: self.lost_out,
            in_flight: self.in_flight(),
            acked_sacked,
            newly_lost,
            ecn_echo: ce_signal,
            tlp_repaired: tlp_reduce,
            cwnd_limited: self.cwnd_limited,
            // Only RACK's reordering detection lets cwnd grow on ACKs that do not advance
            // SND.UNA (Linux `tcp_may_raise_cwnd`); ns-3 grows it on new data only.
            reordering_seen: self.reordering_seen
                && self.rules.loss_detection == LossDetection::Rack,
            retrans_out: self.retrans_out,
            dsack: dsack_valid,
            data_sacked: newly_sacked,
            orig_acked: frto && orig_first_end <= prior_high_seq,
            can_send_new: self.snd_nxt < self.app_end,
        };
        let mut ackinfo = self.ack_info(acked_sacked, ca_rtt, prior_in_flight, paced);
        let t = self
            .rec
            .on_ack(now, self.cc.as_mut(), &mut self.st, &sig, &ackinfo);
        self.note_transition(t);

        // Delivery-rate sample (tcp_rate_gen), after loss detection as in Linux `tcp_ack`.
        let mut sample = self.rate.generate(now, &rs, newly_lost, self.rtt.min_rtt());
        sample.rtt = ca_rtt;
        if rs.prior().is_some() {
            // Linux FLAG_ACK_MAYBE_DELAYED (`tcp_clean_rtx_queue`): a lone runt segment newly
            // acknowledged cumulatively, with nothing SACKed or lost on this ACK.
            sample.is_ack_delayed = acked_sacked == 1
                && self.snd_una == prior_una + 1
                && self.seg_len(prior_una) < self.mss
                && newly_lost == 0
                && self.sacked_out == 0;
        }

        // Congestion control (tcp_cong_control).
        self.st.app_limited = self.rate.is_app_limited();
        self.rec.cong_control(
            now,
            self.cc.as_mut(),
            &mut self.st,
            &sample,
            &sig,
            &mut ackinfo,
        );
        self.update_pacing_rate();

        if let Some(n) = self.total_segs
            && self.snd_una >= n
            && self.completed_at.is_none()
        {
            self.completed_at = Some(now);
        }

        if t.frto_new_data {
            self.frto_send_new(now, out);
        } else {
            self.try_send(now, out);
        }
        // ns-3 restarts the retransmission timer only on an ACK of new data
        // (`TcpSocketBase::NewAck`), so SACKs alone never postpone a timeout.
        if una_advanced || (acked_sacked > 0 && self.rules.rto_rule == RtoRule::Linux) {
            self.rearm_timer(now);
        }
        self.record(now, "ack");
    }

    /// F-RTO step 2.b (RFC 5682 §3.1; Linux `tcp_xmit_recovery` with `REXMIT_NEW`): send new
    /// data rather than retransmissions; if none left, F-RTO ends and the lost segments are
    /// retransmitted. The lost segments are held back by setting their queue aside (sending
    /// marks none lost), so that the send loop has no test of its own for this.
    #[cold]
    fn frto_send_new(&mut self, now: Time, out: &mut Vec<Outgoing>) {
        let lost_q = std::mem::take(&mut self.lost_q);
        self.try_send(now, out);
        debug_assert!(self.lost_q.is_empty(), "sending marked a segment lost");
        self.lost_q = lost_q;
        if self.snd_nxt <= self.rec.high_seq() {
            self.rec.frto_off();
            self.try_send(now, out);
        }
    }

    /// RFC 8985 §6.2 step 4 (Linux `tcp_rack_update_reo_wnd`): a DSACK seen at least one
    /// round trip after the last widening (the newest delivered segment was sent after it)
    /// widens the window by one step of min_RTT/4 and keeps it for 16 recoveries
    /// (`TCP_RACK_RECOVERY_THRESH`); once they have passed, the window returns to one step.
    /// `prior_delivered`: the delivered count when the ACK's newest delivered segment was sent.
    #[cold]
    pub(super) fn rack_update_reo_wnd(&mut self, prior_delivered: Option<u64>) {
        let Some(prior_delivered) = prior_delivered.filter(|&d| d > 0) else {
            return;
        };
        if prior_delivered < self.rack_last_delivered {
            self.rack_dsack_seen = false;
        }
        if self.rack_dsack_seen {
            // Linux keeps the steps in a u8.
            self.reo_wnd_steps = (self.reo_wnd_steps + 1).min(u32::from(u8::MAX));
            self.rack_dsack_seen = false;
            self.rack_last_delivered = self.rate.delivered();
            self.reo_wnd_persist = RACK_RECOVERY_THRESH;
        } else if self.reo_wnd_persist == 0 {
            self.reo_wnd_steps = 1;
        }
        self.rack_reo_refresh();
    }

    /// Whether the next ACK must run `rack_update_reo_wnd`: a DSACK is pending, or the window
    /// is wide and no recovery is left to keep it. Called after each change of these fields.
    pub(super) fn rack_reo_refresh(&mut self) {
        self.rack_reo_due =
            self.rack_dsack_seen || (self.reo_wnd_steps > 1 && self.reo_wnd_persist == 0);
    }

    /// Bookkeeping of an undo (`tcp_undo_cwnd_reduction` and the MIB counters of
    /// `tcp_try_undo_*`): cancel the loss marks when asked (RACK examines the segments again
    /// on the next ACK: Linux sets `rack.advanced`), withdraw a queued CWR when ssthresh was
    /// raised back (`tcp_ecn_withdraw_cwr`), and keep RACK's window for one more recovery after
    /// a DSACK undo (`reo_wnd_persist`).
    #[cold]
    fn on_undo(&mut self, kind: Undo, unmark_lost: bool, withdraw_cwr: bool) {
        match kind {
            Undo::Full => self.counters.full_undos += 1,
            Undo::Partial => self.counters.partial_undos += 1,
            Undo::Dsack => {
                self.counters.dsack_undos += 1;
                self.reo_wnd_persist = (self.reo_wnd_persist + 1).min(RACK_RECOVERY_THRESH);
                self.rack_reo_refresh();
            }
            Undo::Loss => self.counters.loss_undos += 1,
            Undo::SpuriousRto => {
                self.counters.loss_undos += 1;
                self.counters.spurious_rtos += 1;
            }
        }
        if unmark_lost {
            for seg in &mut self.segs {
                seg.flags &= !F_LOST;
            }
            self.lost_out = 0;
            self.lost_q.clear();
        }
        self.rack_advanced = true;
        if withdraw_cwr {
            self.cwr_pending = false;
        }
    }

    /// What the controller hooks of this ACK receive (`ca_state` is set by the recovery state
    /// machine at each call); `paced`: [`Sender::is_paced`] when the ACK arrived.
    pub(super) fn ack_info(
        &self,
        acked_sacked: u32,
        rtt: Option<Dur>,
        prior_in_flight: u32,
        paced: bool,
    ) -> AckInfo {
        AckInfo {
            acked_sacked,
            pkts_acked: acked_sacked,
            rtt,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            in_flight: self.in_flight(),
            prior_in_flight,
            is_cwnd_limited: self.cwnd_limited,
            paced,
            snd_nxt: self.snd_nxt,
            snd_una: self.snd_una,
            ca_state: Some(self.rec.state()),
            total_lost: self.rate.lost(),
            wstamp: self.wstamp,
            total_delivered_ce: self.rate.delivered_ce(),
            ce_reduction: false,
        }
    }

    /// Bookkeeping after the recovery state machine moved: counters, the end of a probe
    /// episode, and the CWR flag a new reduction queues.
    pub(super) fn note_transition(&mut self, t: Transition) {
        // Most ACKs move nothing: one test of the fields or-ed without branches (`unmark_lost`
        // and `withdraw_cwr` come only with `undo`; `frto_new_data` is the caller's).
        let moved = t.entered_recovery
            | t.reduction_started
            | t.entered_cwr
            | t.tlp_reduced
            | t.undo.is_some()
            | t.recovered_without_undo;
        if moved {
            self.note_transition_events(t);
        }
    }

    #[cold]
    fn note_transition_events(&mut self, t: Transition) {
        if t.entered_recovery {
            self.counters.fast_recoveries += 1;
            self.tlp_high_seq = None;
        }
        if t.reduction_started {
            // `tcp_init_cwnd_reduction` ends any TLP episode (the reduction answers the
            // signal) and queues CWR on the next new segment (`tcp_ecn_queue_cwr`).
            self.tlp_high_seq = None;
            self.cwr_pending = self.ecn != EcnMode::Off;
        }
        if t.entered_cwr {
            self.counters.ecn_reductions += 1;
        }
        if t.tlp_reduced {
            self.counters.fast_recoveries += 1;
        }
        if let Some(kind) = t.undo {
            self.on_undo(kind, t.unmark_lost, t.withdraw_cwr);
        }
        if t.recovered_without_undo {
            self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
            self.rack_reo_refresh();
        }
    }

    pub(super) fn on_rto(&mut self, now: Time) {
        if self.snd_nxt == self.snd_una {
            return;
        }
        self.counters.rtos += 1;
        self.rto_times.push(now);
        // tcp_enter_loss: a new congestion event (new ssthresh, CA_EVENT_LOSS) unless this RTO
        // continues a recovery or an earlier RTO that has made no progress since.
        let info = self.ack_info(0, None, self.in_flight(), self.is_paced());
        let new_event =
            self.rec
                .rto_begin(now, self.cc.as_mut(), &mut self.st, self.snd_una, &info);
        // tcp_timeout_mark_lost: every un-SACKed segment is lost, except (with RACK) those sent
        // less than one RACK RTT ago, other than the head; those stay in flight for RACK.
        self.lost_q.clear();
        let rack = self.rules.loss_detection == LossDetection::Rack;
        // ns-3 `ReTxTimeout` resets the duplicate-ACK count.
        self.dupacks = 0;
        let una = self.snd_una;
        for i in 0..self.segs.len() {
            let seg = self.segs[i];
            if seg.has(F_SACKED) || (i > 0 && rack && seg.rec.sent_time + self.rack_rtt > now) {
                continue;
            }
            let seq = una + i as u64;
            if seg.has(F_LOST) && !seg.has(F_RETRANS) {
                self.lost_q.push(Reverse(seq)); // already counted, awaiting retransmission
            } else {
                self.mark_lost(now, seq);
            }
        }
        if new_event {
            self.rec.init_loss_undo(self.snd_una, self.retrans_out);
        }
        // tcp_enter_loss: cwnd = in flight + 1 (1 unless recently sent segments were spared).
        let in_flight = self.in_flight();
        self.tlp_high_seq = None;
        self.reo_at = None;
        self.rec
            .enter_loss(now, self.cc.as_mut(), &mut self.st, in_flight, self.snd_nxt);
        self.backoff += 1;
        self.timer = Some((Timer::Rto, now + self.rto_interval()));
    }

    pub(super) fn rto_interval(&self) -> Dur {
        let max = self.rtt.rto_max();
        let mut r = self.rtt.rto();
        for _ in 0..self.backoff {
            r = Dur(r.0.saturating_mul(2));
            if r >= max {
                return max;
            }
        }
        r.min(max)
    }

    /// An RTT sample from the ACK's timestamp echo on the stack's timestamp clock
    /// ([`TcpRules::ts_clock`]; ns-3 `TcpOptionTS::NowToTsValue` counts milliseconds, so the
    /// echo is the send time rounded down to one, and `ElapsedTimeFromTsValue` gives now minus
    /// that, at least 1 µs): it moves SRTT and the RTO and is recorded; the controller gets it
    /// or the smoothed RTT ([`TcpRules::cc_rtt`]). `eligible`: the ACK acknowledged new data
    /// and its oldest segment was never retransmitted.
    fn ts_clock_rtt(&mut self, now: Time, tsecr: Time, eligible: bool) -> Option<Dur> {
        if !eligible {
            return None;
        }
        let g = self.rules.ts_clock.0;
        let echo = Time(tsecr.0 / g * g);
        let r = now.saturating_since(echo).max(Dur::from_micros(1));
        self.rtt.smooth(r);
        self.backoff = 0;
        self.rtt_hist.record(r.as_nanos());
        let cc = match self.rules.cc_rtt {
            CcRtt::Sample => r,
            CcRtt::Smoothed => self.rtt.srtt().unwrap_or(r),
        };
        self.rtt.min_sample(now, cc.max(Dur(1)));
        Some(cc)
    }

    /// Count an ACK's DSACK block `d` (RFC 2883 §4: the receiver got these segments twice).
    #[cold]
    fn note_dsack(&mut self, d: SeqRange) -> bool {
        self.counters.dsacks += 1;
        self.dsack_seen(d)
    }

    /// Run due timers at `now` (including the TSQ wakeup).
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Outgoing>) {
        let tsq_due = self.tsq_wake.is_some_and(|t| t <= now);
        if let Some(t) = self.pace_at
            && t <= now
        {
            self.pace_at = None;
        }
        if let Some(t) = self.reo_at
            && t <= now
        {
            self.reo_at = None;
            // tcp_rack_reo_timeout.
            let before = self.rate.lost();
            self.rack_detect_loss(now);
            // Linux `tcp_rack_reo_timeout` enters recovery from any state but Recovery.
            if self.rate.lost() > before {
                let in_flight = self.in_flight();
                let sig = AckSignals {
                    snd_una: self.snd_una,
                    snd_nxt: self.snd_nxt,
                    sacked_out: self.sacked_out,
                    lost_out: self.lost_out,
                    retrans_out: self.retrans_out,
                    in_flight,
                    newly_lost: saturating_u32(self.rate.lost() - before),
                    ..AckSignals::default()
                };
                let info = self.ack_info(0, None, in_flight, self.is_paced());
                let t =
                    self.rec
                        .on_reo_timeout_loss(now, self.cc.as_mut(), &mut self.st, &sig, &info);
                self.note_transition(t);
            }
            if self.timer.is_some_and(|(k, _)| k == Timer::Probe) {
                self.timer = Some((Timer::Rto, now + self.rto_interval()));
            }
            self.record(now, "reorder_timer");
        }
        if let Some((kind, t)) = self.timer
            && t <= now
        {
            self.timer = None;
            match kind {
                Timer::Probe => self.send_loss_probe(now, out),
                Timer::Rto => self.on_rto(now),
                Timer::Probe0 => self.send_probe0(now),
                // Cleared when the connection opens; `on_wake` runs it until then.
                Timer::Syn => {}
            }
            self.try_send(now, out);
            self.record(
                now,
                match kind {
                    Timer::Probe => "probe",
                    Timer::Probe0 => "window_probe",
                    Timer::Rto | Timer::Syn => "rto",
                },
            );
            return;
        }
        self.try_send(now, out);
        if tsq_due {
            self.record(now, "tsq");
        }
    }
}
