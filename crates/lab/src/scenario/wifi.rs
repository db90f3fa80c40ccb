//! The Wi-Fi presets: `wifi_hybrid` (a Flent test with the client on Wi-Fi) and `wifi` (N
//! stations and an AP in one BSS, the AP wired to a server, with `[[flows]]`).
//!
//! Contract: both presets share the Wi-Fi keys ([`WIFI_KEYS`]: standard, band, width, MCS,
//! spatial streams, guard interval, MPDU error rate, Block Ack window, maximum A-MPDU length,
//! the stations' driver pacing shift, A-MSDU and A-MPDU aggregation, the RTS threshold, the
//! transmit queues, the SNR and the rate control), resolved once by `resolve_bss` into a
//! [`MacConfig`]; an invalid PHY is reported at the key the PHY names (`width`, `mcs`, `nss`,
//! `gi`, `band`) with the valid values, a bad `amsdu` with the standard's range.
//!
//! `wifi_hybrid` is the `access` preset ([`super::access`], layout in
//! [`cclab_sim::access::Access`]) with the client on Wi-Fi: the client is the only station of a
//! BSS whose AP is the `cpe` router; the access line `cpe ↔ isp` behind the AP is the AP's
//! Ethernet port (1 Gbit/s both ways, [`ETHERNET_RATE`]) or, with `isp_rate`, an ISP line of
//! that rate both ways; `delay`, the buffers (default 1 BDP), qdiscs and losses are the line's
//! as in `access`, and the servers sit behind `isp` at `server_delays` (default the `rtt_fair`
//! ones, 0, 10, 30 and 70 ms, so every Flent test runs; the single-server tests use the first).
//! It takes a `[test]` and a `[tcp]` like `access`.
//!
//! ```toml
//! [topology]
//! preset = "wifi_hybrid"
//! width = 80  mcs = 9  nss = 2  gi = 800   # HE, 5 GHz by default
//! isp_rate = "25Mbit"                      # absent: Ethernet at 1 Gbit/s
//! delay = "5ms"                            # the line behind the AP (default 0.5 ms)
//! ```
//!
//! `wifi` lays its network out with [`cclab_sim::wifi_net::WifiNet`] (nodes `ap`, `server`,
//! `sta0`…; links `ap->server`, `server->ap`, then each station's two Wi-Fi hops). Flows come
//! from `[[flows]]` (after `count` expansion): flow `i` runs on station `i mod stations`; with
//! `direction = "up"` it uploads (station → server), `"down"` downloads (server → station), and
//! with `"both"` flow `i` uploads when `⌊i / stations⌋` is even and downloads when it is odd
//! (so `count = 2·stations` gives every station one upload and one download). Probe `j` runs
//! from station `j mod stations`. Each station's host is the `[host]` / `[flows.host]` host of
//! the first upload on it (else of the first flow), the server's that of the first download
//! (else of the first flow). `access_delay` does not apply: every station's base RTT is
//! `2·delay`.
//!
//! Pacing shift: mac80211 sets the socket's `sk_pacing_shift` of every local TCP socket it
//! transmits for to the driver's `tx_sk_pacing_shift` (`sk_pacing_shift_update`), so a
//! station's host runs the topology's `pacing_shift` (default
//! [`cclab_sim::wifi_net::MAC80211_PACING_SHIFT`] = 7), whatever `[host].pacing_shift` says; the
//! `[host]` key still sets the wired server's. A controller that sets its own shift per socket
//! (BBR-TAS) overrides both.

use cclab_sim::access::Direction;
use cclab_sim::wifi::ampdu::{AmpduLimits, MAX_AMSDU_HT_7935};
use cclab_sim::wifi::edca::AccessCategory;
use cclab_sim::wifi::mac::{
    FIRMWARE_DEPTH, MAX_MPDU_VHT_11454, MacConfig, Queues, RateControl, StationConfig,
};
use cclab_sim::wifi::minstrel::MinstrelConfig;
use cclab_sim::wifi::phy::{Band, Phy, PhyError, Standard};
use cclab_sim::wifi_net::{MAC80211_PACING_SHIFT, WifiNet};
use cclab_sim::{Dur, HostConfig, ProbeConfig, QueueLimit, SimConfig};
use toml::Spanned;

use super::error::{Source, unknown_choice};
use super::params::{Entry, Kind, Param};
use super::presets::{
    BUFFER, DRIVER_QUEUE, DURATION, NIC_RATE, Network, PROBABILITY, Preset, RATE, key,
};
use super::raw::{RawAccess, RawAmsdu, RawMcs, RawScenario, RawSnr, RawWifi, RawWifiHybrid};
use super::{Overrides, RunPlan, Scenario, ScenarioError, Topology, wire_bytes};
use crate::record::SeriesKind;
use crate::units::{BufferSpec, Rate, TimeValue, fmt_dur, fmt_rate, parse_size};

/// `standard` values.
pub const STANDARDS: &[&str] = &["ht", "vht", "he"];
/// `band` values.
pub const BANDS: &[&str] = &["2.4GHz", "5GHz", "6GHz"];
/// `queues` values.
pub const QUEUES: &[&str] = &["mac80211", "fifo"];
/// `ap_queues` values.
pub const AP_QUEUES: &[&str] = &["mac80211", "fifo", "firmware"];
/// `dscp_to_ac` values: the sides that put a frame in the AC of its DSCP.
pub const DSCP_TO_AC: &[&str] = &["both", "ap", "stations", "none"];
/// `ap_edca` values: the EDCA table the AP contends with.
pub const AP_EDCA: &[&str] = &["ap", "station"];
/// `rate_control` values.
pub const RATE_CONTROLS: &[&str] = &["fixed", "minstrel"];
/// `direction` values of the `wifi` preset.
pub const DIRECTIONS: &[&str] = &["up", "down", "both"];
/// Default per-stream MCS: 9, 256-QAM rate 5/6, the highest VHT MCS and the rate an 802.11ac/ax
/// client holds a few metres from its AP (IEEE 802.11-2020 Table 21-30 on; HE MCS 10–11,
/// 1024-QAM, need an SNR about 6 dB higher, 802.11ax-2021 27.3.19 Table 27-51's minimum
/// sensitivities). HT stops at MCS 7, its default there.
pub const DEFAULT_MCS: u8 = 9;
/// Rate of the AP's Ethernet port in `wifi_hybrid` without `isp_rate` (1000BASE-T).
pub const ETHERNET_RATE: u64 = 1_000_000_000;
/// One-way delay of the line behind the AP in `wifi_hybrid` by default: a LAN hop.
pub const DEFAULT_HYBRID_DELAY: Dur = Dur::from_micros(500);
/// One-way delay of the wired link of the `wifi` preset by default (a 10 ms base RTT).
pub const DEFAULT_WIRED_DELAY: Dur = Dur::from_millis(5);

const fn int(min: i64, max: i64) -> Kind {
    Kind::Int { min, max }
}

/// The Wi-Fi keys both presets take.
pub(super) const WIFI_KEYS: [Param; 22] = [
    key(
        "standard",
        Kind::Choice(STANDARDS),
        "he",
        "802.11n (ht), 802.11ac (vht) or 802.11ax (he) PHY",
        "IEEE 802.11-2020 cl. 19, 21; 802.11ax-2021 cl. 27",
    ),
    key(
        "band",
        Kind::Choice(BANDS),
        "5GHz",
        "frequency band (slot, SIFS, signal extension)",
        "IEEE 802.11-2020 Table 19-25",
    ),
    Param {
        unit: "MHz",
        ..key(
            "width",
            int(20, 160),
            "80",
            "channel width: 20, 40, 80 or 160 (HT: 20, 40; 2.4 GHz: 20, 40)",
            "IEEE 802.11-2020 21.1.1",
        )
    },
    key(
        "mcs",
        int(0, 11),
        "9 (ht: 7)",
        "per-stream MCS (HT ≤ 7, VHT ≤ 9, HE ≤ 11); `wifi`: one value or a list, one per \
         station",
        "256-QAM 5/6, the top VHT rate",
    ),
    key("nss", int(1, 4), "2", "spatial streams", "a 2×2 client"),
    Param {
        unit: "ns",
        ..key(
            "gi",
            int(400, 3200),
            "800",
            "guard interval: HT/VHT 800 or 400, HE 800, 1600 or 3200",
            "IEEE 802.11ax-2021 27.3.8",
        )
    },
    key(
        "per",
        PROBABILITY,
        "0",
        "MPDU error rate, uplink and downlink",
        "—",
    ),
    key(
        "ba_window",
        int(1, 256),
        "64 (he: 256)",
        "Block Ack window, MPDUs",
        "IEEE 802.11-2020 10.25.2; 802.11ax-2021 Table 9-321a",
    ),
    Param {
        unit: "bytes",
        ..key(
            "max_ampdu",
            Kind::Other {
                ty: "size",
                range: "1 B up to the standard's largest (HT 65535, VHT 1048575, HE 6500631)",
                quoted: true,
            },
            "the standard's largest",
            "maximum A-MPDU length",
            "IEEE 802.11-2020 9.4.2.157.2; 802.11ax-2021 9.4.2.248.2",
        )
    },
    key(
        "pacing_shift",
        int(6, 12),
        "7",
        "sk_pacing_shift of the stations' sockets (the Wi-Fi driver's tx_sk_pacing_shift)",
        "mac80211 `ieee80211_alloc_hw_nm`, net/mac80211/main.c",
    ),
    Param {
        unit: "bytes",
        ..key(
            "amsdu",
            Kind::Other {
                ty: "size or \"off\"",
                range: "\"off\", or 1 B up to the standard's largest (HT 7935, VHT/HE 11454)",
                quoted: true,
            },
            "off",
            "maximum A-MSDU length: MSDUs packed into one MPDU (absent or \"off\": one MSDU per \
             MPDU)",
            "IEEE 802.11-2020 9.4.2.55.2 (HT 3839/7935), 9.4.2.157.2 (VHT/HE MPDU 3895/7991/11454)",
        )
    },
    key(
        "ampdu",
        Kind::Bool,
        "true",
        "A-MPDU aggregation under a Block Ack agreement; false: one MPDU per PPDU, each \
         answered by an Ack",
        "IEEE 802.11-2020 10.12, 10.25",
    ),
    Param {
        unit: "bytes",
        ..key(
            "rts_threshold",
            int(0, 6_500_631),
            "off",
            "RTS/CTS before every exchange whose PSDU is longer than this (absent: never)",
            "dot11RTSThreshold, IEEE 802.11-2020 10.3.2.6",
        )
    },
    key(
        "queues",
        Kind::Choice(QUEUES),
        "mac80211",
        "transmit queues: mac80211 (per station and TID fq_codel, AQL, airtime fairness) or \
         fifo (one unbounded FIFO per link and AC)",
        "Linux net/mac80211/tx.c, sta_info.c",
    ),
    key(
        "snr",
        Kind::Other {
            ty: "float or list",
            range: "dB, any finite number",
            quoted: false,
        },
        "none (no SNR errors)",
        "SNR per data subcarrier and stream, both directions: each MPDU also fails with the \
         error rate of its MCS at this SNR; `wifi`: one value or a list, one per station",
        "ns-3 NistErrorRateModel (Pei and Henderson 2010)",
    ),
    key(
        "rate_control",
        Kind::Choice(RATE_CONTROLS),
        "fixed",
        "fixed (every A-MPDU at `mcs`) or minstrel (Minstrel-HT over every MCS of the standard, \
         1 to `nss` streams)",
        "Linux net/mac80211/rc80211_minstrel_ht.c",
    ),
    key(
        "ampdu_vo",
        Kind::Bool,
        "false",
        "A-MPDU also for AC_VO (EF-marked traffic); false: voice frames go one MPDU per exchange \
         with an Ack, as mac80211 starts no Block Ack session for AC_VO",
        "Linux `ieee80211_aggr_check`, net/mac80211/tx.c",
    ),
    key(
        "retry_limit",
        int(1, 1000),
        "31",
        "transmissions of an MPDU before the MAC drops it (31: ath9k's 30 software retries of an \
         A-MPDU subframe; 4: the standard's dot11LongRetryLimit)",
        "ath9k `ATH_MAX_SW_RETRIES`, drivers/net/wireless/ath/ath9k/ath9k.h; IEEE 802.11-2020 \
         10.23.2.12",
    ),
    key(
        "ap_queues",
        Kind::Choice(AP_QUEUES),
        "as `queues`",
        "the AP's transmit queues apart from its stations': mac80211, fifo, or firmware (a \
         vendor AP: one FIFO per station and AC of `ap_fifo_depth` frames, tail drop, no fq, \
         CoDel or AQL)",
        "ath10k firmware's HTT push mode (commit \"ath10k: implement push-pull tx\")",
    ),
    Param {
        unit: "frames",
        ..key(
            "ap_fifo_depth",
            int(1, 1_000_000),
            "1424",
            "frames each firmware FIFO holds (per AC); only with ap_queues = \"firmware\"",
            "ath10k `TARGET_10X_NUM_MSDU_DESC`, drivers/net/wireless/ath/ath10k/hw.h",
        )
    },
    key(
        "dscp_to_ac",
        Kind::Choice(DSCP_TO_AC),
        "both",
        "the sides that put a frame in the AC of its DSCP (both, ap, stations, none); the \
         other side sends every frame as AC_BE",
        "Linux `cfg80211_classify8021d`, net/wireless/util.c; RFC 8325 §4",
    ),
    key(
        "ap_edca",
        Kind::Choice(AP_EDCA),
        "ap",
        "the AP's own EDCA parameters: ap (dot11QAPEDCATable, hostapd's tx_queue_data* \
         defaults) or station (dot11EDCATable, what the AP advertises to its stations)",
        "IEEE 802.11-2020 Table 9-155; hostapd.conf",
    ),
];

const fn wifi_key(i: usize) -> Param {
    WIFI_KEYS[i]
}

/// The `access` keys `wifi_hybrid` keeps (by position in [`super::access::ACCESS_KEYS`]: the
/// line rates are replaced by `isp_rate`).
const fn access_key(i: usize) -> Param {
    super::access::ACCESS_KEYS[i]
}

const HYBRID_KEYS: &[Param] = &[
    key(
        "isp_rate",
        RATE,
        "none (Ethernet, 1Gbit)",
        "the line behind the AP: an ISP line of this rate both ways instead of the AP's \
         Ethernet port",
        "the BBR-TAS study's 25 Mbit/s uplink",
    ),
    key(
        "delay",
        DURATION,
        "0.5ms",
        "one-way delay of the line behind the AP",
        "a LAN hop",
    ),
    access_key(4),
    access_key(5),
    access_key(6),
    access_key(7),
    access_key(8),
    access_key(9),
    access_key(10),
    access_key(11),
    Param {
        default: "[\"0ms\", \"10ms\", \"30ms\", \"70ms\"]",
        ..access_key(12)
    },
    access_key(13),
    NIC_RATE,
    DRIVER_QUEUE,
    wifi_key(0),
    wifi_key(1),
    wifi_key(2),
    wifi_key(3),
    wifi_key(4),
    wifi_key(5),
    wifi_key(6),
    wifi_key(7),
    wifi_key(8),
    wifi_key(9),
    wifi_key(10),
    wifi_key(11),
    wifi_key(12),
    wifi_key(13),
    wifi_key(14),
    wifi_key(15),
    wifi_key(16),
    wifi_key(17),
    wifi_key(18),
    wifi_key(19),
    wifi_key(20),
    wifi_key(21),
];

/// The `wifi_hybrid` preset.
pub(super) const WIFI_HYBRID: Preset = Preset {
    decl: Entry {
        name: "wifi_hybrid",
        doc: "`access` with the client on Wi-Fi (its AP is `cpe`), the AP on 1 Gbit/s Ethernet \
              or an `isp_rate` line; runs a Flent [test]",
        source: "the BBR-TAS study's Wi-Fi 6 testbed",
        params: HYBRID_KEYS,
    },
    parse: parse_hybrid,
};

const NET_KEYS: &[Param] = &[
    key("stations", int(1, 64), "1", "stations in the BSS", "—"),
    key(
        "direction",
        Kind::Choice(DIRECTIONS),
        "up",
        "flow i on station i mod stations: up (station → server), down, or both (up when \
         ⌊i/stations⌋ is even)",
        "—",
    ),
    wifi_key(0),
    wifi_key(1),
    wifi_key(2),
    wifi_key(3),
    wifi_key(4),
    wifi_key(5),
    wifi_key(6),
    wifi_key(7),
    wifi_key(8),
    wifi_key(9),
    wifi_key(10),
    wifi_key(11),
    wifi_key(12),
    wifi_key(13),
    wifi_key(14),
    wifi_key(15),
    wifi_key(16),
    wifi_key(17),
    wifi_key(18),
    wifi_key(19),
    wifi_key(20),
    wifi_key(21),
    key(
        "rate",
        RATE,
        "1Gbit",
        "the wired link between the AP and the server",
        "1000BASE-T",
    ),
    key(
        "delay",
        DURATION,
        "5ms",
        "one-way delay of the wired link",
        "—",
    ),
    key(
        "buffer",
        BUFFER,
        "1bdp",
        "buffer of the wired link toward the server (BDP at 2·delay)",
        "the BDP rule of thumb",
    ),
    NIC_RATE,
    DRIVER_QUEUE,
];

/// The `wifi` preset.
pub(super) const WIFI: Preset = Preset {
    decl: Entry {
        name: "wifi",
        doc: "N stations and an AP in one BSS, the AP wired to a server; takes [[flows]]",
        source: "—",
        params: NET_KEYS,
    },
    parse: parse_net,
};

/// The client's Wi-Fi in `wifi_hybrid`: its BSS and its driver's pacing shift.
#[derive(Clone, Debug, PartialEq)]
pub struct WifiClient {
    /// The BSS (one station: the client).
    pub mac: MacConfig,
    /// The client's `sk_pacing_shift`.
    pub pacing_shift: u8,
}

impl WifiClient {
    /// One line for `cclab check`.
    #[must_use]
    pub fn describe(&self) -> String {
        format!(
            "; client on Wi-Fi: {}, pacing shift {}",
            describe_mac(&self.mac),
            self.pacing_shift
        )
    }
}

fn describe_queues(q: Queues) -> String {
    match q {
        Queues::Mac80211 => "mac80211".to_owned(),
        Queues::Fifo => "fifo".to_owned(),
        Queues::Firmware { depth } => format!("firmware FIFOs of {} frames", depth[1]),
    }
}

fn describe_mac(mac: &MacConfig) -> String {
    let mut s = String::new();
    for (i, st) in mac.stations.iter().enumerate() {
        let p = st.uplink_phy;
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&format!(
            "{} {} {} MHz MCS {} ×{} GI {} ns ({:.0} Mbit/s), PER {}, BA {}, A-MPDU ≤ {} B",
            p.standard(),
            p.band(),
            p.width_mhz(),
            p.mcs(),
            p.nss(),
            p.gi_ns(),
            p.data_rate_bps() / 1e6,
            st.uplink_per,
            st.ba_window,
            st.max_ampdu_len
        ));
        if let Some(snr) = st.uplink_snr_db {
            s.push_str(&format!(", SNR {snr} dB"));
        }
    }
    s.push_str(&format!(
        "; A-MSDU {}, A-MPDU {}, retry limit {}, RTS/CTS {}, queues {}, rate control {}",
        mac.amsdu_max
            .map_or("off".to_owned(), |b| format!("≤ {b} B")),
        match (mac.ampdu, mac.ampdu_vo) {
            (false, _) => "off",
            (true, false) => "on (not AC_VO)",
            (true, true) => "on",
        },
        mac.retry_limit,
        mac.rts_threshold
            .map_or("off".to_owned(), |b| format!("above {b} B")),
        describe_queues(mac.queues),
        match mac.rate_control {
            RateControl::Fixed => "fixed",
            RateControl::Minstrel(_) => "minstrel",
        }
    ));
    // The consumer-AP options, named only when set.
    if let Some(q) = mac.ap_queues {
        s.push_str(&format!(", AP queues {}", describe_queues(q)));
    }
    match (mac.ap_dscp_to_ac, mac.sta_dscp_to_ac) {
        (true, true) => {}
        (true, false) => s.push_str(", DSCP → AC at the AP only"),
        (false, true) => s.push_str(", DSCP → AC at the stations only"),
        (false, false) => s.push_str(", DSCP ignored (all AC_BE)"),
    }
    if mac.ap_edca == AccessCategory::ALL.map(AccessCategory::station_params) {
        s.push_str(", AP EDCA: the stations' table");
    }
    s
}

/// The Wi-Fi keys of a raw table.
struct WifiKeys<'a> {
    band: Option<&'a Spanned<String>>,
    width: Option<&'a Spanned<i64>>,
    nss: Option<&'a Spanned<i64>>,
    gi: Option<&'a Spanned<i64>>,
    per: Option<&'a Spanned<crate::units::Probability>>,
    ba_window: Option<&'a Spanned<i64>>,
    max_ampdu: Option<&'a Spanned<crate::units::ByteSize>>,
    pacing_shift: Option<&'a Spanned<i64>>,
    amsdu: Option<&'a Spanned<RawAmsdu>>,
    ampdu: Option<&'a Spanned<bool>>,
    ampdu_vo: Option<&'a Spanned<bool>>,
    retry_limit: Option<&'a Spanned<i64>>,
    rts_threshold: Option<&'a Spanned<i64>>,
    queues: Option<&'a Spanned<String>>,
    rate_control: Option<&'a Spanned<String>>,
    ap_queues: Option<&'a Spanned<String>>,
    ap_fifo_depth: Option<&'a Spanned<i64>>,
    dscp_to_ac: Option<&'a Spanned<String>>,
    ap_edca: Option<&'a Spanned<String>>,
}

/// The standard named by `standard` (default HE).
fn standard(src: &Source<'_>, v: Option<&Spanned<String>>) -> Result<Standard, ScenarioError> {
    let Some(v) = v else { return Ok(Standard::He) };
    match v.get_ref().as_str() {
        "ht" => Ok(Standard::Ht),
        "vht" => Ok(Standard::Vht),
        "he" => Ok(Standard::He),
        other => Err(src.error(
            Some(v.span()),
            "topology.standard",
            unknown_choice("standard", other, STANDARDS),
        )),
    }
}

/// The BSS of `mcs.len()` stations (`mcs[i]` with the span that gave it, `snr[i]` the SNR of
/// both its links) and the stations' pacing shift.
fn resolve_bss(
    src: &Source<'_>,
    k: &WifiKeys<'_>,
    std: Standard,
    mcs: &[(i64, Option<std::ops::Range<usize>>)],
    snr: &[Option<f64>],
) -> Result<(MacConfig, u8), ScenarioError> {
    let band = match k.band {
        None => Band::Ghz5,
        Some(v) => match v.get_ref().as_str() {
            "2.4GHz" => Band::Ghz2_4,
            "5GHz" => Band::Ghz5,
            "6GHz" => Band::Ghz6,
            other => {
                return Err(src.error(
                    Some(v.span()),
                    "topology.band",
                    unknown_choice("band", other, BANDS),
                ));
            }
        },
    };
    let small = |v: Option<&Spanned<i64>>, name: &str, range, unit, default| {
        src.ranged_u32(v, format!("topology.{name}"), range, unit, default)
    };
    let width = small(k.width, "width", 20..=160, "MHz", 80)?;
    let nss = small(k.nss, "nss", 1..=4, "streams", 2)?;
    let gi = small(k.gi, "gi", 400..=3200, "ns", 800)?;
    let widest = AmpduLimits::widest(std);
    let ba_unit = format!("MPDUs ({std})");
    let ba_window = src.ranged_u32(
        k.ba_window,
        "topology.ba_window".to_owned(),
        1..=u32::from(widest.ba_window),
        &ba_unit,
        u32::from(widest.ba_window),
    )?;
    let max_ampdu = match k.max_ampdu {
        None => widest.max_len,
        Some(v) => {
            let b = v.get_ref().0;
            if b == 0 || b > widest.max_len {
                return Err(src.error(
                    Some(v.span()),
                    "topology.max_ampdu",
                    format!("must be in 1..={} bytes for {std}, got {b}", widest.max_len),
                ));
            }
            b
        }
    };
    let per = k.per.map_or(0.0, |p| p.get_ref().0);
    // Every MPDU lost would never deliver: the simulator takes a PER in [0, 1)
    // (`StationConfig::uplink_per`), as the key's declaration says.
    if let Some(p) = k.per
        && per >= 1.0
    {
        return Err(src.error(
            Some(p.span()),
            "topology.per",
            format!(
                "must be in [0, 1): the MPDU error rate, got {}",
                crate::units::fmt_number(per)
            ),
        ));
    }
    let pacing_shift = small(k.pacing_shift, "pacing_shift", 6..=12, "", 7)?;
    let mut stations = Vec::with_capacity(mcs.len());
    for (i, (m, mcs_span)) in mcs.iter().enumerate() {
        let to_u16 = |x: u32| u16::try_from(x).unwrap_or(u16::MAX);
        // An MCS outside u8 (`mcs = -1`) is out of range whatever the standard: the PHY says
        // so with the largest MCS, and the message gives the number as written.
        let phy = Phy::new(
            std,
            band,
            u8::try_from(*m).unwrap_or(u8::MAX),
            u8::try_from(nss).unwrap_or(u8::MAX),
            to_u16(width),
            to_u16(gi),
        )
        .map_err(|e| {
            let (name, span) = match &e {
                PhyError::Width { .. } => ("width", k.width.map(Spanned::span)),
                PhyError::Mcs { .. } | PhyError::VhtCombination { .. } => ("mcs", mcs_span.clone()),
                PhyError::Nss { .. } => ("nss", k.nss.map(Spanned::span)),
                PhyError::GuardInterval { .. } => ("gi", k.gi.map(Spanned::span)),
                PhyError::Band { .. } => ("band", k.band.map(Spanned::span)),
            };
            let who = if mcs.len() > 1 {
                format!(" (station {i})")
            } else {
                String::new()
            };
            let message = match &e {
                PhyError::Mcs { max, .. } => format!(
                    "{std} MCS {m} is out of range: per-stream MCS is 0..={max} (give the \
                     stream count separately)"
                ),
                _ => e.to_string(),
            };
            src.error(span, format!("topology.{name}"), format!("{message}{who}"))
        })?;
        stations.push(StationConfig {
            uplink_per: per,
            downlink_per: per,
            uplink_snr_db: snr.get(i).copied().flatten(),
            downlink_snr_db: snr.get(i).copied().flatten(),
            ba_window: u16::try_from(ba_window).unwrap_or(u16::MAX),
            max_ampdu_len: max_ampdu,
            ..StationConfig::new(phy)
        });
    }
    let mut mac = MacConfig::new(stations);
    mac.band = band;
    mac.amsdu_max = amsdu(src, k.amsdu, std)?;
    mac.ampdu = k.ampdu.is_none_or(|v| *v.get_ref());
    mac.ampdu_vo = k.ampdu_vo.is_some_and(|v| *v.get_ref());
    if let Some(v) = k.retry_limit {
        mac.retry_limit = src.ranged_u32(
            Some(v),
            "topology.retry_limit".to_owned(),
            1..=1000,
            "transmissions",
            0,
        )?;
    }
    mac.rts_threshold = match k.rts_threshold {
        None => None,
        Some(v) => Some(src.ranged_u32(
            Some(v),
            "topology.rts_threshold".to_owned(),
            0..=6_500_631,
            "bytes",
            0,
        )?),
    };
    mac.queues = match k.queues {
        None => Queues::Mac80211,
        Some(v) => match v.get_ref().as_str() {
            "mac80211" => Queues::Mac80211,
            "fifo" => Queues::Fifo,
            other => {
                return Err(src.error(
                    Some(v.span()),
                    "topology.queues",
                    unknown_choice("queues", other, QUEUES),
                ));
            }
        },
    };
    consumer_ap(src, k, &mut mac)?;
    mac.rate_control = match k.rate_control {
        None => RateControl::Fixed,
        Some(v) => match v.get_ref().as_str() {
            "fixed" => RateControl::Fixed,
            "minstrel" => RateControl::Minstrel(MinstrelConfig::default()),
            other => {
                return Err(src.error(
                    Some(v.span()),
                    "topology.rate_control",
                    unknown_choice("rate_control", other, RATE_CONTROLS),
                ));
            }
        },
    };
    Ok((
        mac,
        u8::try_from(pacing_shift).unwrap_or(MAC80211_PACING_SHIFT),
    ))
}

/// A choice key's value: its index in `values`, `None` when absent, else the located error.
fn choice(
    src: &Source<'_>,
    v: Option<&Spanned<String>>,
    name: &str,
    values: &[&str],
) -> Result<Option<usize>, ScenarioError> {
    let Some(v) = v else { return Ok(None) };
    match values.iter().position(|x| x == v.get_ref()) {
        Some(i) => Ok(Some(i)),
        None => Err(src.error(
            Some(v.span()),
            format!("topology.{name}"),
            unknown_choice(name, v.get_ref(), values),
        )),
    }
}

/// The consumer-AP keys: `ap_queues` with `ap_fifo_depth`, `dscp_to_ac`, `ap_edca`.
fn consumer_ap(
    src: &Source<'_>,
    k: &WifiKeys<'_>,
    mac: &mut MacConfig,
) -> Result<(), ScenarioError> {
    let firmware = AP_QUEUES.len() - 1;
    let ap_queues = choice(src, k.ap_queues, "ap_queues", AP_QUEUES)?;
    if let Some(v) = k.ap_fifo_depth
        && ap_queues != Some(firmware)
    {
        return Err(src.error(
            Some(v.span()),
            "topology.ap_fifo_depth",
            "applies only to the AP's firmware FIFOs: add ap_queues = \"firmware\"".to_owned(),
        ));
    }
    let depth = src.ranged_u32(
        k.ap_fifo_depth,
        "topology.ap_fifo_depth".to_owned(),
        1..=1_000_000,
        "frames",
        FIRMWARE_DEPTH,
    )?;
    mac.ap_queues = match ap_queues {
        None => None,
        Some(0) => Some(Queues::Mac80211),
        Some(1) => Some(Queues::Fifo),
        Some(_) => Some(Queues::Firmware { depth: [depth; 4] }),
    };
    if let Some(i) = choice(src, k.dscp_to_ac, "dscp_to_ac", DSCP_TO_AC)? {
        // both, ap, stations, none
        mac.ap_dscp_to_ac = i <= 1;
        mac.sta_dscp_to_ac = i == 0 || i == 2;
    }
    if choice(src, k.ap_edca, "ap_edca", AP_EDCA)? == Some(1) {
        mac.ap_edca = AccessCategory::ALL.map(AccessCategory::station_params);
    }
    Ok(())
}

/// The largest `amsdu` of `std`: HT's long A-MSDU, VHT's and HE's maximum MPDU length.
fn largest_amsdu(std: Standard) -> u32 {
    match std {
        Standard::Ht => MAX_AMSDU_HT_7935,
        Standard::Vht | Standard::He => MAX_MPDU_VHT_11454,
    }
}

/// `amsdu`: absent or `"off"` is none, else a length in 1..=[`largest_amsdu`].
fn amsdu(
    src: &Source<'_>,
    v: Option<&Spanned<RawAmsdu>>,
    std: Standard,
) -> Result<Option<u32>, ScenarioError> {
    let Some(v) = v else { return Ok(None) };
    let max = largest_amsdu(std);
    let bad = |what: String| {
        src.error(
            Some(v.span()),
            "topology.amsdu",
            format!(
                "{what}: expected \"off\" or a length in 1..={max} bytes for {std} (HT 3839 or \
                 7935, VHT/HE up to 11454)"
            ),
        )
    };
    let bytes = match v.get_ref() {
        RawAmsdu::Text(t) if t == "off" => return Ok(None),
        RawAmsdu::Text(t) => parse_size(t).map_err(|e| bad(format!("`{t}`: {e}")))?,
        RawAmsdu::Bytes(b) => u64::try_from(*b).map_err(|_| bad(format!("got {b}")))?,
    };
    match u32::try_from(bytes) {
        Ok(b) if (1..=max).contains(&b) => Ok(Some(b)),
        _ => Err(bad(format!("got {bytes}"))),
    }
}

/// The SNR of each of `n` stations from `snr` (one for all, or one per station).
fn station_snrs(
    src: &Source<'_>,
    v: Option<&Spanned<RawSnr>>,
    n: usize,
) -> Result<Vec<Option<f64>>, ScenarioError> {
    let Some(v) = v else { return Ok(vec![None; n]) };
    let list = match v.get_ref() {
        RawSnr::One(x) => vec![*x; n],
        RawSnr::PerStation(list) if list.len() == n => list.clone(),
        RawSnr::PerStation(list) => {
            return Err(src.error(
                Some(v.span()),
                "topology.snr",
                format!(
                    "{} values for {n} station(s): give one SNR for all, or one per station",
                    list.len()
                ),
            ));
        }
    };
    list.into_iter()
        .map(|x| finite_snr(src, v.span(), x))
        .collect()
}

/// An SNR in dB, which must be finite.
fn finite_snr(
    src: &Source<'_>,
    span: std::ops::Range<usize>,
    x: f64,
) -> Result<Option<f64>, ScenarioError> {
    if x.is_finite() {
        Ok(Some(x))
    } else {
        Err(src.error(
            Some(span),
            "topology.snr",
            format!("must be a finite number of dB, got {x}"),
        ))
    }
}

fn default_mcs(std: Standard) -> u8 {
    if std == Standard::Ht { 7 } else { DEFAULT_MCS }
}

/// A whole `wifi_hybrid` scenario: the `access` test with the client's BSS.
fn parse_hybrid(
    src: &Source<'_>,
    text: &str,
    overrides: &Overrides,
) -> Result<Scenario, ScenarioError> {
    let raw: RawScenario<RawWifiHybrid> = toml::from_str(text).map_err(|e| src.toml_error(&e))?;
    let span = raw.topology.span();
    let RawScenario {
        name,
        description,
        seed,
        duration,
        sample_interval,
        topology,
        flows,
        probes,
        host,
        test,
        tcp,
        _elements,
        _links,
        _udp,
        _commands,
        _timing,
    } = raw;
    let t = topology.into_inner();
    let std = standard(src, t.standard.as_ref())?;
    let mcs = match &t.mcs {
        None => i64::from(default_mcs(std)),
        Some(v) => *v.get_ref(),
    };
    let keys = WifiKeys {
        band: t.band.as_ref(),
        width: t.width.as_ref(),
        nss: t.nss.as_ref(),
        gi: t.gi.as_ref(),
        per: t.per.as_ref(),
        ba_window: t.ba_window.as_ref(),
        max_ampdu: t.max_ampdu.as_ref(),
        pacing_shift: t.pacing_shift.as_ref(),
        amsdu: t.amsdu.as_ref(),
        ampdu: t.ampdu.as_ref(),
        ampdu_vo: t.ampdu_vo.as_ref(),
        retry_limit: t.retry_limit.as_ref(),
        rts_threshold: t.rts_threshold.as_ref(),
        queues: t.queues.as_ref(),
        rate_control: t.rate_control.as_ref(),
        ap_queues: t.ap_queues.as_ref(),
        ap_fifo_depth: t.ap_fifo_depth.as_ref(),
        dscp_to_ac: t.dscp_to_ac.as_ref(),
        ap_edca: t.ap_edca.as_ref(),
    };
    let snr = match &t.snr {
        None => None,
        Some(v) => finite_snr(src, v.span(), *v.get_ref())?,
    };
    let (mac, pacing_shift) = resolve_bss(
        src,
        &keys,
        std,
        &[(mcs, t.mcs.as_ref().map(Spanned::span))],
        &[snr],
    )?;
    let rate = t
        .isp_rate
        .unwrap_or_else(|| Spanned::new(span.clone(), Rate(ETHERNET_RATE)));
    let access = RawAccess {
        preset: t.preset,
        rate: Some(rate),
        up_rate: None,
        down_rate: None,
        delay: t
            .delay
            .unwrap_or_else(|| Spanned::new(span.clone(), TimeValue(DEFAULT_HYBRID_DELAY))),
        buffer: t.buffer,
        up_buffer: t.up_buffer,
        down_buffer: t.down_buffer,
        qdisc: t.qdisc,
        up_qdisc: t.up_qdisc,
        down_qdisc: t.down_qdisc,
        loss: t.loss,
        down_loss: t.down_loss,
        server_delays: t.server_delays,
        server_rate: t.server_rate,
        nic_rate: t.nic_rate,
        driver_queue: t.driver_queue,
    };
    let raw = RawScenario {
        name,
        description,
        seed,
        duration,
        sample_interval,
        topology: Spanned::new(span, access),
        flows,
        probes,
        host,
        test,
        tcp,
        _elements,
        _links,
        _udp,
        _commands,
        _timing,
    };
    super::parse_test(
        src,
        &raw,
        WIFI_HYBRID.decl.name,
        overrides,
        Some(WifiClient { mac, pacing_shift }),
    )
}

/// Which way the flows of the `wifi` preset go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Directions {
    /// Every flow uploads.
    Up,
    /// Every flow downloads.
    Down,
    /// Alternating rounds of one flow per station: up, down, up, …
    Both,
}

impl Directions {
    /// The direction of flow `i` among `stations` stations.
    #[must_use]
    pub fn of_flow(self, i: usize, stations: usize) -> Direction {
        match self {
            Directions::Up => Direction::Upload,
            Directions::Down => Direction::Download,
            Directions::Both if (i / stations.max(1)).is_multiple_of(2) => Direction::Upload,
            Directions::Both => Direction::Download,
        }
    }
}

/// A resolved `wifi` preset: the network without flows, and how flows are placed.
#[derive(Clone, Debug)]
pub struct WifiPreset {
    /// The BSS, the wired link and the hosts' defaults; no flows or probes.
    pub net: WifiNet,
    /// The stations' pacing shift.
    pub pacing_shift: u8,
    /// Which way flows go.
    pub direction: Directions,
    /// The wired buffer as written.
    pub buffer: BufferSpec,
}

impl WifiPreset {
    /// Stations in the BSS.
    #[must_use]
    pub fn stations(&self) -> usize {
        self.net.mac.stations.len()
    }

    /// The simulator's builder for `scenario`: flows and probes placed as the module states.
    #[must_use]
    pub fn builder(&self, scenario: &Scenario, seed: u64) -> WifiNet {
        let n = self.stations();
        let mut w = self.net.clone();
        w.seed = seed;
        w.duration = scenario.duration;
        w.sample_interval = scenario.sample_interval;
        let dirs: Vec<Direction> = (0..scenario.flows.len())
            .map(|i| self.direction.of_flow(i, n))
            .collect();
        for s in 0..n {
            let on = |d: Direction| {
                scenario
                    .flows
                    .iter()
                    .enumerate()
                    .find(|(i, _)| i % n == s && dirs[*i] == d)
                    .or_else(|| scenario.flows.first().map(|f| (0, f)))
                    .map(|(_, f)| f.host.clone())
            };
            let mut h = on(Direction::Upload).unwrap_or_default();
            h.pacing_shift = self.pacing_shift;
            w.station_hosts[s] = h;
        }
        if let Some(f) =
            dirs.iter()
                .position(|d| *d == Direction::Download)
                .or(if scenario.flows.is_empty() {
                    None
                } else {
                    Some(0)
                })
        {
            w.server_host = scenario.flows[f].host.clone();
        }
        for (i, f) in scenario.flows.iter().enumerate() {
            // `src`/`dst` are placeholders: `build` connects each flow to its station.
            let flow = f.flow_config(cclab_sim::wifi_net::AP, cclab_sim::wifi_net::AP);
            w.add_flow(flow, i % n, dirs[i]);
        }
        for (j, p) in scenario.probes.iter().enumerate() {
            let ap = cclab_sim::wifi_net::AP;
            w.add_probe(
                ProbeConfig {
                    size: p.size,
                    start: p.start,
                    stop: p.stop,
                    ..ProbeConfig::ping(&p.name, ap, ap, p.interval)
                },
                j % n,
            );
        }
        w
    }
}

impl Network for WifiPreset {
    fn preset(&self) -> &'static str {
        WIFI.decl.name
    }

    fn describe(&self) -> String {
        format!(
            "topology wifi: {} station(s), {}; flows {}; wired {} one-way {} buffer {}; \
             stations' pacing shift {}",
            self.stations(),
            describe_mac(&self.net.mac),
            DIRECTIONS[self.direction as usize],
            fmt_rate(self.net.wired_rate_bps),
            fmt_dur(self.net.wired_delay),
            self.buffer,
            self.pacing_shift
        )
    }

    fn endpoint_base_rtt(&self, _access_delay: Dur) -> Option<Dur> {
        Some(self.net.base_rtt())
    }

    fn sim_config(&self, scenario: &Scenario, seed: u64) -> SimConfig {
        self.builder(scenario, seed)
            .build()
            .expect("resolve checked the stations")
    }

    /// Uploads and downloads as Flent series, probes as ICMP pings, over the whole duration.
    fn run_plan(&self, scenario: &Scenario, seed: u64, _label: &str) -> RunPlan {
        let n = self.stations();
        super::presets::scenario_run_plan(scenario, self.sim_config(scenario, seed), |i| match self
            .direction
            .of_flow(i, n)
        {
            Direction::Upload => SeriesKind::TcpUpload,
            Direction::Download => SeriesKind::TcpDownload,
        })
    }

    fn clone_box(&self) -> Box<dyn Network> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// A whole `wifi` scenario: `[[flows]]` and `[[probes]]` placed on the stations.
fn parse_net(
    src: &Source<'_>,
    text: &str,
    overrides: &Overrides,
) -> Result<Scenario, ScenarioError> {
    let raw: RawScenario<RawWifi> = toml::from_str(text).map_err(|e| src.toml_error(&e))?;
    super::refuse_test_sections(
        src,
        &raw,
        "a Flent-equivalent [test] runs on preset `wifi_hybrid` (or `access`, `rtt_fair`)",
        "preset `wifi`",
    )?;
    let common = super::resolve_common(src, &raw, overrides)?;
    let t = raw.topology.get_ref();
    let tspan = raw.topology.span();
    let n = src.ranged_u32(
        t.stations.as_ref(),
        "topology.stations".into(),
        1..=64,
        "stations",
        1,
    )? as usize;
    let direction = match &t.direction {
        None => Directions::Up,
        Some(v) => match v.get_ref().as_str() {
            "up" => Directions::Up,
            "down" => Directions::Down,
            "both" => Directions::Both,
            other => {
                return Err(src.error(
                    Some(v.span()),
                    "topology.direction",
                    unknown_choice("direction", other, DIRECTIONS),
                ));
            }
        },
    };
    let std = standard(src, t.standard.as_ref())?;
    let mcs: Vec<(i64, Option<std::ops::Range<usize>>)> = match &t.mcs {
        None => vec![(i64::from(default_mcs(std)), None); n],
        Some(v) => match v.get_ref() {
            RawMcs::One(m) => vec![(*m, Some(v.span())); n],
            RawMcs::PerStation(list) => {
                if list.len() != n {
                    return Err(src.error(
                        Some(v.span()),
                        "topology.mcs",
                        format!(
                            "{} values for {n} station(s): give one MCS for all, or one per \
                                 station",
                            list.len()
                        ),
                    ));
                }
                list.iter().map(|&m| (m, Some(v.span()))).collect()
            }
        },
    };
    let keys = WifiKeys {
        band: t.band.as_ref(),
        width: t.width.as_ref(),
        nss: t.nss.as_ref(),
        gi: t.gi.as_ref(),
        per: t.per.as_ref(),
        ba_window: t.ba_window.as_ref(),
        max_ampdu: t.max_ampdu.as_ref(),
        pacing_shift: t.pacing_shift.as_ref(),
        amsdu: t.amsdu.as_ref(),
        ampdu: t.ampdu.as_ref(),
        ampdu_vo: t.ampdu_vo.as_ref(),
        retry_limit: t.retry_limit.as_ref(),
        rts_threshold: t.rts_threshold.as_ref(),
        queues: t.queues.as_ref(),
        rate_control: t.rate_control.as_ref(),
        ap_queues: t.ap_queues.as_ref(),
        ap_fifo_depth: t.ap_fifo_depth.as_ref(),
        dscp_to_ac: t.dscp_to_ac.as_ref(),
        ap_edca: t.ap_edca.as_ref(),
    };
    let snr = station_snrs(src, t.snr.as_ref(), n)?;
    let (mac, pacing_shift) = resolve_bss(src, &keys, std, &mcs, &snr)?;
    let rate = t.rate.as_ref().map_or(ETHERNET_RATE, |r| r.get_ref().0);
    if rate == 0 {
        return Err(src.error(
            t.rate.as_ref().map(Spanned::span),
            "topology.rate",
            "must be positive",
        ));
    }
    let delay = t
        .delay
        .as_ref()
        .map_or(DEFAULT_WIRED_DELAY, |d| d.get_ref().0);
    let buffer = t
        .buffer
        .as_ref()
        .map_or(BufferSpec::Bdp(1.0), |b| *b.get_ref());
    let largest = common
        .flows
        .iter()
        .map(|f| wire_bytes(f.flow.mss))
        .max()
        .unwrap_or(wire_bytes(cclab_sim::DEFAULT_MSS));
    let limit = buffer.resolve(rate, delay + delay);
    let buffer_span = t.buffer.as_ref().map_or(tspan.clone(), Spanned::span);
    if matches!(limit, QueueLimit::Packets(0))
        || matches!(limit, QueueLimit::Bytes(b) if b < largest)
    {
        return Err(src.error(
            Some(buffer_span),
            "topology.buffer",
            format!(
                "`{buffer}` resolves to less than one full-size packet ({largest} bytes) at {} \
                 and a base RTT of {}",
                fmt_rate(rate),
                fmt_dur(delay + delay)
            ),
        ));
    }
    if t.buffer.is_none()
        && let Some(e) = super::dumbbell::default_buffer_too_large(
            src,
            "buffer",
            limit,
            (rate, delay + delay),
            buffer_span.clone(),
        )
    {
        return Err(e);
    }
    if let Some(p) = super::buffer_too_large(limit) {
        return Err(src.error(
            Some(buffer_span),
            "topology.buffer",
            format!("`{buffer}` {p}"),
        ));
    }
    for (i, f) in common.flows.iter().enumerate() {
        if f.flow.access_delay != Dur::ZERO {
            return Err(src.error(
                None,
                format!("flows[{i}].access_delay"),
                "does not apply to preset `wifi`: every station is one BSS away from the AP \
                 (set `topology.delay` for the wired link)",
            ));
        }
    }
    for (j, p) in common.probes.iter().enumerate() {
        if p.access_delay != Dur::ZERO {
            return Err(src.error(
                None,
                format!("probes[{j}].access_delay"),
                "does not apply to preset `wifi` (set `topology.delay` for the wired link)",
            ));
        }
    }
    let mut net = WifiNet::new(mac, rate, delay, limit);
    net.nic_rate_bps = super::dumbbell::nic_rate(t.nic_rate.as_ref());
    net.driver_queue =
        QueueLimit::Packets(super::dumbbell::driver_queue(src, t.driver_queue.as_ref())?);
    net.station_hosts = vec![
        HostConfig {
            pacing_shift,
            ..HostConfig::default()
        };
        n
    ];
    Ok(common.finish(Topology::new(WifiPreset {
        net,
        pacing_shift,
        direction,
        buffer,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{AccessTest, parse};
    use cclab_sim::access::{CLIENT, CPE};
    use cclab_sim::wifi_net::{SERVER, station_node};

    const HYBRID: &str = "name = \"t\"\n[test]\nname = \"tcp_upload\"\nlength = \"2s\"\n\
                          delay = \"1s\"\n[tcp]\ncontroller = \"cubic\"\n[topology]\n\
                          preset = \"wifi_hybrid\"\n";
    const NET: &str = "name = \"t\"\nduration = \"2s\"\n[[flows]]\ncontroller = \"cubic\"\n\
                       count = 4\n[topology]\npreset = \"wifi\"\n";

    fn ok(text: &str) -> Scenario {
        parse(text, "t.toml", &Overrides::default()).unwrap_or_else(|e| panic!("{e}"))
    }

    fn err(text: &str) -> String {
        match parse(text, "t.toml", &Overrides::default()) {
            Ok(_) => panic!("expected an error for:\n{text}"),
            Err(e) => e.to_string(),
        }
    }

    fn hybrid(s: &Scenario) -> &AccessTest {
        s.topology.get::<AccessTest>().expect("an access test")
    }

    /// The defaults the declarations state: HE 5 GHz, 80 MHz, MCS 9, 2 streams, GI 800 ns, no
    /// errors, the widest HE aggregation (256 MPDUs, 6 500 631 B), pacing shift 7 on the client
    /// only; Ethernet at 1 Gbit/s, 0.5 ms behind the AP; the rtt_fair servers.
    #[test]
    fn hybrid_defaults() {
        let s = ok(HYBRID);
        let t = hybrid(&s);
        assert_eq!(t.preset, "wifi_hybrid");
        assert_eq!(
            (t.up_rate_bps, t.down_rate_bps),
            (ETHERNET_RATE, ETHERNET_RATE)
        );
        assert_eq!(t.delay, DEFAULT_HYBRID_DELAY);
        assert_eq!(t.server_delays.len(), 4);
        let w = t.wifi.as_ref().expect("the client is on Wi-Fi");
        assert_eq!(w.pacing_shift, MAC80211_PACING_SHIFT);
        assert_eq!(w.mac.stations.len(), 1);
        let st = &w.mac.stations[0];
        let p = st.uplink_phy;
        assert_eq!(
            (
                p.standard(),
                p.band(),
                p.width_mhz(),
                p.mcs(),
                p.nss(),
                p.gi_ns()
            ),
            (Standard::He, Band::Ghz5, 80, 9, 2, 800)
        );
        assert_eq!((st.uplink_per, st.downlink_per), (0.0, 0.0));
        assert_eq!((st.ba_window, st.max_ampdu_len), (256, 6_500_631));
        let cfg = s.to_sim_config();
        assert_eq!(cfg.wifi.len(), 1);
        assert_eq!(
            (cfg.wifi[0].ap, cfg.wifi[0].stations[0].node),
            (CPE, CLIENT)
        );
        assert_eq!(cfg.nodes[CLIENT.0 as usize].host.pacing_shift, 7);
        assert_eq!(
            cfg.nodes[3].host.pacing_shift,
            cclab_cc::DEFAULT_PACING_SHIFT,
            "the servers keep Linux's shift"
        );
    }

    /// Every key reaches the BSS or the line; `isp_rate` makes the line that rate both ways
    /// with a 1-BDP buffer at the shortest base RTT.
    #[test]
    fn hybrid_keys() {
        let s = ok(&format!(
            "{HYBRID}width = 40\nmcs = 11\nnss = 1\ngi = 1600\nper = 0.01\nba_window = 64\n\
             max_ampdu = \"65535B\"\npacing_shift = 8\nisp_rate = \"25Mbit\"\ndelay = \"5ms\"\n\
             band = \"6GHz\"\n"
        ));
        let t = hybrid(&s);
        let w = t.wifi.as_ref().expect("wifi");
        let st = &w.mac.stations[0];
        let p = st.uplink_phy;
        assert_eq!(
            (p.band(), p.width_mhz(), p.mcs(), p.nss(), p.gi_ns()),
            (Band::Ghz6, 40, 11, 1, 1600)
        );
        assert_eq!(w.mac.band, Band::Ghz6);
        assert_eq!((st.uplink_per, st.downlink_per), (0.01, 0.01));
        assert_eq!(
            (st.ba_window, st.max_ampdu_len, w.pacing_shift),
            (64, 65_535, 8)
        );
        assert_eq!((t.up_rate_bps, t.down_rate_bps), (25_000_000, 25_000_000));
        // 25 Mbit/s × 10 ms = 31 250 bytes.
        assert_eq!(t.up_buffer.1, QueueLimit::Bytes(31_250));
        let vht = ok(&format!("{HYBRID}standard = \"vht\"\n"));
        let p = hybrid(&vht).wifi.as_ref().expect("wifi").mac.stations[0].uplink_phy;
        assert_eq!((p.standard(), p.mcs()), (Standard::Vht, 9));
        let ht = ok(&format!("{HYBRID}standard = \"ht\"\nwidth = 40\n"));
        let st = &hybrid(&ht).wifi.as_ref().expect("wifi").mac.stations[0];
        assert_eq!((st.uplink_phy.mcs(), st.ba_window), (7, 64));
    }

    /// A bad value is reported at its key, line and column, with the valid values.
    #[test]
    fn bad_values_are_located() {
        // The topology table starts on line 8; the first added key is on line 10.
        let e = err(&format!("{HYBRID}mcs = 12\n"));
        assert!(e.starts_with("t.toml:10:7: topology.mcs:"), "{e}");
        assert!(e.contains("0..=11"), "{e}");
        let e = err(&format!("{HYBRID}width = 30\n"));
        assert!(e.starts_with("t.toml:10:9: topology.width:"), "{e}");
        assert!(e.contains("20, 40, 80, 160"), "{e}");
        let e = err(&format!("{HYBRID}standard = \"ax\"\n"));
        assert!(e.starts_with("t.toml:10:12: topology.standard:"), "{e}");
        assert!(e.contains("ht, vht, he"), "{e}");
        let e = err(&format!("{HYBRID}gi = 400\n"));
        assert!(
            e.contains("topology.gi") && e.contains("800, 1600, 3200"),
            "{e}"
        );
        let e = err(&format!("{HYBRID}ba_window = 300\n"));
        assert!(
            e.contains("topology.ba_window") && e.contains("1..=256"),
            "{e}"
        );
        let e = err(&format!("{HYBRID}rate = \"25Mbit\"\n"));
        assert!(
            e.contains("unknown field `rate`") && e.contains("isp_rate"),
            "{e}"
        );
        let e = err(&format!("{NET}stations = 2\nmcs = [9, 7, 5]\n"));
        assert!(e.starts_with("t.toml:9:7: topology.mcs:"), "{e}");
        assert!(e.contains("one per station"), "{e}");
        let e = err(&format!("{NET}direction = \"sideways\"\n"));
        assert!(
            e.contains("topology.direction") && e.contains("up, down, both"),
            "{e}"
        );
        let e = err(&format!("{NET}standard = \"vht\"\nband = \"2.4GHz\"\n"));
        assert!(e.contains("topology.band"), "{e}");
    }

    /// `wifi`: stations, per-station MCS, flow placement by index (station i mod N, `both`
    /// alternating rounds), the stations' pacing shift, the wired link's keys.
    #[test]
    fn net_places_flows_on_stations() {
        let s = ok(&format!(
            "{NET}stations = 2\nmcs = [11, 3]\ndirection = \"both\"\nrate = \"100Mbit\"\n\
             delay = \"2ms\"\nbuffer = \"100p\"\n"
        ));
        let w = s.topology.get::<WifiPreset>().expect("wifi preset");
        assert_eq!(w.stations(), 2);
        let cfg = s.to_sim_config();
        assert_eq!(cfg.wifi[0].mac.stations[0].uplink_phy.mcs(), 11);
        assert_eq!(cfg.wifi[0].mac.stations[1].uplink_phy.mcs(), 3);
        let ends: Vec<_> = cfg.flows.iter().map(|f| (f.src, f.dst)).collect();
        assert_eq!(
            ends,
            [
                (station_node(0), SERVER),
                (station_node(1), SERVER),
                (SERVER, station_node(0)),
                (SERVER, station_node(1)),
            ]
        );
        assert_eq!(cfg.links[0].rate_bps, Some(100_000_000));
        assert_eq!(cfg.links[0].delay, Dur::from_millis(2));
        assert_eq!(
            cfg.links[0].queue,
            cclab_sim::QueueConfig::DropTail {
                limit: QueueLimit::Packets(100)
            }
        );
        for i in 0..2 {
            assert_eq!(cfg.nodes[station_node(i).0 as usize].host.pacing_shift, 7);
        }
        assert_eq!(s.flow_base_rtt(0), Some(Dur::from_millis(4)));
        // Defaults: one station at MCS 9, uploads.
        let d = ok(NET).to_sim_config();
        assert_eq!(d.wifi[0].mac.stations.len(), 1);
        assert_eq!(d.wifi[0].mac.stations[0].uplink_phy.mcs(), 9);
        assert!(d.flows.iter().all(|f| f.src == station_node(0)));
    }

    fn net_mac(s: &Scenario) -> MacConfig {
        s.topology
            .get::<WifiPreset>()
            .expect("wifi preset")
            .net
            .mac
            .clone()
    }

    fn hybrid_mac(s: &Scenario) -> MacConfig {
        hybrid(s).wifi.as_ref().expect("wifi").mac.clone()
    }

    /// The MAC keys' declared defaults reach both presets: no A-MSDU, A-MPDU on except for
    /// AC_VO, the driver's retry limit, no RTS/CTS,
    /// mac80211's queues, fixed rate, no SNR errors (the MAC's own defaults, `MacConfig::new`).
    #[test]
    fn mac_key_defaults() {
        for mac in [net_mac(&ok(NET)), hybrid_mac(&ok(HYBRID))] {
            assert_eq!(mac.amsdu_max, None);
            assert!(mac.ampdu && !mac.ampdu_vo);
            assert_eq!(mac.retry_limit, cclab_sim::wifi::mac::DRIVER_RETRY_LIMIT);
            assert_eq!(mac.rts_threshold, None);
            assert_eq!(mac.queues, Queues::Mac80211);
            assert_eq!(mac.rate_control, RateControl::Fixed);
            for st in &mac.stations {
                assert_eq!((st.uplink_snr_db, st.downlink_snr_db), (None, None));
            }
        }
    }

    /// Every MAC key reaches the `MacConfig` of both presets; `amsdu` takes a number, a size or
    /// "off"; `snr` one value for all stations or one per station, both directions.
    #[test]
    fn mac_keys_reach_the_mac() {
        let keys = "amsdu = 7935\nampdu = false\nrts_threshold = 2346\nqueues = \"fifo\"\n\
                    rate_control = \"minstrel\"\nsnr = 25.5\nampdu_vo = true\nretry_limit = 4\n";
        let net = net_mac(&ok(&format!("{NET}stations = 2\n{keys}")));
        let hyb = hybrid_mac(&ok(&format!("{HYBRID}{keys}")));
        for mac in [&net, &hyb] {
            assert_eq!(mac.amsdu_max, Some(7935));
            assert!(!mac.ampdu);
            assert!(mac.ampdu_vo);
            assert_eq!(mac.retry_limit, 4);
            assert_eq!(mac.rts_threshold, Some(2346));
            assert_eq!(mac.queues, Queues::Fifo);
            assert_eq!(
                mac.rate_control,
                RateControl::Minstrel(MinstrelConfig::default())
            );
            for st in &mac.stations {
                assert_eq!(
                    (st.uplink_snr_db, st.downlink_snr_db),
                    (Some(25.5), Some(25.5))
                );
            }
        }
        assert_eq!(net.stations.len(), 2);
        let per = net_mac(&ok(&format!("{NET}stations = 2\nsnr = [30, 12.5]\n")));
        let snrs: Vec<_> = per.stations.iter().map(|s| s.uplink_snr_db).collect();
        assert_eq!(snrs, [Some(30.0), Some(12.5)]);
        let off = net_mac(&ok(&format!(
            "{NET}amsdu = \"off\"\nqueues = \"mac80211\"\n"
        )));
        assert_eq!((off.amsdu_max, off.queues), (None, Queues::Mac80211));
        let size = hybrid_mac(&ok(&format!("{HYBRID}amsdu = \"11454B\"\n")));
        assert_eq!(
            size.amsdu_max,
            Some(11_454),
            "HE: up to the VHT maximum MPDU"
        );
        let fixed = net_mac(&ok(&format!(
            "{NET}rate_control = \"fixed\"\nampdu = true\n"
        )));
        assert_eq!(
            (fixed.rate_control, fixed.ampdu),
            (RateControl::Fixed, true)
        );
        // The MAC accepts what the keys resolve to.
        let s = ok(&format!("{NET}standard = \"ht\"\nwidth = 40\n{keys}"));
        assert!(cclab_sim::Simulation::new(s.to_sim_config()).is_ok());
    }

    /// The consumer-AP keys reach the MAC of both presets: absent, the AP queues as its
    /// stations, both sides map DSCP and the AP contends with dot11QAPEDCATable; `ap_queues =
    /// "firmware"` gives FIFOs of `ap_fifo_depth` frames per AC (1424 by default) beside the
    /// stations' mac80211 queues; `dscp_to_ac` picks the sides; `ap_edca = "station"` gives
    /// the AP dot11EDCATable (IEEE 802.11-2020 Table 9-155).
    #[test]
    fn consumer_ap_keys_reach_the_mac() {
        for mac in [net_mac(&ok(NET)), hybrid_mac(&ok(HYBRID))] {
            assert_eq!(mac.ap_queues, None);
            assert!(mac.ap_dscp_to_ac && mac.sta_dscp_to_ac);
            assert_eq!(
                mac.ap_edca,
                AccessCategory::ALL.map(AccessCategory::ap_params)
            );
        }
        let keys = "ap_queues = \"firmware\"\ndscp_to_ac = \"stations\"\nap_edca = \"station\"\n";
        let net = net_mac(&ok(&format!("{NET}{keys}")));
        let hyb = hybrid_mac(&ok(&format!("{HYBRID}{keys}")));
        for mac in [&net, &hyb] {
            assert_eq!(mac.queues, Queues::Mac80211);
            assert_eq!(mac.ap_queues, Some(Queues::FIRMWARE));
            assert!(!mac.ap_dscp_to_ac && mac.sta_dscp_to_ac);
            assert_eq!(
                mac.ap_edca,
                AccessCategory::ALL.map(AccessCategory::station_params)
            );
        }
        let deep = hybrid_mac(&ok(&format!(
            "{HYBRID}ap_queues = \"firmware\"\nap_fifo_depth = 4000\n"
        )));
        assert_eq!(deep.ap_queues, Some(Queues::Firmware { depth: [4000; 4] }));
        for (v, ap, sta) in [
            ("both", true, true),
            ("ap", true, false),
            ("stations", false, true),
            ("none", false, false),
        ] {
            let m = hybrid_mac(&ok(&format!("{HYBRID}dscp_to_ac = \"{v}\"\n")));
            assert_eq!((m.ap_dscp_to_ac, m.sta_dscp_to_ac), (ap, sta), "{v}");
        }
        let fifo = net_mac(&ok(&format!("{NET}ap_queues = \"fifo\"\n")));
        assert_eq!(fifo.ap_queues, Some(Queues::Fifo));
        // The MAC accepts what the keys resolve to.
        let s = ok(&format!("{NET}{keys}"));
        assert!(cclab_sim::Simulation::new(s.to_sim_config()).is_ok());
    }

    /// A bad consumer-AP key names file, line, column and key, and the valid values or bound.
    #[test]
    fn bad_consumer_ap_keys_are_located() {
        let e = err(&format!("{HYBRID}ap_queues = \"vendor\"\n"));
        assert!(e.starts_with("t.toml:10:13: topology.ap_queues:"), "{e}");
        assert!(e.contains("mac80211, fifo, firmware"), "{e}");
        let e = err(&format!("{HYBRID}ap_fifo_depth = 100\n"));
        assert!(
            e.starts_with("t.toml:10:17: topology.ap_fifo_depth:"),
            "{e}"
        );
        assert!(e.contains("ap_queues = \"firmware\""), "{e}");
        let e = err(&format!(
            "{NET}ap_queues = \"firmware\"\nap_fifo_depth = 0\n"
        ));
        assert!(e.starts_with("t.toml:9:17: topology.ap_fifo_depth:"), "{e}");
        assert!(e.contains("1..=1000000"), "{e}");
        let e = err(&format!("{NET}dscp_to_ac = \"client\"\n"));
        assert!(e.starts_with("t.toml:8:14: topology.dscp_to_ac:"), "{e}");
        assert!(e.contains("both, ap, stations, none"), "{e}");
        let e = err(&format!("{HYBRID}ap_edca = \"hostapd\"\n"));
        assert!(e.starts_with("t.toml:10:11: topology.ap_edca:"), "{e}");
        assert!(e.contains("ap, station"), "{e}");
    }

    /// A bad value of each MAC key names its file, line, column and key, and the valid values.
    #[test]
    fn bad_mac_keys_are_located() {
        // HYBRID's added keys start on line 10, NET's on line 8.
        let e = err(&format!(
            "{HYBRID}standard = \"ht\"\nwidth = 40\namsdu = 11454\n"
        ));
        assert!(e.starts_with("t.toml:12:9: topology.amsdu:"), "{e}");
        assert!(e.contains("1..=7935 bytes for HT"), "{e}");
        let e = err(&format!("{NET}amsdu = \"on\"\n"));
        assert!(e.starts_with("t.toml:8:9: topology.amsdu:"), "{e}");
        assert!(e.contains("\"off\"") && e.contains("1..=11454"), "{e}");
        let e = err(&format!("{NET}amsdu = 0\n"));
        assert!(e.contains("topology.amsdu") && e.contains("got 0"), "{e}");
        let e = err(&format!("{NET}ampdu = \"yes\"\n"));
        assert!(e.contains("t.toml:8") && e.contains("bool"), "{e}");
        let e = err(&format!("{NET}rts_threshold = -1\n"));
        assert!(e.starts_with("t.toml:8:17: topology.rts_threshold:"), "{e}");
        assert!(e.contains("0..=6500631"), "{e}");
        let e = err(&format!("{HYBRID}queues = \"fq\"\n"));
        assert!(e.starts_with("t.toml:10:10: topology.queues:"), "{e}");
        assert!(e.contains("mac80211, fifo"), "{e}");
        let e = err(&format!("{NET}rate_control = \"minstrel_ht\"\n"));
        assert!(e.starts_with("t.toml:8:16: topology.rate_control:"), "{e}");
        assert!(e.contains("fixed, minstrel"), "{e}");
        let e = err(&format!("{NET}stations = 2\nsnr = [20, 20, 20]\n"));
        assert!(e.starts_with("t.toml:9:7: topology.snr:"), "{e}");
        assert!(e.contains("one per station"), "{e}");
        let e = err(&format!("{NET}snr = nan\n"));
        assert!(e.starts_with("t.toml:8:7: topology.snr:"), "{e}");
        assert!(e.contains("finite"), "{e}");
        let e = err(&format!("{HYBRID}snr = [20]\n"));
        assert!(e.contains("t.toml:10") && e.contains("snr"), "{e}");
    }
}
