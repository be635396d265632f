//! A model JSON used as a [`LearnedHeuristic`] without generating code: `ah-use run --model`
//! runs a workload with a heuristic just trained (the pipeline's use step, before anything is
//! shipped into the generated crate).
//!
//! The decisions are the in-memory model's ([`Model::decide`], [`Model::ranked`]), which the
//! generated code of the same model is tested to equal on every training row.

use ah_core::model::Node;
use ah_core::{
    Context, Decision, DeviceIdentity, HeuristicMetadata, LearnedHeuristic, Model, Prediction,
    UnsureKind, UnsureReason, Value,
};

/// A model behind the [`LearnedHeuristic`] trait. Built once per process with [`leak`]: the
/// registry holds `&'static` heuristics.
#[derive(Debug)]
pub struct ModelHeuristic {
    model: Model,
    name: &'static str,
    heuristic_name: &'static str,
    choices: &'static [&'static str],
    features: Vec<&'static str>,
    /// Per node, the leaf's `(probability, choice)` list as PyTorch sorts it (empty for splits
    /// and unsafe leaves).
    leaves: Vec<&'static [(f64, u16)]>,
}

fn leak_str(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

/// Wraps `model` (already checked by [`Model::load`]) as a `'static` heuristic for a registry.
/// Leaks the model: call it once per model and process.
pub fn leak(model: Model) -> &'static ModelHeuristic {
    let choices: Vec<&'static str> = model.choices.iter().map(|c| leak_str(c)).collect();
    let features = model
        .numerical_features
        .iter()
        .chain(&model.categorical_features)
        .map(|f| leak_str(f))
        .collect();
    let leaves = model
        .tree
        .nodes
        .iter()
        .map(|node| -> &'static [(f64, u16)] {
            match node {
                Node::Leaf {
                    unsafe_leaf: false,
                    value,
                    ..
                } => Box::leak(
                    ah_core::model::leaf_best_choices(value)
                        .into_iter()
                        .map(|(p, i)| (p, u16::try_from(i).unwrap_or(u16::MAX)))
                        .collect::<Vec<_>>()
                        .into_boxed_slice(),
                ),
                _ => &[],
            }
        })
        .collect();
    Box::leak(Box::new(ModelHeuristic {
        name: leak_str(&model.name),
        heuristic_name: leak_str(&model.heuristic_name),
        choices: Box::leak(choices.into_boxed_slice()),
        features,
        leaves,
        model,
    }))
}

impl ModelHeuristic {
    fn kind_of(&self, reason: UnsureReason) -> UnsureKind {
        let feature = |f: &str| {
            self.features
                .iter()
                .copied()
                .find(|&g| g == f)
                .unwrap_or("?")
        };
        match reason {
            UnsureReason::OutOfRange { feature: f } => UnsureKind::OutOfRange(feature(&f)),
            UnsureReason::MissingFeature { feature: f } => UnsureKind::MissingFeature(feature(&f)),
            _ => UnsureKind::UnsafeLeaf,
        }
    }
}

impl LearnedHeuristic for ModelHeuristic {
    fn name(&self) -> &'static str {
        self.name
    }

    fn heuristic_name(&self) -> &'static str {
        self.heuristic_name
    }

    fn kind(&self) -> ah_core::model::ModelKind {
        self.model.kind
    }

    fn choices(&self) -> &'static [&'static str] {
        self.choices
    }

    fn device(&self) -> DeviceIdentity {
        self.model.precondition
    }

    fn check_precondition(&self, metadata: &HeuristicMetadata<'_>, _context: &Context) -> bool {
        self.model.check_precondition(metadata)
    }

    fn confidence_threshold(&self) -> f64 {
        self.model.threshold
    }

    fn predict(&self, context: &Context, choice: Option<usize>) -> Prediction {
        let mut ctx;
        let context = match choice.and_then(|i| self.choices.get(i)) {
            Some(c) => {
                ctx = context.clone();
                ctx.set(
                    ah_core::model::CHOICE_FEATURE,
                    Value::Str((*c).to_string()),
                    true,
                );
                &ctx
            }
            None => context,
        };
        let leaf = match ah_core::ModelEvaluator::new(&self.model) {
            Ok(mut e) => e.leaf(context),
            Err(_) => return Prediction::Unsure(UnsureKind::UnsafeLeaf),
        };
        let i = match leaf {
            Ok(i) => i,
            Err(reason) => return Prediction::Unsure(self.kind_of(reason)),
        };
        match (&self.model.tree.nodes[i], self.model.kind) {
            (
                Node::Leaf {
                    unsafe_leaf: true, ..
                },
                _,
            ) => Prediction::Unsure(UnsureKind::UnsafeLeaf),
            (Node::Leaf { value, .. }, ah_core::model::ModelKind::Regression) => {
                Prediction::Value(value.first().copied().unwrap_or(f64::NAN))
            }
            _ => Prediction::Distribution(self.leaves[i]),
        }
    }

    fn decide(&self, context: &Context) -> Decision {
        self.model.decide(context)
    }

    fn ranked(&self, context: &Context) -> Option<Vec<&'static str>> {
        self.model
            .ranked(context)
            .map(|v| v.into_iter().map(|i| self.choices[i]).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The adapter decides like the model it wraps, through the trait's `predict` as well.
    #[test]
    fn decides_like_the_model() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/ToyInf.model.json");
        let model = Model::load(&path).unwrap();
        let h = leak(model.clone());
        for m in [1_i64, 10, 40, 60, 90, 1000] {
            let mut ctx = Context::new();
            ctx.set("m", Value::Int(m), false);
            ctx.set("k", Value::Int(3), false);
            assert_eq!(h.decide(&ctx), model.decide(&ctx), "m={m}");
            let via_predict = match h.predict(&ctx, None) {
                Prediction::Distribution(d) => d
                    .first()
                    .filter(|&&(p, _)| p > model.threshold)
                    .map(|&(_, i)| usize::from(i)),
                _ => None,
            };
            assert_eq!(via_predict, model.decide(&ctx).choice(), "m={m}");
        }
        assert_eq!(h.heuristic_name(), "ToyInf");
    }
}
