//! (in progress: replaced by the full statistics module)

/// Percentile of sorted data, linear interpolation.
#[must_use]
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let r = p / 100.0 * (sorted.len() - 1) as f64;
    let lo = r.floor() as usize;
    let hi = r.ceil() as usize;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (r - lo as f64))
}

/// Jain's index.
#[must_use]
pub fn jain(xs: &[f64]) -> Option<f64> {
    let s: f64 = xs.iter().sum();
    let q: f64 = xs.iter().map(|x| x * x).sum();
    (q > 0.0).then(|| s * s / (xs.len() as f64 * q))
}
