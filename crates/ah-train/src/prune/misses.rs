//! The learned rule's worst picks on GEMMs it was not trained on, named one by one: totals say
//! how often the rule loses, this says where and by how much, so that a user can judge whether
//! the GEMMs it loses on are theirs.

use serde::{Deserialize, Serialize};

use super::data::Sample;
use super::policy::{Policy, Weighing};

/// Misses a report lists at most.
pub const LISTED: usize = 10;

/// One harmful pick of the learned rule.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Miss {
    /// The GEMM: op, batch x m x k x n, layout and dtype as logged.
    pub gemm: String,
    /// What the rule kept: `cuBLAS only`, `cuBLAS + N templates`.
    pub decision: String,
    /// Its pick's compiled truth over the faster of cuBLAS and Inductor's pick.
    pub ours: f64,
    /// Default max-autotune's pick over the same.
    pub max_autotune: f64,
    /// cuBLAS alone over the same.
    pub cublas: f64,
}

/// The [`LISTED`] worst harmful picks of `ours` on `all` (its policies, in order), worst first.
pub fn worst(all: &[&Sample], ours: &[Policy], features: &[String], w: &Weighing) -> Vec<Miss> {
    let misses = all.iter().zip(ours).filter_map(|(s, p)| {
        let o = p.outcome(s);
        w.harmful(o, s).then(|| {
            let best = s.best_truth_ms();
            Miss {
                gemm: describe(s, features),
                decision: decision(p),
                ours: o.run_ms / best,
                max_autotune: s.truth_autotune_ms / best,
                cublas: s.truth_default_ms / best,
            }
        })
    });
    worst_of(misses)
}

/// The [`LISTED`] worst of `misses`, each GEMM once (its worst), worst first, ties by name.
pub fn worst_of(misses: impl IntoIterator<Item = Miss>) -> Vec<Miss> {
    let mut all: Vec<Miss> = misses.into_iter().collect();
    all.sort_by(|a, b| b.ours.total_cmp(&a.ours).then(a.gemm.cmp(&b.gemm)));
    let mut out: Vec<Miss> = Vec::new();
    for m in all {
        if out.len() < LISTED && !out.iter().any(|o| o.gemm == m.gemm) {
            out.push(m);
        }
    }
    out
}

fn decision(p: &Policy) -> String {
    match p {
        Policy::Extern => "cuBLAS only".into(),
        Policy::Keep { choices } if choices.len() == 1 => "cuBLAS + 1 template".into(),
        Policy::Keep { choices } => format!("cuBLAS + {} templates", choices.len()),
        Policy::Default => "full list".into(),
        Policy::Drop { choices } => format!("full list less {} templates", choices.len()),
    }
}

/// `mm 1x256x7808x6919 NT bfloat16`: what the log says of a GEMM, from whichever of these
/// features it has (op, batch, m, k, n, the operands' strides, mat1_dtype).
fn describe(s: &Sample, features: &[String]) -> String {
    let get = |n: &str| {
        features
            .iter()
            .position(|f| f == n)
            .and_then(|i| s.values.get(i))
            .map(ToString::to_string)
    };
    let num = |n: &str| get(n).and_then(|v| v.parse::<i64>().ok());
    // An operand is transposed (T) when its first stride is the smaller: column-major.
    let layout = |mat: &str| match (
        num(&format!("{mat}_stride_0")),
        num(&format!("{mat}_stride_1")),
    ) {
        (Some(a), Some(b)) if a < b => "T",
        (Some(_), Some(_)) => "N",
        _ => "?",
    };
    let dims = ["batch", "m", "k", "n"].map(|d| get(d).unwrap_or_else(|| "?".into()));
    let dtype = get("mat1_dtype").unwrap_or_default();
    let text = format!(
        "{} {} {}{} {}",
        get("op").unwrap_or_default(),
        dims.join("x"),
        layout("mat1"),
        layout("mat2"),
        dtype.trim_start_matches("torch.")
    );
    text.trim().to_string()
}

/// The misses as a markdown table.
pub fn table(misses: &[Miss]) -> String {
    let mut s = String::from(
        "| GEMM (op batch x m x k x n, layout, dtype) | kept | ours | max-autotune | cuBLAS |\n|---|---|---|---|---|\n",
    );
    for m in misses {
        s.push_str(&format!(
            "| {} | {} | {:.3}x | {:.3}x | {:.3}x |\n",
            crate::report::markdown_cell(&m.gemm),
            m.decision,
            m.ours,
            m.max_autotune,
            m.cublas
        ));
    }
    s
}
