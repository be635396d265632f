//! What a leaf does with Inductor's choice list, and what that costs and yields on a GEMM.

use serde::{Deserialize, Serialize};

use super::data::{faster, name_key, Choice, GemmOp, Sample};
use super::keymap::KeyMap;
use super::pricing::list_s;
use super::retime::retimed_ms;

/// A leaf's decision, made before any Triton template is generated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Policy {
    /// Keep only the ATen (cuBLAS) choices: no template is generated or benchmarked.
    Extern,
    /// Keep the ATen choices and these template choices, each as Inductor sizes it to the
    /// GEMM ([`super::sizing`]).
    Keep {
        /// Choice names (`python/ah_inductor/naming.py`).
        choices: Vec<String>,
    },
    /// Unsure: Inductor's full list (default max-autotune).
    Default,
    /// Unsure, but not about everything: Inductor's full list without these template choices,
    /// matched by their own names as Inductor offers them to the GEMM (configs that never came
    /// near the best on the training GEMMs this leaf's region holds: [`super::drop`]).
    Drop {
        /// Choice names (`python/ah_inductor/naming.py`).
        choices: Vec<String>,
    },
}

/// What a policy costs and yields on one GEMM.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// Compile-time price of the kept choices, s.
    pub cost_s: f64,
    /// Compiled truth of what Inductor then picks, ms per call (estimated for a kept choice
    /// that was neither cuBLAS nor Inductor's pick: its benchmark scaled by the pick's
    /// truth over its benchmark).
    pub run_ms: f64,
}

impl Policy {
    /// This policy on `s`.
    pub fn outcome(&self, s: &Sample) -> Outcome {
        Scorer::of(self).outcome(s)
    }
}

/// A policy made ready to score many GEMMs: a kept list's [`name_key`]s, found once.
enum Scorer {
    Default,
    Kept(Vec<u64>),
    Dropped(Vec<u64>),
}

impl Scorer {
    fn of(p: &Policy) -> Scorer {
        match p {
            Policy::Default => Scorer::Default,
            Policy::Extern => Scorer::Kept(Vec::new()),
            Policy::Keep { choices } => Scorer::Kept(keys(choices)),
            Policy::Drop { choices } => Scorer::Dropped(keys(choices)),
        }
    }

    fn outcome(&self, s: &Sample) -> Outcome {
        match self {
            Scorer::Default => {
                let retimed = s.retime_below_ms.and_then(|below| {
                    let all: Vec<usize> = (0..s.choices().len()).collect();
                    retimed_ms(s, &all, below)
                });
                Outcome {
                    cost_s: s.autotune_s,
                    run_ms: retimed.unwrap_or(s.truth_autotune_ms),
                }
            }
            Scorer::Kept(keys) => {
                let kept: Vec<usize> = keys.iter().filter_map(|&k| s.offered(k)).collect();
                // Configs that cannot run here: the handler leaves the GEMM to the full list.
                if !kept.is_empty() && kept.iter().all(|&i| s.choices()[i].is_unfit()) {
                    return Scorer::Default.outcome(s);
                }
                kept_outcome(s, &kept)
            }
            Scorer::Dropped(keys) => {
                let kept: Vec<usize> = (s.choices().iter().enumerate())
                    .filter(|(_, c)| !c.is_extern() && !keys.contains(&c.key()))
                    .map(|(i, _)| i)
                    .collect();
                kept_outcome(s, &kept)
            }
        }
    }
}

fn keys(names: &[String]) -> Vec<u64> {
    names.iter().map(|n| name_key(n)).collect()
}

/// What `s` costs and yields when a pruned list leaves it the one cuBLAS choice and the
/// template choices `kept` (indices; one may repeat): the kept choices, each once in log order,
/// are counted, priced and searched for the fastest. (A pass over all of a GEMM's choices per
/// policy was most of a tree's growth; a list keeps a few of them.)
fn kept_outcome(s: &Sample, kept: &[usize]) -> Outcome {
    let choices = s.choices();
    let templates = kept.iter().copied().filter(|&i| !choices[i].is_extern());
    let mut at: Vec<usize> = templates.chain(s.kept_extern_index()).collect();
    at.sort_unstable();
    at.dedup();
    let kept = at.iter().map(|&i| (i, &choices[i]));
    let picked = kept.clone().fold(None, faster);
    // One choice left: Inductor takes it without autotuning.
    let cost_s = if at.len() > 1 {
        list_s(kept.map(|(_, c)| c), picked.map(|(_, c)| c))
    } else {
        0.0
    };
    let retimed = s
        .retime_below_ms
        .and_then(|below| retimed_ms(s, &at, below));
    let run_ms = retimed.unwrap_or_else(|| benchmark_pick_ms(s, picked));
    Outcome { cost_s, run_ms }
}

/// Compiled truth of `picked`, the kept choice Inductor's benchmark picks (estimated for a
/// template that is neither cuBLAS nor Inductor's pick among all choices).
fn benchmark_pick_ms(s: &Sample, picked: Option<(usize, &Choice)>) -> f64 {
    match (picked, s.winner()) {
        (None, _) => s.truth_default_ms,
        (Some((_, p)), _) if p.is_extern() => s.truth_default_ms,
        (Some((i, _)), _) if Some(i) == s.winner_index() => s.truth_autotune_ms,
        (Some((_, p)), Some(w)) if w.bench_ms > 0.0 => {
            p.bench_ms * s.truth_autotune_ms / w.bench_ms
        }
        _ => s.truth_default_ms,
    }
}

/// How outcomes are weighed (see [`super::PruneParams`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weighing {
    /// Calls of the GEMM a job makes: a run-time loss counts this many times.
    pub horizon: f64,
    /// A pick more than this much slower than the faster of cuBLAS and Inductor's pick is
    /// harmful (0.03: 3 %).
    pub harm: f64,
    /// Seconds of autotuning a harmful pick is worth avoiding: a policy's score is then its
    /// loss plus this price per harmful pick. Infinite (the default): harmful picks first,
    /// then the loss, so a leaf spends any autotuning that avoids one harmful pick.
    pub harm_price_s: f64,
    /// Per op ([`GemmOp::index`]), a price that replaces [`Self::harm_price_s`] for that op's
    /// GEMMs (`--op-harm-price bmm=30`): where one op's harmful picks are dearer to the user
    /// than the others', or its held-out misses say the flat price buys too few of them.
    pub op_harm_price_s: [Option<f64>; 3],
}

impl Weighing {
    /// Seconds a job pays for `o` on `s`: compile-time price plus the run-time loss against
    /// the best of cuBLAS and Inductor's pick over the horizon.
    pub fn loss_s(&self, o: Outcome, s: &Sample) -> f64 {
        o.cost_s + self.horizon * (o.run_ms - s.best_truth_ms()).max(0.0) / 1e3
    }

    /// Whether `o` is a harmful pick on `s`.
    pub fn harmful(&self, o: Outcome, s: &Sample) -> bool {
        o.run_ms > (1.0 + self.harm) * s.best_truth_ms()
    }

    /// Whether `o` is faster than cuBLAS alone on `s` by more than the harm bound: a case where
    /// keeping templates pays.
    pub fn gains(&self, o: Outcome, s: &Sample) -> bool {
        o.run_ms * (1.0 + self.harm) < s.truth_default_ms
    }

    /// A policy's score on some samples, lower is better and scores add up over disjoint
    /// samples: (harmful picks whose price is infinite, loss plus the finite prices of the other
    /// harmful picks; an op's price in [`Self::op_harm_price_s`], else the flat one). With one infinite price that is (harmful picks, loss); with
    /// one finite price, (0, loss plus the harmful picks' price).
    pub fn score(&self, p: &Policy, samples: &[&Sample]) -> (usize, f64) {
        self.score_outcomes(samples, &outcomes(p, samples))
    }

    /// [`Self::score`] of a policy whose outcomes on `samples` are `outcomes` (same order).
    fn score_outcomes(&self, samples: &[&Sample], outcomes: &[Outcome]) -> (usize, f64) {
        // Harmful picks counted by who prices them: the flat price, then each op's.
        let mut harmful = [0usize; 1 + GemmOp::ALL.len()];
        let by_op = self.op_harm_price_s.iter().any(Option::is_some);
        let mut l = 0.0;
        for (s, &o) in samples.iter().zip(outcomes) {
            if self.harmful(o, s) {
                let own =
                    s.op.filter(|op| by_op && self.op_harm_price_s[op.index()].is_some());
                harmful[own.map_or(0, |op| 1 + op.index())] += 1;
            }
            l += self.loss_s(o, s);
        }
        let prices = std::iter::once(self.harm_price_s)
            .chain(GemmOp::ALL.map(|op| self.op_harm_price_s[op.index()].unwrap_or(0.0)));
        let mut unpriced = 0;
        for (price, h) in prices.zip(harmful).filter(|&(_, h)| h > 0) {
            if price.is_finite() {
                l += price * h as f64;
            } else {
                unpriced += h;
            }
        }
        (unpriced, l)
    }
}

/// Template choices ranked for a set of GEMMs: by how many of them a choice's benchmark is
/// within 3 % of their best template choice, then by its mean benchmark relative to that best,
/// then by name.
pub fn ranking(samples: &[&Sample]) -> Vec<String> {
    // Keyed by name_key: a tree's growth ranks every candidate split's sides, and a map keyed
    // by the names spent most of that comparing them.
    let mut stats: KeyMap<(&str, usize, f64, usize)> = Default::default();
    for s in samples {
        let templates = || {
            s.choices()
                .iter()
                .filter(|c| !c.is_extern() && c.bench_ms.is_finite())
        };
        let Some(best) = templates().map(|c| c.bench_ms).reduce(f64::min) else {
            continue;
        };
        for c in templates() {
            let (key, name) = c.ranked_as();
            let e = stats.entry(key).or_insert((name, 0, 0.0, 0));
            e.1 += usize::from(c.bench_ms <= 1.03 * best);
            e.2 += c.bench_ms / best;
            e.3 += 1;
        }
    }
    let mut ranked: Vec<(&str, usize, f64)> = stats
        .into_values()
        .map(|(n, near, rel, count)| (n, near, rel / count as f64))
        .collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.total_cmp(&b.2)).then(a.0.cmp(b.0)));
    ranked.into_iter().map(|(n, _, _)| n.to_string()).collect()
}

/// Which policies a leaf may take (see [`candidates`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeafRule {
    /// Fewest GEMMs of a leaf on which a list of templates must beat cuBLAS alone.
    pub min_support: usize,
    /// Fewest GEMMs of a leaf on which cuBLAS alone must be safe (within the harm bound) for
    /// the leaf to decide cuBLAS only, when it may leave GEMMs to the full list instead (0:
    /// always a candidate). A leaf of a few GEMMs that all ran best on cuBLAS decided cuBLAS
    /// only for a region it barely saw: set 15's and set 16's blind weight gradients with a
    /// misaligned width over 16384-151500 rows (a 5-GEMM leaf) ran 2.0-2.2x behind a template.
    pub min_extern_support: usize,
    /// Whether a leaf may leave a GEMM to Inductor's full list (default max-autotune). Without
    /// it the most a leaf keeps is its top 8 templates: a bound on autotuning time that the
    /// harmful-first score would otherwise spend on leaves of noisy or large GEMMs.
    pub full_list: bool,
    /// Whether a final leaf also weighs [`grown_lists`] (see [`best_leaf_policy`]).
    pub grown: bool,
    /// The most template choices a list keeps (default [`MAX_KEEP`]): fewer bound a GEMM's
    /// autotuning time lower, since each kept choice is generated, compiled and benchmarked.
    pub max_keep: usize,
}

/// The candidate policies of a leaf: cuBLAS only, the leaf's top 1, 2, 3, 4, 6 and 8 template
/// choices (those sizes up to `rule.max_keep`, and `rule.max_keep` itself), and the full list
/// (when `rule.full_list`). cuBLAS only is a candidate when it is safe on at least
/// `rule.min_extern_support` of the leaf's GEMMs, or when there is no full list to fall back
/// on. A list of templates is a candidate only
/// when it beats cuBLAS alone by more than the harm bound on at least `rule.min_support` of the
/// leaf's GEMMs: its case must rest on more than one or two GEMMs (one fp32 GEMM whose Triton
/// pick won once made a leaf keep that config for every shape that reached it, and a held-out
/// bf16 decode GEMM then ran 2.2x slower than cuBLAS).
pub fn candidates(samples: &[&Sample], w: &Weighing, rule: LeafRule) -> Vec<Policy> {
    weighed_candidates(samples, w, rule)
        .into_iter()
        .map(|(p, _)| p)
        .collect()
}

/// A policy with its outcome on each GEMM it is weighed on, in their order. A leaf's candidates
/// are asked both how often they beat cuBLAS ([`support`]) and what they score, and finding the
/// outcomes is most of a tree's growth: weighed once, they answer both.
type Weighed = (Policy, Vec<Outcome>);

/// The outcomes of `p` on `samples`, in their order.
fn outcomes(p: &Policy, samples: &[&Sample]) -> Vec<Outcome> {
    let scorer = Scorer::of(p);
    samples.iter().map(|s| scorer.outcome(s)).collect()
}

/// `p` with its outcomes on `samples`.
fn weigh(p: Policy, samples: &[&Sample]) -> Weighed {
    let o = outcomes(&p, samples);
    (p, o)
}

/// [`candidates`], weighed on `samples`.
fn weighed_candidates(samples: &[&Sample], w: &Weighing, rule: LeafRule) -> Vec<Weighed> {
    let ranked = ranking(samples);
    let mut out = Vec::new();
    let only_cublas = weigh(Policy::Extern, samples);
    if !rule.full_list || safe_count(samples, &only_cublas.1, w) >= rule.min_extern_support {
        out.push(only_cublas);
    }
    let mut sizes: Vec<usize> = [1, 2, 3, 4, 6, MAX_KEEP, rule.max_keep]
        .into_iter()
        .filter(|&k| k <= rule.max_keep)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    for k in sizes {
        if k <= ranked.len() {
            let keep = Policy::Keep {
                choices: ranked[..k].to_vec(),
            };
            let keep = weigh(keep, samples);
            if gain_count(samples, &keep.1, w) >= rule.min_support {
                out.push(keep);
            }
        }
    }
    if rule.full_list {
        out.push(weigh(Policy::Default, samples));
    }
    out
}

/// The most template choices a list keeps by default (without the full list).
pub const MAX_KEEP: usize = 8;

/// Lists of templates grown one choice at a time for a leaf's GEMMs, each step adding the
/// choice whose list scores lowest (harmful picks, then loss; ties: by name): sizes 1 to
/// `max_keep`. Unlike the prefixes of [`ranking`], which favour what wins on most of a leaf,
/// a grown list also takes a choice that only a minority of the leaf needs (a decode LM head
/// in a leaf of prefill LM heads) when that avoids harmful picks.
pub fn grown_lists(samples: &[&Sample], w: &Weighing, max_keep: usize) -> Vec<Policy> {
    let mut names: Vec<&str> = samples
        .iter()
        .flat_map(|s| s.choices().iter())
        .filter(|c| !c.is_extern() && c.bench_ms.is_finite())
        .map(|c| c.ranked_as().1)
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut chosen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    while chosen.len() < max_keep {
        let lists = names
            .iter()
            .filter(|n| !chosen.iter().any(|c| c == *n))
            .map(|n| {
                let mut list = chosen.clone();
                list.push((*n).to_string());
                Policy::Keep { choices: list }
            });
        let step = lowest(lists, samples, w);
        let Some((Policy::Keep { choices }, _)) = step else {
            break;
        };
        chosen = choices;
        out.push(Policy::Keep {
            choices: chosen.clone(),
        });
    }
    out
}

/// The best policy for a leaf's final decision: the candidates of [`best_policy`] and the
/// [`grown_lists`] with enough support, scored alike. Growing lists costs a score per choice and
/// size, so the tree grows with [`best_policy`] and only its leaves take this one.
pub fn best_leaf_policy(samples: &[&Sample], w: &Weighing, rule: LeafRule) -> Policy {
    let grown = if rule.grown {
        grown_lists(samples, w, rule.max_keep)
    } else {
        Vec::new()
    };
    let grown = grown
        .into_iter()
        .map(|p| weigh(p, samples))
        .filter(|(_, o)| gain_count(samples, o, w) >= rule.min_support);
    let all = weighed_candidates(samples, w, rule)
        .into_iter()
        .chain(grown);
    lowest_weighed(all, samples, w)
        .map(|(p, _)| p)
        .expect("cuBLAS only or the full list is always a candidate")
}

/// The policy of `policies` that scores lowest on `samples` (harmful picks, then loss; the
/// first of equals), with its score.
fn lowest(
    policies: impl Iterator<Item = Policy>,
    samples: &[&Sample],
    w: &Weighing,
) -> Option<(Policy, (usize, f64))> {
    lowest_weighed(policies.map(|p| weigh(p, samples)), samples, w)
}

/// [`lowest`] of policies already weighed on `samples` (the first of equals).
fn lowest_weighed(
    weighed: impl Iterator<Item = Weighed>,
    samples: &[&Sample],
    w: &Weighing,
) -> Option<(Policy, (usize, f64))> {
    weighed
        .map(|(p, o)| {
            let score = w.score_outcomes(samples, &o);
            (p, score)
        })
        .min_by(|a, b| a.1 .0.cmp(&b.1 .0).then(a.1 .1.total_cmp(&b.1 .1)))
}

/// GEMMs of `samples` on which cuBLAS alone is within the harm bound of the best.
pub fn extern_support(samples: &[&Sample], w: &Weighing) -> usize {
    safe_count(samples, &outcomes(&Policy::Extern, samples), w)
}

/// GEMMs of `samples` on which `p` beats cuBLAS alone by more than the harm bound.
pub fn support(p: &Policy, samples: &[&Sample], w: &Weighing) -> usize {
    gain_count(samples, &outcomes(p, samples), w)
}

/// How many of `outcomes` (on `samples`, same order) are within the harm bound.
fn safe_count(samples: &[&Sample], outcomes: &[Outcome], w: &Weighing) -> usize {
    samples
        .iter()
        .zip(outcomes)
        .filter(|&(s, &o)| !w.harmful(o, s))
        .count()
}

/// How many of `outcomes` (on `samples`, same order) beat cuBLAS alone by more than the harm
/// bound.
fn gain_count(samples: &[&Sample], outcomes: &[Outcome], w: &Weighing) -> usize {
    samples
        .iter()
        .zip(outcomes)
        .filter(|&(s, &o)| w.gains(o, s))
        .count()
}

/// The best candidate for `samples` and its score.
pub fn best_policy(samples: &[&Sample], w: &Weighing, rule: LeafRule) -> (Policy, (usize, f64)) {
    lowest_weighed(weighed_candidates(samples, w, rule).into_iter(), samples, w)
        .expect("cuBLAS only or the full list is always a candidate")
}
