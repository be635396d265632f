//! The log's rows grouped by input (the values of the metadata features), and the inputs in
//! pandas' `groupby(sort=True)` order.

use std::cmp::Ordering;
use std::collections::HashMap;

use ah_core::Value;
use ah_log::Log;

use super::report::BuildReport;
use super::values::{cmp_values, ColumnKind};

pub(super) struct RawInput {
    /// The metadata features' values, metadata order.
    pub(super) values: Vec<Value>,
    /// (choice index of the log, feedback) per row, in file order.
    pub(super) feedback: Vec<(u32, f64)>,
    /// The line of its first row in the log (for messages about its values).
    pub(super) line: usize,
}

/// The log's rows grouped by input (the metadata features' values), in order of first
/// appearance; NaN feedback rows are counted and left out.
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
    let mut index: HashMap<Vec<u8>, usize, std::hash::BuildHasherDefault<Fnv>> = HashMap::default();
    let mut raw: Vec<RawInput> = Vec::new();
    let mut key: Vec<u8> = Vec::with_capacity(256);
    for row in &log.rows {
        if row.feedback.is_nan() {
            report.nan_feedback_rows += 1;
            continue;
        }
        if row.feedback.is_infinite() {
            report.inf_rows += 1;
        }
        key.clear();
        for &c in &cols {
            push_key(&mut key, &row.values[c]);
        }
        let id = match index.get(key.as_slice()) {
            Some(&id) => id,
            None => {
                let id = raw.len();
                index.insert(key.clone(), id);
                raw.push(RawInput {
                    values: cols.iter().map(|&c| row.values[c].clone()).collect(),
                    feedback: Vec::with_capacity(8),
                    line: row.line,
                });
                id
            }
        };
        raw[id].feedback.push((row.choice, row.feedback));
    }
    raw
}

/// Appends a value's grouping key bytes (kind tag, then its bits or text).
fn push_key(key: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Bool(b) => key.extend_from_slice(&[0, u8::from(*b)]),
        Value::Int(i) => {
            key.push(1);
            key.extend_from_slice(&i.to_le_bytes());
        }
        Value::Float(f) => {
            key.push(2);
            key.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        Value::Str(s) => {
            key.push(3);
            key.extend_from_slice(&(s.len() as u64).to_le_bytes());
            key.extend_from_slice(s.as_bytes());
        }
    }
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

/// A fast multiply-rotate hash (FxHash-like, 8 bytes at a time) for grouping rows by their
/// (short, trusted) key bytes.
#[derive(Default)]
pub(super) struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut h = self.0;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            h = (h.rotate_left(5) ^ w).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
        self.0 = h;
    }
}
