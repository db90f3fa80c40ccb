//! The congestion state machine of a sender (Linux `tcp_input.c`: `tcp_fastretrans_alert`,
//! `tcp_enter_recovery`, `tcp_enter_cwr`, `tcp_init_cwnd_reduction`, `tcp_cwnd_reduction`,
//! `tcp_end_cwnd_reduction`, `tcp_cong_control`; `tcp_timer.c`/`tcp_input.c`: `tcp_enter_loss`;
//! `tcp_output.c`: `tcp_cwnd_restart`), with Proportional Rate Reduction (RFC 6937).
//!
//! Contract: the transport owns one [`Recovery`] per connection next to its controller and
//! window state, detects losses itself (SACK, RACK, RTO) and reports what it found; the
//! recovery state calls the controller's hooks in Linux's order and sets the window:
//! - per ACK, after loss detection: [`Recovery::on_ack`] (state exits, then entries: Recovery on
//!   a marked loss, a one-time reduction after a repaired tail loss, CWR on an ECN echo, else
//!   Open/Disorder), then [`Recovery::cong_control`] (`pkts_acked`, `cong_control`, then PRR in
//!   CWR/Recovery or `cong_avoid` when the window may grow);
//! - per transmitted skb: [`Recovery::on_sent`] (PRR's `prr_out`); at the first send after the
//!   connection went idle: [`Recovery::on_tx_start`];
//! - at an RTO: [`Recovery::rto_begin`], then the transport marks its segments lost, then
//!   [`Recovery::enter_loss`];
//! - when a reordering timer finds losses: [`Recovery::on_reo_timeout_loss`];
//! - undo of spurious reductions (Linux `tcp_init_undo`, `tcp_may_undo`,
//!   `tcp_undo_cwnd_reduction`, `tcp_try_undo_recovery`/`_partial`/`_dsack`/`_loss`) and F-RTO
//!   (RFC 5682, `tcp_process_loss`) run inside [`Recovery::on_ack`] once enabled
//!   ([`Recovery::set_undo`], [`Recovery::set_frto`]); the transport reports each
//!   retransmission ([`Recovery::on_retransmit`]), each DSACKed retransmission
//!   ([`Recovery::on_dsack_retrans`]) and, after a timeout's loss marking,
//!   [`Recovery::init_loss_undo`]; [`Transition::undo`] says what was undone;
//! - when a driver decides on its own that a reduction was spurious: [`Recovery::undo`].
//!
//! Every hook receives the transport's [`AckInfo`] with `ca_state` set to the state at the
//! moment of the call. The recovery state holds no reference to the controller: it is passed
//! in (`&mut C`, `C` may be `dyn CongestionControl`), so the calls are static where the
//! transport's controller type is. Nothing here allocates.

use crate::{
    AckInfo, CaState, CongestionControl, CwndEvent, CwndState, Dur, INFINITE_SSTHRESH, RateSample,
    Time,
};

/// What the transport learned from one ACK, after its loss detection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckSignals {
    /// SND.UNA after the ACK, in segments.
    pub snd_una: u64,
    /// SND.NXT, in segments.
    pub snd_nxt: u64,
    /// The ACK advanced SND.UNA.
    pub una_advanced: bool,
    /// Segments SACKed and not yet cumulatively acknowledged (`sacked_out`).
    pub sacked_out: u32,
    /// Segments marked lost and not yet retransmitted or delivered (`lost_out`).
    pub lost_out: u32,
    /// Segments in flight after the ACK and loss detection (`tcp_packets_in_flight`).
    pub in_flight: u32,
    /// Segments newly delivered by the ACK (`acked_sacked`).
    pub acked_sacked: u32,
    /// Segments newly marked lost while processing the ACK.
    pub newly_lost: u32,
    /// The ACK echoed congestion (ECE, or a rise of the Accurate ECN CE counter).
    pub ecn_echo: bool,
    /// A tail-loss probe repaired a loss (`tcp_process_tlp_ack`): one reduction is due.
    pub tlp_repaired: bool,
    /// The sender used its whole window recently (`tcp_is_cwnd_limited`).
    pub cwnd_limited: bool,
    /// Reordering was seen on the connection (`tcp_may_raise_cwnd` then lets any delivery
    /// grow the window).
    pub reordering_seen: bool,
    /// Segments retransmitted and not yet delivered or marked lost (`retrans_out`); a new undo
    /// episode expects DSACKs for them (`tcp_init_undo`).
    pub retrans_out: u32,
    /// The ACK carried a valid DSACK (Linux `FLAG_DSACKING_ACK`, `tcp_dsack_seen`): such an ACK
    /// is not a duplicate ACK.
    pub dsack: bool,
    /// The ACK newly SACKed data (`FLAG_DATA_SACKED`).
    pub data_sacked: bool,
    /// The ACK delivered (cumulatively or by SACK) a never-retransmitted segment below
    /// `high_seq` (`FLAG_ORIG_SACK_ACKED`): F-RTO's evidence of a spurious timeout, read only
    /// while F-RTO runs ([`Recovery::frto`]), so a transport may leave it false otherwise.
    pub orig_acked: bool,
    /// The application has data not yet sent that the receive window allows
    /// (`!tcp_write_queue_empty && after(tcp_wnd_end, snd_nxt)`): F-RTO may send it.
    pub can_send_new: bool,
}

/// The signals [`Recovery`]'s rare undo paths read, copied out of [`AckSignals`].
#[derive(Clone, Copy)]
struct UndoSignals {
    una_advanced: bool,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
}

impl UndoSignals {
    #[inline]
    fn of(sig: &AckSignals) -> Self {
        Self {
            una_advanced: sig.una_advanced,
            sacked_out: sig.sacked_out,
            lost_out: sig.lost_out,
            retrans_out: sig.retrans_out,
        }
    }
}

/// Which undo of a spurious reduction an ACK performed (the Linux MIB each one counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Undo {
    /// Recovery reached its point and no retransmission was needed (`tcp_try_undo_recovery`,
    /// `TCPFullUndo`).
    Full,
    /// A partial ACK in Recovery and no retransmission was needed (`tcp_try_undo_partial`,
    /// `TCPPartialUndo`).
    Partial,
    /// DSACKs reported every retransmission of the episode (`tcp_try_undo_dsack`,
    /// `TCPDSACKUndo`).
    Dsack,
    /// An RTO's reduction found unnecessary by the same rules (`tcp_try_undo_loss` or
    /// `tcp_try_undo_recovery` in Loss, `TCPLossUndo`).
    Loss,
    /// F-RTO found the timeout spurious (`tcp_try_undo_loss(sk, true)`, `TCPLossUndo` and
    /// `TCPSpuriousRTOs`).
    SpuriousRto,
}

/// What [`Recovery::on_ack`] did, for the transport's own bookkeeping.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Transition {
    /// Entered Recovery (`tcp_enter_recovery`): a fast-recovery episode began; the transport
    /// ends any tail-loss-probe episode.
    pub entered_recovery: bool,
    /// Entered CWR on an ECN echo (`tcp_enter_cwr`).
    pub entered_cwr: bool,
    /// A cwnd reduction was initialised (`tcp_init_cwnd_reduction`): new ssthresh and
    /// `high_seq`; the transport ends any probe episode and, with ECN, queues CWR on the next
    /// new segment (`tcp_ecn_queue_cwr`).
    pub reduction_started: bool,
    /// A repaired tail loss was answered with one reduction (`tcp_process_tlp_ack`).
    pub tlp_reduced: bool,
    /// A reduction was undone.
    pub undo: Option<Undo>,
    /// The undo also cancels the loss marks (`tcp_undo_cwnd_reduction(sk, true)`): the
    /// transport clears them (`lost_out` = 0) and lets RACK examine the segments again.
    pub unmark_lost: bool,
    /// A Recovery or Loss episode ended at its recovery point without an undo
    /// (`tcp_try_undo_recovery`'s other branch, where RACK's `reo_wnd_persist` counts down).
    pub recovered_without_undo: bool,
    /// The undo raised ssthresh back: a CWR flag still queued is withdrawn
    /// (`tcp_ecn_withdraw_cwr`).
    pub withdraw_cwr: bool,
    /// F-RTO (RFC 5682 §3.1 step 2.b): send new data rather than retransmissions on this ACK
    /// (Linux `REXMIT_NEW`); if none can leave, the transport calls [`Recovery::frto_off`] and
    /// retransmits (`tcp_xmit_recovery`).
    pub frto_new_data: bool,
}

/// The sender's congestion state (Linux `icsk_ca_state` and the `tcp_sock` fields of PRR,
/// `high_seq`, `prior_cwnd`, `prr_delivered`, `prr_out`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recovery {
    state: CaState,
    /// End of the current reduction episode: SND.NXT when it began (`high_seq`).
    high_seq: u64,
    /// cwnd when the reduction began (`prior_cwnd`, RFC 6937's RecoverFS; also what an undo
    /// restores).
    prior_cwnd: u32,
    /// ssthresh when the reduction began (`prior_ssthresh`, restored by an undo).
    prior_ssthresh: u32,
    /// Segments delivered since the reduction began (`prr_delivered`).
    prr_delivered: u32,
    /// Segments sent since the reduction began (`prr_out`).
    prr_out: u32,
    /// The controller set cwnd itself on the last ACK (`cong_control` returned true).
    cc_owns_cwnd: bool,
    /// RTOs since SND.UNA last advanced (Linux `icsk_retransmits`).
    rtos_since_progress: u32,
    /// SND.UNA when the undoable reduction began (`undo_marker`; `None`: nothing to undo).
    undo_marker: Option<u64>,
    /// Retransmissions of the episode not yet reported by a DSACK (`undo_retrans`); −1: none
    /// made (`tcp_init_undo`).
    undo_retrans: i64,
    /// `undo_retrans` reached 0 through DSACKs while an episode is open: `tcp_try_undo_dsack`
    /// is due in Open or Disorder (one flag tested per ACK instead of both fields).
    dsack_undo_due: bool,
    /// A retransmission was made (or, at a timeout, attempted) since the episode began
    /// (Linux `retrans_stamp` ≠ 0).
    retransmitted: bool,
    /// F-RTO allowed on this connection (Linux `sysctl_tcp_frto`).
    frto_enabled: bool,
    /// Undo episodes are opened (`tcp_init_undo`); off: no reduction is ever undone.
    undo_enabled: bool,
    /// F-RTO in progress in the current Loss episode (`tp->frto`).
    frto: bool,
    /// Smallest cwnd ever set.
    min_cwnd: u32,
}

impl Recovery {
    /// A fresh connection in `Open` with initial window `initial_window`.
    #[must_use]
    pub fn new(initial_window: u32) -> Self {
        Recovery {
            state: CaState::Open,
            high_seq: 0,
            prior_cwnd: 0,
            prior_ssthresh: 0,
            prr_delivered: 0,
            prr_out: 0,
            cc_owns_cwnd: false,
            rtos_since_progress: 0,
            undo_marker: None,
            undo_retrans: 0,
            dsack_undo_due: false,
            retransmitted: false,
            frto_enabled: false,
            undo_enabled: false,
            frto: false,
            min_cwnd: initial_window,
        }
    }

    /// Allow F-RTO (RFC 5682, Linux `tcp_frto`, on by default in Linux); off in a new
    /// [`Recovery`], since it needs the transport's [`AckSignals::orig_acked`] and
    /// [`AckSignals::can_send_new`] and its answer to [`Transition::frto_new_data`].
    pub fn set_frto(&mut self, on: bool) {
        self.frto_enabled = on;
    }

    /// Open undo episodes (Linux always does); off in a new [`Recovery`], since undo needs
    /// the transport to report its retransmissions ([`Recovery::on_retransmit`],
    /// [`AckSignals::retrans_out`]) and DSACKs ([`Recovery::on_dsack_retrans`]); off: no
    /// reduction is ever undone by the state machine ([`Recovery::undo`] still works).
    pub fn set_undo(&mut self, on: bool) {
        self.undo_enabled = on;
    }

    /// F-RTO is in progress (`tp->frto`).
    #[must_use]
    pub fn frto(&self) -> bool {
        self.frto
    }

    /// F-RTO could not send new data (`tcp_xmit_recovery`): fall back to retransmitting.
    pub fn frto_off(&mut self) {
        self.frto = false;
    }

    /// SND.UNA when the undoable reduction began (`undo_marker`).
    #[must_use]
    pub fn undo_marker(&self) -> Option<u64> {
        self.undo_marker
    }

    /// Retransmissions of the episode not yet reported by a DSACK (`undo_retrans`).
    #[must_use]
    pub fn undo_retrans(&self) -> i64 {
        self.undo_retrans
    }

    /// Linux `tcp_init_undo`: a reduction that may be undone begins at `snd_una`; the
    /// retransmissions still in flight may yet be reported by DSACKs.
    fn init_undo(&mut self, snd_una: u64, retrans_out: u32) {
        if !self.undo_enabled {
            return;
        }
        self.undo_marker = Some(snd_una);
        self.undo_retrans = if retrans_out > 0 {
            i64::from(retrans_out)
        } else {
            -1
        };
        self.dsack_undo_due = false;
        self.retransmitted = retrans_out > 0;
    }

    /// `segs` segments were retransmitted (`tcp_retransmit_skb`; not a loss probe, which
    /// Linux sends with `__tcp_retransmit_skb`).
    #[inline]
    pub fn on_retransmit(&mut self, segs: u32) {
        self.undo_retrans = self.undo_retrans.max(0) + i64::from(segs);
        self.dsack_undo_due = self.undo_retrans == 0 && self.undo_marker.is_some();
        self.retransmitted = true;
    }

    /// A DSACK reported `segs` retransmitted segments ending at `end_seq` (`tcp_check_dsack`
    /// for data below SND.UNA, `tcp_sacktag_one` for data still queued): they were not
    /// needed, so `undo_retrans` counts them off if they belong to the episode.
    #[cold]
    pub fn on_dsack_retrans(&mut self, end_seq: u64, segs: u32) {
        if let Some(marker) = self.undo_marker
            && self.undo_retrans > 0
            && end_seq > marker
        {
            self.undo_retrans = (self.undo_retrans - i64::from(segs)).max(0);
            self.dsack_undo_due = self.undo_retrans == 0;
        }
    }

    /// Linux `tcp_may_undo`: an episode is open and every retransmission was reported
    /// unnecessary by a DSACK (`undo_retrans` = 0) or none was made (`tcp_packet_delayed`
    /// without timestamps: its "nothing retransmitted" clause, `retrans_stamp` = 0; the
    /// timestamp clause, Eifel detection, is not modelled).
    #[inline]
    fn may_undo(&self) -> bool {
        self.undo_marker.is_some() && (self.undo_retrans == 0 || !self.retransmitted)
    }

    /// Linux `tcp_current_ssthresh`: in a reduction ssthresh, else at least ¾ of cwnd.
    fn current_ssthresh(&self, st: &CwndState) -> u32 {
        if self.in_cwnd_reduction() {
            st.ssthresh
        } else {
            st.ssthresh.max((st.cwnd >> 1) + (st.cwnd >> 2))
        }
    }

    /// Linux `tcp_undo_cwnd_reduction` (the window part; the transport unmarks losses when
    /// asked): unless an ECN echo forbade it (`prior_ssthresh` = 0), cwnd from the
    /// controller's `undo_cwnd` and ssthresh back to at least its value before; the episode
    /// can no longer be undone.
    #[cold]
    fn undo_cwnd_reduction<C: CongestionControl + ?Sized>(
        &mut self,
        now: Time,
        cc: &mut C,
        st: &mut CwndState,
        t: &mut Transition,
    ) {
        if self.prior_ssthresh > 0 {
            st.cwnd = cc.undo_cwnd(now, st, self.prior_cwnd).min(st.cwnd_clamp);
            if self.prior_ssthresh > st.ssthresh {
                st.ssthresh = self.prior_ssthresh;
                t.withdraw_cwr = true;
            }
        }
        self.undo_marker = None;
        self.dsack_undo_due = false;
        self.note_cwnd(st);
    }

    /// The state (`icsk_ca_state`).
    #[must_use]
    pub fn state(&self) -> CaState {
        self.state
    }

    /// End of the current reduction episode (`high_seq`).
    #[must_use]
    pub fn high_seq(&self) -> u64 {
        self.high_seq
    }

    /// Whether cwnd is being reduced (`tcp_in_cwnd_reduction`: CWR or Recovery).
    #[must_use]
    pub fn in_cwnd_reduction(&self) -> bool {
        matches!(self.state, CaState::Cwr | CaState::Recovery)
    }

    /// Whether the controller set cwnd itself on the last ACK (`cong_control` returned true).
    #[must_use]
    pub fn cc_owns_cwnd(&self) -> bool {
        self.cc_owns_cwnd
    }

    /// The smallest cwnd ever set.
    #[must_use]
    pub fn min_cwnd(&self) -> u32 {
        self.min_cwnd
    }

    /// Keep cwnd at least 1 and note its minimum.
    pub fn note_cwnd(&mut self, st: &mut CwndState) {
        st.cwnd = st.cwnd.max(1);
        self.min_cwnd = self.min_cwnd.min(st.cwnd);
    }

    fn set_state<C: CongestionControl + ?Sized>(
        &mut self,
        now: Time,
        cc: &mut C,
        st: &mut CwndState,
        s: CaState,
    ) {
        self.state = s;
        cc.set_state(now, st, s);
    }

    fn info(&self, ack: &AckInfo) -> AckInfo {
        AckInfo {
            ca_state: Some(self.state),
            ..*ack
        }
    }

    /// The state machine on an ACK (`tcp_fastretrans_alert`, reduced to SACK + RACK): leave
    /// Recovery at the recovery point (or on the first partial ACK for a controller that asks,
    /// classic Reno), Loss at the recovery point, CWR once data above `high_seq` is
    /// acknowledged (so that the CWR flag reached the receiver); then enter Recovery on a
    /// marked loss (from CWR continuing its reduction), reduce once for a repaired tail loss,
    /// enter CWR on an ECN echo unless the controller answers CE itself, else settle in Open
    /// or Disorder.
    pub fn on_ack<C: CongestionControl + ?Sized>(
        &mut self,
        now: Time,
        cc: &mut C,
        st: &mut CwndState,
        sig: &AckSignals,
        ack: &AckInfo,
    ) -> Transition {
        let mut t = Transition::default();
        // Losses still marked after this ACK (an undo that cancels the marks clears them).
        let mut lost_out = sig.lost_out;
        if sig.una_advanced {
            self.rtos_since_progress = 0;
        }
        // `tcp_fastretrans_alert` step A: an ECN echo makes the reduction required, so an undo
        // may no longer restore the window.
        if sig.ecn_echo {
            self.prior_ssthresh = 0;
        }
        match self.state {
            CaState::Recovery => {
                let recovered = sig.snd_una >= self.high_seq;
                if recovered && self.may_undo() {
                    // `tcp_try_undo_recovery`: the recovery point is reached and nothing had to
                    // be retransmitted.
                    self.undo_cwnd_reduction(now, cc, st, &mut t);
                    t.undo = Some(Undo::Full);
                    self.set_state(now, cc, st, CaState::Open);
                    cc.cwnd_event(now, st, CwndEvent::CompleteCwr);
                } else if recovered || (sig.una_advanced && cc.exit_recovery_on_partial_ack()) {
                    t.recovered_without_undo = recovered;
                    self.end_cwnd_reduction(now, cc, st, sig.sacked_out);
                } else if self.undo_marker.is_some()
                    && !self.try_undo_in_recovery(now, cc, st, UndoSignals::of(sig), &mut t)
                {
                    return t;
                }
            }
            CaState::Loss => self.process_loss(now, cc, st, sig, &mut t),
            CaState::Cwr if sig.snd_una > self.high_seq => {
                self.end_cwnd_reduction(now, cc, st, sig.sacked_out);
            }
            _ => {}
        }
        if t.unmark_lost {
            lost_out = 0;
        }
        if self.state == CaState::Cwr && lost_out > 0 {
            // Loss during an ECN reduction: recovery continues the same reduction.
            t.reduction_started = self.enter_recovery(now, cc, st, sig, ack);
            t.entered_recovery = true;
        }
        if matches!(self.state, CaState::Open | CaState::Disorder) {
            // `tcp_try_undo_dsack` (`tcp_fastretrans_alert`, Open/Disorder): DSACKs arriving
            // after the episode ended may still show that it was spurious.
            if self.dsack_undo_due {
                debug_assert!(self.undo_retrans == 0 && self.undo_marker.is_some());
                self.undo_dsack(now, cc, st, &mut t);
            }
            if lost_out > 0 {
                t.reduction_started = self.enter_recovery(now, cc, st, sig, ack);
                t.entered_recovery = true;
            } else if sig.tlp_repaired {
                // One reduction, as a CWR episode (`tcp_init_cwnd_reduction`, CWR,
                // `tcp_end_cwnd_reduction`: cwnd = ssthresh).
                st.ssthresh = cc.ssthresh(now, st, &self.info(ack)).max(2);
                if !self.cc_owns_cwnd {
                    st.cwnd = st.ssthresh;
                }
                cc.cwnd_event(now, st, CwndEvent::CompleteCwr);
                self.note_cwnd(st);
                t.tlp_reduced = true;
            } else if sig.ecn_echo && !cc.handles_ce() {
                // RFC 3168 §6.1.2: one reduction per window of data (Linux `tcp_try_to_open`
                // → `tcp_enter_cwr`, from Open or Disorder only; it forbids undo:
                // `prior_ssthresh` = `undo_marker` = 0).
                self.undo_marker = None;
                self.dsack_undo_due = false;
                let ce = AckInfo {
                    ce_reduction: true,
                    ..*ack
                };
                self.init_cwnd_reduction(now, cc, st, sig.snd_nxt, &ce);
                self.set_state(now, cc, st, CaState::Cwr);
                t.reduction_started = true;
                t.entered_cwr = true;
            } else {
                let s = if sig.sacked_out > 0 {
                    CaState::Disorder
                } else {
                    CaState::Open
                };
                if s != self.state {
                    self.set_state(now, cc, st, s);
                }
            }
        }
        t
    }

    /// `tcp_try_undo_dsack`: every retransmission of the episode was reported by a DSACK.
    #[cold]
    fn undo_dsack<C: CongestionControl + ?Sized>(
        &mut self,
        now: Time,
        cc: &mut C,
        st: &mut CwndState,
        t: &mut Transition,
    ) {
        self.undo_cwnd_reduction(now, cc, st, t);
        t.undo = Some(Undo::Dsack);
    }

    /// The undos of `tcp_fastretrans_alert` in Recovery before the recovery point: a partial
    /// ACK when nothing was retransmitted (`tcp_try_undo_partial`), then every retransmission
    /// DSACKed (`tcp_try_undo_dsack` → `tcp_try_to_open`, Open or Disorder; a loss still
    /// marked then starts a new episode). Returns false when the ACK must do nothing more
    /// (`tcp_try_undo_partial` with retransmissions still out).
    ///
    /// `sig` is a copy of the few signals read here: a reference to the caller's
    /// [`AckSignals`] would make the compiler write all of them to memory on every ACK.
    #[cold]
    fn try_undo_in_recovery<C: CongestionControl + ?Sized>(
        &mut self,
        now: Time,
        cc: &mut C,
        st: &mut CwndState,
        sig: UndoSignals,
        t: &mut Transition,
    ) -> bool {
        if sig.una_advanced && !self.retransmitted {
            // `tcp_packet_delayed` (nothing retransmitted): the hole was filled by the
            // original. With retransmissions of an earlier episode out, wait for them.
            if sig.retrans_out > 0 {
                return false;
            }
            self.undo_cwnd_reduction(now, cc, st, t);
            t.undo = Some(Undo::Partial);
            t.unmark_lost = true;
            let s = if sig.sacked_out > 0 {
                CaState::Disorder
            } else {
                CaState::Open
            };
            self.set_state(now, cc, st, s);
            return true;
        }
        if self.undo_retrans == 0 {
            self.undo_dsack(now, cc, st, t);
            let s = if sig.sacked_out + sig.lost_out + sig.retrans_out > 0 {
                CaState::Disorder
            } else {
                CaState::Open
            };
            self.set_state(now, cc, st, s);
        }
        true
    }

    /// Linux `tcp_process_loss` (SACK) on an ACK in Loss: undo when the retransmissions proved
    /// unnecessary (`tcp_try_undo_loss`); F-RTO (RFC 5682 §3.1, SACK-enhanced): a
    /// never-retransmitted segment below `high_seq` delivered after the timeout proves it
    /// spurious (step 3.b); a SACK or duplicate ACK after new data was sent proves the loss
    /// real (step 3.a); the first ACK that advances SND.UNA below the recovery point lets new
    /// data leave instead of retransmissions (step 2.b); at the recovery point the episode
    /// ends (`tcp_try_undo_recovery`).
    fn process_loss<C: CongestionControl + ?Sized>(
        &mut self,
        now: Time,
        cc: &mut C,
        st: &mut CwndState,
        sig: &AckSignals,
        t: &mut Transition,
    ) {
        let recovered = sig.snd_una >= self.high_seq;
        if sig.una_advanced && self.may_undo() {
            self.undo_loss(now, cc, st, Undo::Loss, t);
            return;
        }
        if self.frto {
            if sig.orig_acked {
                self.undo_loss(now, cc, st, Undo::SpuriousRto, t);
                return;
            }
            if sig.snd_nxt > self.high_seq {
                let dupack = !sig.una_advanced && !sig.dsack;
                if sig.data_sacked || dupack {
                    self.frto = false;
                }
            } else if sig.una_advanced && !recovered {
                self.high_seq = sig.snd_nxt;
                if sig.can_send_new {
                    t.frto_new_data = true;
                    return;
                }
                self.frto = false;
            }
        }
        if recovered {
            // `tcp_try_undo_recovery` in Loss: `tcp_may_undo` was false above.
            t.recovered_without_undo = true;
            self.set_state(now, cc, st, CaState::Open);
        }
    }

    /// `tcp_try_undo_loss`: undo an RTO's reduction and cancel its loss marks
    /// (`tcp_undo_cwnd_reduction(sk, true)`), forget the timeouts (`icsk_retransmits` = 0),
    /// and reopen.
    #[cold]
    fn undo_loss<C: CongestionControl + ?Sized>(
        &mut self,
        now: Time,
        cc: &mut C,
        st: &mut CwndState,
        kind: Undo,
        t: &mut Transition,
    ) {
        self.undo_cwnd_reduction(now, cc, st, t);
        t.undo = Some(kind);
        t.unmark_lost = true;
        self.rtos_since_progress = 0;
        self.frto = false;
        self.set_state(now, cc, st, CaState::Open);
    }

    /// Linux `tcp_enter_recovery`; returns whether a new reduction was initialised (not when
    /// coming from CWR, whose ssthresh, PRR counters and `high_seq` carry on).
    ///
    /// A new undo episode begins (`tcp_init_undo`) at `sig.snd_una`; the window it may restore
    /// (`prior_ssthresh` = `tcp_current_ssthresh`) is kept only for a new reduction not caused
    /// by an ECN echo.
    pub fn enter_recovery<C: CongestionControl + ?Sized>(
        &mut self,
        now: Time,
        cc: &mut C,
        st: &mut CwndState,
        sig: &AckSignals,
        ack: &AckInfo,
    ) -> bool {
        let init = self.state != CaState::Cwr;
        self.prior_ssthresh = 0;
        self.init_undo(sig.snd_una, sig.retrans_out);
        if init {
            if !sig.ecn_echo {
                self.prior_ssthresh = self.current_ssthresh(st);
            }
            self.init_cwnd_reduction(now, cc, st, sig.snd_nxt, ack);
        }
        self.set_state(now, cc, st, CaState::Recovery);
        init
    }

    /// Linux `tcp_init_cwnd_reduction`: `high_seq` = SND.NXT, PRR from here, ssthresh from the
    /// controller (at least 2).
    fn init_cwnd_reduction<C: CongestionControl + ?Sized>(
        &mut self,
        now: Time,
        cc: &mut C,
        st: &mut CwndState,
        snd_nxt: u64,
        ack: &AckInfo,
    ) {
        self.high_seq = snd_nxt;
        self.prior_cwnd = st.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        st.ssthresh = cc.ssthresh(now, st, &self.info(ack)).max(2);
        st.cwnd_cnt = 0;
    }

    /// Linux `tcp_end_cwnd_reduction` and the state change after it: cwnd = ssthresh (unless
    /// the controller sets cwnd itself), `CA_EVENT_COMPLETE_CWR`, then Disorder or Open.
    fn end_cwnd_reduction<C: CongestionControl + ?Sized>(
        &mut self,
        now: Time,
        cc: &mut C,
        st: &mut CwndState,
        sacked_out: u32,
    ) {
        if st.ssthresh < INFINITE_SSTHRESH && !self.cc_owns_cwnd {
            st.cwnd = st.ssthresh;
        }
        cc.cwnd_event(now, st, CwndEvent::CompleteCwr);
        let s = if sacked_out > 0 {
            CaState::Disorder
        } else {
            CaState::Open
        };
        self.set_state(now, cc, st, s);
        self.note_cwnd(st);
    }

    /// Linux `tcp_cong_control` on an ACK, after [`Recovery::on_ack`]: `pkts_acked` if the ACK
    /// delivered something, then `cong_control`; if the controller does not set cwnd itself,
    /// PRR in CWR/Recovery (`tcp_cwnd_reduction`) or `cong_avoid` when the sender is
    /// cwnd-limited and the ACK advanced SND.UNA, or delivered anything once reordering was
    /// seen (`tcp_may_raise_cwnd`). `rs` is the ACK's rate sample. `ack.ca_state` is set here
    /// to the state [`Recovery::on_ack`] left (in place: a copy of the record per ACK costs).
    pub fn cong_control<C: CongestionControl + ?Sized>(
        &mut self,
        now: Time,
        cc: &mut C,
        st: &mut CwndState,
        rs: &RateSample,
        sig: &AckSignals,
        ack: &mut AckInfo,
    ) {
        ack.ca_state = Some(self.state);
        let ack = &*ack;
        if sig.acked_sacked > 0 {
            cc.pkts_acked(now, st, ack);
        }
        self.cc_owns_cwnd = cc.cong_control(now, st, rs, ack);
        if !self.cc_owns_cwnd {
            if self.in_cwnd_reduction() {
                self.prr(
                    st,
                    sig.acked_sacked,
                    sig.newly_lost,
                    sig.una_advanced,
                    sig.in_flight,
                );
            } else if (sig.cwnd_limited || cc.grows_when_not_cwnd_limited())
                && sig.acked_sacked > 0
                && (sig.una_advanced || sig.reordering_seen)
            {
                cc.cong_avoid(now, st, sig.acked_sacked, ack);
            }
        }
        self.note_cwnd(st);
    }

    /// Proportional Rate Reduction, RFC 6937 §3 (Linux `tcp_cwnd_reduction`): while in flight
    /// exceeds ssthresh, send ⌈ssthresh · prr_delivered / RecoverFS⌉ − prr_out in total
    /// (RecoverFS = cwnd at the start, `prior_cwnd`); below ssthresh, the slow-start reduction
    /// bound (PRR-SSRB) when the ACK advanced SND.UNA without new losses: at most
    /// max(prr_delivered − prr_out, newly delivered) + 1, else the conservative bound
    /// (PRR-CRB): the newly delivered; never past ssthresh; at least one segment while nothing
    /// was sent yet (the fast retransmit). Sets cwnd = in flight + that count.
    pub fn prr(
        &mut self,
        st: &mut CwndState,
        newly_acked_sacked: u32,
        newly_lost: u32,
        una_advanced: bool,
        in_flight: u32,
    ) {
        if newly_acked_sacked == 0 && newly_lost == 0 {
            return;
        }
        self.prr_delivered += newly_acked_sacked;
        let ssthresh = st.ssthresh;
        let delta = i64::from(ssthresh) - i64::from(in_flight);
        let mut sndcnt: i64 = if delta < 0 {
            let dividend = u64::from(ssthresh) * u64::from(self.prr_delivered)
                + u64::from(self.prior_cwnd.max(1))
                - 1;
            (dividend / u64::from(self.prior_cwnd.max(1))) as i64 - i64::from(self.prr_out)
        } else if una_advanced && newly_lost == 0 {
            let s = (i64::from(self.prr_delivered) - i64::from(self.prr_out))
                .max(i64::from(newly_acked_sacked))
                + 1;
            s.min(delta)
        } else {
            i64::from(newly_acked_sacked).min(delta)
        };
        // Force a fast retransmit upon entering recovery.
        sndcnt = sndcnt.max(i64::from(self.prr_out == 0));
        // Linux sets in flight + sndcnt unclamped (`tcp_cwnd_reduction`); that passes
        // `snd_cwnd_clamp` only with the clamp itself in flight, and the window never does here.
        st.cwnd = in_flight
            .saturating_add(u32::try_from(sndcnt.max(0)).unwrap_or(u32::MAX))
            .min(st.cwnd_clamp);
    }

    /// An skb of `segs` segments was sent: counted into PRR's `prr_out` during a reduction.
    #[inline]
    pub fn on_sent(&mut self, segs: u32) {
        if self.in_cwnd_reduction() {
            self.prr_out += segs;
        }
    }

    /// The first transmission after the connection had nothing outstanding, `idle` after the
    /// last one (Linux `tcp_event_data_sent`): after an idle period longer than the RTO, cwnd
    /// restarts (`tcp_cwnd_restart`, `tcp_slow_start_after_idle` = 1: ssthresh at least ¾ cwnd,
    /// cwnd halved once per whole RTO the idle period exceeds, not below min(IW, cwnd),
    /// `CA_EVENT_CWND_RESTART`) unless the
    /// controller sets cwnd itself (`tcp_slow_start_after_idle_check` returns early for a
    /// controller with `cong_control`); then `CA_EVENT_TX_START` with `st.app_limited` =
    /// `app_limited`.
    #[expect(
        clippy::too_many_arguments,
        reason = "the inputs of `tcp_cwnd_restart` and the TX_START event, each a plain value"
    )]
    pub fn on_tx_start<C: CongestionControl + ?Sized>(
        &mut self,
        now: Time,
        cc: &mut C,
        st: &mut CwndState,
        idle: Dur,
        rto: Dur,
        initial_window: u32,
        app_limited: bool,
    ) {
        if idle > rto && !self.cc_owns_cwnd {
            let restart = initial_window.min(st.cwnd);
            // `while ((delta -= icsk_rto) > 0 && cwnd > restart_cwnd) cwnd >>= 1;`: one
            // halving per whole RTO the idle time exceeds, ⌈idle / RTO⌉ − 1 of them.
            let halvings = ((idle.0 - 1) / rto.0.max(1)).min(31) as u32;
            st.ssthresh = st.ssthresh.max((3 * st.cwnd) / 4);
            st.cwnd = (st.cwnd >> halvings).max(restart);
            cc.cwnd_event(now, st, CwndEvent::CwndRestart);
        }
        st.app_limited = app_limited;
        cc.cwnd_event(now, st, CwndEvent::TxStart);
    }

    /// First half of an RTO (`tcp_enter_loss`): a new congestion event — new ssthresh from the
    /// controller and `CA_EVENT_LOSS` — unless this RTO continues a recovery whose point is not
    /// reached or an earlier RTO that has made no progress since. Returns whether it was a new
    /// event. The transport then marks its segments lost and calls [`Recovery::enter_loss`].
    pub fn rto_begin<C: CongestionControl + ?Sized>(
        &mut self,
        now: Time,
        cc: &mut C,
        st: &mut CwndState,
        snd_una: u64,
        ack: &AckInfo,
    ) -> bool {
        let new_event = matches!(self.state, CaState::Open | CaState::Disorder)
            || snd_una >= self.high_seq
            || (self.state == CaState::Loss && self.rtos_since_progress == 0);
        if new_event {
            self.prior_ssthresh = self.current_ssthresh(st);
            self.prior_cwnd = st.cwnd;
            st.ssthresh = cc.ssthresh(now, st, &self.info(ack)).max(2);
            cc.cwnd_event(now, st, CwndEvent::Loss);
        }
        // RFC 5682 §3.1 step 1 and §3.2 (Linux `tcp_enter_loss`: `tp->frto`): F-RTO unless
        // this timeout interrupts a loss recovery, except a repeated timeout of the same
        // SND.UNA.
        self.frto = self.frto_enabled
            && (matches!(self.state, CaState::Open | CaState::Disorder | CaState::Cwr)
                || self.rtos_since_progress > 0);
        self.rtos_since_progress += 1;
        new_event
    }

    /// Linux `tcp_init_undo` at a timeout that began a new congestion event
    /// ([`Recovery::rto_begin`] returned true), once the transport marked its segments lost:
    /// the reduction may be undone from `snd_una` on; `retrans_out` retransmissions (those
    /// not marked lost) may still be reported by DSACKs.
    ///
    /// Linux's timer retransmits the head at once (`tcp_retransmit_timer` →
    /// `tcp_retransmit_skb`), which sets `retrans_stamp` even when the skb cannot leave: the
    /// timeout counts as retransmitted, so "nothing retransmitted" never undoes it.
    pub fn init_loss_undo(&mut self, snd_una: u64, retrans_out: u32) {
        self.init_undo(snd_una, retrans_out);
        self.retransmitted = true;
    }

    /// Second half of an RTO (`tcp_enter_loss`), once the transport marked its segments lost:
    /// cwnd = in flight + 1, `high_seq` = SND.NXT, state Loss.
    pub fn enter_loss<C: CongestionControl + ?Sized>(
        &mut self,
        now: Time,
        cc: &mut C,
        st: &mut CwndState,
        in_flight: u32,
        snd_nxt: u64,
    ) {
        st.cwnd = in_flight + 1;
        st.cwnd_cnt = 0;
        self.high_seq = snd_nxt;
        self.set_state(now, cc, st, CaState::Loss);
        self.note_cwnd(st);
    }

    /// The last reduction (Recovery, CWR or Loss) turned out spurious (Linux
    /// `tcp_undo_cwnd_reduction`, as `tcp_try_undo_recovery` and `tcp_try_undo_loss` call it):
    /// cwnd from the controller's `undo_cwnd` given the cwnd before the reduction (at most
    /// `cwnd_clamp`), ssthresh back to at least its value before, state Open.
    pub fn undo<C: CongestionControl + ?Sized>(
        &mut self,
        now: Time,
        cc: &mut C,
        st: &mut CwndState,
    ) {
        st.cwnd = cc.undo_cwnd(now, st, self.prior_cwnd).min(st.cwnd_clamp);
        st.ssthresh = st.ssthresh.max(self.prior_ssthresh);
        self.set_state(now, cc, st, CaState::Open);
        self.note_cwnd(st);
    }

    /// A reordering timer marked `sig.newly_lost` segments (Linux `tcp_rack_reo_timeout`):
    /// enter Recovery from any state but Recovery, and run one PRR step for the losses (Linux
    /// skips that step for a controller with `cong_control`; this model runs it for every
    /// controller, which such a controller overrides on its next ACK). `sig` carries SND.NXT,
    /// the segments in flight and the newly lost count. Returns the transition.
    pub fn on_reo_timeout_loss<C: CongestionControl + ?Sized>(
        &mut self,
        now: Time,
        cc: &mut C,
        st: &mut CwndState,
        sig: &AckSignals,
        ack: &AckInfo,
    ) -> Transition {
        let mut t = Transition::default();
        if self.state != CaState::Recovery {
            t.reduction_started = self.enter_recovery(now, cc, st, sig, ack);
            t.entered_recovery = true;
            self.prr(st, 0, sig.newly_lost, false, sig.in_flight);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StatSink;

    /// A controller that logs every hook call: Reno's ssthresh (cwnd/2), cwnd += acked in
    /// `cong_avoid`, and optionally BBR-style ownership of cwnd (set to 7 in `cong_control`).
    #[derive(Clone, Debug, Default)]
    struct Log {
        calls: Vec<String>,
        owns_cwnd: bool,
        handles_ce: bool,
        partial_ack_exit: bool,
        grows_unlimited: bool,
    }

    impl CongestionControl for Log {
        fn name(&self) -> &'static str {
            "log"
        }
        fn pkts_acked(&mut self, _now: Time, _st: &mut CwndState, _ack: &AckInfo) {
            self.calls.push("pkts_acked".into());
        }
        fn cong_avoid(&mut self, _now: Time, st: &mut CwndState, acked: u32, _ack: &AckInfo) {
            self.calls.push(format!("cong_avoid {acked}"));
            st.cwnd += acked;
        }
        fn ssthresh(&mut self, _now: Time, st: &CwndState, ack: &AckInfo) -> u32 {
            let why = if ack.ce_reduction { " for CE" } else { "" };
            self.calls
                .push(format!("ssthresh in {:?}{why}", ack.ca_state.unwrap()));
            st.cwnd / 2
        }
        fn cong_control(
            &mut self,
            _now: Time,
            st: &mut CwndState,
            _rs: &RateSample,
            _ack: &AckInfo,
        ) -> bool {
            self.calls.push("cong_control".into());
            if self.owns_cwnd {
                st.cwnd = 7;
            }
            self.owns_cwnd
        }
        fn set_state(&mut self, _now: Time, _st: &mut CwndState, new: CaState) {
            self.calls.push(format!("set_state {new:?}"));
        }
        fn cwnd_event(&mut self, _now: Time, _st: &mut CwndState, ev: CwndEvent) {
            self.calls.push(format!("{ev:?}"));
        }
        fn handles_ce(&self) -> bool {
            self.handles_ce
        }
        fn exit_recovery_on_partial_ack(&self) -> bool {
            self.partial_ack_exit
        }
        fn grows_when_not_cwnd_limited(&self) -> bool {
            self.grows_unlimited
        }
        fn state(&self) -> &'static str {
            "log"
        }
        fn stats(&self, _sink: StatSink<'_>) {}
    }

    impl Log {
        fn take(&mut self) -> Vec<String> {
            std::mem::take(&mut self.calls)
        }
    }

    const T: Time = Time::ZERO;

    fn st(cwnd: u32) -> CwndState {
        CwndState::new(cwnd, 1448)
    }

    /// One ACK through the state machine and `tcp_cong_control`.
    fn ack(r: &mut Recovery, cc: &mut Log, st: &mut CwndState, sig: &AckSignals) -> Transition {
        let mut info = AckInfo::default();
        let t = r.on_ack(T, cc, st, sig, &info);
        r.cong_control(T, cc, st, &RateSample::default(), sig, &mut info);
        t
    }

    /// A loss marked in Open: ssthresh is asked in Open, then the state becomes Recovery
    /// (`tcp_enter_recovery`), then `pkts_acked`, `cong_control` and PRR (no `cong_avoid`).
    /// The ACK that reaches the recovery point sets cwnd = ssthresh, reports
    /// `CA_EVENT_COMPLETE_CWR` and returns to Open.
    #[test]
    fn loss_enters_recovery_and_the_recovery_point_ends_it_in_linux_order() {
        let (mut r, mut cc, mut st) = (Recovery::new(10), Log::default(), st(20));
        let sig = AckSignals {
            snd_nxt: 20,
            sacked_out: 3,
            lost_out: 1,
            in_flight: 16,
            acked_sacked: 1,
            newly_lost: 1,
            cwnd_limited: true,
            ..AckSignals::default()
        };
        let t = ack(&mut r, &mut cc, &mut st, &sig);
        assert!(t.entered_recovery && t.reduction_started);
        assert_eq!(
            cc.take(),
            [
                "ssthresh in Open",
                "set_state Recovery",
                "pkts_acked",
                "cong_control"
            ]
        );
        assert_eq!(
            (r.state(), r.high_seq(), st.ssthresh),
            (CaState::Recovery, 20, 10)
        );
        // PRR: ⌈10 · 1 / 20⌉ − 0 = 1 segment may leave.
        assert_eq!(st.cwnd, 17);
        let exit = AckSignals {
            snd_una: 20,
            snd_nxt: 20,
            una_advanced: true,
            acked_sacked: 1,
            ..AckSignals::default()
        };
        ack(&mut r, &mut cc, &mut st, &exit);
        assert_eq!(
            cc.take(),
            [
                "CompleteCwr",
                "set_state Open",
                "pkts_acked",
                "cong_control"
            ]
        );
        assert_eq!((r.state(), st.cwnd), (CaState::Open, 10));
        assert_eq!(r.min_cwnd(), 10);
    }

    /// RFC 6937 worked example (proportional part): RecoverFS = 20, ssthresh = 10, one loss;
    /// every ACK SACKs one segment and the sender sends what cwnd − in flight allows. PRR
    /// sends one segment per two delivered, the first at once (the fast retransmit):
    /// 1, 0, 1, 0, … — 8 segments for 16 delivered, ssthresh/RecoverFS of them.
    #[test]
    fn prr_sends_ssthresh_over_recover_fs_of_what_is_delivered() {
        let (mut r, mut cc, mut st) = (Recovery::new(10), Log::default(), st(20));
        let mut in_flight = 18;
        let mut sent = Vec::new();
        for k in 0..16 {
            let sig = AckSignals {
                snd_nxt: 20,
                sacked_out: k + 1,
                lost_out: 1,
                in_flight,
                acked_sacked: 1,
                newly_lost: u32::from(k == 0),
                ..AckSignals::default()
            };
            ack(&mut r, &mut cc, &mut st, &sig);
            assert_eq!(st.ssthresh, 10);
            let n = st.cwnd - in_flight;
            r.on_sent(n);
            sent.push(n);
            in_flight += n;
            in_flight -= 1; // the next ACK delivers one
        }
        assert_eq!(sent, [1, 0].repeat(8));
    }

    /// Below ssthresh, PRR's slow-start reduction bound (RFC 6937 PRR-SSRB): on ACKs that
    /// advance SND.UNA without new loss, up to max(prr_delivered − prr_out, delivered) + 1
    /// (in flight grows by one per ACK, as in slow start), never past ssthresh; on other ACKs
    /// the conservative bound (PRR-CRB): as many as were delivered.
    #[test]
    fn prr_below_ssthresh_slow_starts_on_progress_and_conserves_otherwise() {
        let (mut r, mut cc, mut st) = (Recovery::new(10), Log::default(), st(20));
        let enter = AckSignals {
            snd_nxt: 20,
            lost_out: 15,
            in_flight: 5,
            newly_lost: 15,
            ..AckSignals::default()
        };
        r.on_ack(T, &mut cc, &mut st, &enter, &AckInfo::default());
        assert_eq!(st.ssthresh, 10);
        r.prr(&mut st, 1, 0, true, 5);
        assert_eq!(st.cwnd, 7, "max(1 − 0, 1) + 1 = 2 beyond in flight");
        r.on_sent(2);
        r.prr(&mut st, 1, 0, true, 6);
        assert_eq!(st.cwnd, 8, "max(2 − 2, 1) + 1 = 2");
        r.on_sent(2);
        r.prr(&mut st, 1, 0, false, 7);
        assert_eq!(st.cwnd, 8, "no SND.UNA progress: one for one");
        r.prr(&mut st, 3, 0, true, 9);
        assert_eq!(st.cwnd, 10, "capped at ssthresh");
        r.prr(&mut st, 0, 0, true, 9);
        assert_eq!(st.cwnd, 10, "nothing delivered or lost: unchanged");
    }

    /// Classic ECN (RFC 3168 §6.1.2, `tcp_enter_cwr`): an echo in Open enters CWR with one
    /// ssthresh; further echoes in CWR do nothing; a loss during CWR moves to Recovery without
    /// a second ssthresh (same episode); CWR alone ends only once data *above* `high_seq` is
    /// acknowledged. A controller that answers CE itself never enters CWR.
    #[test]
    fn ecn_echo_reduces_once_and_a_loss_continues_the_same_episode() {
        let (mut r, mut cc, mut st) = (Recovery::new(10), Log::default(), st(20));
        let echo = AckSignals {
            snd_una: 2,
            snd_nxt: 20,
            una_advanced: true,
            ecn_echo: true,
            in_flight: 18,
            acked_sacked: 2,
            ..AckSignals::default()
        };
        let t = r.on_ack(T, &mut cc, &mut st, &echo, &AckInfo::default());
        assert!(t.entered_cwr && t.reduction_started && !t.entered_recovery);
        // The ssthresh call says that it answers CE (`AckInfo::ce_reduction`); a loss's does not
        // (the loss tests above expect plain "ssthresh in Open").
        assert_eq!(cc.take(), ["ssthresh in Open for CE", "set_state Cwr"]);
        assert_eq!((r.state(), r.high_seq()), (CaState::Cwr, 20));
        let again = AckSignals {
            snd_una: 20,
            ..echo
        };
        let t = r.on_ack(T, &mut cc, &mut st, &again, &AckInfo::default());
        assert_eq!(t, Transition::default());
        assert_eq!(
            r.state(),
            CaState::Cwr,
            "SND.UNA = high_seq is not above it"
        );
        let loss = AckSignals {
            lost_out: 1,
            ecn_echo: false,
            ..echo
        };
        let t = r.on_ack(T, &mut cc, &mut st, &loss, &AckInfo::default());
        assert!(t.entered_recovery && !t.reduction_started);
        assert_eq!(cc.take(), ["set_state Recovery"]);
        assert_eq!(st.ssthresh, 10);

        let mut cc = Log {
            handles_ce: true,
            ..Log::default()
        };
        let mut r = Recovery::new(10);
        let t = r.on_ack(T, &mut cc, &mut st, &echo, &AckInfo::default());
        assert_eq!(t, Transition::default());
        assert_eq!(r.state(), CaState::Open);
        assert!(cc.take().is_empty());
    }

    /// Classic Reno ends recovery on the first partial ACK (RFC 5681 §3.2 step 6); NewReno
    /// stays until the recovery point (RFC 6582).
    #[test]
    fn reno_exits_on_a_partial_ack_newreno_at_the_recovery_point() {
        for (partial_ack_exit, expect) in [(true, CaState::Open), (false, CaState::Recovery)] {
            let mut cc = Log {
                partial_ack_exit,
                ..Log::default()
            };
            let (mut r, mut st) = (Recovery::new(10), st(20));
            let loss = AckSignals {
                snd_nxt: 20,
                lost_out: 1,
                in_flight: 18,
                ..AckSignals::default()
            };
            r.on_ack(T, &mut cc, &mut st, &loss, &AckInfo::default());
            let partial = AckSignals {
                snd_una: 5,
                snd_nxt: 20,
                una_advanced: true,
                in_flight: 14,
                acked_sacked: 5,
                ..AckSignals::default()
            };
            r.on_ack(T, &mut cc, &mut st, &partial, &AckInfo::default());
            assert_eq!(r.state(), expect);
        }
    }

    /// A controller that sets cwnd itself (BBR's `cong_control`): no PRR and no `cong_avoid`,
    /// and the recovery exit leaves its cwnd alone (`tcp_end_cwnd_reduction`).
    #[test]
    fn a_controller_owning_cwnd_is_left_alone() {
        let mut cc = Log {
            owns_cwnd: true,
            ..Log::default()
        };
        let (mut r, mut st) = (Recovery::new(10), st(20));
        let loss = AckSignals {
            snd_nxt: 20,
            lost_out: 1,
            in_flight: 18,
            acked_sacked: 1,
            newly_lost: 1,
            cwnd_limited: true,
            ..AckSignals::default()
        };
        ack(&mut r, &mut cc, &mut st, &loss);
        assert_eq!(st.cwnd, 7);
        assert!(r.cc_owns_cwnd());
        let exit = AckSignals {
            snd_una: 20,
            snd_nxt: 20,
            una_advanced: true,
            acked_sacked: 1,
            ..AckSignals::default()
        };
        r.on_ack(T, &mut cc, &mut st, &exit, &AckInfo::default());
        assert_eq!(st.cwnd, 7);
        assert!(!cc.take().iter().any(|c| c.starts_with("cong_avoid")));
    }

    /// Outside a reduction the window grows only when cwnd-limited (or the controller
    /// `grows_when_not_cwnd_limited`) and on SND.UNA progress, or on any delivery once
    /// reordering was seen (`tcp_may_raise_cwnd`).
    #[test]
    fn cong_avoid_only_when_the_window_may_grow() {
        let (mut r, mut cc, mut st) = (Recovery::new(10), Log::default(), st(10));
        let base = AckSignals {
            snd_nxt: 20,
            sacked_out: 1,
            in_flight: 9,
            acked_sacked: 1,
            cwnd_limited: true,
            ..AckSignals::default()
        };
        ack(&mut r, &mut cc, &mut st, &base);
        assert_eq!((r.state(), st.cwnd), (CaState::Disorder, 10), "SACK only");
        let reordered = AckSignals {
            reordering_seen: true,
            ..base
        };
        ack(&mut r, &mut cc, &mut st, &reordered);
        assert_eq!(st.cwnd, 11);
        let idle = AckSignals {
            snd_una: 2,
            una_advanced: true,
            sacked_out: 0,
            cwnd_limited: false,
            ..base
        };
        ack(&mut r, &mut cc, &mut st, &idle);
        assert_eq!(
            (r.state(), st.cwnd),
            (CaState::Open, 11),
            "not cwnd-limited"
        );
        // A controller that grows regardless (quicly's CUBIC) is called anyway.
        cc.grows_unlimited = true;
        let idle = AckSignals { snd_una: 3, ..idle };
        ack(&mut r, &mut cc, &mut st, &idle);
        assert_eq!(st.cwnd, 12, "grows when not cwnd-limited");
    }

    /// `tcp_enter_loss`: the first RTO is a new event (ssthresh, `CA_EVENT_LOSS`); another RTO
    /// with no progress since continues it; after SND.UNA advanced, the next RTO is new again.
    /// cwnd = in flight + 1; Loss ends at the recovery point.
    #[test]
    fn rto_starts_a_new_episode_only_after_progress() {
        let (mut r, mut cc, mut st) = (Recovery::new(10), Log::default(), st(20));
        let info = AckInfo::default();
        assert!(r.rto_begin(T, &mut cc, &mut st, 0, &info));
        r.enter_loss(T, &mut cc, &mut st, 0, 20);
        assert_eq!(cc.take(), ["ssthresh in Open", "Loss", "set_state Loss"]);
        assert_eq!((st.cwnd, st.ssthresh, r.min_cwnd()), (1, 10, 1));
        assert!(!r.rto_begin(T, &mut cc, &mut st, 0, &info));
        r.enter_loss(T, &mut cc, &mut st, 0, 20);
        assert_eq!(cc.take(), ["set_state Loss"]);
        let progress = AckSignals {
            snd_una: 1,
            snd_nxt: 20,
            una_advanced: true,
            acked_sacked: 1,
            ..AckSignals::default()
        };
        r.on_ack(T, &mut cc, &mut st, &progress, &info);
        assert_eq!(r.state(), CaState::Loss);
        assert!(r.rto_begin(T, &mut cc, &mut st, 1, &info));
        r.enter_loss(T, &mut cc, &mut st, 2, 20);
        assert_eq!(st.cwnd, 3);
        let done = AckSignals {
            snd_una: 20,
            ..progress
        };
        r.on_ack(T, &mut cc, &mut st, &done, &info);
        assert_eq!(r.state(), CaState::Open);
    }

    /// Undo (`tcp_undo_cwnd_reduction`): the controller's `undo_cwnd` gets the cwnd before the
    /// reduction (the default, Reno's, returns max(cwnd, prior)), ssthresh returns to its value
    /// before, and the state to Open; after an RTO likewise.
    #[test]
    fn undo_restores_the_window_before_the_reduction() {
        let (mut r, mut cc, mut st) = (Recovery::new(10), Log::default(), st(20));
        st.ssthresh = 30;
        let loss = AckSignals {
            snd_nxt: 20,
            lost_out: 1,
            in_flight: 18,
            ..AckSignals::default()
        };
        r.on_ack(T, &mut cc, &mut st, &loss, &AckInfo::default());
        st.cwnd = 12;
        r.undo(T, &mut cc, &mut st);
        assert_eq!((r.state(), st.cwnd, st.ssthresh), (CaState::Open, 20, 30));
        assert!(r.rto_begin(T, &mut cc, &mut st, 0, &AckInfo::default()));
        r.enter_loss(T, &mut cc, &mut st, 0, 20);
        assert_eq!((st.cwnd, st.ssthresh), (1, 10));
        r.undo(T, &mut cc, &mut st);
        assert_eq!((r.state(), st.cwnd, st.ssthresh), (CaState::Open, 20, 30));
    }

    /// A tail-loss probe that repaired a loss: one reduction (cwnd = ssthresh) and
    /// `CA_EVENT_COMPLETE_CWR`, staying in Open.
    #[test]
    fn a_repaired_tail_loss_reduces_once_in_open() {
        let (mut r, mut cc, mut st) = (Recovery::new(10), Log::default(), st(20));
        let sig = AckSignals {
            snd_una: 20,
            snd_nxt: 20,
            una_advanced: true,
            tlp_repaired: true,
            acked_sacked: 1,
            ..AckSignals::default()
        };
        let t = r.on_ack(T, &mut cc, &mut st, &sig, &AckInfo::default());
        assert!(t.tlp_reduced);
        assert_eq!(cc.take(), ["ssthresh in Open", "CompleteCwr"]);
        assert_eq!((r.state(), st.cwnd, st.ssthresh), (CaState::Open, 10, 10));
    }

    /// `tcp_cwnd_restart`: idle for 3 RTOs, cwnd 40 halves three times to 5, floored at
    /// min(IW, cwnd) = 10, and ssthresh keeps ¾ of the old cwnd; then `CA_EVENT_TX_START`.
    /// Shorter idleness or a controller owning cwnd: only `CA_EVENT_TX_START`.
    #[test]
    fn idle_restart_halves_cwnd_per_rto_down_to_the_initial_window() {
        let rto = Dur::from_millis(200);
        let (mut r, mut cc, mut st) = (Recovery::new(10), Log::default(), st(40));
        r.on_tx_start(T, &mut cc, &mut st, Dur::from_millis(600), rto, 10, true);
        assert_eq!((st.cwnd, st.ssthresh), (10, INFINITE_SSTHRESH));
        st.ssthresh = 20;
        st.cwnd = 40;
        r.on_tx_start(T, &mut cc, &mut st, Dur::from_millis(600), rto, 10, true);
        assert_eq!((st.cwnd, st.ssthresh), (10, 30));
        assert!(st.app_limited);
        assert_eq!(
            cc.take(),
            ["CwndRestart", "TxStart", "CwndRestart", "TxStart"]
        );
        r.on_tx_start(T, &mut cc, &mut st, Dur::from_millis(199), rto, 10, false);
        assert_eq!(cc.take(), ["TxStart"]);
        // Linux's boundaries (`tcp_slow_start_after_idle_check`: delta > RTO; the loop halves
        // while delta − k·RTO > 0): exactly one RTO idle restarts nothing, a nanosecond more
        // halves once, and so does exactly two RTOs.
        for (idle, cwnd) in [
            (rto, 40),
            (rto + Dur(1), 20),
            (Dur::from_millis(400), 20),
            (Dur::from_millis(400) + Dur(1), 10),
        ] {
            st.cwnd = 40;
            r.on_tx_start(T, &mut cc, &mut st, idle, rto, 5, false);
            assert_eq!(st.cwnd, cwnd, "idle {idle:?}");
        }
        cc.take();
        let mut owner = Log {
            owns_cwnd: true,
            ..Log::default()
        };
        let sig = AckSignals {
            acked_sacked: 1,
            ..AckSignals::default()
        };
        r.cong_control(
            T,
            &mut owner,
            &mut st,
            &RateSample::default(),
            &sig,
            &mut AckInfo::default(),
        );
        owner.take();
        r.on_tx_start(T, &mut owner, &mut st, Dur::from_secs(5), rto, 10, false);
        assert_eq!(owner.take(), ["TxStart"]);
        assert_eq!(st.cwnd, 7);
    }

    /// A recovery with undo on, entered with cwnd 20 and ssthresh `INFINITE_SSTHRESH` at
    /// SND.UNA 0, its one retransmission sent.
    fn recovering() -> (Recovery, Log, CwndState) {
        let (mut r, cc, mut st) = (Recovery::new(10), Log::default(), st(20));
        r.set_undo(true);
        let mut cc = cc;
        let loss = AckSignals {
            snd_nxt: 20,
            lost_out: 1,
            sacked_out: 3,
            in_flight: 16,
            ..AckSignals::default()
        };
        ack(&mut r, &mut cc, &mut st, &loss);
        r.on_retransmit(1);
        cc.take();
        (r, cc, st)
    }

    /// Linux `tcp_check_dsack` / `tcp_try_undo_dsack`: the DSACK of the only retransmission
    /// brings `undo_retrans` to 0 and the next ACK undoes the reduction in Recovery: the
    /// controller's `undo_cwnd` (here max(cwnd, prior_cwnd) = 20), ssthresh back to
    /// `tcp_current_ssthresh` at entry, and the state Disorder (segments still SACKed,
    /// `tcp_try_keep_open`); a DSACK below the episode's marker counts for nothing.
    #[test]
    fn a_dsack_of_every_retransmission_undoes_recovery() {
        let (mut r, mut cc, mut st) = recovering();
        assert_eq!(st.ssthresh, 10);
        r.on_dsack_retrans(0, 1);
        assert_eq!(
            r.undo_retrans(),
            1,
            "data below the marker is not of this episode"
        );
        r.on_dsack_retrans(1, 1);
        assert_eq!(r.undo_retrans(), 0);
        let sig = AckSignals {
            snd_nxt: 20,
            sacked_out: 4,
            in_flight: 15,
            acked_sacked: 1,
            dsack: true,
            ..AckSignals::default()
        };
        let t = r.on_ack(T, &mut cc, &mut st, &sig, &AckInfo::default());
        assert_eq!(t.undo, Some(Undo::Dsack));
        assert!(!t.unmark_lost);
        assert_eq!(
            (r.state(), st.cwnd, st.ssthresh),
            (CaState::Disorder, 20, INFINITE_SSTHRESH)
        );
        assert_eq!(r.undo_marker(), None);
    }

    /// Without a DSACK the recovery point ends the episode with cwnd = ssthresh
    /// (`tcp_may_undo` false: one retransmission unaccounted for), reported for RACK's
    /// `reo_wnd_persist`; an ECN echo during the episode (`tcp_fastretrans_alert` step A,
    /// `prior_ssthresh` = 0) makes a later DSACK undo end the episode without restoring cwnd.
    #[test]
    fn no_undo_without_dsack_and_no_restore_after_an_ecn_echo() {
        let (mut r, mut cc, mut st) = recovering();
        let exit = AckSignals {
            snd_una: 20,
            snd_nxt: 20,
            una_advanced: true,
            ..AckSignals::default()
        };
        let t = r.on_ack(T, &mut cc, &mut st, &exit, &AckInfo::default());
        assert_eq!(t.undo, None);
        assert!(t.recovered_without_undo);
        assert_eq!((r.state(), st.cwnd), (CaState::Open, 10));

        let (mut r, mut cc, mut st) = recovering();
        let echo = AckSignals {
            snd_nxt: 20,
            sacked_out: 4,
            lost_out: 1,
            ecn_echo: true,
            ..AckSignals::default()
        };
        r.on_ack(T, &mut cc, &mut st, &echo, &AckInfo::default());
        r.on_dsack_retrans(1, 1);
        st.cwnd = 12;
        let t = r.on_ack(
            T,
            &mut cc,
            &mut st,
            &AckSignals {
                ecn_echo: false,
                lost_out: 0,
                ..echo
            },
            &AckInfo::default(),
        );
        assert_eq!(t.undo, Some(Undo::Dsack));
        assert_eq!((st.cwnd, st.ssthresh), (12, 10), "nothing restored");
    }

    /// F-RTO (RFC 5682 §3.1, Linux `tcp_enter_loss`/`tcp_process_loss`): a timeout in Open
    /// starts it; the first ACK advancing SND.UNA below the recovery point asks for new data
    /// (step 2.b); an ACK then delivering never-retransmitted data below `high_seq` undoes the
    /// timeout (step 3.b, loss marks cancelled, cwnd and ssthresh back). A duplicate ACK
    /// instead ends F-RTO (step 3.a). A first timeout during Recovery runs no F-RTO (§3.2 and
    /// Linux `new_recovery`).
    #[test]
    fn frto_steps() {
        let start = || {
            let (mut r, mut cc, mut st) = (Recovery::new(10), Log::default(), st(20));
            r.set_undo(true);
            r.set_frto(true);
            assert!(r.rto_begin(T, &mut cc, &mut st, 0, &AckInfo::default()));
            r.init_loss_undo(0, 0);
            r.enter_loss(T, &mut cc, &mut st, 0, 20);
            r.on_retransmit(1);
            assert!(r.frto());
            let first = AckSignals {
                snd_una: 1,
                snd_nxt: 20,
                una_advanced: true,
                acked_sacked: 1,
                lost_out: 19,
                can_send_new: true,
                ..AckSignals::default()
            };
            let t = r.on_ack(T, &mut cc, &mut st, &first, &AckInfo::default());
            assert!(t.frto_new_data && t.undo.is_none());
            assert_eq!(r.state(), CaState::Loss);
            (r, cc, st)
        };
        let (mut r, mut cc, mut st) = start();
        let orig = AckSignals {
            snd_una: 5,
            snd_nxt: 22,
            una_advanced: true,
            acked_sacked: 4,
            lost_out: 15,
            orig_acked: true,
            ..AckSignals::default()
        };
        let t = r.on_ack(T, &mut cc, &mut st, &orig, &AckInfo::default());
        assert_eq!(t.undo, Some(Undo::SpuriousRto));
        assert!(t.unmark_lost);
        assert_eq!(
            (r.state(), st.cwnd, st.ssthresh),
            (CaState::Open, 20, INFINITE_SSTHRESH)
        );

        let (mut r, mut cc, mut st) = start();
        let dup = AckSignals {
            snd_una: 1,
            snd_nxt: 22,
            lost_out: 19,
            data_sacked: true,
            acked_sacked: 1,
            ..AckSignals::default()
        };
        let t = r.on_ack(T, &mut cc, &mut st, &dup, &AckInfo::default());
        assert_eq!(t.undo, None);
        assert!(!r.frto() && !t.frto_new_data);
        assert_eq!(r.state(), CaState::Loss);

        let (mut r, mut cc, mut st) = recovering();
        r.set_frto(true);
        r.rto_begin(T, &mut cc, &mut st, 0, &AckInfo::default());
        assert!(!r.frto(), "a timeout interrupting Recovery");
    }
}
