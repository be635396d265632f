//! [`build_table`]: a log's table, from grouping its rows to the column values.

use ah_core::ops::Operation;
use ah_log::Log;

use super::encoding::learn_encoding;
use super::encoding::Encoding;
use super::frame::Table;
use super::group::{group_inputs, groupby_order, RawInput};
use super::label::label_inputs;
use super::options::BuildOptions;
use super::report::BuildReport;
use super::slots::Slots;
use super::values::{kind_of, ColumnKind};
use crate::error::{EvalError, Result};

/// Malformed lines named in [`BuildReport::warnings`] (the count names them all).
const MALFORMED_EXAMPLES: usize = 5;

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
    let ops = cx.augment(&kept)?;
    let keys = cx.keys(&kept);
    let encoding = match encoding {
        Some(e) => e.clone(),
        None => learn_encoding(&log.metadata, operations, &keys, &ops),
    };
    let x = cx.column_values(&encoding.columns, &kept, &ops)?;
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
