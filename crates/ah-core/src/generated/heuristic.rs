//! [`GeneratedHeuristic`]: what a generated module says about its heuristic (names, choices,
//! device, threshold) and the function that walks its tree. The [`LearnedHeuristic`] methods
//! over them are written here once, not in every module.

use crate::heuristic::{LearnedHeuristic, Prediction, UnsureKind};
use crate::model::ModelKind;
use crate::{Context, DeviceIdentity};

/// A generated heuristic, as its module states it in a `static`:
///
/// ```
/// use ah_core::generated::{GeneratedHeuristic, Predict};
/// use ah_core::heuristic::{Prediction, UnsureKind};
/// use ah_core::{Context, Decision, DeviceIdentity, LearnedHeuristic};
///
/// static HEURISTIC: GeneratedHeuristic = GeneratedHeuristic {
///     name: "pad_mm",
///     heuristic_name: "PadMMH100",
///     choices: &["orig", "pad"],
///     device: DeviceIdentity::H100,
///     confidence_threshold: 0.5,
///     predict: Predict::Decision(predict),
/// };
///
/// fn predict(_context: &Context) -> Prediction {
///     Prediction::Unsure(UnsureKind::UnsafeLeaf)
/// }
///
/// assert_eq!(HEURISTIC.heuristic_name(), "PadMMH100");
/// assert!(matches!(HEURISTIC.decide(&Context::new()), Decision::Unsure(_)));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct GeneratedHeuristic {
    /// The optimization name (`pad_mm`).
    pub name: &'static str,
    /// The heuristic's identifier (`PadMMH100`).
    pub heuristic_name: &'static str,
    /// Choices in class-index order.
    pub choices: &'static [&'static str],
    /// Device identity the heuristic was trained on.
    pub device: DeviceIdentity,
    /// Confidence threshold: unsure when the best probability (or ratio) is `<=` it.
    pub confidence_threshold: f64,
    /// The tree's walk, which also says the heuristic's kind.
    pub predict: Predict,
}

/// The function that walks a generated tree, by the tree's kind.
#[derive(Debug, Clone, Copy)]
pub enum Predict {
    /// A decision tree: the distribution of the leaf a context reaches, or unsure.
    Decision(fn(&Context) -> Prediction),
    /// A regression tree: the value it predicts for a context and a choice index, or unsure.
    Regression(fn(&Context, usize) -> Prediction),
}

impl LearnedHeuristic for GeneratedHeuristic {
    fn name(&self) -> &'static str {
        self.name
    }

    fn heuristic_name(&self) -> &'static str {
        self.heuristic_name
    }

    fn kind(&self) -> ModelKind {
        match self.predict {
            Predict::Decision(_) => ModelKind::Decision,
            Predict::Regression(_) => ModelKind::Regression,
        }
    }

    fn choices(&self) -> &'static [&'static str] {
        self.choices
    }

    fn device(&self) -> DeviceIdentity {
        self.device
    }

    fn confidence_threshold(&self) -> f64 {
        self.confidence_threshold
    }

    /// A decision tree ignores `choice`; a regression tree asked for no choice is unsure
    /// (the choice is the feature it misses).
    fn predict(&self, context: &Context, choice: Option<usize>) -> Prediction {
        match (self.predict, choice) {
            (Predict::Decision(walk), _) => walk(context),
            (Predict::Regression(walk), Some(choice)) => walk(context, choice),
            (Predict::Regression(_), None) => {
                Prediction::Unsure(UnsureKind::MissingFeature("choice"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regression(_: &Context, choice: usize) -> Prediction {
        Prediction::Value(choice as f64)
    }

    fn decision(_: &Context) -> Prediction {
        Prediction::Distribution(&[(1.0, 1)])
    }

    fn heuristic(predict: Predict) -> GeneratedHeuristic {
        GeneratedHeuristic {
            name: "pad_mm",
            heuristic_name: "PadMMTest",
            choices: &["orig", "pad"],
            device: DeviceIdentity::A100,
            confidence_threshold: 0.5,
            predict,
        }
    }

    #[test]
    fn the_walk_gives_the_kind_and_the_prediction() {
        let ctx = Context::new();
        let d = heuristic(Predict::Decision(decision));
        assert_eq!(d.kind(), ModelKind::Decision);
        assert_eq!(d.predict(&ctx, Some(0)), decision(&ctx));
        assert_eq!(d.decide(&ctx), crate::Decision::Choice(1));
        let r = heuristic(Predict::Regression(regression));
        assert_eq!(r.kind(), ModelKind::Regression);
        assert_eq!(r.predict(&ctx, Some(1)), Prediction::Value(1.0));
        assert_eq!(
            r.predict(&ctx, None),
            Prediction::Unsure(UnsureKind::MissingFeature("choice"))
        );
    }

    #[test]
    fn the_identity_is_the_statics() {
        let h = heuristic(Predict::Decision(decision));
        assert_eq!((h.name(), h.heuristic_name()), ("pad_mm", "PadMMTest"));
        assert_eq!(h.choices(), ["orig", "pad"]);
        assert_eq!(h.device(), DeviceIdentity::A100);
        assert_eq!(h.confidence_threshold(), 0.5);
    }
}
