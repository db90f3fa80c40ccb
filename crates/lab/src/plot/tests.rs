//! Tests of the plot functions: well-formed SVG with title and axis labels, errors on bad
//! input, and PNG output of the requested size.

use super::*;

/// Check that the tags of an SVG document are balanced and it is one `<svg>` element.
fn assert_well_formed(svg: &str) {
    assert!(
        svg.trim_start().starts_with("<svg"),
        "starts with: {}",
        &svg[..40]
    );
    let mut stack: Vec<String> = Vec::new();
    let mut rest = svg;
    let mut roots = 0;
    while let Some(start) = rest.find('<') {
        let end = rest[start..].find('>').expect("unterminated tag") + start;
        let tag = &rest[start + 1..end];
        rest = &rest[end + 1..];
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(
                stack.pop().as_deref(),
                Some(name.trim()),
                "mismatched </{name}>"
            );
            continue;
        }
        let name = tag
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_end_matches('/');
        assert!(!name.is_empty(), "empty tag");
        if stack.is_empty() {
            roots += 1;
        }
        if !tag.ends_with('/') {
            stack.push(name.to_string());
        }
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
    assert_eq!(roots, 1, "exactly one root element");
    assert!(rest.trim().is_empty(), "text after the root: {rest}");
}

/// `text` escaped as in SVG text content.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// Well-formed, with the title and both axis labels.
fn assert_plot(svg: &str, spec: &Labels) {
    assert_well_formed(svg);
    for text in [&spec.title, &spec.x_label, &spec.y_label] {
        assert!(svg.contains(&escaped(text)), "missing text {text:?}");
    }
    assert!(svg.contains(&format!("width=\"{WIDTH}\"")));
    assert!(svg.contains(&format!("height=\"{HEIGHT}\"")));
}

fn spec(title: &str, x: &str, y: &str) -> Labels {
    Labels::new(title, x, y)
}

/// A deterministic pseudo-random sequence in [0, 1) (xorshift), for sample data.
fn noise(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}

/// Eleven configurations as a study has them, with RTT samples (ms).
fn rtt_groups() -> Vec<(String, Vec<f64>)> {
    (0..11)
        .map(|i| {
            let name = if i < 9 {
                format!("bbr_tas {i}/8")
            } else {
                ["cubic", "bbr3"][i - 9].to_string()
            };
            let mut v: Vec<f64> = noise(i as u64 + 1, 200)
                .iter()
                .map(|u| 20.0 + 5.0 * i as f64 + 30.0 * u * u)
                .collect();
            v.push(120.0 + i as f64);
            (name, v)
        })
        .collect()
}

fn box_sample() -> (Labels, Vec<(String, Vec<f64>)>) {
    let s = spec(
        "Ping RTT per configuration",
        "Configuration",
        "Ping RTT (ms)",
    );
    (s, rtt_groups())
}

fn cdf_sample() -> (Labels, Vec<(String, Vec<f64>)>) {
    let s = spec(
        "Distribution of ping RTT",
        "Ping RTT (ms)",
        "Cumulative probability",
    );
    (s, rtt_groups().into_iter().take(4).collect())
}

/// Named groups of `(x, y)` points.
type PointGroups = Vec<(String, Vec<(f64, f64)>)>;

fn ellipse_sample() -> (Labels, PointGroups) {
    let s = spec(
        "Latency vs throughput (1-σ ellipses)",
        "Ping RTT (ms)",
        "Throughput (Mbit/s)",
    );
    let groups = (0..5)
        .map(|g| {
            let u = noise(10 + g as u64, 60);
            let v = noise(20 + g as u64, 60);
            let pts: Vec<(f64, f64)> = u
                .iter()
                .zip(&v)
                .map(|(a, b)| {
                    let lat = 30.0 + 15.0 * g as f64 + 12.0 * a;
                    let thr = 40.0 + 8.0 * g as f64 + 10.0 * a * (g as f64 - 2.0) / 2.0 + 6.0 * b;
                    (lat, thr)
                })
                .collect();
            (format!("config {g}"), pts)
        })
        .chain(std::iter::once((
            "single run".to_string(),
            vec![(60.0, 50.0)],
        )))
        .collect();
    (s, groups)
}

fn bar_sample() -> (Labels, Vec<Bar>) {
    let s = spec("Jain's fairness index", "Configuration", "Jain's index");
    let bars = rtt_groups()
        .into_iter()
        .enumerate()
        .map(|(i, (name, _))| {
            let v = 0.99 - 0.04 * i as f64;
            (name, v, Some((v - 0.02, (v + 0.02).min(1.0))))
        })
        .collect();
    (s, bars)
}

fn timeseries_sample() -> (Labels, Vec<TimeSeries>) {
    let s = spec("Throughput per flow", "Time (s)", "Throughput (Mbit/s)");
    let series = (0..3)
        .map(|f| {
            let n = noise(30 + f as u64, 300);
            let pts = (0..300)
                .map(|k| {
                    let t = k as f64 * 0.1;
                    let gap = f == 1 && (100..120).contains(&k);
                    let v = 30.0 + 10.0 * (t / 3.0 + f as f64).sin() + 5.0 * n[k];
                    (t, (!gap && t >= 2.0 * f as f64).then_some(v))
                })
                .collect();
            (format!("flow {} (bbr_tas)", f + 1), pts)
        })
        .collect();
    (s, series)
}

#[test]
fn box_plot_is_well_formed() {
    let (s, g) = box_sample();
    let svg = box_plot(&s, &g).unwrap();
    assert_plot(&svg, &s);
    // Eleven group names under the axis (wrapped at the space).
    assert!(svg.contains(">\nbbr_tas\n<") || svg.contains("bbr_tas"));
    assert!(svg.contains("cubic"));
}

#[test]
fn box_plot_single_value_and_escaping() {
    let s = spec("A & B <test>", "x (1)", "y (ms)");
    let svg = box_plot(&s, &[("one & only".to_string(), vec![5.0])]).unwrap();
    assert_well_formed(&svg);
    assert!(svg.contains("A &amp; B &lt;test&gt;"));
}

#[test]
fn cdf_plot_is_well_formed() {
    let (s, g) = cdf_sample();
    let svg = cdf_plot(&s, &g).unwrap();
    assert_plot(&svg, &s);
    assert!(svg.contains("bbr_tas 3/8"), "legend names the series");
}

#[test]
fn ellipse_plot_is_well_formed() {
    let (s, g) = ellipse_sample();
    let svg = ellipse_plot(&s, &g).unwrap();
    assert_plot(&svg, &s.clone());
    assert!(svg.contains("single run"));
}

#[test]
fn qq_plot_is_well_formed() {
    let s = spec("Q-Q of ping RTT", "Ping RTT (ms)", "Ping RTT (ms)");
    let g = rtt_groups();
    let svg = qq_plot(&s, ("cubic", &g[9].1), ("bbr3", &g[10].1), 50).unwrap();
    assert_plot(&svg, &s);
    assert!(svg.contains("cubic: Ping RTT (ms)") && svg.contains("y = x"));
}

#[test]
fn bar_plot_is_well_formed() {
    let (s, b) = bar_sample();
    let svg = bar_plot(&s, &b).unwrap();
    assert_plot(&svg, &s.clone());
    assert!(svg.contains("0.990"));
    let s2 = spec("Mean throughput", "Configuration", "Throughput (Mbit/s)");
    let b2 = vec![
        ("cubic".to_string(), 45.2, Some((43.0, 47.5))),
        ("bbr".to_string(), 48.9, None),
    ];
    assert_plot(&bar_plot(&s2, &b2).unwrap(), &s2);
}

#[test]
fn timeseries_plot_is_well_formed() {
    let (s, ts) = timeseries_sample();
    let svg = timeseries_plot(&s, &ts).unwrap();
    assert_plot(&svg, &s);
    // A series that is all gaps but one point, next to a normal one.
    let ts2 = vec![
        (
            "lone".to_string(),
            vec![(0.0, None), (1.0, Some(3.0)), (2.0, None)],
        ),
        ("none".to_string(), vec![(0.0, None)]),
    ];
    assert_plot(&timeseries_plot(&s, &ts2).unwrap(), &s);
}

/// Goodput against CPU share for three controllers: median with a quartile band.
fn curve_sample() -> (Labels, Vec<BandSeries>) {
    let s = spec(
        "Goodput against CPU share — 10ms, 100Mbit",
        "flows.0.host.cpu_share",
        "window_goodput_pct",
    );
    let series = ["bbr3", "bbr3_2brobust", "cubic"]
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let n = noise(50 + i as u64, 19);
            let pts = (0..19)
                .map(|k| {
                    let x = 0.1 + 0.05 * k as f64;
                    let y = (95.0 * (x * (1.5 + i as f64)).min(1.0)).max(5.0);
                    BandPoint {
                        x,
                        y,
                        lo: y - 3.0 * n[k],
                        hi: y + 2.0 * n[k],
                    }
                })
                .rev()
                .collect();
            (name.to_string(), pts)
        })
        .collect();
    (s, series)
}

#[test]
fn curve_plot_is_well_formed() {
    let (s, c) = curve_sample();
    let svg = curve_plot(&s, &c, Some(90.0)).unwrap();
    assert_plot(&svg, &s);
    assert!(svg.contains("bbr3_2brobust"), "legend names the series");
    assert!(svg.contains("\n90.0\n"), "the threshold is labelled");
    // A single point per series (a band without width) and no threshold.
    let one = vec![(
        "one".to_string(),
        vec![BandPoint {
            x: 0.5,
            y: 10.0,
            lo: 9.0,
            hi: 12.0,
        }],
    )];
    let svg = curve_plot(&s, &one, None).unwrap();
    assert_plot(&svg, &s);
    assert!(!svg.contains("\n90.0\n"));
}

#[test]
fn curve_plot_refuses_bad_input() {
    let s = spec("t", "x", "y");
    let p = |x: f64, y: f64, lo: f64, hi: f64| BandPoint { x, y, lo, hi };
    assert!(matches!(
        curve_plot(&s, &[], None),
        Err(PlotError::Empty { .. })
    ));
    assert!(matches!(
        curve_plot(&s, &[("a".into(), vec![])], None),
        Err(PlotError::Empty { .. })
    ));
    assert!(matches!(
        curve_plot(&s, &[("a".into(), vec![p(f64::NAN, 1.0, 0.0, 2.0)])], None),
        Err(PlotError::NonFinite { .. })
    ));
    assert!(matches!(
        curve_plot(
            &s,
            &[("a".into(), vec![p(1.0, 1.0, 0.0, 2.0)])],
            Some(f64::NAN)
        ),
        Err(PlotError::NonFinite { .. })
    ));
    assert!(matches!(
        curve_plot(&s, &[("a".into(), vec![p(1.0, 1.0, 3.0, 2.0)])], None),
        Err(PlotError::Invalid(_))
    ));
}

#[test]
fn many_series_cycle_the_palette() {
    let s = spec("Twenty flows", "Time (s)", "cwnd (packets)");
    let ts: Vec<TimeSeries> = (0..20)
        .map(|f| {
            let pts = (0..50)
                .map(|k| (k as f64, Some(10.0 + f as f64 + (k as f64 / 5.0).sin())))
                .collect();
            (format!("flow {f}"), pts)
        })
        .collect();
    let svg = timeseries_plot(&s, &ts).unwrap();
    assert_plot(&svg, &s);
    assert!(svg.contains("#E69F00") || svg.to_lowercase().contains("#e69f00"));
}

#[test]
fn empty_and_non_finite_inputs_are_errors() {
    let s = spec("t", "x", "y");
    let empty = |r: Result<String, PlotError>| matches!(r, Err(PlotError::Empty { .. }));
    let nonfinite = |r: Result<String, PlotError>| matches!(r, Err(PlotError::NonFinite { .. }));
    assert!(empty(box_plot(&s, &[])));
    assert!(empty(box_plot(&s, &[("a".into(), vec![])])));
    assert!(nonfinite(box_plot(
        &s,
        &[("a".into(), vec![1.0, f64::NAN])]
    )));
    assert!(empty(cdf_plot(&s, &[])));
    assert!(nonfinite(cdf_plot(
        &s,
        &[("a".into(), vec![f64::INFINITY])]
    )));
    assert!(empty(ellipse_plot(&s, &[])));
    assert!(empty(ellipse_plot(&s, &[("a".into(), vec![])])));
    assert!(nonfinite(ellipse_plot(
        &s,
        &[("a".into(), vec![(1.0, f64::NAN)])]
    )));
    assert!(empty(qq_plot(&s, ("a", &[]), ("b", &[1.0]), 10)));
    assert!(nonfinite(qq_plot(
        &s,
        ("a", &[1.0]),
        ("b", &[f64::NAN]),
        10
    )));
    assert!(matches!(
        qq_plot(&s, ("a", &[1.0]), ("b", &[1.0]), 0),
        Err(PlotError::Invalid(_))
    ));
    assert!(empty(bar_plot(&s, &[])));
    assert!(nonfinite(bar_plot(&s, &[("a".into(), f64::NAN, None)])));
    assert!(nonfinite(bar_plot(
        &s,
        &[("a".into(), 1.0, Some((0.0, f64::INFINITY)))]
    )));
    assert!(matches!(
        bar_plot(&s, &[("a".into(), 1.0, Some((2.0, 0.0)))]),
        Err(PlotError::Invalid(_))
    ));
    assert!(empty(timeseries_plot(&s, &[])));
    assert!(empty(timeseries_plot(&s, &[("a".into(), vec![])])));
    assert!(empty(timeseries_plot(
        &s,
        &[("a".into(), vec![(0.0, None)])]
    )));
    assert!(nonfinite(timeseries_plot(
        &s,
        &[("a".into(), vec![(f64::NAN, Some(1.0))])]
    )));
    assert!(nonfinite(timeseries_plot(
        &s,
        &[("a".into(), vec![(0.0, Some(f64::NEG_INFINITY))])]
    )));
    // Extreme but finite ranges are refused, not a panic.
    assert!(nonfinite(cdf_plot(
        &s,
        &[("a".into(), vec![-f64::MAX, f64::MAX])]
    )));
}

#[test]
fn plots_render_to_png_of_the_page_size() {
    let (s, g) = box_sample();
    let png = svg_to_png(&box_plot(&s, &g).unwrap()).unwrap();
    assert_eq!(png[..8], [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a]);
    let be = |i: usize| u32::from_be_bytes([png[i], png[i + 1], png[i + 2], png[i + 3]]);
    assert_eq!((be(16), be(20)), (WIDTH, HEIGHT));
}

/// Writes every kind of plot as SVG and PNG into the folder named by `PLOT_SAMPLES_DIR`, for a
/// person to look at; does nothing without it.
#[test]
fn write_samples_when_asked() {
    let Some(dir) = std::env::var_os("PLOT_SAMPLES_DIR") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let g = rtt_groups();
    let qq_spec = spec("Q-Q of ping RTT", "Ping RTT (ms)", "Ping RTT (ms)");
    let (bs, bg) = box_sample();
    let (cs, cg) = cdf_sample();
    let (es, eg) = ellipse_sample();
    let (rs, rb) = bar_sample();
    let (ts, tg) = timeseries_sample();
    let tput = spec(
        "Mean throughput with 95 % CI",
        "Configuration",
        "Throughput (Mbit/s)",
    );
    let tput_bars: Vec<Bar> = ["cubic", "bbr", "bbr_tas 8/8"]
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let m = 40.0 + 5.0 * i as f64;
            (n.to_string(), m, Some((m - 2.5, m + 3.0)))
        })
        .collect();
    let many: Vec<TimeSeries> = (0..12)
        .map(|f| {
            let pts = (0..100)
                .map(|k| {
                    (
                        k as f64 * 0.1,
                        Some(10.0 + 3.0 * f as f64 + (k as f64 / 9.0).sin()),
                    )
                })
                .collect();
            (format!("flow {f}"), pts)
        })
        .collect();
    let long: Vec<(String, Vec<f64>)> = (0..14)
        .map(|i| (format!("bbr3_2brobust_long_name_{i}"), noise(40 + i, 30)))
        .collect();
    let long_spec = spec("Long names", "Configuration", "Utilisation (fraction)");
    let plots = [
        ("box_long", box_plot(&long_spec, &long)),
        ("box", box_plot(&bs, &bg)),
        ("cdf", cdf_plot(&cs, &cg)),
        ("ellipse", ellipse_plot(&es, &eg)),
        (
            "qq",
            qq_plot(&qq_spec, ("cubic", &g[9].1), ("bbr3", &g[10].1), 50),
        ),
        ("bar_jain", bar_plot(&rs, &rb)),
        ("bar_ci", bar_plot(&tput, &tput_bars)),
        ("timeseries", timeseries_plot(&ts, &tg)),
        (
            "curve",
            curve_plot(&curve_sample().0, &curve_sample().1, Some(90.0)),
        ),
        (
            "timeseries_many",
            timeseries_plot(&spec("cwnd per flow", "Time (s)", "cwnd (packets)"), &many),
        ),
    ];
    for (name, svg) in plots {
        let svg = svg.unwrap();
        std::fs::write(dir.join(format!("{name}.svg")), &svg).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), svg_to_png(&svg).unwrap()).unwrap();
    }
}

/// Run `f` on another thread and fail unless it ends within `secs` seconds (a hung plot
/// would otherwise hang the test run).
fn within<T: Send + 'static>(secs: u64, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(secs))
        .unwrap_or_else(|_| panic!("{what} did not end within {secs} s"))
}

/// A run record with every metric 1e308 made the analysis's Jain bar plot
/// hang in plotters' tick loop. Its bar (the mean over four repetitions, one of them 1e308,
/// with Student's interval) padded to an axis over 1.8·10³⁰⁸, whose width overflows to ∞.
/// Values near the f64 limits, beyond ±10³⁰⁰, subnormal spans and zero-width data must all end
/// at once: drawn, or refused with a message that names the axis or data.
#[test]
fn absurd_ranges_end_quickly_with_a_message() {
    let refused = |r: &Result<String, PlotError>| {
        matches!(
            r,
            Err(PlotError::Range { .. } | PlotError::NonFinite { .. })
        )
    };
    let results = within(20, "plots of absurd values", || {
        let s = spec("t", "x", "y");
        let huge = [1e308, f64::MAX, -1e308, 1e301];
        let mut out: Vec<(String, Result<String, PlotError>)> = Vec::new();
        // The bar of the crafted record: mean 2.5e307, interval (-5.45e307, 1.045e308).
        out.push((
            "crafted bar".into(),
            bar_plot(&s, &[("a".into(), 2.5e307, Some((-5.45e307, 1.045e308)))]),
        ));
        for v in huge {
            out.push((format!("bar {v:e}"), bar_plot(&s, &[("a".into(), v, None)])));
            out.push((
                format!("box {v:e}"),
                box_plot(&s, &[("a".into(), vec![v, v])]),
            ));
            out.push((
                format!("cdf {v:e}"),
                cdf_plot(&s, &[("a".into(), vec![v, 0.0])]),
            ));
            out.push((
                format!("timeseries {v:e}"),
                timeseries_plot(&s, &[("a".into(), vec![(0.0, Some(v)), (1.0, Some(v))])]),
            ));
            out.push((
                format!("timeseries time {v:e}"),
                timeseries_plot(&s, &[("a".into(), vec![(v, Some(1.0))])]),
            ));
            out.push((
                format!("qq {v:e}"),
                qq_plot(&s, ("a", &[v, 1.0]), ("b", &[1.0, 2.0]), 10),
            ));
            out.push((
                format!("ellipse {v:e}"),
                ellipse_plot(&s, &[("a".into(), vec![(v, 1.0), (1.0, v)])]),
            ));
            let line: BandSeries = (
                "a".into(),
                vec![
                    BandPoint {
                        x: 1.0,
                        y: v,
                        lo: v,
                        hi: v,
                    },
                    BandPoint {
                        x: 2.0,
                        y: 1.0,
                        lo: 1.0,
                        hi: 1.0,
                    },
                ],
            );
            out.push((format!("curve {v:e}"), curve_plot(&s, &[line], None)));
        }
        out
    });
    for (what, r) in &results {
        assert!(refused(r), "{what}: {r:?}");
        let msg = r.as_ref().unwrap_err().to_string();
        assert!(
            msg.contains("axis") || msg.contains("range"),
            "{what}: {msg}"
        );
    }
    // Small, zero-width and subnormal data draw or are refused, quickly.
    let results = within(20, "plots of tiny values", || {
        let s = spec("t", "x", "y");
        [5e-324, 1e-310, 1e-300, 0.0, 5.0, 1e300]
            .into_iter()
            .flat_map(|v| {
                [
                    bar_plot(&s, &[("a".into(), v, Some((v, v)))]),
                    box_plot(&s, &[("a".into(), vec![v, v, v])]),
                    cdf_plot(&s, &[("a".into(), vec![v])]),
                    timeseries_plot(&s, &[("a".into(), vec![(v, Some(v)), (v, Some(v))])]),
                ]
            })
            .collect::<Vec<_>>()
    });
    for r in &results {
        match r {
            Ok(svg) => assert_well_formed(svg),
            Err(e) => assert!(matches!(e, PlotError::Range { .. }), "{e:?}"),
        }
    }
    // Ordinary zero-width data still draws.
    assert!(results[4 * 4..4 * 5].iter().all(Result::is_ok));
}

#[test]
fn huge_tick_labels_are_short() {
    assert_eq!(draw::fmt_tick(&1.5e300), "1.5e300");
    assert_eq!(draw::fmt_tick(&-2e12), "-2e12");
    assert_eq!(draw::fmt_tick(&1.23456789e-7), "1.2346e-7");
    assert_eq!(draw::fmt_tick(&123_456_789.0), "123456789");
}
