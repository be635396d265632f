//! The training defaults per optimisation name: what PyTorch's `AHTrainDecision` subclasses
//! override (allowed wrong share, test and validation shares, grid kind, always-included
//! choices, unsafe-leaf rule, extra training sets and input filter).
//!
//! [`training_defaults`] answers for every name: a name without its own entry (a user's
//! optimisation, or `reduction`) gets [`PYTORCH_DEFAULTS`]. [`crate::config`] maps these onto
//! the trainer's types and applies `--config FILE` overrides on top. The default choice and the
//! built-in operations of a name are the core's registry, [`ah_core::optimization`].

/// The defaults of a training configuration (the hooks of PyTorch's `AHTrainDecision`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrainingDefaults {
    /// `get_allowed_wrong_prediction_pct`: the share of wrong validation predictions the
    /// upstream threshold rule allows.
    pub allowed_wrong_pct: f64,
    /// `get_test_and_val_size`: the test share.
    pub test_size: f64,
    /// `get_test_and_val_size`: the validation share.
    pub val_size: f64,
    /// `get_grid_search_values`: which hyper-parameter grid.
    pub grid: GridKind,
    /// `ranking_always_included_choices`: choices every ranking keeps.
    pub always_included: &'static [&'static str],
    /// `is_unsafe_leaf`: when a training row makes its leaf unsafe.
    pub unsafe_rule: UnsafeRule,
    /// `add_training_data`: named extra data sets (`--data NAME=FILE`) appended to the
    /// training set, each with its repeat count.
    pub extra_training_sets: &'static [(&'static str, usize)],
    /// `filter_df`: which inputs training keeps (applied before the split).
    pub input_filter: InputFilter,
}

/// PyTorch's defaults of `AHTrainDecision`.
pub const PYTORCH_DEFAULTS: TrainingDefaults = TrainingDefaults {
    allowed_wrong_pct: 0.01,
    test_size: 0.15,
    val_size: 0.15,
    grid: GridKind::Upstream,
    always_included: &[],
    unsafe_rule: UnsafeRule::Never,
    extra_training_sets: &[],
    input_filter: InputFilter::All,
};

/// A hyper-parameter grid of the decision-tree search, by kind (the trainer owns the values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridKind {
    /// PyTorch's default grid: depths 5, 6, 7 x six leaf sizes x gini and entropy (36 models).
    Upstream,
    /// mm's and mixed_mm's single model: depth 5, 1% per leaf, entropy.
    SingleModel,
}

/// The unsafe-leaf rule (`is_unsafe_leaf`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UnsafeRule {
    /// No leaf is unsafe (PyTorch's default).
    Never,
    /// A training row makes its leaf unsafe when the leaf's choice is more than `factor` times
    /// slower than `choice` on it.
    SlowerThan {
        /// The reference choice.
        choice: &'static str,
        /// The factor.
        factor: f64,
    },
}

/// The input filter (`filter_df`), on an input's logged features as `(name, logged text)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFilter {
    /// Keep every input (PyTorch's default).
    All,
    /// Keep the inputs whose feature `feature` is logged as one of `values`.
    FeatureIn {
        /// The feature's name.
        feature: &'static str,
        /// The kept texts, as logged (`torch.bfloat16`).
        values: &'static [&'static str],
    },
}

impl InputFilter {
    /// Whether training keeps an input with these logged features.
    pub fn keeps(&self, features: &[(&str, &str)]) -> bool {
        match self {
            InputFilter::All => true,
            InputFilter::FeatureIn { feature, values } => features
                .iter()
                .any(|(n, v)| n == feature && values.contains(v)),
        }
    }
}

/// The names with their own training defaults, in the registry's order.
static OWN: [(&str, TrainingDefaults); 4] = [
    ("pad_mm", PYTORCH_DEFAULTS),
    ("mm", MM_RANKING),
    (
        "mixed_mm",
        // A single model, a 1/19 split, every wrong allowed, unsafe when 5% slower than the
        // fallback.
        TrainingDefaults {
            allowed_wrong_pct: 1.0,
            test_size: 0.01,
            val_size: 0.19,
            grid: GridKind::SingleModel,
            unsafe_rule: UnsafeRule::SlowerThan {
                choice: "extern_fallback_mixed_mm",
                factor: 1.05,
            },
            ..PYTORCH_DEFAULTS
        },
    ),
    // Our cuBLASLt algorithm ranking (`ah_core::optimization::CUBLASLT_MM`): mm's settings.
    (ah_core::optimization::CUBLASLT_MM, MM_RANKING),
];

/// `mm`'s defaults, a ranking: a single model, a 1/19 split, every wrong allowed, the extern
/// kernel always kept, the timm and huggingface sets added three times each.
const MM_RANKING: TrainingDefaults = TrainingDefaults {
    allowed_wrong_pct: 1.0,
    test_size: 0.01,
    val_size: 0.19,
    grid: GridKind::SingleModel,
    always_included: &["extern_mm"],
    extra_training_sets: &[("train_timm", 3), ("train_hf", 3)],
    ..PYTORCH_DEFAULTS
};

/// The training defaults of the optimisation `name`: its own entry, else [`PYTORCH_DEFAULTS`].
pub fn training_defaults(name: &str) -> TrainingDefaults {
    OWN.iter()
        .find(|(n, _)| *n == name)
        .map_or(PYTORCH_DEFAULTS, |(_, d)| *d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_entries_and_the_fallback() {
        assert_eq!(training_defaults("pad_mm"), PYTORCH_DEFAULTS);
        assert_eq!(training_defaults("user_thing"), PYTORCH_DEFAULTS);
        let mm = training_defaults("mm");
        assert_eq!((mm.test_size, mm.val_size), (0.01, 0.19));
        assert_eq!(mm.always_included, ["extern_mm"]);
        assert_eq!(mm.extra_training_sets, [("train_timm", 3), ("train_hf", 3)]);
        assert_eq!(mm.unsafe_rule, UnsafeRule::Never);
        assert_eq!(training_defaults(ah_core::optimization::CUBLASLT_MM), mm);
        let mixed = training_defaults("mixed_mm");
        assert_eq!(mixed.grid, GridKind::SingleModel);
        assert_eq!(mixed.allowed_wrong_pct, 1.0);
        assert!(mixed.always_included.is_empty());
        assert_eq!(
            mixed.unsafe_rule,
            UnsafeRule::SlowerThan {
                choice: "extern_fallback_mixed_mm",
                factor: 1.05
            }
        );
    }

    #[test]
    fn input_filter() {
        let bf16 = InputFilter::FeatureIn {
            feature: "mat1_dtype",
            values: &["torch.bfloat16"],
        };
        assert!(bf16.keeps(&[("m", "8"), ("mat1_dtype", "torch.bfloat16")]));
        assert!(!bf16.keeps(&[("m", "8"), ("mat1_dtype", "torch.float16")]));
        assert!(
            !bf16.keeps(&[("m", "torch.bfloat16")]),
            "the feature's name counts"
        );
        assert!(InputFilter::All.keeps(&[("m", "8")]));
    }
}
