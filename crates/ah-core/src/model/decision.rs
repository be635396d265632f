//! What a model or heuristic answers: a choice or unsure ([`Decision`], [`UnsureReason`]),
//! from a decision leaf's distribution ([`leaf_best_choices`]) or a regression's scores
//! ([`regression_decision`]).

use serde::{Deserialize, Serialize};

/// Why a model or heuristic gave no choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum UnsureReason {
    /// The device or context precondition does not hold.
    Precondition,
    /// No registered heuristic matches.
    NoHeuristic,
    /// The leaf was marked unsafe in training.
    UnsafeLeaf,
    /// The best probability (decision) or ratio (regression) is at or below the threshold.
    LowConfidence {
        /// The probability or ratio that was too low.
        confidence: f64,
    },
    /// A numeric feature lies outside the range seen in training.
    OutOfRange {
        /// The feature.
        feature: String,
    },
    /// The context lacks a feature the model reads.
    MissingFeature {
        /// The feature.
        feature: String,
    },
    /// The answer is not among the caller's choices.
    NotInChoices,
}

/// A model's or heuristic's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Index into the choices.
    Choice(usize),
    /// No answer; the caller falls back (autotunes).
    Unsure(UnsureReason),
}

impl Decision {
    /// The chosen index, if any.
    pub fn choice(&self) -> Option<usize> {
        match self {
            Decision::Choice(i) => Some(*i),
            Decision::Unsure(_) => None,
        }
    }
}

/// Sorted leaf entries `(probability, class index)` as PyTorch's `get_best_choices` emits
/// them: probability descending, ties in class-index order, zero probabilities dropped.
pub fn leaf_best_choices(value: &[f64]) -> Vec<(f64, usize)> {
    let mut v: Vec<(f64, usize)> = value
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, p)| *p > 0.0)
        .map(|(i, p)| (p, i))
        .collect();
    v.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    v
}

/// PyTorch's `LearnedHeuristicRegression.get_decision`: sort the scores; if
/// `highest / second_highest > threshold` the highest wins, else unsure. Needs two choices.
pub fn regression_decision(scores: &[(f64, usize)], threshold: f64) -> Decision {
    if scores.len() < 2 {
        return Decision::Unsure(UnsureReason::LowConfidence { confidence: 0.0 });
    }
    let mut s = scores.to_vec();
    s.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (best, idx) = s[s.len() - 1];
    let second = s[s.len() - 2].0;
    let ratio = best / second;
    if ratio > threshold {
        Decision::Choice(idx)
    } else {
        Decision::Unsure(UnsureReason::LowConfidence { confidence: ratio })
    }
}
