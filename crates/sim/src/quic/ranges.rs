//! A set of packet numbers (or stream chunks) kept as disjoint inclusive ranges.
//!
//! Contract: [`SeqSet`] stores ascending, disjoint, non-adjacent ranges; inserting at the top
//! (the common case: packets arrive in order) costs O(1), elsewhere a binary search and at most
//! one insertion or merge. [`SeqSet::trim`] bounds its size by forgetting the lowest ranges
//! (RFC 9000 §13.2.4: a receiver limits the ranges it remembers).

/// A set of `u64` as ranges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SeqSet {
    /// Inclusive `(lo, hi)`, ascending, with at least one missing value between neighbours.
    r: Vec<(u64, u64)>,
}

impl SeqSet {
    /// Add `v`; false if it was already present.
    pub fn insert(&mut self, v: u64) -> bool {
        if let Some(last) = self.r.last_mut() {
            if v == last.1 + 1 {
                last.1 = v;
                return true;
            }
            if v > last.1 {
                self.r.push((v, v));
                return true;
            }
        } else {
            self.r.push((v, v));
            return true;
        }
        // The first range whose top is at or above `v`.
        let i = self.r.partition_point(|&(_, hi)| hi < v);
        let (lo, _) = self.r[i];
        if v >= lo {
            return false;
        }
        let joins_above = v + 1 == lo;
        let joins_below = i > 0 && self.r[i - 1].1 + 1 == v;
        match (joins_below, joins_above) {
            (true, true) => {
                self.r[i - 1].1 = self.r[i].1;
                self.r.remove(i);
            }
            (true, false) => self.r[i - 1].1 = v,
            (false, true) => self.r[i].0 = v,
            (false, false) => self.r.insert(i, (v, v)),
        }
        true
    }

    /// Whether `v` is in the set.
    #[must_use]
    pub fn contains(&self, v: u64) -> bool {
        let i = self.r.partition_point(|&(_, hi)| hi < v);
        self.r.get(i).is_some_and(|&(lo, _)| v >= lo)
    }

    /// The largest value, if any.
    #[must_use]
    pub fn max(&self) -> Option<u64> {
        self.r.last().map(|&(_, hi)| hi)
    }

    /// Whether the set is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.r.is_empty()
    }

    /// Number of ranges.
    #[must_use]
    pub fn range_count(&self) -> usize {
        self.r.len()
    }

    /// The ranges, highest first.
    pub fn ranges_desc(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.r.iter().rev().copied()
    }

    /// Keep at most `n` ranges, forgetting the lowest.
    pub fn trim(&mut self, n: usize) {
        if self.r.len() > n {
            let k = self.r.len() - n;
            self.r.drain(..k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The set agrees with a `BTreeSet` on membership and on its ranges after any inserts.
        #[test]
        fn matches_a_btreeset(values in prop::collection::vec(0u64..200, 0..300)) {
            let mut s = SeqSet::default();
            let mut b = std::collections::BTreeSet::new();
            for v in values {
                prop_assert_eq!(s.insert(v), b.insert(v));
            }
            for v in 0..200 {
                prop_assert_eq!(s.contains(v), b.contains(&v));
            }
            // Ranges are maximal runs of the set.
            let mut runs: Vec<(u64, u64)> = Vec::new();
            for &v in &b {
                match runs.last_mut() {
                    Some(r) if r.1 + 1 == v => r.1 = v,
                    _ => runs.push((v, v)),
                }
            }
            runs.reverse();
            prop_assert_eq!(s.ranges_desc().collect::<Vec<_>>(), runs);
        }
    }
}
