//! Pure statistics and geometry behind the plots: percentiles, Tukey boxes, empirical CDF steps,
//! covariance ellipses and Q-Q points.
//!
//! Contract: plain numbers in, plain numbers out; no drawing, no panics. Non-finite input values
//! (NaN, ±∞) are ignored by every function here; the plot functions reject them before calling.

/// The `p`-quantile (`0 ≤ p ≤ 1`) of already **sorted**, finite values, by linear interpolation
/// between closest ranks (Hyndman & Fan type 7, the default of R, NumPy and spreadsheets).
///
/// `None` for an empty slice or a `p` outside `[0, 1]`.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=1.0).contains(&p) {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * p;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    let frac = h - lo as f64;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
}

/// The finite values of `values`, sorted ascending.
pub(crate) fn sorted_finite(values: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The five numbers and outliers of a Tukey box plot.
#[derive(Debug, Clone, PartialEq)]
pub struct BoxStats {
    /// First quartile (25th percentile, linear interpolation).
    pub q1: f64,
    /// Median (50th percentile).
    pub median: f64,
    /// Third quartile (75th percentile).
    pub q3: f64,
    /// Lower whisker end: the smallest value not below `q1 − 1.5·IQR`.
    pub whisker_lo: f64,
    /// Upper whisker end: the largest value not above `q3 + 1.5·IQR`.
    pub whisker_hi: f64,
    /// Values outside the whiskers, ascending.
    pub outliers: Vec<f64>,
}

/// Tukey box statistics of the finite values in `values`; `None` when there are none.
///
/// A single value gives a degenerate box (all five numbers equal, no outliers).
pub fn box_stats(values: &[f64]) -> Option<BoxStats> {
    let v = sorted_finite(values);
    let q1 = percentile_sorted(&v, 0.25)?;
    let median = percentile_sorted(&v, 0.5)?;
    let q3 = percentile_sorted(&v, 0.75)?;
    let iqr = q3 - q1;
    let (lo_fence, hi_fence) = (q1 - 1.5 * iqr, q3 + 1.5 * iqr);
    let inside = || {
        v.iter()
            .copied()
            .filter(|x| *x >= lo_fence && *x <= hi_fence)
    };
    // The quartiles lie between the data's extremes, so some value is always inside the fences.
    let whisker_lo = inside().next().unwrap_or(q1);
    let whisker_hi = inside().next_back().unwrap_or(q3);
    let outliers = v
        .iter()
        .copied()
        .filter(|x| *x < lo_fence || *x > hi_fence)
        .collect();
    Some(BoxStats {
        q1,
        median,
        q3,
        whisker_lo,
        whisker_hi,
        outliers,
    })
}

/// The vertices of the empirical CDF of the finite values in `values` as a step function:
/// starting at `(min, 0)`, rising by `1/n` at each value, ending at `(max, 1)`.
///
/// Empty when there are no finite values.
pub fn ecdf_steps(values: &[f64]) -> Vec<(f64, f64)> {
    let v = sorted_finite(values);
    let n = v.len() as f64;
    let mut out = Vec::with_capacity(2 * v.len());
    let mut prev = 0.0;
    let mut i = 0;
    while i < v.len() {
        let x = v[i];
        // Ties make one step of the combined height.
        while i < v.len() && v[i] == x {
            i += 1;
        }
        let y = i as f64 / n;
        out.push((x, prev));
        out.push((x, y));
        prev = y;
    }
    out
}

/// A 1-σ covariance ellipse: centred on the centroid, axes along the eigenvectors of the sample
/// covariance matrix, semi-axes the square roots of its eigenvalues.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ellipse {
    /// Centroid x (mean of the x values).
    pub cx: f64,
    /// Centroid y (mean of the y values).
    pub cy: f64,
    /// Semi-major axis: square root of the larger eigenvalue (≥ `semi_minor`).
    pub semi_major: f64,
    /// Semi-minor axis: square root of the smaller eigenvalue (≥ 0).
    pub semi_minor: f64,
    /// Angle of the major axis from the +x axis, radians, counter-clockwise, in `(-π/2, π/2]`.
    pub angle_rad: f64,
}

impl Ellipse {
    /// `n` points on the outline (first point not repeated at the end), in data coordinates.
    pub fn outline(&self, n: usize) -> Vec<(f64, f64)> {
        let (s, c) = self.angle_rad.sin_cos();
        (0..n)
            .map(|k| {
                let t = std::f64::consts::TAU * k as f64 / n as f64;
                let (u, v) = (self.semi_major * t.cos(), self.semi_minor * t.sin());
                (self.cx + u * c - v * s, self.cy + u * s + v * c)
            })
            .collect()
    }

    /// Axis-aligned bounding box `(x_min, x_max, y_min, y_max)` of the ellipse.
    pub fn bounds(&self) -> (f64, f64, f64, f64) {
        let (s, c) = self.angle_rad.sin_cos();
        let (a, b) = (self.semi_major, self.semi_minor);
        let hx = ((a * c).powi(2) + (b * s).powi(2)).sqrt();
        let hy = ((a * s).powi(2) + (b * c).powi(2)).sqrt();
        (self.cx - hx, self.cx + hx, self.cy - hy, self.cy + hy)
    }
}

/// The 1-σ covariance ellipse of the points with both coordinates finite.
///
/// Uses the unbiased sample covariance (divisor `n − 1`). `None` for fewer than two such points.
/// Identical points give an ellipse with both semi-axes 0.
pub fn covariance_ellipse(points: &[(f64, f64)]) -> Option<Ellipse> {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    if pts.len() < 2 {
        return None;
    }
    let n = pts.len() as f64;
    let cx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let cy = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let (mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0);
    for (x, y) in &pts {
        let (dx, dy) = (x - cx, y - cy);
        sxx += dx * dx;
        syy += dy * dy;
        sxy += dx * dy;
    }
    let (a, c, b) = (sxx / (n - 1.0), syy / (n - 1.0), sxy / (n - 1.0));
    // Eigenvalues of the symmetric matrix [[a, b], [b, c]].
    let mid = (a + c) / 2.0;
    let rad = (((a - c) / 2.0).powi(2) + b * b).sqrt();
    let (l1, l2) = (mid + rad, (mid - rad).max(0.0));
    let mut angle = 0.5 * (2.0 * b).atan2(a - c);
    if angle <= -std::f64::consts::FRAC_PI_2 {
        angle += std::f64::consts::PI;
    }
    Some(Ellipse {
        cx,
        cy,
        semi_major: l1.sqrt(),
        semi_minor: l2.sqrt(),
        angle_rad: angle,
    })
}

/// `n` matching quantile pairs `(quantile of a, quantile of b)` at probabilities evenly spaced
/// from 0 to 1 inclusive (only the median when `n == 1`), by linear interpolation.
///
/// Empty when `n == 0` or either sample has no finite value.
pub fn qq_points(a: &[f64], b: &[f64], n: usize) -> Vec<(f64, f64)> {
    let (sa, sb) = (sorted_finite(a), sorted_finite(b));
    if n == 0 || sa.is_empty() || sb.is_empty() {
        return Vec::new();
    }
    (0..n)
        .filter_map(|k| {
            let p = if n == 1 {
                0.5
            } else {
                k as f64 / (n - 1) as f64
            };
            Some((percentile_sorted(&sa, p)?, percentile_sorted(&sb, p)?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::FRAC_PI_4;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn percentile_linear_interpolation() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile_sorted(&v, 0.0), Some(1.0));
        assert_eq!(percentile_sorted(&v, 1.0), Some(4.0));
        assert!(close(percentile_sorted(&v, 0.5).unwrap(), 2.5));
        assert!(close(percentile_sorted(&v, 0.25).unwrap(), 1.75));
        assert_eq!(percentile_sorted(&[], 0.5), None);
        assert_eq!(percentile_sorted(&v, 1.5), None);
    }

    #[test]
    fn tukey_box_with_outlier() {
        let mut v: Vec<f64> = (1..=9).map(f64::from).collect();
        v.push(100.0);
        let b = box_stats(&v).unwrap();
        // Type-7 quartiles of 1..9, 100: q1 = 3.25, median = 5.5, q3 = 7.75, IQR = 4.5.
        assert!(close(b.q1, 3.25) && close(b.median, 5.5) && close(b.q3, 7.75));
        assert_eq!(b.whisker_lo, 1.0);
        assert_eq!(b.whisker_hi, 9.0);
        assert_eq!(b.outliers, vec![100.0]);
    }

    #[test]
    fn single_value_box_is_degenerate() {
        let b = box_stats(&[7.0]).unwrap();
        assert_eq!((b.q1, b.median, b.q3), (7.0, 7.0, 7.0));
        assert_eq!((b.whisker_lo, b.whisker_hi), (7.0, 7.0));
        assert!(b.outliers.is_empty());
        assert!(box_stats(&[]).is_none());
        assert!(box_stats(&[f64::NAN]).is_none());
    }

    #[test]
    fn ecdf_steps_with_ties() {
        let s = ecdf_steps(&[3.0, 1.0, 1.0, 2.0]);
        assert_eq!(
            s,
            vec![
                (1.0, 0.0),
                (1.0, 0.5),
                (2.0, 0.5),
                (2.0, 0.75),
                (3.0, 0.75),
                (3.0, 1.0)
            ]
        );
        assert!(ecdf_steps(&[]).is_empty());
    }

    #[test]
    fn ellipse_axis_aligned() {
        // Var x = 8/3, var y = 2/3, cov 0 (divisor n − 1 = 3).
        let e = covariance_ellipse(&[(2.0, 0.0), (-2.0, 0.0), (0.0, 1.0), (0.0, -1.0)]).unwrap();
        assert!(close(e.cx, 0.0) && close(e.cy, 0.0));
        assert!(close(e.semi_major, (8.0f64 / 3.0).sqrt()));
        assert!(close(e.semi_minor, (2.0f64 / 3.0).sqrt()));
        assert!(close(e.angle_rad, 0.0));
        // Taller than wide: the major axis is vertical.
        let e = covariance_ellipse(&[(0.0, 2.0), (0.0, -2.0), (1.0, 0.0), (-1.0, 0.0)]).unwrap();
        assert!(close(e.angle_rad, std::f64::consts::FRAC_PI_2));
        let (x0, x1, y0, y1) = e.bounds();
        assert!(close(x1 - x0, 2.0 * e.semi_minor) && close(y1 - y0, 2.0 * e.semi_major));
    }

    #[test]
    fn ellipse_45_degrees() {
        // Var x = var y = 8.5/3, cov = 7.5/3: eigenvalues 16/3 along (1, 1) and 1/3 along (1, −1).
        let pts = [(12.0, 7.0), (8.0, 3.0), (10.5, 4.5), (9.5, 5.5)];
        let e = covariance_ellipse(&pts).unwrap();
        assert!(close(e.cx, 10.0) && close(e.cy, 5.0));
        assert!(close(e.semi_major, (16.0f64 / 3.0).sqrt()));
        assert!(close(e.semi_minor, (1.0f64 / 3.0).sqrt()));
        assert!(close(e.angle_rad, FRAC_PI_4));
        // Anti-correlated: −45°.
        let mirrored: Vec<_> = pts.iter().map(|(x, y)| (*x, -y)).collect();
        assert!(close(
            covariance_ellipse(&mirrored).unwrap().angle_rad,
            -FRAC_PI_4
        ));
        // The outline's points all lie on the ellipse.
        for (x, y) in e.outline(16) {
            let (dx, dy) = (x - e.cx, y - e.cy);
            let (s, c) = e.angle_rad.sin_cos();
            let (u, v) = (dx * c + dy * s, -dx * s + dy * c);
            assert!(close(
                (u / e.semi_major).powi(2) + (v / e.semi_minor).powi(2),
                1.0
            ));
        }
    }

    #[test]
    fn ellipse_degenerate_inputs() {
        assert!(covariance_ellipse(&[]).is_none());
        assert!(covariance_ellipse(&[(1.0, 2.0)]).is_none());
        assert!(covariance_ellipse(&[(1.0, 2.0), (f64::NAN, 0.0)]).is_none());
        let e = covariance_ellipse(&[(1.0, 2.0), (1.0, 2.0)]).unwrap();
        assert_eq!((e.semi_major, e.semi_minor), (0.0, 0.0));
    }

    #[test]
    fn qq_points_known_values() {
        let a: Vec<f64> = (0..=100).map(f64::from).collect();
        let b: Vec<f64> = a.iter().map(|x| 2.0 * x).collect();
        let q = qq_points(&a, &b, 5);
        assert_eq!(
            q,
            vec![
                (0.0, 0.0),
                (25.0, 50.0),
                (50.0, 100.0),
                (75.0, 150.0),
                (100.0, 200.0)
            ]
        );
        // Different sample sizes, unsorted input.
        let q = qq_points(&[4.0, 1.0, 3.0, 2.0], &[20.0, 10.0], 3);
        assert_eq!(q, vec![(1.0, 10.0), (2.5, 15.0), (4.0, 20.0)]);
        assert_eq!(qq_points(&[1.0, 3.0], &[5.0], 1), vec![(2.0, 5.0)]);
        assert!(qq_points(&[], &[1.0], 3).is_empty());
        assert!(qq_points(&[1.0], &[1.0], 0).is_empty());
    }
}
