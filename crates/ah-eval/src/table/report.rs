//! [`BuildReport`]: what was dropped or odd while building a table, and its warnings.

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
