//! Cross-validation of the policy tree against the fixed rules on the same GEMMs.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::causes::Causes;
use super::data::Sample;
use super::folds::{folds, CvSplit};
use super::grow::Growth;
use super::misses::{self, Miss};
use super::policy::{ranking, Policy, Weighing};
use super::tree::Node;

/// One rule's totals over held-out GEMMs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RuleResult {
    /// The rule.
    pub rule: String,
    /// GEMMs scored.
    pub gemms: usize,
    /// Autotuning time of the kept choices, s (sum).
    pub autotune_s: f64,
    /// Geometric mean of compiled truth relative to default max-autotune's pick.
    pub run_vs_max_autotune: f64,
    /// Geometric mean of compiled truth relative to the faster of cuBLAS and Inductor's pick.
    pub run_vs_best: f64,
    /// GEMMs more than the harm bound slower than the faster of the two (the mean over the
    /// repeats of a repeated cross-validation).
    pub harmful: f64,
    /// The worst pick's truth over the faster of the two.
    pub worst: f64,
    /// GEMMs decided (not left to the whole full list: a trimmed one, [`Policy::Drop`], counts;
    /// the mean over repeats).
    pub decided: f64,
}

/// Scores `policies[i]` on `samples[i]`.
pub fn score(rule: &str, samples: &[&Sample], policies: &[Policy], w: &Weighing) -> RuleResult {
    let n = samples.len();
    let (mut autotune_s, mut log_ma, mut log_best, mut harmful, mut worst, mut decided) =
        (0.0, 0.0, 0.0, 0, 0.0f64, 0);
    for (s, p) in samples.iter().zip(policies) {
        let o = p.outcome(s);
        autotune_s += o.cost_s;
        log_ma += (o.run_ms / s.truth_autotune_ms).ln();
        log_best += (o.run_ms / s.best_truth_ms()).ln();
        harmful += usize::from(w.harmful(o, s));
        worst = worst.max(o.run_ms / s.best_truth_ms());
        decided += usize::from(*p != Policy::Default);
    }
    let gm = |x: f64| {
        if n == 0 {
            f64::NAN
        } else {
            (x / n as f64).exp()
        }
    };
    RuleResult {
        rule: rule.to_string(),
        gemms: n,
        autotune_s,
        run_vs_max_autotune: gm(log_ma),
        run_vs_best: gm(log_best),
        harmful: harmful as f64,
        worst,
        decided: decided as f64,
    }
}

/// The results of the repeats of a cross-validation as one: sums and counts are the repeats'
/// means, geometric means are over every decision of every repeat, the worst is the worst.
fn mean_of(repeats: &[RuleResult]) -> RuleResult {
    let r = repeats.len() as f64;
    let mean = |f: &dyn Fn(&RuleResult) -> f64| repeats.iter().map(f).sum::<f64>() / r;
    let gmean = |f: &dyn Fn(&RuleResult) -> f64| mean(&|x| f(x).ln()).exp();
    RuleResult {
        rule: repeats[0].rule.clone(),
        gemms: repeats[0].gemms,
        autotune_s: mean(&|x| x.autotune_s),
        run_vs_max_autotune: gmean(&|x| x.run_vs_max_autotune),
        run_vs_best: gmean(&|x| x.run_vs_best),
        harmful: mean(&|x| x.harmful),
        worst: repeats.iter().map(|x| x.worst).fold(0.0, f64::max),
        decided: mean(&|x| x.decided),
    }
}

/// The rules' results on a set of GEMMs, on all of them, on each op's and on each log's.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Scored {
    /// On every GEMM: default, fixed top-k, cuBLAS only, learned.
    pub all: Vec<RuleResult>,
    /// The same on each op's GEMMs (`mm`, `addmm`, `bmm`, by name), where there are several
    /// ops: where the learned rule wins and where it loses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_op: Vec<GroupResults>,
    /// The same on each log's GEMMs ([`Sample::log`], by name), where they come from several
    /// logs: how the learned rule does in each region the logs sample.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_log: Vec<GroupResults>,
    /// The learned rule's worst harmful picks ([`misses::worst`]; over repeats, the worst of
    /// any split).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub worst: Vec<Miss>,
    /// The learned rule's harmful picks by cause: on every GEMM, then on each op's where there
    /// are several ops.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<Causes>,
}

/// The rules' results on one group of the GEMMs: one op's, or one log's.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GroupResults {
    /// The op as logged, or the log's file name (model files before the breakdown by log
    /// named this `op`).
    #[serde(alias = "op")]
    pub group: String,
    /// Default, fixed top-k, cuBLAS only, learned.
    pub results: Vec<RuleResult>,
}

impl Scored {
    /// The four rules on `all`, on each op's GEMMs among them and on each log's.
    fn of(all: &[&Sample], ours: &[Policy], fixed: &[Policy], ctx: &Context<'_>) -> Scored {
        let ops = groups(all, |s| op_of(s, ctx.features));
        let w = ctx.weighing;
        let mut causes = vec![Causes::count("all", all, ours, w)];
        if ops.len() >= 2 {
            causes.extend(
                ops.iter()
                    .map(|(op, idx)| Causes::count(op, &pick(all, idx), &pick(ours, idx), w)),
            );
        }
        let breakdown = |groups: Vec<(String, Vec<usize>)>| -> Vec<GroupResults> {
            if groups.len() < 2 {
                return Vec::new();
            }
            groups
                .into_iter()
                .map(|(group, idx)| GroupResults {
                    group,
                    results: side_by_side(
                        &pick(all, &idx),
                        &pick(ours, &idx),
                        &pick(fixed, &idx),
                        ctx,
                    ),
                })
                .collect()
        };
        Scored {
            all: side_by_side(all, ours, fixed, ctx),
            by_op: breakdown(ops),
            by_log: breakdown(groups(all, |s| s.log.clone())),
            worst: misses::worst(all, ours, ctx.features, ctx.weighing),
            causes,
        }
    }

    /// The results of the repeats of a cross-validation as one ([`mean_of`]).
    fn mean_of(runs: &[Scored]) -> Scored {
        let mean = |of: &dyn Fn(&Scored) -> &[RuleResult]| -> Vec<RuleResult> {
            (0..of(&runs[0]).len())
                .map(|r| mean_of(&runs.iter().map(|x| of(x)[r].clone()).collect::<Vec<_>>()))
                .collect()
        };
        let groups = |of: &dyn Fn(&Scored) -> &[GroupResults]| -> Vec<GroupResults> {
            (0..of(&runs[0]).len())
                .map(|g| GroupResults {
                    group: of(&runs[0])[g].group.clone(),
                    results: mean(&|x| &of(x)[g].results),
                })
                .collect()
        };
        Scored {
            all: mean(&|x| &x.all),
            by_op: groups(&|x| &x.by_op),
            by_log: groups(&|x| &x.by_log),
            worst: misses::worst_of(runs.iter().flat_map(|x| x.worst.iter().cloned())),
            causes: (0..runs[0].causes.len())
                .map(|g| {
                    Causes::mean_of(&runs.iter().map(|x| x.causes[g].clone()).collect::<Vec<_>>())
                })
                .collect(),
        }
    }
}

/// What scoring needs besides the GEMMs and their policies.
struct Context<'a> {
    features: &'a [String],
    weighing: &'a Weighing,
    top_k: usize,
    learned: &'a str,
}

/// A GEMM's op (the `op` feature; `""` where a log has none).
fn op_of(s: &Sample, features: &[String]) -> String {
    let at = features.iter().position(|f| f == "op");
    at.and_then(|a| s.values.get(a))
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// The indices of `all` by `key`, keys by name.
fn groups(all: &[&Sample], key: impl Fn(&Sample) -> String) -> Vec<(String, Vec<usize>)> {
    let mut groups: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    for (i, s) in all.iter().enumerate() {
        groups.entry(key(s)).or_default().push(i);
    }
    groups.into_iter().collect()
}

/// `xs` at `idx`.
fn pick<T: Clone>(xs: &[T], idx: &[usize]) -> Vec<T> {
    idx.iter().map(|&i| xs[i].clone()).collect()
}

/// k-fold cross-validation (`split`: how, and `k`), `repeats` times over other splits
/// ([`folds`]): every GEMM is decided by a tree (and a fixed top-10 list) made without it;
/// returns the learned rule and the baselines, side by side, each the mean of the repeats
/// (`mean_of`). The repeats and their folds' trees grow in parallel (rayon's pool); each
/// tree is grown as alone, so the result does not depend on the number of threads.
/// `progress` is called once per tree grown.
pub fn cross_validate(
    samples: &[Sample],
    growth: &Growth<'_>,
    split: (CvSplit, usize),
    top_k: usize,
    repeats: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Scored {
    let (split, k) = split;
    let runs: Vec<Scored> = (0..repeats.max(1))
        .into_par_iter()
        .map(|r| {
            let folds = folds(samples, growth.features, split, k, r);
            cross_validate_with_folds(samples, growth, &folds, top_k, progress)
        })
        .collect();
    Scored::mean_of(&runs)
}

/// One cross-validation over the given folds (a partition of the GEMMs' indices); `progress` is
/// called once per fold's tree.
pub fn cross_validate_with_folds(
    samples: &[Sample],
    growth: &Growth<'_>,
    folds: &[Vec<usize>],
    top_k: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Scored {
    let n = samples.len();
    let decided: Vec<(Node, Vec<String>)> = folds
        .par_iter()
        .map(|test| {
            let train: Vec<&Sample> = (0..n)
                .filter(|i| !test.contains(i))
                .map(|i| &samples[i])
                .collect();
            let tree = growth.grow(&train);
            progress(1);
            let top = ranking(&train).into_iter().take(top_k).collect();
            (tree, top)
        })
        .collect();
    let mut ours = vec![Policy::Default; n];
    let mut fixed = vec![Policy::Default; n];
    for (test, (tree, top)) in folds.iter().zip(&decided) {
        for &i in test {
            ours[i] = tree.decide(&samples[i], growth.features).clone();
            fixed[i] = Policy::Keep {
                choices: top.clone(),
            };
        }
    }
    let all: Vec<&Sample> = samples.iter().collect();
    let ctx = Context {
        features: growth.features,
        weighing: &growth.weighing,
        top_k,
        learned: "learned (cross-validated)",
    };
    Scored::of(&all, &ours, &fixed, &ctx)
}

/// GEMMs a tree was not trained on (collected after it), decided by `tree` and by the fixed
/// top-k list of its training GEMMs, side by side with the fixed rules.
pub fn held_out(
    tree: &Node,
    train: &[Sample],
    test: &[Sample],
    features: &[String],
    top_k: usize,
    w: &Weighing,
) -> Scored {
    let train: Vec<&Sample> = train.iter().collect();
    let top: Vec<String> = ranking(&train).into_iter().take(top_k).collect();
    let test: Vec<&Sample> = test.iter().collect();
    let ours: Vec<Policy> = test
        .iter()
        .map(|s| tree.decide(s, features).clone())
        .collect();
    let fixed = vec![Policy::Keep { choices: top }; test.len()];
    let ctx = Context {
        features,
        weighing: w,
        top_k,
        learned: "learned (not trained on these)",
    };
    Scored::of(&test, &ours, &fixed, &ctx)
}

/// The four rules on the same GEMMs: default, fixed top-k, cuBLAS only, and `ours`.
fn side_by_side(
    all: &[&Sample],
    ours: &[Policy],
    fixed: &[Policy],
    ctx: &Context<'_>,
) -> Vec<RuleResult> {
    let (n, w) = (all.len(), ctx.weighing);
    vec![
        score(
            "default max-autotune (full list)",
            all,
            &vec![Policy::Default; n],
            w,
        ),
        score(
            &format!("fixed top-{} (PyTorch's rule)", ctx.top_k),
            all,
            fixed,
            w,
        ),
        score(
            "never autotune GEMMs (cuBLAS only)",
            all,
            &vec![Policy::Extern; n],
            w,
        ),
        score(ctx.learned, all, ours, w),
    ]
}

/// The results as a markdown table.
pub fn table(results: &[RuleResult]) -> String {
    let mut s = String::from(
        "| rule | GEMMs | autotuning s | run vs max-autotune (gmean) | run vs best (gmean) | harmful | worst | decided |\n|---|---|---|---|---|---|---|---|\n",
    );
    for r in results {
        s.push_str(&format!(
            "| {} | {} | {:.1} | {:.4} | {:.4} | {} | {:.3}x | {} |\n",
            r.rule,
            r.gemms,
            r.autotune_s,
            r.run_vs_max_autotune,
            r.run_vs_best,
            count(r.harmful),
            r.worst,
            count(r.decided)
        ));
    }
    s
}

/// Each group's results as one markdown table (`label`: what groups them, `op` or `log`), the
/// rules' rows under their group.
pub fn groups_table(label: &str, groups: &[GroupResults]) -> String {
    let mut s = format!(
        "| {label} | rule | GEMMs | autotuning s | run vs max-autotune (gmean) | harmful | worst |\n|---|---|---|---|---|---|---|\n",
    );
    for g in groups {
        for r in &g.results {
            s.push_str(&format!(
                "| {} | {} | {} | {:.1} | {:.4} | {} | {:.3}x |\n",
                crate::report::markdown_cell(&g.group),
                r.rule,
                r.gemms,
                r.autotune_s,
                r.run_vs_max_autotune,
                count(r.harmful),
                r.worst,
            ));
        }
    }
    s
}

/// The causes as a markdown table, a row per op.
pub fn causes_table(causes: &[Causes]) -> String {
    let mut s = String::from(
        "| op | harmful | cuBLAS only (a template won) | kept list without max-autotune's pick | kept max-autotune's pick (its own miss) | full list (its own miss) |\n|---|---|---|---|---|---|\n",
    );
    for c in causes {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            crate::report::markdown_cell(&c.op),
            count(c.total()),
            count(c.cublas_only),
            count(c.list_without_pick),
            count(c.list_with_pick),
            count(c.full_list),
        ));
    }
    s
}

/// A count, or a mean of counts over repeats: `150`, `151.3`.
fn count(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}
