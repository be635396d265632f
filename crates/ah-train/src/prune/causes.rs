//! Why the learned rule's harmful picks were harmful, counted by op: the totals say how often
//! the rule loses, this says which kind of decision lost, so that the next change goes where
//! the losses are. On the 1251 training GEMMs of 2026-11-25 about two thirds of bmm's
//! cross-validated harmful picks were cuBLAS-only decisions on GEMMs where a template won
//! (docs/results.md), not kept lists that missed the winning config.

use serde::{Deserialize, Serialize};

use super::data::{name_key, Sample};
use super::policy::{Policy, Weighing};

/// The learned rule's harmful picks on some GEMMs, by the decision that made them (means over
/// the repeats of a repeated cross-validation).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Causes {
    /// The op, as logged (`all`: every GEMM).
    pub op: String,
    /// cuBLAS only, where max-autotune's pick (a template) was faster.
    pub cublas_only: f64,
    /// A kept list without max-autotune's pick (a full list without it, too: `Policy::Drop`):
    /// Inductor took a slower kept choice.
    pub list_without_pick: f64,
    /// A kept list with max-autotune's pick, which Inductor took, and which is itself slower
    /// than cuBLAS: max-autotune's own miss, made cheaper.
    pub list_with_pick: f64,
    /// The full list: max-autotune's own miss.
    pub full_list: f64,
}

impl Causes {
    /// The harmful picks of `ours` (one policy per GEMM of `all`) by cause, under `op`.
    pub fn count(op: &str, all: &[&Sample], ours: &[Policy], w: &Weighing) -> Causes {
        let mut c = Causes {
            op: op.to_string(),
            ..Causes::default()
        };
        for (s, p) in all.iter().zip(ours) {
            if !w.harmful(p.outcome(s), s) {
                continue;
            }
            *match p {
                Policy::Extern => &mut c.cublas_only,
                Policy::Default => &mut c.full_list,
                Policy::Keep { choices } if keeps_winner(s, choices) => &mut c.list_with_pick,
                Policy::Keep { .. } => &mut c.list_without_pick,
                // The full list without max-autotune's pick is a kept list without it.
                Policy::Drop { choices } if drops_winner(s, choices) => &mut c.list_without_pick,
                Policy::Drop { .. } => &mut c.full_list,
            } += 1.0;
        }
        c
    }

    /// Every cause's mean over `runs` (of one op).
    pub fn mean_of(runs: &[Causes]) -> Causes {
        let mean = |f: fn(&Causes) -> f64| runs.iter().map(f).sum::<f64>() / runs.len() as f64;
        Causes {
            op: runs[0].op.clone(),
            cublas_only: mean(|c| c.cublas_only),
            list_without_pick: mean(|c| c.list_without_pick),
            list_with_pick: mean(|c| c.list_with_pick),
            full_list: mean(|c| c.full_list),
        }
    }

    /// Every harmful pick counted.
    pub fn total(&self) -> f64 {
        self.cublas_only + self.list_without_pick + self.list_with_pick + self.full_list
    }
}

/// Whether the kept `choices` keep Inductor's pick among all of `s`'s choices.
/// Whether `choices`, matched by own name as `Policy::Drop` drops them, hold Inductor's pick.
fn drops_winner(s: &Sample, choices: &[String]) -> bool {
    s.winner()
        .is_some_and(|w| choices.iter().any(|c| name_key(c) == w.key()))
}

fn keeps_winner(s: &Sample, choices: &[String]) -> bool {
    let Some(winner) = s.winner_index() else {
        return false;
    };
    choices
        .iter()
        .any(|c| s.offered(name_key(c)) == Some(winner))
}
