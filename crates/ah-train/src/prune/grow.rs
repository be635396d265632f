//! Growing the policy tree ([`super::tree`]) greedily, to minimise the harmful picks and then
//! the loss of the training GEMMs (see [`Weighing`]).
//!
//! Candidate tests are tried in a fixed order and the first best one wins, so the same data
//! gives the same tree.

use ah_core::Value;
use rayon::prelude::*;

use super::data::Sample;
use super::drop::NeverNear;
use super::guard::SearchGuard;
use super::policy::{best_leaf_policy, best_policy, LeafRule, Weighing};
use super::tree::{Node, Quantity, Test};

/// How the tree grows.
#[derive(Debug, Clone)]
pub struct Growth<'a> {
    /// Logged feature names, header order.
    pub features: &'a [String],
    /// Which of them are categorical.
    pub categorical: &'a [String],
    /// Weighing of outcomes.
    pub weighing: Weighing,
    /// Fewest training GEMMs in a leaf.
    pub min_leaf: usize,
    /// Deepest split level.
    pub max_depth: usize,
    /// Which policies a leaf may take.
    pub leaf_rule: LeafRule,
    /// A test the root splits on before any other (when each side keeps `min_leaf` GEMMs),
    /// whatever the greedy search would pick there: [`Test::cublas_aligned`].
    pub first_split: Option<Test>,
    /// Whether splits may test [`Quantity::KRatio`].
    pub k_ratio: bool,
    /// Whether splits may test [`Quantity::MinSide`].
    pub min_side: bool,
    /// Where cuBLAS only is not trusted: the grown tree's cuBLAS-only leaves leave those GEMMs
    /// to the full list or a list learned for them ([`SearchGuard::apply`]).
    pub guard: Option<SearchGuard>,
    /// Where the full list is trimmed: strict-fp32 GEMMs left to it go without the configs
    /// that never came near the best on the training GEMMs of their kind ([`NeverNear::apply`]).
    pub drop: Option<NeverNear>,
}

impl Growth<'_> {
    /// Grows a tree on `samples` (then guards it, with [`Self::guard`], and trims its full
    /// lists, with [`Self::drop`]).
    pub fn grow(&self, samples: &[&Sample]) -> Node {
        let tree = self.node(samples, 0);
        let tree = match &self.guard {
            Some(guard) => {
                let policy = guard.policy(samples, self.features, &self.weighing, self.leaf_rule);
                guard.apply(tree, samples, self.features, &policy)
            }
            None => tree,
        };
        match &self.drop {
            Some(drop) => {
                let never_near = drop.learn(samples, self.features);
                drop.apply(tree, samples, self.features, &never_near)
            }
            None => tree,
        }
    }

    fn node(&self, samples: &[&Sample], depth: usize) -> Node {
        let leaf = || Node::Leaf {
            policy: best_leaf_policy(samples, &self.weighing, self.leaf_rule),
            samples: samples.len(),
        };
        if depth >= self.max_depth || samples.len() < 2 * self.min_leaf {
            return leaf();
        }
        let first = self
            .first_split
            .as_ref()
            .filter(|t| depth == 0 && self.fits(samples, t));
        let test = match first {
            Some(t) => t.clone(),
            None => {
                let (_, score) = best_policy(samples, &self.weighing, self.leaf_rule);
                let Some((test, _)) = self.best_split(samples, score) else {
                    return leaf();
                };
                test
            }
        };
        let (yes, no): (Vec<&Sample>, Vec<&Sample>) = samples
            .iter()
            .partition(|s| test.eval(s, self.features) == Some(true));
        Node::Split {
            test,
            yes: Box::new(self.node(&yes, depth + 1)),
            no: Box::new(self.node(&no, depth + 1)),
        }
    }

    /// Whether `test` leaves at least `min_leaf` of `samples` on each side.
    fn fits(&self, samples: &[&Sample], test: &Test) -> bool {
        let yes = samples
            .iter()
            .filter(|s| test.eval(s, self.features) == Some(true))
            .count();
        yes >= self.min_leaf && samples.len() - yes >= self.min_leaf
    }

    /// The test whose two sides' best policies score lowest, if lower than `parent`. The
    /// candidates are scored in parallel (rayon's pool) and compared in their fixed order, so
    /// the first best one wins as in a sequential search.
    fn best_split(
        &self,
        samples: &[&Sample],
        parent: (usize, f64),
    ) -> Option<(Test, (usize, f64))> {
        let tests = self.tests(samples);
        let scores: Vec<Option<(usize, f64)>> = tests
            .par_iter()
            .map(|test| self.split_score(samples, test))
            .collect();
        let mut best: Option<(Test, (usize, f64))> = None;
        for (test, score) in tests.into_iter().zip(scores) {
            let Some(score) = score else { continue };
            let better = |than: (usize, f64)| {
                score.0 < than.0 || (score.0 == than.0 && score.1 < than.1 - 1e-9)
            };
            if better(parent) && best.as_ref().is_none_or(|(_, s)| better(*s)) {
                best = Some((test, score));
            }
        }
        best
    }

    /// The summed score of the best policies on the two sides of `test`, or None when a side
    /// has fewer than `min_leaf` GEMMs.
    fn split_score(&self, samples: &[&Sample], test: &Test) -> Option<(usize, f64)> {
        let (yes, no): (Vec<&Sample>, Vec<&Sample>) = samples
            .iter()
            .partition(|s| test.eval(s, self.features) == Some(true));
        if yes.len() < self.min_leaf || no.len() < self.min_leaf {
            return None;
        }
        let a = best_policy(&yes, &self.weighing, self.leaf_rule).1;
        let b = best_policy(&no, &self.weighing, self.leaf_rule).1;
        Some((a.0 + b.0, a.1 + b.1))
    }

    /// Candidate tests, in a fixed order.
    fn tests(&self, samples: &[&Sample]) -> Vec<Test> {
        let numeric: Vec<String> = self
            .features
            .iter()
            .filter(|f| !self.categorical.contains(f))
            .cloned()
            .collect();
        let mut tests = Vec::new();
        for quantity in Quantity::all(self.features, &numeric, self.k_ratio, self.min_side) {
            let mut v: Vec<f64> = samples
                .iter()
                .filter_map(|s| quantity.eval(s, self.features))
                .collect();
            v.sort_by(f64::total_cmp);
            v.dedup();
            for w in v.windows(2) {
                tests.push(Test::Le {
                    quantity: quantity.clone(),
                    threshold: (w[0] + w[1]) / 2.0,
                });
            }
        }
        for feature in self.categorical {
            let Some(i) = self.features.iter().position(|f| f == feature) else {
                continue;
            };
            let mut values: Vec<&Value> = Vec::new();
            for s in samples {
                if !values.contains(&&s.values[i]) {
                    values.push(&s.values[i]);
                }
            }
            if values.len() > 1 {
                tests.extend(values.into_iter().map(|v| Test::Eq {
                    feature: feature.clone(),
                    value: v.clone(),
                }));
            }
        }
        tests
    }
}
