//! The encoding learned from a training table (categories in order of appearance, then the
//! tree's columns); `--data` sets reuse it.

use ah_core::model::Column;
use ah_core::ops::Operation;
use ah_core::Metadata;

use super::key::Key;
use super::slots::OpValues;
use super::values::{text_of, ColumnKind};

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

/// The encoding learned from a training table: categories in order of appearance (logged
/// categorical features, then categorical operations), then the columns.
pub(super) fn learn_encoding(
    md: &Metadata,
    operations: &[Operation],
    keys: &[Key],
    ops: &OpValues,
) -> Encoding {
    let mut categories = Vec::new();
    for (j, f) in md.categorical_features.iter().enumerate() {
        let fj = md.numerical_features.len() + j;
        let mut seen: Vec<String> = Vec::new();
        for key in keys {
            let text = key.get(fj).expect("a key has every logged feature");
            if !seen.iter().any(|s| s == text) {
                seen.push(text.to_string());
            }
        }
        categories.push((f.clone(), seen));
    }
    for (p, op) in operations.iter().enumerate() {
        if op.is_categorical {
            let mut seen: Vec<String> = Vec::new();
            for i in 0..ops.len() {
                let s = text_of(&ops.of(i)[p], ColumnKind::Str);
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
