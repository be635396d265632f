//! A pass on the tree's full-list leaves (`ah-prune --fp32-drop-never-near`): fp32 GEMMs
//! without TF32 that a leaf leaves to Inductor's full list get that list without the template
//! configs that never came near the best on the training GEMMs of their kind.
//!
//! Why: in strict fp32 the full list is where autotuning time goes. Triton compiles fp32
//! configs slowly, and the slowest of them (5.5-7.5 s each on the H100) set the precompile
//! phase's wall; on blind set 40 the full lists of 12 strict-fp32 GEMMs cost 103 of the
//! handler's 122 s (docs/results.md). Of the 198 configs the logs offered strict-fp32 GEMMs, 27
//! never benchmarked within 3 % of the best choice of any of them, and none of them came that
//! near on the 143 blind strict-fp32 GEMMs of the pooled held-out sets (`scripts/never_near.py`).
//! Leaving a config out that never wins changes no pick Inductor makes, only what it compiles.
//! A config is dropped only when the logs offered it often ([`NeverNear::min_seen`]): a rarely
//! offered one has not been tried enough to be judged.

use std::collections::BTreeMap;

use super::data::Sample;
use super::guard::{map_leaves, SearchGuard};
use super::policy::Policy;
use super::tree::Node;

/// Template configs offered on at least [`Self::min_seen`] strict-fp32 training GEMMs and
/// never benchmarked within [`Self::bound`] of the best choice of any of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NeverNear {
    /// Fewest strict-fp32 GEMMs a config must have been offered on to be dropped.
    pub min_seen: usize,
    /// How near the best a config's benchmark must come, once, to be kept (0.03: 3 %).
    pub bound: f64,
}

impl NeverNear {
    /// The configs to drop, learned on the strict-fp32 GEMMs of `samples`, sorted by name.
    pub fn learn(&self, samples: &[&Sample], features: &[String]) -> Vec<String> {
        let fp32 = SearchGuard::fp32_without_tf32();
        // Per config: GEMMs offered on, and whether it ever came near the best.
        let mut seen: BTreeMap<&str, (usize, bool)> = BTreeMap::new();
        for s in samples
            .iter()
            .filter(|s| fp32.eval(s, features) == Some(true))
        {
            let finite = s
                .choices()
                .iter()
                .map(|c| c.bench_ms)
                .filter(|ms| ms.is_finite());
            let Some(best) = finite.reduce(f64::min) else {
                continue;
            };
            for c in s.choices().iter().filter(|c| !c.is_extern()) {
                let e = seen.entry(c.name.as_str()).or_insert((0, false));
                e.0 += 1;
                e.1 |= c.bench_ms <= (1.0 + self.bound) * best;
            }
        }
        seen.into_iter()
            .filter(|&(_, (n, near))| n >= self.min_seen && !near)
            .map(|(name, _)| name.to_string())
            .collect()
    }

    /// `tree` with each full-list leaf that strict-fp32 GEMMs can reach split in two: those
    /// GEMMs get the full list without `drop`, the rest the full list. `samples` are the GEMMs
    /// the tree grew on; the new leaves count theirs. Nothing changes when `drop` is empty.
    pub fn apply(
        &self,
        tree: Node,
        samples: &[&Sample],
        features: &[String],
        drop: &[String],
    ) -> Node {
        if drop.is_empty() {
            return tree;
        }
        let trimmed = Policy::Drop {
            choices: drop.to_vec(),
        };
        map_leaves(
            tree,
            samples,
            features,
            None,
            &|leaf, samples, fp32| match leaf {
                Node::Leaf {
                    policy: Policy::Default,
                    samples: n,
                } => split_full_list(n, samples, features, fp32, &trimmed),
                leaf => leaf,
            },
        )
    }
}

/// A full-list leaf of `n` training GEMMs (`samples`) with strict-fp32 GEMMs given `trimmed`
/// instead; `fp32`: whether the path to it says they are fp32 without TF32 (`None`: it does
/// not say, and the leaf is split on it).
fn split_full_list(
    n: usize,
    samples: &[&Sample],
    features: &[String],
    fp32: Option<bool>,
    trimmed: &Policy,
) -> Node {
    let leaf = |policy: Policy, samples: usize| Node::Leaf { policy, samples };
    match fp32 {
        Some(false) => leaf(Policy::Default, n),
        Some(true) => leaf(trimmed.clone(), n),
        None => {
            let test = SearchGuard::fp32_without_tf32();
            let yes = samples
                .iter()
                .filter(|s| test.eval(s, features) == Some(true))
                .count();
            Node::Split {
                test,
                yes: Box::new(leaf(trimmed.clone(), yes)),
                no: Box::new(leaf(Policy::Default, samples.len() - yes)),
            }
        }
    }
}
