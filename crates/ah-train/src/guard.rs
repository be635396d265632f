//! The range guard's policy: which numeric features a model guards, and how far past the values
//! seen in training it still decides.
//!
//! At run time the guard makes the heuristic unsure for an input whose guarded feature lies
//! outside its stored range (`ah_core::model::Model::feature_ranges`); the final metrics apply
//! the same rule. A policy only chooses the stored ranges, so the runtime, the generated Rust and
//! Python code and their parity with the model are the same for every policy.
//!
//! - `box` (the default): every numeric feature, logged and augmented, strides included, within
//!   `[min, max]` of training. A near miss on any of them (k = 768 when the smallest k seen was
//!   776) makes the heuristic unsure.
//! - `tested`: only the numeric features the tree tests. Outside the range of an untested
//!   feature the tree's answer does not change, so guarding it refuses inputs for nothing.
//! - `logged`: only the logged numeric features (the raw shape), not augmented ones.
//!
//! Each takes an optional margin `:F` (`tested:2`): a range widens to `[min / F, max * F]` (a
//! margin in log space, the scale of shapes); bounds at or below 0 stay as seen.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use ah_core::model::{Column, FeatureRange};

use ah_eval::table::{Encoding, Table};

/// Which numeric features the guard checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardFeatures {
    /// Every numeric column (logged and augmented).
    All,
    /// The numeric columns the tree splits on.
    Tested,
    /// The logged numeric features (not augmented ones).
    Logged,
}

/// A guard policy: features and margin (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GuardPolicy {
    /// Which features.
    pub features: GuardFeatures,
    /// Log-space margin factor, at least 1 (1: the ranges seen).
    pub margin: f64,
}

impl GuardPolicy {
    /// Every numeric feature within the range seen (the guard before policies existed).
    pub const BOX: GuardPolicy = GuardPolicy {
        features: GuardFeatures::All,
        margin: 1.0,
    };

    /// The guarded ranges as `(column, range)`: numeric columns in column order, each over the
    /// rows of `t` (the rows the tree was fitted on), widened by the margin. `tested` lists the
    /// columns the tree splits on.
    pub fn ranges(
        &self,
        encoding: &Encoding,
        t: &Table,
        tested: impl IntoIterator<Item = usize>,
    ) -> Vec<(usize, FeatureRange)> {
        let tested: BTreeSet<usize> = tested.into_iter().collect();
        encoding
            .columns
            .iter()
            .enumerate()
            .filter_map(|(c, col)| match col {
                Column::Numeric { name } if self.guards(c, name, encoding, &tested) => {
                    Some((c, self.range(name, c, t)))
                }
                _ => None,
            })
            .collect()
    }

    fn guards(&self, c: usize, name: &str, e: &Encoding, tested: &BTreeSet<usize>) -> bool {
        match self.features {
            GuardFeatures::All => true,
            GuardFeatures::Tested => tested.contains(&c),
            GuardFeatures::Logged => e.numerical.iter().any(|n| n == name),
        }
    }

    fn range(&self, name: &str, c: usize, t: &Table) -> FeatureRange {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for i in 0..t.len() {
            let v = t.row(i)[c];
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if self.margin != 1.0 {
            if lo > 0.0 {
                lo /= self.margin;
            }
            if hi > 0.0 {
                hi *= self.margin;
            }
        }
        FeatureRange {
            name: name.to_string(),
            min: lo,
            max: hi,
        }
    }
}

impl Default for GuardPolicy {
    fn default() -> Self {
        Self::BOX
    }
}

impl fmt::Display for GuardPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.features {
            GuardFeatures::All => "box",
            GuardFeatures::Tested => "tested",
            GuardFeatures::Logged => "logged",
        })?;
        if self.margin != 1.0 {
            write!(f, ":{}", self.margin)?;
        }
        Ok(())
    }
}

impl FromStr for GuardPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (name, margin) = s.split_once(':').unwrap_or((s, "1"));
        let features = match name {
            "box" => GuardFeatures::All,
            "tested" => GuardFeatures::Tested,
            "logged" => GuardFeatures::Logged,
            _ => return Err(format!("`{name}` is not a guard policy: box, tested or logged, optionally with a margin such as tested:2")),
        };
        let margin = match margin.parse::<f64>() {
            Ok(m) if m.is_finite() && m >= 1.0 => m,
            _ => {
                return Err(format!(
                    "`{margin}` is not a margin: give a factor of at least 1, e.g. {name}:2"
                ))
            }
        };
        Ok(GuardPolicy { features, margin })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_print_and_refuse_nonsense() {
        for s in ["box", "tested", "logged:2", "tested:1.5"] {
            assert_eq!(s.parse::<GuardPolicy>().unwrap().to_string(), s);
        }
        assert_eq!("box:1".parse::<GuardPolicy>().unwrap(), GuardPolicy::BOX);
        for bad in [
            "",
            "boxes",
            "tested:0.5",
            "tested:x",
            "tested:inf",
            "tested:",
        ] {
            let e = bad.parse::<GuardPolicy>().unwrap_err();
            assert!(
                e.contains("guard policy") || e.contains("margin"),
                "{bad}: {e}"
            );
        }
    }
}
