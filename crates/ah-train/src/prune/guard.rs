//! A guard on the tree's cuBLAS-only leaves (`ah-prune --fp32-full-list-above`): fp32 GEMMs
//! without TF32 of more than a given number of multiply-adds are left to Inductor's full list
//! wherever a leaf would decide cuBLAS only.
//!
//! Why a rule beside the learned tree: without TF32, cuBLAS's SGEMM and Triton's fp32 templates
//! race on even terms, and which wins turns on details no split of a depth-5 tree sees. On the
//! held-out sets 13-29 (docs/results.md), the tree shipped before it decided cuBLAS only for
//! 25 such GEMMs of 100 us or more and 6 of them ran more than 3 % behind max-autotune's
//! pick, against 1 of 45 in bf16, fp16 and TF32; its training leaves there had been clean. At that size
//! searching the full list is reliable (default max-autotune missed none of the 199 held-out
//! GEMMs of 100 us or more) and costs a few seconds, so the guard trades those seconds for
//! the misses. Below the threshold a search's own noise costs more than it finds.

use ah_core::Value;

use super::data::Sample;
use super::policy::{best_leaf_policy, LeafRule, Policy, Weighing};
use super::tree::{Node, Quantity, Test};

/// fp32 GEMMs without TF32 of more than [`Self::above_work`] multiply-adds are never decided
/// cuBLAS only.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchGuard {
    /// The multiply-adds (`batch * m * k * n`, [`Quantity::Work`]) above which it holds.
    pub above_work: f64,
    /// Whether guarded GEMMs keep the list learned on all the guarded training GEMMs together
    /// ([`Self::policy`]) instead of the full list (`ah-prune --fp32-guard-list`).
    pub learned_list: bool,
    /// The price of a harmful pick at which that list is weighed against the full list, where
    /// it is not the tree's (`ah-prune --fp32-guard-price`; none: the tree's).
    pub harm_price_s: Option<f64>,
}

impl SearchGuard {
    /// fp32 without TF32: the log's `using_tf32` is `False` (bf16 and fp16 log
    /// `not_float_32`, fp32 with TF32 `True`).
    pub fn fp32_without_tf32() -> Test {
        Test::Eq {
            feature: "using_tf32".into(),
            value: Value::Bool(false),
        }
    }

    /// A GEMM small enough for its leaf's cuBLAS only: at most [`Self::above_work`].
    pub fn small(&self) -> Test {
        Test::Le {
            quantity: Quantity::Work,
            threshold: self.above_work,
        }
    }

    /// What guarded GEMMs get: the full list, or with [`Self::learned_list`] the leaf policy
    /// of the guarded GEMMs of `samples` taken together, cuBLAS only excluded (a list of
    /// templates with the support `rule` asks, or the full list where that scores better, with
    /// harmful picks priced at [`Self::harm_price_s`] where given). A tree's leaves hold a few
    /// guarded GEMMs each, the region over a hundred.
    pub fn policy(
        &self,
        samples: &[&Sample],
        features: &[String],
        w: &Weighing,
        rule: LeafRule,
    ) -> Policy {
        if !self.learned_list {
            return Policy::Default;
        }
        let guarded: Vec<&Sample> = samples
            .iter()
            .copied()
            .filter(|s| self.guards(s, features))
            .collect();
        if guarded.is_empty() {
            return Policy::Default;
        }
        let rule = LeafRule {
            min_extern_support: usize::MAX,
            full_list: true,
            ..rule
        };
        let w = Weighing {
            harm_price_s: self.harm_price_s.unwrap_or(w.harm_price_s),
            ..*w
        };
        best_leaf_policy(&guarded, &w, rule)
    }

    /// Whether `s` is fp32 without TF32 and above the threshold.
    fn guards(&self, s: &Sample, features: &[String]) -> bool {
        Self::fp32_without_tf32().eval(s, features) == Some(true)
            && self.small().eval(s, features) == Some(false)
    }

    /// `tree` with each cuBLAS-only leaf that a guarded GEMM can reach split in two: guarded
    /// GEMMs get `policy` ([`Self::policy`]), the rest cuBLAS only. `samples` are the GEMMs the
    /// tree grew on; the new leaves count theirs. A leaf under a test that already rules
    /// guarded GEMMs out (a bf16 branch) is left alone, and one under `using_tf32 == False`
    /// tests the size only.
    pub fn apply(
        &self,
        tree: Node,
        samples: &[&Sample],
        features: &[String],
        policy: &Policy,
    ) -> Node {
        map_leaves(
            tree,
            samples,
            features,
            None,
            &|leaf, samples, guarded| match leaf {
                Node::Leaf {
                    policy: Policy::Extern,
                    ..
                } if guarded != Some(false) => self.split_leaf(samples, features, guarded, policy),
                leaf => leaf,
            },
        )
    }

    fn split_leaf(
        &self,
        samples: &[&Sample],
        features: &[String],
        guarded: Option<bool>,
        policy: &Policy,
    ) -> Node {
        let leaf = |policy: Policy, samples: usize| Box::new(Node::Leaf { policy, samples });
        let passes = |t: &Test, s: &Sample| t.eval(s, features) == Some(true);
        let (fp32, size) = (Self::fp32_without_tf32(), self.small());
        let of_fp32: Vec<&Sample> = samples
            .iter()
            .copied()
            .filter(|s| guarded == Some(true) || passes(&fp32, s))
            .collect();
        let small = of_fp32.iter().filter(|s| passes(&size, s)).count();
        let by_size = Node::Split {
            test: size,
            yes: leaf(Policy::Extern, small),
            no: leaf(policy.clone(), of_fp32.len() - small),
        };
        if guarded == Some(true) {
            return by_size;
        }
        Node::Split {
            test: fp32,
            yes: Box::new(by_size),
            no: leaf(Policy::Extern, samples.len() - of_fp32.len()),
        }
    }
}

/// What [`map_leaves`] makes of a leaf, given the training GEMMs that reach it and whether the
/// path to it says they are fp32 without TF32.
pub(super) type LeafMap<'a> = dyn Fn(Node, &[&Sample], Option<bool>) -> Node + 'a;

/// `node` with each leaf replaced by what `f` makes of it, given the training GEMMs that reach
/// it and whether the path to it says they are fp32 without TF32 (`None`: it does not say;
/// `fp32` says it for `node`).
pub(super) fn map_leaves(
    node: Node,
    samples: &[&Sample],
    features: &[String],
    fp32: Option<bool>,
    f: &LeafMap,
) -> Node {
    match node {
        Node::Split { test, yes, no } => {
            let (on_yes, on_no): (Vec<&Sample>, Vec<&Sample>) = samples
                .iter()
                .partition(|s| test.eval(s, features) == Some(true));
            let (f_yes, f_no) = implied(&test, fp32);
            Node::Split {
                yes: Box::new(map_leaves(*yes, &on_yes, features, f_yes, f)),
                no: Box::new(map_leaves(*no, &on_no, features, f_no, f)),
                test,
            }
        }
        leaf => f(leaf, samples, fp32),
    }
}

/// What each side of `test` says about guarded GEMMs, given what the path to it says.
fn implied(test: &Test, guarded: Option<bool>) -> (Option<bool>, Option<bool>) {
    let Test::Eq { feature, value } = test else {
        return (guarded, guarded);
    };
    match feature.as_str() {
        "using_tf32" if *value == Value::Bool(false) => (Some(true), Some(false)),
        "using_tf32" => (Some(false), guarded),
        "mat1_dtype" if *value != Value::Str("torch.float32".into()) => (Some(false), guarded),
        _ => (guarded, guarded),
    }
}
