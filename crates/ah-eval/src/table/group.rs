//! The log's rows grouped by input (the values of the metadata features), and the inputs in
//! pandas' `groupby(sort=True)` order.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::Hasher;
use std::sync::Arc;

use ah_core::Value;
use ah_log::{Log, LogRow};
use rustc_hash::{FxHashMap, FxHasher};

use super::report::BuildReport;
use super::values::{cmp_values, ColumnKind};

pub(super) struct RawInput {
    /// The metadata features' values, metadata order (the log's rows' own when the metadata
    /// lists every column in header order, as logs do).
    pub(super) values: Arc<[Value]>,
    /// (choice index of the log, feedback) per row, in file order.
    pub(super) feedback: Vec<(u32, f64)>,
    /// The line of its first row in the log (for messages about its values).
    pub(super) line: usize,
}

/// The log's rows grouped by input (the metadata features' values), in order of first
/// appearance; NaN feedback rows are counted and left out. The two halves of a large log are
/// grouped at once and merged (the second half's new inputs after the first half's, each
/// input's rows in file order), which gives the same inputs in the same order as one pass.
pub(super) fn group_inputs(
    log: &Log,
    features: &[String],
    report: &mut BuildReport,
) -> Vec<RawInput> {
    // Column of each metadata feature (one pass over the header: linear in the features).
    let header: HashMap<&str, usize> = log
        .features
        .iter()
        .enumerate()
        .map(|(i, f)| (f.as_str(), i))
        .collect();
    let cols: Vec<usize> = features
        .iter()
        .map(|f| {
            *header
                .get(f.as_str())
                .expect("the log reader checks metadata features against the header")
        })
        .collect();
    let cols = Columns {
        all: cols.iter().copied().eq(0..log.features.len()),
        cols,
    };
    let rows = &log.rows[..];
    let mut groups = if rows.len() >= PARALLEL_FROM_ROWS {
        let (a, b) = rows.split_at(rows.len() / 2);
        let (a, b) = rayon::join(|| Groups::of(a, &cols), || Groups::of(b, &cols));
        a.merge(b)
    } else {
        Groups::of(rows, &cols)
    };
    report.nan_feedback_rows += groups.nan_rows;
    report.inf_rows += groups.inf_rows;
    std::mem::take(&mut groups.raw)
}

/// The column of each metadata feature.
struct Columns {
    cols: Vec<usize>,
    /// Every column, in header order (a row's values are the input's).
    all: bool,
}

/// Logs with at least this many rows are grouped in two halves at once.
const PARALLEL_FROM_ROWS: usize = 1 << 14;

/// Inputs of some rows, with an index from the hash of their values ([`hash_values`]) to
/// their ids.
struct Groups {
    raw: Vec<RawInput>,
    /// The hash of each input's values.
    hashes: Vec<u64>,
    /// The last input of each hash; `chain` links it to the earlier ones of that hash.
    index: FxHashMap<u64, u32>,
    /// The previous input of the same hash (`u32::MAX`: none).
    chain: Vec<u32>,
    nan_rows: usize,
    inf_rows: usize,
}

impl Groups {
    /// The inputs of `rows`, in order of first appearance (NaN feedback rows counted and left
    /// out). Rows that share their values ([`ah_log::LogRow::values`]) are one input: only the
    /// first of them is hashed.
    fn of(rows: &[LogRow], cols: &Columns) -> Groups {
        let mut g = Groups {
            raw: Vec::new(),
            hashes: Vec::new(),
            index: FxHashMap::default(),
            chain: Vec::new(),
            nan_rows: 0,
            inf_rows: 0,
        };
        // The input of each shared slice of values met so far, by its address.
        let mut seen: FxHashMap<usize, usize> = FxHashMap::default();
        for row in rows {
            if row.feedback.is_nan() {
                g.nan_rows += 1;
                continue;
            }
            if row.feedback.is_infinite() {
                g.inf_rows += 1;
            }
            let id = *seen
                .entry(Arc::as_ptr(&row.values) as *const Value as usize)
                .or_insert_with(|| g.input_of(row, cols));
            g.raw[id].feedback.push((row.choice, row.feedback));
        }
        g
    }

    /// The input of a row's values: an earlier one with the same key, or a new one.
    fn input_of(&mut self, row: &LogRow, cols: &Columns) -> usize {
        let (all, cols) = (cols.all, &cols.cols);
        let h = hash_values(cols.iter().map(|&c| &row.values[c]));
        let found = self.find(h, |r| {
            cols.iter()
                .zip(r.values.iter())
                .all(|(&c, v)| same_key(&row.values[c], v))
        });
        found.unwrap_or_else(|| {
            let values = if all {
                Arc::clone(&row.values)
            } else {
                cols.iter().map(|&c| row.values[c].clone()).collect()
            };
            self.push(
                h,
                RawInput {
                    values,
                    feedback: Vec::with_capacity(8),
                    line: row.line,
                },
            )
        })
    }

    /// The input of hash `h` that `is` accepts.
    fn find(&self, h: u64, is: impl Fn(&RawInput) -> bool) -> Option<usize> {
        let mut id = *self.index.get(&h)?;
        while id != u32::MAX {
            if is(&self.raw[id as usize]) {
                return Some(id as usize);
            }
            id = self.chain[id as usize];
        }
        None
    }

    /// Adds a new input of hash `h`; its id.
    fn push(&mut self, h: u64, r: RawInput) -> usize {
        let id = self.raw.len();
        let prev = self.index.insert(h, id as u32).unwrap_or(u32::MAX);
        self.chain.push(prev);
        self.hashes.push(h);
        self.raw.push(r);
        id
    }

    /// These inputs followed by those of the rows after them (`later`).
    fn merge(mut self, later: Groups) -> Groups {
        self.nan_rows += later.nan_rows;
        self.inf_rows += later.inf_rows;
        for (r, h) in later.raw.into_iter().zip(later.hashes) {
            let found = self.find(h, |e| {
                e.values
                    .iter()
                    .zip(r.values.iter())
                    .all(|(a, b)| same_key(a, b))
            });
            match found {
                Some(id) => self.raw[id].feedback.extend_from_slice(&r.feedback),
                None => {
                    self.push(h, r);
                }
            }
        }
        self
    }
}

/// True when two values group together: the same kind and the same bits or text.
fn same_key(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::Str(x), Value::Str(y)) => x == y,
        _ => false,
    }
}

/// A hash of values that [`same_key`] holds equal (kind tag, then the bits or text).
fn hash_values<'v>(values: impl Iterator<Item = &'v Value>) -> u64 {
    let mut h = FxHasher::default();
    for v in values {
        match v {
            Value::Bool(b) => h.write_u64(u64::from(*b)),
            Value::Int(i) => {
                h.write_u64(1);
                h.write_u64(*i as u64);
            }
            Value::Float(f) => {
                h.write_u64(2);
                h.write_u64(f.to_bits());
            }
            Value::Str(s) => {
                h.write_u64(3);
                h.write_u64(s.len() as u64);
                h.write(s.as_bytes());
            }
        }
    }
    h.finish()
}

/// Input ids in pandas' `groupby(sort=True)` order.
pub(super) fn groupby_order(raw: &[RawInput], kinds: &[ColumnKind]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..raw.len()).collect();
    order.sort_by(|&a, &b| {
        for (j, &kind) in kinds.iter().enumerate() {
            let o = cmp_values(&raw[a].values[j], &raw[b].values[j], kind);
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    });
    order
}
