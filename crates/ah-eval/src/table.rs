//! From a log to the classification table (spec 7.1, PyTorch's `AHTrainDecisionTree.get_df`).
//!
//! Steps: per (input, choice) the median feedback over repetitions (`inf` if any repetition is
//! `±inf`); inputs with at least two choices; the winner (fastest, first in choice-name order on
//! exact ties), the speedup (second best over best) and the choice-to-time map; augment
//! operations; one-hot columns for categorical features with categories in order of
//! appearance. Inputs are ordered as pandas' `groupby(features, sort=True)` orders them, so that
//! row positions, and hence the seeded split, are the reference's.
//!
//! The one evaluation table of the workspace: `ah-train` trains and evaluates on it, and
//! `ah-use replay` evaluates a trained model on it, so both report the same rows.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::path::Path;

use ah_core::model::Column;
use ah_core::ops::Operation;
use ah_core::stats::median;
use ah_core::{Log, Metadata, Value};

use crate::error::{EvalError, Result};

/// How pandas would type a logged column (it decides sorting and the text of values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ColumnKind {
    Bool,
    Int,
    Float,
    Str,
}

/// What was dropped or odd while building a table; the CLI prints these as warnings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildReport {
    /// Data rows read.
    pub rows: usize,
    /// Malformed lines skipped by the log reader.
    pub malformed_lines: usize,
    /// The first malformed lines (`file:line: reason`), for the warning.
    pub malformed_examples: Vec<String>,
    /// Rows whose feedback is NaN (ignored for the median).
    pub nan_feedback_rows: usize,
    /// Rows whose feedback is `±inf` (a failed choice).
    pub inf_rows: usize,
    /// Distinct inputs.
    pub inputs: usize,
    /// Inputs dropped because they had a single choice.
    pub single_choice_inputs: usize,
    /// Inputs whose every choice failed (`inf`); dropped unless kept for upstream fidelity.
    pub all_inf_inputs: usize,
    /// Whether all-`inf` inputs were kept.
    pub all_inf_kept: bool,
}

impl BuildReport {
    /// Human-readable warnings (empty when nothing is worth saying).
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.malformed_lines > 0 {
            w.push(format!(
                "{} malformed lines skipped (as pandas' on_bad_lines=\"skip\"){}{}",
                self.malformed_lines,
                if self.malformed_examples.is_empty() {
                    ""
                } else {
                    ": "
                },
                self.malformed_examples.join("; ")
            ));
        }
        if self.nan_feedback_rows > 0 {
            w.push(format!(
                "{} rows with NaN feedback ignored (not a measurement)",
                self.nan_feedback_rows
            ));
        }
        if self.single_choice_inputs > 0 {
            w.push(format!(
                "{} inputs with a single choice dropped (nothing to decide)",
                self.single_choice_inputs
            ));
        }
        if self.all_inf_inputs > 0 {
            if self.all_inf_kept {
                w.push(format!(
                    "{} inputs where every choice failed (inf) kept as PyTorch keeps them (--upstream)",
                    self.all_inf_inputs
                ));
            } else {
                w.push(format!(
                    "{} inputs where every choice failed (inf) dropped",
                    self.all_inf_inputs
                ));
            }
        }
        w
    }
}

/// An input's logged feature text, metadata order.
pub type Key = std::sync::Arc<[String]>;

/// The feature encoding learned on the training log and reused for `--data` sets.
#[derive(Debug, Clone)]
pub struct Encoding {
    /// Logged numerical features, metadata order.
    pub numerical: Vec<String>,
    /// Logged categorical features, metadata order.
    pub categorical: Vec<String>,
    /// Augment operations, in order.
    pub operations: Vec<Operation>,
    /// Categories per categorical feature (logged, then categorical operations), in order of
    /// appearance in the training table.
    pub categories: Vec<(String, Vec<String>)>,
    /// The tree's columns: numerical features, numerical operations, then one-hot columns.
    pub columns: Vec<Column>,
}

/// One processed dataset: one row per input (or per near-best copy when ranking).
#[derive(Debug, Clone)]
pub struct Table {
    /// Where it came from.
    pub name: String,
    /// Choices of this log, sorted by name; columns of [`Table::times`].
    pub choices: Vec<String>,
    /// Column values, row-major (`n x columns`), `f64` (one-hot 0/1).
    pub x: Vec<f64>,
    /// Number of columns.
    pub n_cols: usize,
    /// Median time per row and choice, `NaN` where the choice was not measured (`n x choices`).
    pub times: Vec<f64>,
    /// Index of the fastest choice (the label).
    pub winner: Vec<u32>,
    /// For ranking copies: the true winner; otherwise equal to `winner`.
    pub actual_winner: Vec<u32>,
    /// Sample weight (1, or `relative_performance` for ranking copies).
    pub weight: Vec<f64>,
    /// Second-best time over best time.
    pub speedup: Vec<f64>,
    /// Logged feature text per row, metadata order (for split files and reports); shared
    /// between a table and the sets taken from it.
    pub keys: Vec<Key>,
    /// Index of the original input (ranking copies share it).
    pub input: Vec<u32>,
}

impl Table {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.winner.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.winner.is_empty()
    }

    /// Row `i`'s column values.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.x[i * self.n_cols..(i + 1) * self.n_cols]
    }

    /// Time of choice column `c` for row `i` (`NaN` when not measured).
    pub fn time(&self, i: usize, c: usize) -> f64 {
        self.times[i * self.choices.len() + c]
    }

    /// Column of a choice name.
    pub fn choice_index(&self, name: &str) -> Option<usize> {
        self.choices.binary_search_by(|c| c.as_str().cmp(name)).ok()
    }

    /// The rows at `pos`, in that order.
    pub fn take(&self, pos: &[usize], name: &str) -> Table {
        let k = self.choices.len();
        let mut t = Table {
            name: name.to_string(),
            choices: self.choices.clone(),
            x: Vec::with_capacity(pos.len() * self.n_cols),
            n_cols: self.n_cols,
            times: Vec::with_capacity(pos.len() * k),
            winner: Vec::with_capacity(pos.len()),
            actual_winner: Vec::with_capacity(pos.len()),
            weight: Vec::with_capacity(pos.len()),
            speedup: Vec::with_capacity(pos.len()),
            keys: Vec::with_capacity(pos.len()),
            input: Vec::with_capacity(pos.len()),
        };
        for &i in pos {
            t.x.extend_from_slice(self.row(i));
            t.times.extend_from_slice(&self.times[i * k..(i + 1) * k]);
            t.winner.push(self.winner[i]);
            t.actual_winner.push(self.actual_winner[i]);
            t.weight.push(self.weight[i]);
            t.speedup.push(self.speedup[i]);
            t.keys.push(self.keys[i].clone());
            t.input.push(self.input[i]);
        }
        t
    }

    /// Best (smallest) measured time of row `i`.
    pub fn best_time(&self, i: usize) -> f64 {
        self.time(i, self.actual_winner[i] as usize)
    }

    /// Near-best copies for ranking (spec 7.1 step 5): every choice within `min_t / t >= 0.98`
    /// of the best becomes a row labelled with it, weighted by its relative performance.
    /// Copies follow their input, fastest first.
    pub fn near_best(&self) -> Table {
        let k = self.choices.len();
        let mut pos = Vec::new();
        let mut labels = Vec::new();
        let mut weights = Vec::new();
        for i in 0..self.len() {
            let best = self.best_time(i);
            let mut cands: Vec<(f64, usize)> = (0..k)
                .filter_map(|c| {
                    let t = self.time(i, c);
                    (!t.is_nan() && best / t >= 0.98).then_some((t, c))
                })
                .collect();
            cands.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for (t, c) in cands {
                pos.push(i);
                labels.push(c as u32);
                weights.push(best / t);
            }
        }
        let mut out = self.take(&pos, &self.name);
        out.winner = labels;
        out.weight = weights;
        out
    }
}

fn kind_of<'v>(values: impl Iterator<Item = &'v Value>) -> ColumnKind {
    let (mut b, mut i, mut f, mut s) = (false, false, false, false);
    for v in values {
        match v {
            Value::Bool(_) => b = true,
            Value::Int(_) => i = true,
            Value::Float(_) => f = true,
            Value::Str(_) => s = true,
        }
    }
    if s || (b && (i || f)) {
        ColumnKind::Str
    } else if b {
        ColumnKind::Bool
    } else if f {
        ColumnKind::Float
    } else {
        ColumnKind::Int
    }
}

/// Text of a value as pandas would print it for a column of the given kind.
fn text_of(v: &Value, kind: ColumnKind) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    match (kind, v) {
        (ColumnKind::Float, Value::Int(i)) => {
            Cow::Owned(ah_core::value::python_float_repr(*i as f64))
        }
        (_, Value::Bool(true)) => Cow::Borrowed("True"),
        (_, Value::Bool(false)) => Cow::Borrowed("False"),
        (_, Value::Str(s)) => Cow::Borrowed(s.as_str()),
        _ => Cow::Owned(v.to_string()),
    }
}

fn cmp_values(a: &Value, b: &Value, kind: ColumnKind) -> Ordering {
    match kind {
        ColumnKind::Str => display_text(a).cmp(&display_text(b)),
        _ => {
            let x = a.as_f64().unwrap_or(f64::NAN);
            let y = b.as_f64().unwrap_or(f64::NAN);
            match (a, b) {
                (Value::Int(p), Value::Int(q)) => p.cmp(q),
                _ => x.total_cmp(&y),
            }
        }
    }
}

/// A value's `Display` text, borrowed when it is a string.
fn display_text(v: &Value) -> std::borrow::Cow<'_, str> {
    match v {
        Value::Str(s) => std::borrow::Cow::Borrowed(s.as_str()),
        _ => std::borrow::Cow::Owned(v.to_string()),
    }
}

struct RawInput {
    values: Vec<Value>,
    /// (choice index of the log, feedback) per row, in file order.
    feedback: Vec<(u32, f64)>,
}

/// Malformed lines named in [`BuildReport::warnings`] (the count names them all).
const MALFORMED_EXAMPLES: usize = 5;

/// Options of [`build_table`].
#[derive(Debug, Clone, Copy, Default)]
pub struct BuildOptions {
    /// Keep inputs whose every choice failed (PyTorch does; their label is arbitrary).
    pub keep_all_inf: bool,
}

/// Builds the table of a log. With `encoding` `None` the categories are learned from this log
/// (the training log); otherwise the given encoding is applied (a `--data` set).
pub fn build_table(
    log: &Log,
    name: &str,
    operations: &[Operation],
    encoding: Option<&Encoding>,
    options: BuildOptions,
) -> Result<(Table, Encoding, BuildReport)> {
    let path = log.path.as_path();
    let features: Vec<String> = log.metadata.features().map(str::to_string).collect();
    let mut report = BuildReport {
        rows: log.rows.len(),
        malformed_lines: log.malformed.len(),
        malformed_examples: log
            .malformed
            .iter()
            .take(MALFORMED_EXAMPLES)
            .map(|m| format!("{}:{}: {}", path.display(), m.line, m.reason))
            .collect(),
        ..Default::default()
    };
    if log.rows.is_empty() {
        return Err(EvalError::Input {
            path: path.to_path_buf(),
            message: "the log has no data rows (only the metadata and header lines); collect some measurements first".into(),
        });
    }
    let raw = group_inputs(log, &features, &mut report);
    report.inputs = raw.len();
    let kinds: Vec<ColumnKind> = (0..features.len())
        .map(|j| kind_of(raw.iter().map(|r| &r.values[j])))
        .collect();
    let order = groupby_order(&raw, &kinds);
    let labels = label_inputs(log, &raw, &order, options, &mut report);
    report.all_inf_kept = options.keep_all_inf;
    if labels.kept.is_empty() {
        return Err(EvalError::Input {
            path: path.to_path_buf(),
            message: format!(
                "no input has two or more measured choices ({} inputs, choices seen: {}); a heuristic needs at least two choices per input",
                report.inputs,
                log.choices.join(", ")
            ),
        });
    }
    let cx = Slots::new(path, &features, &kinds, operations);
    let kept: Vec<&RawInput> = labels.kept.iter().map(|&id| &raw[id]).collect();
    let all_values = cx.augment(&kept)?;
    let keys = cx.keys(&kept);
    let encoding = match encoding {
        Some(e) => e.clone(),
        None => learn_encoding(
            &log.metadata,
            operations,
            &keys,
            &all_values,
            features.len(),
        ),
    };
    let x = cx.column_values(&encoding.columns, &kept, &all_values)?;
    let n = kept.len();
    let table = Table {
        name: name.to_string(),
        choices: labels.choices,
        x,
        n_cols: encoding.columns.len(),
        times: labels.times,
        actual_winner: labels.winner.clone(),
        winner: labels.winner,
        weight: vec![1.0; n],
        speedup: labels.speedup,
        keys,
        input: (0..n as u32).collect(),
    };
    Ok((table, encoding, report))
}

/// The log's rows grouped by input (the metadata features' values), in order of first
/// appearance; NaN feedback rows are counted and left out.
fn group_inputs(log: &Log, features: &[String], report: &mut BuildReport) -> Vec<RawInput> {
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
fn groupby_order(raw: &[RawInput], kinds: &[ColumnKind]) -> Vec<usize> {
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

/// The labelled inputs of a table: per kept input its median times, winner and speedup.
struct Labels {
    /// Choices sorted by name.
    choices: Vec<String>,
    /// Ids of the kept inputs, in table order.
    kept: Vec<usize>,
    /// Median time per kept input and choice (`kept x choices`).
    times: Vec<f64>,
    winner: Vec<u32>,
    speedup: Vec<f64>,
}

/// Median times, winner and speedup of each input in `order`; inputs with fewer than two
/// choices, and all-`inf` inputs unless kept, are counted in `report` and dropped.
fn label_inputs(
    log: &Log,
    raw: &[RawInput],
    order: &[usize],
    options: BuildOptions,
    report: &mut BuildReport,
) -> Labels {
    let mut choices: Vec<String> = log.choices.clone();
    choices.sort();
    let choice_col: Vec<usize> = log
        .choices
        .iter()
        .map(|c| choices.binary_search(c).expect("present"))
        .collect();
    let k = choices.len();
    let mut labels = Labels {
        choices,
        kept: Vec::new(),
        times: Vec::new(),
        winner: Vec::new(),
        speedup: Vec::new(),
    };
    let mut buf = MedianBuffers::default();
    for &id in order {
        let at = labels.times.len();
        labels.times.resize(at + k, f64::NAN);
        let t = &mut labels.times[at..];
        let n_choices = buf.median_times(&raw[id].feedback, &choice_col, t);
        if n_choices < 2 {
            report.single_choice_inputs += 1;
            labels.times.truncate(at);
            continue;
        }
        if t.iter().all(|x| x.is_nan() || x.is_infinite()) {
            report.all_inf_inputs += 1;
            if !options.keep_all_inf {
                labels.times.truncate(at);
                continue;
            }
        }
        // Fastest; exact ties go to the first choice in name order (a stable sort).
        let mut best = usize::MAX;
        for c in 0..k {
            if t[c].is_nan() {
                continue;
            }
            if best == usize::MAX || t[c] < t[best] {
                best = c;
            }
        }
        let sorted = &mut buf.sorted;
        sorted.clear();
        sorted.extend(t.iter().copied().filter(|x| !x.is_nan()));
        sorted.sort_by(f64::total_cmp);
        labels.speedup.push(sorted[1] / sorted[0]);
        labels.winner.push(best as u32);
        labels.kept.push(id);
    }
    labels
}

/// Buffers reused from input to input by [`label_inputs`].
#[derive(Default)]
struct MedianBuffers {
    feedback: Vec<(u32, f64)>,
    values: Vec<f64>,
    sorted: Vec<f64>,
}

impl MedianBuffers {
    /// Fills `t` (one slot per choice column, `NaN` on entry) with an input's median feedback
    /// per choice (`inf` if any repetition is `inf`); returns the number of choices measured.
    fn median_times(
        &mut self,
        feedback: &[(u32, f64)],
        choice_col: &[usize],
        t: &mut [f64],
    ) -> usize {
        let fb = &mut self.feedback;
        fb.clear();
        fb.extend_from_slice(feedback);
        fb.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let mut n_choices = 0;
        let mut i = 0;
        while i < fb.len() {
            let c = fb[i].0;
            let j = i + fb[i..].iter().take_while(|x| x.0 == c).count();
            let vals = &mut self.values;
            vals.clear();
            vals.extend(fb[i..j].iter().map(|x| x.1));
            let m = if vals.iter().any(|x| x.is_infinite()) {
                f64::INFINITY
            } else {
                median(vals)
            };
            t[choice_col[c as usize]] = m;
            n_choices += 1;
            i = j;
        }
        n_choices
    }
}

/// The encoding learned from a training table: categories in order of appearance (logged
/// categorical features, then categorical operations), then the columns.
fn learn_encoding(
    md: &Metadata,
    operations: &[Operation],
    keys: &[Key],
    all_values: &[Vec<Value>],
    n_features: usize,
) -> Encoding {
    let mut categories = Vec::new();
    for (j, f) in md.categorical_features.iter().enumerate() {
        let fj = md.numerical_features.len() + j;
        let mut seen: Vec<String> = Vec::new();
        for key in keys {
            if !seen.contains(&key[fj]) {
                seen.push(key[fj].clone());
            }
        }
        categories.push((f.clone(), seen));
    }
    for (p, op) in operations.iter().enumerate() {
        if op.is_categorical {
            let mut seen: Vec<String> = Vec::new();
            for vals in all_values {
                let s = text_of(&vals[n_features + p], ColumnKind::Str);
                if !seen.iter().any(|x| *x == s) {
                    seen.push(s.into_owned());
                }
            }
            categories.push((op.name.clone(), seen));
        }
    }
    let mut columns: Vec<Column> = md
        .numerical_features
        .iter()
        .map(|n| Column::Numeric { name: n.clone() })
        .collect();
    for op in operations.iter().filter(|o| !o.is_categorical) {
        columns.push(Column::Numeric {
            name: op.name.clone(),
        });
    }
    for (f, cats) in &categories {
        for c in cats {
            columns.push(Column::OneHot {
                feature: f.clone(),
                value: c.clone(),
            });
        }
    }
    Encoding {
        numerical: md.numerical_features.clone(),
        categorical: md.categorical_features.clone(),
        operations: operations.to_vec(),
        categories,
        columns,
    }
}

/// The values of an input by slot: logged features (metadata order), then operations.
struct Slots<'a> {
    path: &'a Path,
    features: &'a [String],
    kinds: &'a [ColumnKind],
    operations: &'a [Operation],
    /// A name's slot.
    slot: HashMap<&'a str, usize, std::hash::BuildHasherDefault<Fnv>>,
}

impl<'a> Slots<'a> {
    fn new(
        path: &'a Path,
        features: &'a [String],
        kinds: &'a [ColumnKind],
        operations: &'a [Operation],
    ) -> Self {
        let mut slot: HashMap<&str, usize, std::hash::BuildHasherDefault<Fnv>> = HashMap::default();
        for (j, f) in features.iter().enumerate() {
            slot.insert(f.as_str(), j);
        }
        for (p, op) in operations.iter().enumerate() {
            slot.insert(op.name.as_str(), features.len() + p);
        }
        Slots {
            path,
            features,
            kinds,
            operations,
            slot,
        }
    }

    fn error(&self, message: String) -> EvalError {
        EvalError::Input {
            path: self.path.to_path_buf(),
            message,
        }
    }

    /// Each input's values by slot (the augment operations evaluated).
    fn augment(&self, kept: &[&RawInput]) -> Result<Vec<Vec<Value>>> {
        use rayon::prelude::*;
        kept.par_iter()
            .map(|r| {
                let mut vals: Vec<Value> =
                    Vec::with_capacity(r.values.len() + self.operations.len());
                vals.extend_from_slice(&r.values);
                for op in self.operations {
                    let lookup = |name: &str| -> Option<Value> {
                        self.slot.get(name).and_then(|&j| vals.get(j).cloned())
                    };
                    let v = op.eval(&lookup).map_err(|e| {
                        self.error(format!(
                            "augment operation failed on input {}: {e}",
                            row_text(self.features, &r.values)
                        ))
                    })?;
                    vals.push(v);
                }
                Ok(vals)
            })
            .collect()
    }

    /// Each input's logged feature text.
    fn keys(&self, kept: &[&RawInput]) -> Vec<Key> {
        use rayon::prelude::*;
        kept.par_iter()
            .map(|r| {
                r.values
                    .iter()
                    .zip(self.kinds)
                    .map(|(v, kd)| text_of(v, *kd).into_owned())
                    .collect::<Vec<String>>()
                    .into()
            })
            .collect()
    }

    /// The row-major column values of the inputs under an encoding's columns.
    fn column_values(
        &self,
        columns: &[Column],
        kept: &[&RawInput],
        all_values: &[Vec<Value>],
    ) -> Result<Vec<f64>> {
        use rayon::prelude::*;
        // Per column: the slot it reads, and for one-hot columns the category.
        let mut col_slots: Vec<(usize, Option<&str>)> = Vec::with_capacity(columns.len());
        for col in columns {
            let (name, cat) = match col {
                Column::Numeric { name } => (name, None),
                Column::OneHot { feature, value } => (feature, Some(value.as_str())),
            };
            let j = *self.slot.get(name.as_str()).ok_or_else(|| {
                self.error(format!(
                    "feature `{name}` of the training encoding is missing from this log"
                ))
            })?;
            col_slots.push((j, cat));
        }
        let n_cols = col_slots.len();
        let mut x = vec![0.0; kept.len() * n_cols];
        let fill = |(row, (r, vals)): (&mut [f64], (&&RawInput, &Vec<Value>))| -> Result<()> {
            for (out, &(j, cat)) in row.iter_mut().zip(&col_slots) {
                *out = match cat {
                    None => self.numeric(&vals[j], j, r)?,
                    Some(c) => {
                        if text_of(&vals[j], self.text_kind(j)) == c {
                            1.0
                        } else {
                            0.0
                        }
                    }
                };
            }
            Ok(())
        };
        if n_cols == 0 {
            return Ok(x);
        }
        let filled = x
            .par_chunks_mut(n_cols)
            .zip(kept.par_iter().zip(all_values))
            .try_for_each(fill);
        if filled.is_err() {
            // The first bad input in table order names the error (the parallel pass may stop
            // at any of them).
            x.chunks_mut(n_cols)
                .zip(kept.iter().zip(all_values))
                .try_for_each(fill)?;
        }
        Ok(x)
    }

    /// A numerical column's value: finite and numeric, or an error naming the input.
    fn numeric(&self, v: &Value, j: usize, r: &RawInput) -> Result<f64> {
        let num = v.as_f64().ok_or_else(|| {
            self.error(format!(
                "numerical feature `{}` has the non-numeric value `{v}` (input {}); list it under categorical_features in the metadata",
                self.name(j),
                row_text(self.features, &r.values)
            ))
        })?;
        if !num.is_finite() {
            return Err(self.error(format!(
                "numerical feature `{}` is `{v}` for input {}; trees need finite features (as scikit-learn does): fix or drop those rows",
                self.name(j),
                row_text(self.features, &r.values)
            )));
        }
        Ok(num)
    }

    /// How a slot's values print: logged features by their column kind, operations as text.
    fn text_kind(&self, j: usize) -> ColumnKind {
        if j < self.features.len() {
            self.kinds[j]
        } else {
            ColumnKind::Str
        }
    }

    /// The name of a slot.
    fn name(&self, j: usize) -> &str {
        if j < self.features.len() {
            self.features[j].as_str()
        } else {
            self.operations[j - self.features.len()].name.as_str()
        }
    }
}

fn row_text(features: &[String], values: &[Value]) -> String {
    let parts: Vec<String> = features
        .iter()
        .zip(values)
        .map(|(f, v)| format!("{f}={v}"))
        .collect();
    parts.join(", ")
}

/// A fast multiply-rotate hash (FxHash-like, 8 bytes at a time) for grouping rows by their
/// (short, trusted) key bytes.
#[derive(Default)]
struct Fnv(u64);

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

#[cfg(test)]
mod tests {
    use super::*;
    use ah_core::ReadOptions;
    use std::path::Path;

    fn log_of(text: &str) -> Log {
        Log::from_reader(Path::new("t.txt"), text.as_bytes(), ReadOptions::default()).unwrap()
    }

    const MD: &str = r#"{"shared_memory": 0, "device_capa": [0, 0], "name": "t", "numerical_features": ["m"], "categorical_features": ["d"]}"#;

    #[test]
    fn median_winner_speedup_and_order() {
        let text = format!(
            "{MD}\nm,d,choice,feedback\n10,x,b,3.0\n10,x,a,2.0\n10,x,a,4.0\n10,x,a,1.0\n2,y,a,1.0\n2,y,b,0.5\n5,x,a,1.0\n"
        );
        let (t, enc, rep) =
            build_table(&log_of(&text), "train", &[], None, BuildOptions::default()).unwrap();
        assert_eq!(rep.single_choice_inputs, 1);
        assert_eq!(t.len(), 2);
        assert_eq!(t.choices, ["a", "b"]);
        // sorted by m: 2 then 10
        assert_eq!(&t.keys[0][..], ["2", "y"]);
        assert_eq!(t.winner, [1, 0]);
        assert_eq!(t.time(1, 0), 2.0); // median of 1,2,4
        assert_eq!(t.speedup[1], 1.5);
        // categories in order of appearance in the (sorted) table
        assert_eq!(enc.categories[0].1, ["y", "x"]);
        assert_eq!(t.row(0), [2.0, 1.0, 0.0]);
    }

    #[test]
    fn malformed_and_non_positive_rows_are_warned_with_file_and_line() {
        let text =
            format!("{MD}\nm,d,choice,feedback\n1,x,a,1.0\n1,x,b,-1.0\n1,x,b,0.0\n1,x,b,2.0\n");
        let (_, _, rep) =
            build_table(&log_of(&text), "train", &[], None, BuildOptions::default()).unwrap();
        let w = rep.warnings().join("\n");
        assert!(w.contains("2 malformed lines skipped"), "{w}");
        assert!(w.contains("t.txt:4: feedback `-1.0` is not a time"), "{w}");
        assert!(w.contains("t.txt:5: feedback `0.0`"), "{w}");
    }

    #[test]
    fn inf_and_nan_feedback() {
        let text = format!(
            "{MD}\nm,d,choice,feedback\n1,x,a,inf\n1,x,b,inf\n2,x,a,nan\n2,x,a,1.0\n2,x,b,inf\n"
        );
        let (t, _, rep) =
            build_table(&log_of(&text), "train", &[], None, BuildOptions::default()).unwrap();
        assert_eq!(rep.all_inf_inputs, 1);
        assert_eq!(rep.nan_feedback_rows, 1);
        assert_eq!(t.len(), 1);
        assert_eq!(t.winner, [0]);
        assert!(t.speedup[0].is_infinite());
    }
}
