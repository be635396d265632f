//! Per-feature sample orders computed once per training matrix and shared by its fits.

/// Per-feature sample order by value, shared by every fit on the same training data.
#[derive(Debug, Clone)]
pub struct Presorted {
    /// Per column: the samples by value (ties by sample). Empty for the two-valued columns but
    /// column 0 (whose order a fit partitions as every node's samples): nothing reads them, and
    /// each fit copying them was most of the 1.9 MB each pad_mm_a100 tree copied.
    pub(super) orders: Vec<Vec<u32>>,
    /// Per column: `Some((lo, hi))` when it takes at most two distinct values (one-hot
    /// columns); such columns are scanned by counting and never re-sorted.
    pub(super) two_valued: Vec<Option<(f32, f32)>>,
    /// For two-valued columns: bit `i` set when sample `i` has the low value.
    pub(super) lo_bits: Vec<Option<Vec<u64>>>,
}

impl Presorted {
    /// Sorts every column once.
    pub fn new(columns: &[Vec<f32>]) -> Self {
        use rayon::prelude::*;
        let two_valued: Vec<Option<(f32, f32)>> = columns
            .par_iter()
            .map(|col| {
                let (&first, rest) = col.split_first()?;
                let (mut lo, mut hi) = (first, first);
                for &v in rest {
                    if v < lo {
                        lo = v;
                    } else if v > hi {
                        hi = v;
                    }
                }
                col.iter().all(|&v| v == lo || v == hi).then_some((lo, hi))
            })
            .collect();
        // Two-valued columns are never scanned in order: column 0's "order" is just the
        // samples, the others' are not kept.
        let orders = columns
            .par_iter()
            .zip(&two_valued)
            .enumerate()
            .map(|(f, (col, tv))| match tv {
                Some(_) if f > 0 => Vec::new(),
                Some(_) => (0..col.len() as u32).collect(),
                None => {
                    let mut o: Vec<u32> = (0..col.len() as u32).collect();
                    o.sort_by(|&a, &b| col[a as usize].total_cmp(&col[b as usize]).then(a.cmp(&b)));
                    o
                }
            })
            .collect::<Vec<Vec<u32>>>();
        let lo_bits = columns
            .iter()
            .zip(&two_valued)
            .map(|(col, tv): (&Vec<f32>, &Option<(f32, f32)>)| {
                tv.map(|(lo, _)| {
                    let mut bits = vec![0u64; col.len().div_ceil(64)];
                    for (i, &v) in col.iter().enumerate() {
                        if v == lo {
                            bits[i / 64] |= 1 << (i % 64);
                        }
                    }
                    bits
                })
            })
            .collect();
        Self {
            orders,
            two_valued,
            lo_bits,
        }
    }
}
