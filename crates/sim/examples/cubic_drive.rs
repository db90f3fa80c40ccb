//! Drive CUBIC alone with a fixed RTT (debugging aid).
use cclab_cc::{AckInfo, CaState, CcSpec, CwndState, Dur, Time};
fn main() {
    let mut cc = CcSpec::default_for("cubic").unwrap().build();
    let mut st = CwndState::new(10, 1448);
    let mut now = Time(0);
    cc.init(now, &mut st);
    st.cwnd = 43;
    let rtt = Dur::from_millis(70);
    let mut ack = AckInfo {
        acked_sacked: 1,
        pkts_acked: 1,
        rtt: Some(rtt),
        srtt: Some(rtt),
        min_rtt: Some(rtt),
        is_cwnd_limited: true,
        ca_state: Some(CaState::Open),
        ..AckInfo::default()
    };
    // one round to set delay_min etc.
    st.ssthresh = 43;
    st.ssthresh = cc.ssthresh(now, &st, &ack);
    cc.set_state(now, &mut st, CaState::Recovery);
    st.cwnd = st.ssthresh;
    cc.set_state(now, &mut st, CaState::Open);
    println!("after loss cwnd={} ssthresh={}", st.cwnd, st.ssthresh);
    for round in 0..200 {
        let n = st.cwnd;
        for i in 0..n {
            now = Time(round as u64 * rtt.0 + rtt.0 * u64::from(i) / u64::from(n));
            ack.snd_una += 1;
            ack.snd_nxt = ack.snd_una + u64::from(st.cwnd);
            cc.pkts_acked(now, &mut st, &ack);
            cc.cong_avoid(now, &mut st, 1, &ack);
        }
        if round % 14 == 0 {
            let mut s = String::new();
            cc.stats(&mut |k, v| s.push_str(&format!("{k}={v:.1} ")));
            println!("t={:.2} cwnd={} {s}", now.as_secs_f64(), st.cwnd);
        }
    }
}
