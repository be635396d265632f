//! A replay's decision on every input, as a table (`ah-use replay --decisions FILE`).
//!
//! One row per input, in the order the replay evaluates them (the evaluation table's): the
//! logged features, the fastest choice, each choice's time (the median over repetitions, as
//! the replay uses it), the pick or why there is none, the pick's loss and the tree's leaf.
//! Why an input is unsure is the runtime's [`UnsureReason`], written as its serialized tag
//! (`out_of_range`, `unsafe_leaf`, `low_confidence`, `not_in_choices`), so a CSV and a runtime
//! trace name a cause alike.

use ah_core::UnsureReason;
use ah_eval::table::Key;

/// Every input's decision in a replay.
#[derive(Debug, Clone)]
pub struct Decisions {
    /// Logged features, metadata order (the columns of [`DecisionRow::input`]).
    pub features: Vec<String>,
    /// The log's choices, sorted by name (the columns of [`DecisionRow::times_ms`]).
    pub choices: Vec<String>,
    /// One row per input, in evaluation order.
    pub rows: Vec<DecisionRow>,
}

/// One input's decision.
#[derive(Debug, Clone)]
pub struct DecisionRow {
    /// Logged feature text, one per [`Decisions::features`].
    pub input: Key,
    /// Index in [`Decisions::choices`] of the fastest choice (the replay's label).
    pub best: usize,
    /// Median time in ms per choice (`NaN`: not measured, `inf`: failed).
    pub times_ms: Vec<f64>,
    /// Index in [`Decisions::choices`] of the pick; `None` when unsure.
    pub decision: Option<usize>,
    /// Why there is no pick; `None` when decided.
    pub unsure: Option<UnsureReason>,
    /// `time(pick) / time(best)`; `None` when unsure.
    pub loss: Option<f64>,
    /// The tree's leaf (its node index in the model file); `None` when the range guard refused
    /// the input before the tree was evaluated.
    pub leaf: Option<usize>,
}

/// The serialized tag of an unsure reason (`"low_confidence"`, ...): the runtime's own name.
pub fn reason_tag(reason: &UnsureReason) -> String {
    serde_json::to_value(reason)
        .ok()
        .and_then(|v| v.get("reason").and_then(|t| t.as_str()).map(str::to_string))
        .unwrap_or_default()
}

/// A time or ratio as a CSV cell: empty when not measured, `inf` when failed.
fn number(x: f64) -> String {
    if x.is_nan() {
        String::new()
    } else {
        x.to_string()
    }
}

impl Decisions {
    /// The CSV header: the features, `best`, `<choice>_ms` per choice, `decision`,
    /// `unsure_reason`, `loss`, `leaf`.
    pub fn header(&self) -> Vec<String> {
        let mut h = self.features.clone();
        h.push("best".into());
        h.extend(self.choices.iter().map(|c| format!("{c}_ms")));
        h.extend(
            ["decision", "unsure_reason", "loss", "leaf"]
                .iter()
                .map(|s| s.to_string()),
        );
        h
    }

    /// The whole table as CSV (a header line, then one line per input).
    pub fn to_csv(&self) -> Result<Vec<u8>, csv::Error> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(self.header())?;
        for r in &self.rows {
            let mut rec: Vec<String> = r.input.to_vec();
            rec.push(self.choices[r.best].clone());
            rec.extend(r.times_ms.iter().map(|&t| number(t)));
            rec.push(
                r.decision
                    .map(|d| self.choices[d].clone())
                    .unwrap_or_default(),
            );
            rec.push(r.unsure.as_ref().map(reason_tag).unwrap_or_default());
            rec.push(r.loss.map(number).unwrap_or_default());
            rec.push(r.leaf.map(|l| l.to_string()).unwrap_or_default());
            w.write_record(&rec)?;
        }
        w.into_inner().map_err(|e| e.into_error().into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_has_one_line_per_row_and_names_reasons_as_the_runtime() {
        let d = Decisions {
            features: vec!["m".into(), "dtype".into()],
            choices: vec!["a".into(), "b".into()],
            rows: vec![
                DecisionRow {
                    input: vec!["3".to_string(), "torch.float16".to_string()].into(),
                    best: 1,
                    times_ms: vec![2.0, 0.5],
                    decision: Some(0),
                    unsure: None,
                    loss: Some(4.0),
                    leaf: Some(7),
                },
                DecisionRow {
                    input: vec!["1,5".to_string(), "x".to_string()].into(),
                    best: 0,
                    times_ms: vec![f64::INFINITY, f64::NAN],
                    decision: None,
                    unsure: Some(UnsureReason::OutOfRange {
                        feature: "m".into(),
                    }),
                    loss: None,
                    leaf: None,
                },
            ],
        };
        let text = String::from_utf8(d.to_csv().unwrap()).unwrap();
        assert_eq!(
            text,
            "m,dtype,best,a_ms,b_ms,decision,unsure_reason,loss,leaf\n\
             3,torch.float16,b,2,0.5,a,,4,7\n\
             \"1,5\",x,a,inf,,,out_of_range,,\n"
        );
        assert_eq!(
            reason_tag(&UnsureReason::LowConfidence { confidence: 0.4 }),
            "low_confidence"
        );
        assert_eq!(reason_tag(&UnsureReason::UnsafeLeaf), "unsafe_leaf");
        assert_eq!(reason_tag(&UnsureReason::NotInChoices), "not_in_choices");
    }
}
