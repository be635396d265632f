//! An input's values by slot (logged features, then augment operations): the operations
//! evaluated, the feature text, and the row-major column values under an encoding.

use std::path::Path;

use ah_core::model::Column;
use ah_core::ops::{Operation, SlotOperation};
use ah_core::Value;
use rustc_hash::FxHashMap;

use super::group::RawInput;
use super::values::{push_text, row_text, text_of, ColumnKind};
use super::Key;
use crate::error::{EvalError, Result};

/// The values of an input by slot: logged features (metadata order), then operations.
pub(super) struct Slots<'a> {
    path: &'a Path,
    features: &'a [String],
    kinds: &'a [ColumnKind],
    operations: &'a [Operation],
    /// A name's slot.
    slot: FxHashMap<&'a str, usize>,
}

impl<'a> Slots<'a> {
    pub(super) fn new(
        path: &'a Path,
        features: &'a [String],
        kinds: &'a [ColumnKind],
        operations: &'a [Operation],
    ) -> Self {
        let mut slot: FxHashMap<&str, usize> = FxHashMap::default();
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

    /// An error about the values of input `r`, naming the line of its first row.
    fn error_at(&self, r: &RawInput, message: String) -> EvalError {
        EvalError::Core(ah_core::Error::LogFormat {
            path: self.path.to_path_buf(),
            line: r.line,
            message,
        })
    }

    /// The augment operations' values of each input. Operation `p` reads a name by its slot
    /// when that slot is filled by then (a logged feature or an earlier operation); any other
    /// name is unknown to it. An error names the first input in table order that fails.
    pub(super) fn augment(&self, kept: &[&RawInput]) -> Result<OpValues> {
        use rayon::prelude::*;
        let n_features = self.features.len();
        let compiled: Vec<SlotOperation> = self
            .operations
            .iter()
            .enumerate()
            .map(|(p, op)| {
                SlotOperation::compile(op, &|name| {
                    self.slot.get(name).copied().filter(|&j| j < n_features + p)
                })
            })
            .collect();
        let n_ops = compiled.len();
        let mut values = vec![Value::Bool(false); kept.len() * n_ops];
        // `slots` holds an input's values by slot while its operations run (reused).
        let run = |slots: &mut Vec<Value>, (out, r): (&mut [Value], &&RawInput)| -> Result<()> {
            slots.clear();
            slots.extend_from_slice(&r.values);
            for op in &compiled {
                let v = op.eval(slots).map_err(|e| {
                    self.error_at(
                        r,
                        format!(
                            "augment operation failed on input {}: {e}; fix or drop the rows \
                             of this input",
                            ah_core::error::clip(&row_text(self.features, &r.values))
                        ),
                    )
                })?;
                slots.push(v);
            }
            for (o, v) in out.iter_mut().zip(slots.drain(n_features..)) {
                *o = v;
            }
            Ok(())
        };
        if n_ops > 0 {
            let done = values
                .par_chunks_mut(n_ops)
                .zip(kept.par_iter())
                .try_for_each_init(Vec::new, run);
            if done.is_err() {
                let mut slots = Vec::new();
                values
                    .chunks_mut(n_ops)
                    .zip(kept)
                    .try_for_each(|input| run(&mut slots, input))?;
            }
        }
        Ok(OpValues { values, n_ops })
    }

    /// Each input's logged feature text.
    pub(super) fn keys(&self, kept: &[&RawInput]) -> Vec<Key> {
        use rayon::prelude::*;
        kept.par_iter()
            .map(|r| {
                Key::write(r.values.len(), |j, text| {
                    push_text(text, &r.values[j], self.kinds[j])
                })
            })
            .collect()
    }

    /// The row-major column values of the inputs under an encoding's columns.
    pub(super) fn column_values(
        &self,
        columns: &[Column],
        kept: &[&RawInput],
        ops: &OpValues,
    ) -> Result<Vec<f64>> {
        use rayon::prelude::*;
        let fills = self.fills(columns)?;
        let n_cols = columns.len();
        let mut x = vec![0.0; kept.len() * n_cols];
        let fill = |(i, row): (usize, &mut [f64])| -> Result<()> {
            let r = kept[i];
            for f in &fills {
                let v = self.value(r, ops.of(i), f.slot);
                match &f.to {
                    Fill::Numeric(col) => row[*col] = self.numeric(v, f.slot, r)?,
                    Fill::OneHot(cats) => {
                        let text = text_of(v, self.text_kind(f.slot));
                        for (col, cat) in cats {
                            if *cat == text {
                                row[*col] = 1.0;
                            }
                        }
                    }
                }
            }
            Ok(())
        };
        if n_cols == 0 {
            return Ok(x);
        }
        let filled = x.par_chunks_mut(n_cols).enumerate().try_for_each(fill);
        if filled.is_err() {
            // The first bad input in table order names the error (the parallel pass may stop
            // at any of them).
            x.chunks_mut(n_cols).enumerate().try_for_each(fill)?;
        }
        Ok(x)
    }

    /// What each slot an encoding's columns read fills, in the order of the columns: a numeric
    /// column, or the one-hot columns of its categories (a slot's text is made once per input
    /// for all of them). Numeric columns keep their order, so the first that fails is the
    /// first in column order.
    fn fills<'c>(&self, columns: &'c [Column]) -> Result<Vec<SlotFill<'c>>> {
        let mut fills: Vec<SlotFill<'c>> = Vec::new();
        for (col, column) in columns.iter().enumerate() {
            let name = match column {
                Column::Numeric { name } => name,
                Column::OneHot { feature, .. } => feature,
            };
            let slot = *self.slot.get(name.as_str()).ok_or_else(|| {
                self.error(format!(
                    "feature `{name}` of the training encoding is missing from this log"
                ))
            })?;
            match column {
                Column::Numeric { .. } => fills.push(SlotFill {
                    slot,
                    to: Fill::Numeric(col),
                }),
                Column::OneHot { value, .. } => {
                    let one_hot = fills.iter_mut().find_map(|f| match &mut f.to {
                        Fill::OneHot(cats) if f.slot == slot => Some(cats),
                        _ => None,
                    });
                    match one_hot {
                        Some(cats) => cats.push((col, value.as_str())),
                        None => fills.push(SlotFill {
                            slot,
                            to: Fill::OneHot(vec![(col, value.as_str())]),
                        }),
                    }
                }
            }
        }
        Ok(fills)
    }

    /// Slot `j` of input `r`, whose operations' values are `ops`.
    fn value<'v>(&self, r: &'v RawInput, ops: &'v [Value], j: usize) -> &'v Value {
        match j.checked_sub(self.features.len()) {
            None => &r.values[j],
            Some(p) => &ops[p],
        }
    }

    /// A numerical column's value: finite and numeric, or an error naming the input.
    fn numeric(&self, v: &Value, j: usize, r: &RawInput) -> Result<f64> {
        let num = v.as_f64().ok_or_else(|| {
            self.error_at(r, format!(
                "numerical feature `{}` has the non-numeric value `{}` (input {}); list it under categorical_features in the metadata",
                self.name(j),
                ah_core::error::clip(&v.to_string()),
                ah_core::error::clip(&row_text(self.features, &r.values))
            ))
        })?;
        if !num.is_finite() {
            return Err(self.error_at(r, format!(
                "numerical feature `{}` is `{v}` for input {}; trees need finite features (as scikit-learn does): fix or drop those rows",
                self.name(j),
                ah_core::error::clip(&row_text(self.features, &r.values))
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

/// The augment operations' values of each input, row-major (`inputs x operations`): one
/// allocation, where a vector of every slot's values per input (17 features and 27 operations
/// for pad_mm) was a fifth of the trainer's heap.
pub(super) struct OpValues {
    values: Vec<Value>,
    n_ops: usize,
}

impl OpValues {
    /// The values of input `i`'s operations, in order.
    pub(super) fn of(&self, i: usize) -> &[Value] {
        &self.values[i * self.n_ops..(i + 1) * self.n_ops]
    }

    /// Number of inputs.
    pub(super) fn len(&self) -> usize {
        self.values.len().checked_div(self.n_ops).unwrap_or(0)
    }
}

/// What one slot fills in a row of column values ([`Slots::column_values`]).
struct SlotFill<'c> {
    slot: usize,
    to: Fill<'c>,
}

enum Fill<'c> {
    /// A numeric column, by index.
    Numeric(usize),
    /// One-hot columns, by index, with their categories: those whose category is the slot's
    /// text are 1, the others 0.
    OneHot(Vec<(usize, &'c str)>),
}
