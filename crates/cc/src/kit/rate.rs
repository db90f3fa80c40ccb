//! Delivery-rate sampling with Linux `tcp_rate.c` semantics (net/ipv4/tcp_rate.c, and the
//! `lost`/`tx_in_flight` fields of google/bbr v3), after draft-cheng-iccrg-delivery-rate-estimation.
//!
//! Contract: the transport owns one [`RateSampler`] per connection (the `tcp_sock` fields
//! `delivered`, `delivered_mstamp`, `first_tx_mstamp`, `app_limited`, `lost`, `delivered_ce`)
//! and keeps one [`TxRecord`] with every segment in flight (the `tcp_skb_cb.tx` fields, as
//! s2n-quic keeps its per-packet `PacketInfo`). It calls:
//! - [`RateSampler::on_sent`] for every transmission, new or retransmitted (`tcp_rate_skb_sent`),
//!   and stores the returned record with the segment, replacing any older one;
//! - [`RateSampler::begin_ack`] when an ACK arrives, then [`RateSampler::on_delivered`] for every
//!   segment the ACK newly delivers, SACKed or cumulatively acknowledged
//!   (`tcp_count_delivered` plus `tcp_rate_skb_delivered`);
//! - [`RateSampler::on_lost`] for every segment it marks lost (which returns the controller's
//!   [`LostInfo`]) and
//!   [`RateSampler::add_delivered_ce`] for CE feedback, so that the counters the records
//!   snapshot stay current;
//! - [`RateSampler::generate`] once per ACK, after loss detection (`tcp_rate_gen`), which
//!   returns the [`RateSample`] the controller receives;
//! - [`RateSampler::mark_app_limited`] when the application has nothing more to send while the
//!   window has room (`tcp_rate_check_app_limited`).
//!
//! The rules: a sample describes the most recently *sent* segment among those the ACK delivers
//! (later send time wins, ties go to the higher sequence: `tcp_skb_sent_after`); its interval is
//! max(send elapsed, ACK elapsed), where send elapsed runs from the first transmission of the
//! sampled segment's flight (`first_tx_mstamp`) to its send time and ACK elapsed from the
//! delivery that preceded its send (`delivered_mstamp`) to now; an interval shorter than the
//! minimum RTT is invalid (it would overestimate the rate after ACK compression). A SACKed
//! record is used once (`delivered_mstamp` zeroed in Linux), so the later cumulative ACK of the
//! same segment does not sample it again. A flight that starts with nothing outstanding
//! restarts both clocks at its first send. Nothing here allocates; all state is plain `Copy`
//! data.

use crate::num::low_u32;
use crate::{Dur, LostInfo, RateSample, Time};

/// The send-time snapshot kept with a segment (Linux `tcp_skb_cb.tx` plus the skb's departure
/// stamp `skb_mstamp_ns`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxRecord {
    /// When the segment was sent (`skb->skb_mstamp_ns`).
    pub sent_time: Time,
    /// Start of the send interval: the first send of the flight this segment belongs to
    /// (`tx.first_tx_mstamp`).
    pub first_tx_time: Time,
    /// Time of the last delivery before the send (`tx.delivered_mstamp`).
    pub delivered_time: Time,
    /// Connection's delivered count at send (`tx.delivered`).
    pub delivered: u64,
    /// Connection's lost count at send (`tx.lost`, google/bbr v3).
    pub lost: u64,
    /// Connection's CE-delivered count at send, modulo 2³² (`tx.delivered_ce`).
    pub delivered_ce: u32,
    /// Segments in flight when sent, this one included (`tx.in_flight`, google/bbr v3).
    pub tx_in_flight: u32,
    /// Sent while the connection was application-limited (`tx.is_app_limited`).
    pub is_app_limited: bool,
    /// The transmission was a retransmission (`TCPCB_RETRANS` at delivery).
    pub is_retrans: bool,
    /// Already taken into a sample (Linux zeroes `tx.delivered_mstamp`).
    used: bool,
}

impl TxRecord {
    /// Whether this record has already contributed to a sample (a SACKed segment).
    #[must_use]
    pub fn is_used(&self) -> bool {
        self.used
    }
}

/// The candidate for this ACK's sample while its deliveries are processed (the `prior_*`
/// fields Linux accumulates in `struct rate_sample` during `tcp_sacktag_write_queue` and
/// `tcp_clean_rtx_queue`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateAck {
    /// The most recently sent delivered segment's record and sequence number.
    prior: Option<(TxRecord, u64)>,
    /// Connection's delivered count when the ACK arrived.
    delivered_before: u64,
}

impl RateAck {
    /// Segments delivered by this ACK so far, given the sampler it was begun with.
    #[must_use]
    pub fn delivered(&self, sampler: &RateSampler) -> u64 {
        sampler.delivered - self.delivered_before
    }

    /// The record the sample will describe, if the ACK delivered anything not yet sampled.
    #[must_use]
    pub fn prior(&self) -> Option<&TxRecord> {
        self.prior.as_ref().map(|(r, _)| r)
    }
}

/// A connection's delivery-rate state (the `tcp_sock` fields of `tcp_rate.c`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSampler {
    /// Segments delivered, SACKed or cumulatively (`tp->delivered`).
    delivered: u64,
    /// Time of the last delivery (`tp->delivered_mstamp`).
    delivered_time: Time,
    /// Send time of the most recently sampled segment, or the start of the current flight
    /// (`tp->first_tx_mstamp`).
    first_tx_time: Time,
    /// Application-limited until `delivered` exceeds this; 0 = not limited (`tp->app_limited`).
    app_limited: u64,
    /// Segments marked lost (`tp->lost`).
    lost: u64,
    /// Segments delivered CE-marked (`tp->delivered_ce`).
    delivered_ce: u64,
    /// The last valid sample kept for reporting, as (segments, interval) (`tp->rate_delivered`,
    /// `tp->rate_interval_us`).
    last: Option<(u64, Dur)>,
}

impl RateSampler {
    /// A fresh connection: nothing delivered, not application-limited.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Segments delivered so far (`tp->delivered`).
    #[must_use]
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Segments marked lost so far (`tp->lost`).
    #[must_use]
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// Segments delivered CE-marked so far (`tp->delivered_ce`).
    #[must_use]
    pub fn delivered_ce(&self) -> u64 {
        self.delivered_ce
    }

    /// Whether the connection is application-limited now (`tp->app_limited != 0`).
    #[must_use]
    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// The delivered count beyond which the application-limited phase ends (0: not limited).
    #[must_use]
    pub fn app_limited_until(&self) -> u64 {
        self.app_limited
    }

    /// The last valid sample (segments, interval) that was not application-limited with
    /// nothing delivered, for reporting.
    #[must_use]
    pub fn last_sample(&self) -> Option<(u64, Dur)> {
        self.last
    }

    /// Linux `tcp_rate_skb_sent`: the record of a segment sent at `stamp`. `fresh_flight`:
    /// nothing was outstanding before it (`!tp->packets_out`), which restarts both clocks at
    /// `stamp`. `in_flight` counts this segment.
    #[inline]
    pub fn on_sent(
        &mut self,
        stamp: Time,
        fresh_flight: bool,
        in_flight: u32,
        is_retrans: bool,
    ) -> TxRecord {
        if fresh_flight {
            self.first_tx_time = stamp;
            self.delivered_time = stamp;
        }
        TxRecord {
            sent_time: stamp,
            first_tx_time: self.first_tx_time,
            delivered_time: self.delivered_time,
            delivered: self.delivered,
            lost: self.lost,
            // Linux keeps `delivered_ce` in a bit field; modulo 2³² here.
            delivered_ce: low_u32(self.delivered_ce),
            tx_in_flight: in_flight,
            is_app_limited: self.app_limited != 0,
            is_retrans,
            used: false,
        }
    }

    /// Start processing an ACK.
    #[must_use]
    pub fn begin_ack(&self) -> RateAck {
        RateAck {
            prior: None,
            delivered_before: self.delivered,
        }
    }

    /// The segment `seq` with record `rec` is newly delivered by this ACK (SACKed or
    /// cumulatively acknowledged): count it (`tcp_count_delivered`) and, if its record is the
    /// most recently sent so far and unused, make it this ACK's sample candidate
    /// (`tcp_rate_skb_delivered`). Marks `rec` used.
    #[inline]
    pub fn on_delivered(&mut self, ack: &mut RateAck, rec: &mut TxRecord, seq: u64) {
        self.delivered += 1;
        if rec.used {
            return;
        }
        // `tcp_skb_sent_after`: later send time, ties by higher sequence.
        let newer = ack
            .prior
            .is_none_or(|(p, pseq)| (rec.sent_time, seq) > (p.sent_time, pseq));
        if newer {
            ack.prior = Some((*rec, seq));
            self.first_tx_time = rec.sent_time;
        }
        rec.used = true;
    }

    /// The segment with record `rec` was marked lost (`tp->lost` += 1, Linux
    /// `tcp_mark_skb_lost`); returns what the controller's `on_packet_lost` hook receives
    /// (BBRv3's `skb_marked_lost` reads these fields of the skb and the socket).
    #[inline]
    pub fn on_lost(&mut self, rec: &TxRecord) -> LostInfo {
        self.lost += 1;
        LostInfo {
            tx_in_flight: rec.tx_in_flight,
            prior_delivered: rec.delivered,
            total_lost: self.lost,
            total_delivered: self.delivered,
            is_app_limited: rec.is_app_limited,
            tx_lost: rec.lost,
        }
    }

    /// `n` more segments were delivered CE-marked (`tp->delivered_ce`).
    #[inline]
    pub fn add_delivered_ce(&mut self, n: u64) {
        self.delivered_ce += n;
    }

    /// Linux `tcp_rate_check_app_limited`, once the transport found the application has
    /// nothing to send and the window has room: the connection is application-limited until
    /// everything now in flight is delivered (`tp->delivered + packets_in_flight`, at least 1).
    #[inline]
    pub fn mark_app_limited(&mut self, in_flight: u32) {
        self.app_limited = (self.delivered + u64::from(in_flight)).max(1);
    }

    /// Linux `tcp_rate_gen`, once per ACK after loss detection, at `now`: ends the
    /// application-limited phase once its data is delivered, stamps the delivery time, and
    /// returns the sample. `losses`: segments this ACK's processing marked lost; `min_rtt`:
    /// the connection's windowed minimum RTT (intervals below it are invalid). The sample's
    /// `rtt` and `is_ack_delayed` are the transport's to fill in.
    #[inline]
    pub fn generate(
        &mut self,
        now: Time,
        ack: &RateAck,
        losses: u32,
        min_rtt: Option<Dur>,
    ) -> RateSample {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let acked_sacked = u32::try_from(self.delivered - ack.delivered_before).unwrap_or(u32::MAX);
        if acked_sacked > 0 {
            self.delivered_time = now;
        }
        let mut sample = RateSample {
            total_delivered: self.delivered,
            acked_sacked,
            losses,
            ..RateSample::default()
        };
        let Some((p, _)) = ack.prior else {
            return sample;
        };
        sample.prior_delivered = p.delivered;
        sample.is_app_limited = p.is_app_limited;
        sample.tx_in_flight = p.tx_in_flight;
        sample.is_retrans = p.is_retrans;
        sample.delivered = self.delivered - p.delivered;
        sample.delivered_ce = u64::from(low_u32(self.delivered_ce).wrapping_sub(p.delivered_ce));
        sample.lost = self.lost - p.lost;
        let send_elapsed = p.sent_time.saturating_since(p.first_tx_time);
        let ack_elapsed = now.saturating_since(p.delivered_time);
        let interval = send_elapsed.max(ack_elapsed);
        if interval >= min_rtt.unwrap_or(Dur::ZERO) && interval > Dur::ZERO {
            sample.interval = Some(interval);
            if !sample.is_app_limited || sample.delivered > 0 {
                self.last = Some((sample.delivered, interval));
            }
        }
        sample
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time::ZERO + Dur::from_millis(n)
    }

    /// A flight of segments 0..n sent 1 ms apart from `t0` (the first one starts the flight).
    fn send_flight(s: &mut RateSampler, t0: u64, first_seq: u64, n: u64) -> Vec<TxRecord> {
        (0..n)
            .map(|i| {
                s.on_sent(
                    ms(t0 + i),
                    i == 0 && first_seq == 0,
                    u32::try_from(i + 1).expect("a short flight"),
                    false,
                )
            })
            .collect()
    }

    /// One ACK delivering the segments `seqs` at `now`.
    fn ack(
        s: &mut RateSampler,
        recs: &mut [TxRecord],
        seqs: &[u64],
        now: Time,
        min_rtt: Option<Dur>,
    ) -> RateSample {
        let mut a = s.begin_ack();
        for &q in seqs {
            s.on_delivered(&mut a, &mut recs[usize::try_from(q).expect("an index")], q);
        }
        s.generate(now, &a, 0, min_rtt)
    }

    /// Worked example of `tcp_rate_gen`: 10 segments leave 1 ms apart from t = 0 on an idle
    /// connection; the ACK of segment 0 comes at 100 ms. Send elapsed 0, ACK elapsed 100 ms:
    /// 1 segment over 100 ms. The ACK of segment 4 at 104 ms: the record of segment 4 says 0
    /// delivered at send, flight started at 0, last delivery before it at 0 (the flight's
    /// start): send elapsed 4 ms, ACK elapsed 104 ms, so 5 segments over 104 ms.
    #[test]
    fn interval_is_the_longer_of_send_and_ack_elapsed() {
        let mut s = RateSampler::new();
        let mut recs = send_flight(&mut s, 0, 0, 10);
        let rs = ack(&mut s, &mut recs, &[0], ms(100), None);
        assert_eq!(rs.delivered, 1);
        assert_eq!(rs.interval, Some(Dur::from_millis(100)));
        assert_eq!((rs.prior_delivered, rs.total_delivered), (0, 1));
        assert_eq!(rs.acked_sacked, 1);
        assert_eq!(rs.tx_in_flight, 1);
        for q in 1..4 {
            ack(&mut s, &mut recs, &[q], ms(100 + q), None);
        }
        let rs = ack(&mut s, &mut recs, &[4], ms(104), None);
        assert_eq!(rs.delivered, 5);
        assert_eq!(rs.interval, Some(Dur::from_millis(104)));
        assert_eq!(rs.tx_in_flight, 5);
        assert_eq!(s.last_sample(), Some((5, Dur::from_millis(104))));
    }

    /// A segment sent after deliveries began measures from them: segment 10 leaves at 101 ms,
    /// after the ACK of segment 0 (100 ms) and of segment 1 (101 ms), which moved the flight's
    /// first-send time to segment 1's send time (1 ms). Its ACK at 201 ms delivers it as the
    /// 11th segment: 11 − 2 = 9 segments over max(101 − 1, 201 − 101) = 100 ms.
    #[test]
    fn later_sends_snapshot_the_deliveries_before_them() {
        let mut s = RateSampler::new();
        let mut recs = send_flight(&mut s, 0, 0, 10);
        ack(&mut s, &mut recs, &[0], ms(100), None);
        ack(&mut s, &mut recs, &[1], ms(101), None);
        recs.push(s.on_sent(ms(101), false, 9, false));
        assert_eq!(recs[10].delivered, 2);
        assert_eq!(recs[10].first_tx_time, ms(1));
        assert_eq!(recs[10].delivered_time, ms(101));
        for q in 2..10 {
            ack(&mut s, &mut recs, &[q], ms(100 + q), None);
        }
        let rs = ack(&mut s, &mut recs, &[10], ms(201), None);
        assert_eq!(rs.delivered, 9);
        assert_eq!(rs.prior_delivered, 2);
        assert_eq!(rs.interval, Some(Dur::from_millis(100)));
    }

    /// An interval shorter than min_rtt is invalid (`tcp_rate_gen`: ACK compression would
    /// overestimate the rate), but the sample's counts are still reported.
    #[test]
    fn intervals_below_min_rtt_are_invalid() {
        let mut s = RateSampler::new();
        let mut recs = send_flight(&mut s, 0, 0, 2);
        let rs = ack(
            &mut s,
            &mut recs,
            &[0],
            ms(100),
            Some(Dur::from_millis(101)),
        );
        assert_eq!(rs.interval, None);
        assert_eq!(rs.delivered, 1);
        assert_eq!(s.last_sample(), None);
        let rs = ack(
            &mut s,
            &mut recs,
            &[1],
            ms(101),
            Some(Dur::from_millis(101)),
        );
        assert_eq!(rs.interval, Some(Dur::from_millis(101)));
    }

    /// A stretch ACK delivering several segments samples the most recently sent one
    /// (`tcp_skb_sent_after`), whatever the order of delivery; at equal send times the higher
    /// sequence wins (a TSO burst stamped once).
    #[test]
    fn the_most_recently_sent_segment_is_sampled() {
        let mut s = RateSampler::new();
        let mut recs = send_flight(&mut s, 0, 0, 4);
        let rs = ack(&mut s, &mut recs, &[2, 0, 1], ms(100), None);
        assert_eq!(rs.tx_in_flight, 3, "segment 2's record");
        assert_eq!(rs.acked_sacked, 3);
        let mut s = RateSampler::new();
        let mut burst: Vec<TxRecord> = (0..3)
            .map(|i| s.on_sent(ms(0), i == 0, i + 1, false))
            .collect();
        let rs = ack(&mut s, &mut burst, &[1, 2, 0], ms(50), None);
        assert_eq!(
            rs.tx_in_flight, 3,
            "tie at one send time: the highest sequence"
        );
    }

    /// A SACKed segment is sampled once: its record is marked used, and a used record is no
    /// sample candidate if it is reported again (the transport does not report the later
    /// cumulative ACK of a SACKed segment as a delivery; Linux skips it likewise).
    #[test]
    fn a_used_record_is_not_sampled_again() {
        let mut s = RateSampler::new();
        let mut recs = send_flight(&mut s, 0, 0, 3);
        let rs = ack(&mut s, &mut recs, &[2], ms(100), None);
        assert!(recs[2].is_used());
        assert_eq!(rs.delivered, 1);
        let mut a = s.begin_ack();
        let mut again = recs[2];
        s.on_delivered(&mut a, &mut again, 2);
        assert!(a.prior().is_none());
        let rs = s.generate(ms(101), &a, 0, None);
        assert_eq!(rs.interval, None);
        assert_eq!(rs.delivered, 0);
    }

    /// `tcp_rate_check_app_limited`: marked with 4 in flight after 10 deliveries, the
    /// connection is app-limited until the 15th delivery; records sent meanwhile carry the
    /// flag into their samples; the mark ends on the ACK that delivers past it.
    #[test]
    fn app_limited_marks_samples_until_its_data_is_delivered() {
        let mut s = RateSampler::new();
        let mut recs = send_flight(&mut s, 0, 0, 14);
        for q in 0..10 {
            ack(&mut s, &mut recs, &[q], ms(100 + q), None);
        }
        s.mark_app_limited(4);
        assert_eq!(s.app_limited_until(), 14);
        recs.push(s.on_sent(ms(110), false, 5, false));
        assert!(recs[14].is_app_limited);
        for q in 10..14 {
            let rs = ack(&mut s, &mut recs, &[q], ms(100 + q), None);
            assert!(!rs.is_app_limited, "sent before the mark");
            assert!(s.is_app_limited());
        }
        let rs = ack(&mut s, &mut recs, &[14], ms(210), None);
        assert!(rs.is_app_limited);
        assert!(!s.is_app_limited(), "15 delivered > 14");
        // Never zero: a mark at the very start still reads as limited.
        let mut s = RateSampler::new();
        s.mark_app_limited(0);
        assert!(s.is_app_limited());
    }

    /// An idle connection's next flight restarts both clocks at its first send: the idle time
    /// is not counted into the next sample's interval.
    #[test]
    fn a_fresh_flight_restarts_the_clocks() {
        let mut s = RateSampler::new();
        let mut recs = send_flight(&mut s, 0, 0, 1);
        ack(&mut s, &mut recs, &[0], ms(100), None);
        recs.push(s.on_sent(ms(5000), true, 1, false));
        assert_eq!(recs[1].first_tx_time, ms(5000));
        assert_eq!(recs[1].delivered_time, ms(5000));
        let rs = ack(&mut s, &mut recs, &[1], ms(5100), None);
        assert_eq!(rs.interval, Some(Dur::from_millis(100)));
    }

    /// Losses and CE marks over the sample: `lost` counts what was marked lost since the
    /// sampled segment was sent (BBRv3's `rs->lost`), `delivered_ce` the CE deliveries since.
    #[test]
    fn lost_and_ce_are_counted_over_the_sample() {
        let mut s = RateSampler::new();
        let mut recs = send_flight(&mut s, 0, 0, 4);
        let first = s.on_lost(&recs[0]);
        let second = s.on_lost(&recs[1]);
        assert_eq!((first.total_lost, second.total_lost), (1, 2));
        assert_eq!(
            (second.tx_in_flight, second.prior_delivered, second.tx_lost),
            (2, 0, 0)
        );
        s.add_delivered_ce(3);
        let mut a = s.begin_ack();
        s.on_delivered(&mut a, &mut recs[3], 3);
        let rs = s.generate(ms(100), &a, 2, None);
        assert_eq!((rs.lost, rs.losses, rs.delivered_ce), (2, 2, 3));
        recs.push(s.on_sent(ms(100), false, 2, true));
        assert_eq!((recs[4].lost, recs[4].delivered_ce), (2, 3));
        let rs = ack(&mut s, &mut recs, &[4], ms(200), None);
        assert!(rs.is_retrans);
        assert_eq!((rs.lost, rs.delivered_ce), (0, 0));
    }
}
