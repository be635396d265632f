//! The interface generated heuristics implement, and the registry they register into.

use crate::context::Context;
use crate::metadata::DeviceIdentity;
pub use crate::model::regression_decision;
use crate::model::{Decision, Model, ModelKind, UnsureReason};

/// What a learned heuristic's tree says for one context.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Prediction {
    /// Decision flavour: the leaf's `(probability, choice index)` list, probability descending.
    Distribution(&'static [(f64, u16)]),
    /// Regression flavour: the predicted value for the asked choice (higher is better).
    Value(f64),
    /// No prediction: unsafe leaf, feature out of the training range, or missing feature.
    Unsure(UnsureKind),
}

/// Allocation-free counterpart of [`UnsureReason`] for the decision path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnsureKind {
    /// Unsafe leaf.
    UnsafeLeaf,
    /// Numeric feature outside the training range.
    OutOfRange(&'static str),
    /// Feature missing from the context (or not a number where one is needed).
    MissingFeature(&'static str),
}

impl From<UnsureKind> for UnsureReason {
    fn from(k: UnsureKind) -> Self {
        match k {
            UnsureKind::UnsafeLeaf => UnsureReason::UnsafeLeaf,
            UnsureKind::OutOfRange(f) => UnsureReason::OutOfRange {
                feature: f.to_string(),
            },
            UnsureKind::MissingFeature(f) => UnsureReason::MissingFeature {
                feature: f.to_string(),
            },
        }
    }
}

/// Metadata a heuristic's precondition is checked against (PyTorch's `AHMetadata`).
#[derive(Debug, Clone, Copy)]
pub struct HeuristicMetadata<'a> {
    /// The device identity.
    pub device: DeviceIdentity,
    /// The optimization name.
    pub name: &'a str,
    /// The caller's choices.
    pub choices: &'a [String],
}

/// A learned heuristic (PyTorch's `LearnedHeuristic`), implemented by generated code.
///
/// Implementors provide the identity, the choices, the threshold and [`predict`]; the
/// decision rules (`decide`, `ranked`) are provided and shared with the in-memory model so
/// that generated code and model decide alike.
///
/// [`predict`]: LearnedHeuristic::predict
pub trait LearnedHeuristic: Send + Sync {
    /// The optimization name (`pad_mm`).
    fn name(&self) -> &'static str;
    /// The heuristic's identifier (`PadMMH100`).
    fn heuristic_name(&self) -> &'static str;
    /// Decision or regression.
    fn kind(&self) -> ModelKind {
        ModelKind::Decision
    }
    /// Choices in class-index order.
    fn choices(&self) -> &'static [&'static str];
    /// Device identity the heuristic was trained on.
    fn device(&self) -> DeviceIdentity;
    /// PyTorch's `check_precondition`: same name and same device identity.
    fn check_precondition(&self, metadata: &HeuristicMetadata<'_>, _context: &Context) -> bool {
        metadata.name == self.name() && metadata.device == self.device()
    }
    /// Confidence threshold: unsure when the best probability (or ratio) is `<=` it.
    fn confidence_threshold(&self) -> f64;
    /// Walks the tree. Decision heuristics ignore `choice`; regression heuristics predict the
    /// value of choice index `choice`.
    fn predict(&self, context: &Context, choice: Option<usize>) -> Prediction;

    /// The decision: a choice index or unsure, with PyTorch's rules (`proba <= threshold`
    /// is unsure; regression: best/second `<=` threshold is unsure).
    fn decide(&self, context: &Context) -> Decision {
        match self.kind() {
            ModelKind::Decision => match self.predict(context, None) {
                Prediction::Distribution(best) => match best.first() {
                    None => Decision::Unsure(UnsureReason::UnsafeLeaf),
                    Some(&(p, _)) if p <= self.confidence_threshold() => {
                        Decision::Unsure(UnsureReason::LowConfidence { confidence: p })
                    }
                    Some(&(_, i)) => Decision::Choice(usize::from(i)),
                },
                Prediction::Value(_) => Decision::Unsure(UnsureReason::NoHeuristic),
                Prediction::Unsure(k) => Decision::Unsure(k.into()),
            },
            ModelKind::Regression => {
                let n = self.choices().len();
                let mut scores = Vec::with_capacity(n);
                for i in 0..n {
                    match self.predict(context, Some(i)) {
                        Prediction::Value(v) => scores.push((v, i)),
                        Prediction::Unsure(k) => return Decision::Unsure(k.into()),
                        Prediction::Distribution(_) => {
                            return Decision::Unsure(UnsureReason::NoHeuristic)
                        }
                    }
                }
                regression_decision(&scores, self.confidence_threshold())
            }
        }
    }

    /// Ranked choices (PyTorch's `get_decisions_ranked`): the leaf's classes by probability,
    /// no threshold applied. `None` when unsure.
    fn ranked(&self, context: &Context) -> Option<Vec<&'static str>> {
        match self.predict(context, None) {
            Prediction::Distribution(best) => Some(
                best.iter()
                    .map(|&(_, i)| self.choices()[usize::from(i)])
                    .collect(),
            ),
            _ => None,
        }
    }
}

/// The model's side of the interface: PyTorch's generated `check_precondition`.
impl Model {
    /// PyTorch's generated `check_precondition`: same optimization name and device identity.
    pub fn check_precondition(&self, metadata: &HeuristicMetadata<'_>) -> bool {
        metadata.name == self.name && metadata.device == self.precondition
    }
}

/// Heuristics known to a program, searched in registration order.
///
/// Like PyTorch's `LearnedHeuristicController`, the first heuristic of the right name whose
/// precondition holds decides, even when it is unsure.
///
/// The names are kept beside the heuristics, read once at registration: a lookup scans one
/// small array of `&str` and makes one virtual call (the precondition) per heuristic of the
/// right name, not two per registered heuristic. On a first call with cold caches this is
/// what matters: each virtual call of a heuristic that is not asked is a cache line of its
/// vtable and one of its code, often on another page.
#[derive(Default)]
pub struct Registry {
    heuristics: Vec<&'static dyn LearnedHeuristic>,
    names: Vec<&'static str>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.heuristics.iter().map(|h| h.heuristic_name()))
            .finish()
    }
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a heuristic.
    pub fn register(&mut self, heuristic: &'static dyn LearnedHeuristic) {
        self.heuristics.push(heuristic);
        self.names.push(heuristic.name());
    }

    /// All heuristics, in registration order.
    pub fn heuristics(&self) -> &[&'static dyn LearnedHeuristic] {
        &self.heuristics
    }

    /// The first heuristic of `metadata.name` whose precondition holds.
    pub fn find(
        &self,
        metadata: &HeuristicMetadata<'_>,
        context: &Context,
    ) -> Option<&'static dyn LearnedHeuristic> {
        self.names
            .iter()
            .zip(&self.heuristics)
            .filter(|(name, _)| **name == metadata.name)
            .map(|(_, h)| *h)
            .find(|h| h.check_precondition(metadata, context))
    }
}
