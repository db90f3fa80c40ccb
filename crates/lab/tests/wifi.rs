//! Wi-Fi scenarios end to end: the `wifi` and `wifi_hybrid` presets run, and their `wifi.csv`,
//! `wifi_ampdu.csv` and `summary.json` tell one consistent story.

use std::path::PathBuf;

use cclab_lab::{Overrides, output, parse};
use cclab_sim::{Dur, Results, Simulation};

fn run(text: &str, duration: Option<Dur>) -> Results {
    let o = Overrides {
        duration,
        ..Overrides::default()
    };
    let sc = parse(text, "t.toml", &o).unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(sc.to_sim_config()).expect("valid").run()
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cclab-wifi-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// `wifi.csv` as rows of cells (header first).
fn csv(path: &std::path::Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .expect("written")
        .lines()
        .map(|l| l.split(',').map(str::to_owned).collect())
        .collect()
}

/// Four stations of `wifi_upload.toml` for 2 s: the files agree with each other and with the
/// MAC's bookkeeping. Every A-MPDU counts once in the histogram, so each node's histogram sums
/// to its accesses and its mean size is Σ k·count / accesses = MPDUs sent / accesses; an MPDU is
/// acknowledged at most once per transmission and retried only after one, so acked ≤ MPDUs
/// sent and retries ≤ MPDUs sent; the channel is busy at most the whole run, and each node's
/// airtime lies within the busy time (colliders overlap, so the shares may sum past the busy
/// share, never any one past it).
#[test]
fn wifi_csv_agrees_with_summary_and_histogram() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/wifi_upload.toml"
    ))
    .expect("shipped scenario");
    let r = run(&text, Some(Dur::from_secs(2)));
    let dir = out_dir("up");
    let written = output::write_outputs(&dir, "wifi_upload", &r).expect("writes");
    assert!(written.iter().any(|p| p.ends_with("wifi.csv")));
    let rows = csv(&dir.join("wifi.csv"));
    assert_eq!(rows[0].join(","), output::WIFI_HEADER);
    let col = |name: &str| {
        rows[0]
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).expect("summary"))
            .expect("json");
    let nodes = summary["wifi"][0]["nodes"].as_array().expect("wifi nodes");
    assert_eq!(nodes.len(), 5, "the AP and four stations");
    assert_eq!(rows.len(), 1 + nodes.len());
    let hist = csv(&dir.join("wifi_ampdu.csv"));
    assert_eq!(hist[0].join(","), output::WIFI_AMPDU_HEADER);
    let busy = summary["wifi"][0]["busy_share"].as_f64().expect("busy");
    assert!(busy > 0.0 && busy <= 1.0, "busy share {busy}");
    for (row, n) in rows[1..].iter().zip(nodes) {
        let u = |k: &str| row[col(k)].parse::<u64>().expect(k);
        let f = |k: &str| row[col(k)].parse::<f64>().expect(k);
        assert_eq!(row[col("node")], n["node"].as_str().expect("name"));
        for k in [
            "accesses",
            "collisions",
            "mpdus_sent",
            "retries",
            "acked",
            "dropped",
        ] {
            assert_eq!(u(k), n[k].as_u64().expect(k), "{k}");
        }
        for k in ["mean_ampdu", "airtime_share", "mean_access_wait_us"] {
            // serde_json parses without round-trip precision: equal to the last ulps.
            let want = n[k].as_f64().expect(k);
            assert!((f(k) - want).abs() <= 1e-12 * want.abs(), "{k}");
        }
        let (acc, sent) = (u("accesses"), u("mpdus_sent"));
        assert!(acc > 0, "{row:?}");
        assert!(u("acked") <= sent && u("retries") <= sent, "{row:?}");
        assert!(u("collisions") <= acc, "{row:?}");
        let share = f("airtime_share");
        assert!(share > 0.0 && share <= busy + 1e-12, "{row:?}");
        let mine: Vec<(u64, u64)> = hist[1..]
            .iter()
            .filter(|h| h[1] == row[col("node")])
            .map(|h| (h[2].parse().expect("size"), h[3].parse().expect("count")))
            .collect();
        let count: u64 = mine.iter().map(|(_, c)| c).sum();
        let mpdus: u64 = mine.iter().map(|(k, c)| k * c).sum();
        assert_eq!(count, acc, "histogram of {}", row[1]);
        assert_eq!(mpdus, sent, "MPDUs of {}", row[1]);
        #[expect(clippy::cast_precision_loss, reason = "counts far below 2^53")]
        let mean = sent as f64 / acc as f64;
        assert!((f("mean_ampdu") - mean).abs() < 1e-9 * mean, "{row:?}");
        let bounds: u64 = [
            "bound_backlog",
            "bound_ba_window",
            "bound_length",
            "bound_ppdu_time",
            "bound_txop",
        ]
        .iter()
        .map(|k| u(k))
        .sum();
        assert_eq!(bounds, acc, "every A-MPDU ends at one limit");
        // Every A-MPDU goes at one MCS, so the MCS histogram also sums to the accesses; at a
        // fixed rate it is all at the station's configured MCS.
        let res = r.wifi[0]
            .nodes
            .iter()
            .find(|x| x.node == row[col("node")])
            .expect("node");
        assert_eq!(res.mcs_counts.iter().sum::<u64>(), acc, "MCS of {}", row[1]);
        let collisions = u("collisions");
        assert!(
            (collisions == 0) == (f("collision_airtime_s") == 0.0),
            "collision airtime iff collisions: {row:?}"
        );
        assert!(
            f("collision_airtime_s") <= f("airtime_s") + 1e-12,
            "{row:?}"
        );
        assert_eq!(
            (u("txq_drops"), f("collision_airtime_s")),
            (res.txq_drops, res.collision_airtime_s),
            "{row:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run without Wi-Fi writes neither file and removes stale ones; its summary has no `wifi`.
#[test]
fn wired_runs_write_no_wifi_files() {
    let r = run(
        "name = \"t\"\nduration = \"1s\"\n[topology]\npreset = \"dumbbell\"\nrate = \"10Mbit\"\n\
         delay = \"5ms\"\n[[flows]]\ncontroller = \"cubic\"\n",
        None,
    );
    let dir = out_dir("wired");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("wifi.csv"), "stale").expect("stale");
    // As an earlier Wi-Fi run's write recorded it: cclab removes only files it wrote.
    std::fs::write(dir.join(output::MANIFEST), "wifi.csv\n").expect("manifest");
    output::write_outputs(&dir, "t", &r).expect("writes");
    assert!(!dir.join("wifi.csv").exists() && !dir.join("wifi_ampdu.csv").exists());
    let s = std::fs::read_to_string(dir.join("summary.json")).expect("summary");
    assert!(!s.contains("\"wifi\""));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `wifi_hybrid` with `tcp_upload`: the client is the station that sends the data. The AP
/// sends it only the receiver's ACKs, one per `ack_every` = 2 full segments (RFC 5681 §4.2;
/// the 16 quick ACKs of the start and the 5 pings a second are a few hundred of tens of
/// thousands), so the client sends about twice the AP's MPDUs; its MPDUs are full segments, so
/// its aggregates are larger than the AP's, whose ACK bursts are sparse. That holds with
/// ideal host timing; with the default Linux timing the receiver's GRO merges the segments of
/// an A-MPDU, which arrive together, into one skb acknowledged once (stretch ACKs), so the AP
/// sends fewer ACKs still: more than 3 segments per ACK.
#[test]
fn hybrid_upload_is_sent_by_the_client() {
    let text = "name = \"t\"\n[test]\nname = \"tcp_upload\"\nlength = \"3s\"\ndelay = \"1s\"\n\
         [tcp]\ncontroller = \"cubic\"\n[topology]\npreset = \"wifi_hybrid\"\n";
    let linux = run(text, None);
    let (ap, client) = (&linux.wifi[0].nodes[0], &linux.wifi[0].nodes[1]);
    #[expect(clippy::cast_precision_loss, reason = "counts far below 2^53")]
    let gro_ratio = client.mpdus_sent as f64 / ap.mpdus_sent as f64;
    assert!(gro_ratio > 3.0, "client/AP MPDUs with GRO {gro_ratio}");
    let r = run(&format!("{text}[timing]\nmodel = \"ideal\"\n"), None);
    let w = &r.wifi[0];
    let (ap, client) = (&w.nodes[0], &w.nodes[1]);
    assert_eq!((ap.role, client.role), ("ap", "station"));
    assert_eq!(client.node, "client");
    #[expect(clippy::cast_precision_loss, reason = "counts far below 2^53")]
    let ratio = client.mpdus_sent as f64 / ap.mpdus_sent as f64;
    assert!((1.8..=2.2).contains(&ratio), "client/AP MPDUs {ratio}");
    assert!(
        client.mean_ampdu > ap.mean_ampdu,
        "{} vs {}",
        client.mean_ampdu,
        ap.mean_ampdu
    );
    // The upload goodput is at most the PHY rate of HE 80 MHz, 2 streams, MCS 9 (960.8 Mbit/s).
    let up = r.flows[0].summary.goodput_bps;
    assert!(up > 100e6 && up < 960.8e6, "goodput {up}");
    let m = cclab_lab::suite::metrics(&[], &r, None);
    assert_eq!(m.get("mean_ampdu"), Some(&client.mean_ampdu));
}
