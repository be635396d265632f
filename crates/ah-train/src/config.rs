//! The customisation seam: what PyTorch users get by subclassing `AHTrainDecision`.
//!
//! [`HeuristicConfig`] has one method per hook with PyTorch's defaults; [`PadMm`], [`Mm`],
//! [`MixedMm`] and [`Generic`] implement it for the known names. [`Settings`] is the resolved
//! result, after the overrides of the command line or a JSON config file ([`Overrides`]).
//! To add a heuristic, implement the trait (override only what differs) and return it from
//! [`config_for`]; see `docs/training.md`.

use std::path::Path;

use ah_core::ops::{builtin_operations, Operation};
use serde::Deserialize;

use crate::cart::{CartParams, Criterion, MinSamplesLeaf};
use crate::error::{Result, TrainError};

/// The hyper-parameter grid, searched in `itertools.product(max_depth, min_samples_leaf,
/// criterion)` order.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// Depths (`None`: unlimited).
    pub max_depth: Vec<Option<usize>>,
    /// Minimum samples per leaf.
    pub min_samples_leaf: Vec<MinSamplesLeaf>,
    /// Criteria.
    pub criterion: Vec<Criterion>,
}

impl Grid {
    /// PyTorch's default 36-model grid.
    pub fn upstream_default() -> Self {
        use MinSamplesLeaf::{Count, Fraction};
        Grid {
            max_depth: vec![Some(5), Some(6), Some(7)],
            min_samples_leaf: vec![
                Count(1),
                Count(5),
                Count(10),
                Fraction(0.01),
                Fraction(0.05),
                Fraction(0.02),
            ],
            criterion: vec![Criterion::Gini, Criterion::Entropy],
        }
    }

    /// mm and mixed_mm: one model (depth 5, 1% per leaf, entropy).
    pub fn single_mm() -> Self {
        Grid {
            max_depth: vec![Some(5)],
            min_samples_leaf: vec![MinSamplesLeaf::Fraction(0.01)],
            criterion: vec![Criterion::Entropy],
        }
    }

    /// The regression variant's grid (`max_depth [5, 6, 7] x min_samples_leaf [1, 2, 5, 10]`).
    pub fn regression() -> Self {
        use MinSamplesLeaf::Count;
        Grid {
            max_depth: vec![Some(5), Some(6), Some(7)],
            min_samples_leaf: vec![Count(1), Count(2), Count(5), Count(10)],
            criterion: vec![Criterion::SquaredError],
        }
    }

    /// All configurations in product order.
    pub fn configs(&self) -> Vec<GridConfig> {
        let mut v = Vec::new();
        for &max_depth in &self.max_depth {
            for &min_samples_leaf in &self.min_samples_leaf {
                for &criterion in &self.criterion {
                    v.push(GridConfig {
                        max_depth,
                        min_samples_leaf,
                        criterion,
                    });
                }
            }
        }
        v
    }
}

/// One configuration of a [`Grid`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GridConfig {
    /// Depth (`None`: unlimited).
    pub max_depth: Option<usize>,
    /// Minimum samples per leaf.
    pub min_samples_leaf: MinSamplesLeaf,
    /// Split criterion.
    pub criterion: Criterion,
}

impl GridConfig {
    /// The tree's hyper-parameters with this configuration and `seed`.
    pub fn params(self, seed: u32) -> CartParams {
        CartParams {
            criterion: self.criterion,
            max_depth: self.max_depth,
            min_samples_leaf: self.min_samples_leaf,
            seed,
        }
    }
}

/// The unsafe-leaf rule (`is_unsafe_leaf`): a training row makes its leaf unsafe.
#[derive(Debug, Clone, PartialEq)]
pub enum UnsafeRule {
    /// Never (PyTorch's default).
    Never,
    /// mixed_mm's: the predicted choice is more than `factor` times slower than `choice`.
    SlowerThan {
        /// The reference choice (`extern_fallback_mixed_mm`).
        choice: String,
        /// The factor (1.05).
        factor: f64,
    },
}

/// One training hook per method, with PyTorch's defaults.
pub trait HeuristicConfig: Send + Sync {
    /// The optimization name this config is for.
    fn name(&self) -> &str;
    /// `get_default_config`: the choice used when no heuristic exists (speedup metrics).
    fn default_choice(&self) -> Option<String> {
        None
    }
    /// `is_unsafe_leaf`.
    fn unsafe_rule(&self) -> UnsafeRule {
        UnsafeRule::Never
    }
    /// `get_allowed_wrong_prediction_pct`.
    fn allowed_wrong_pct(&self) -> f64 {
        0.01
    }
    /// `get_test_and_val_size`.
    fn test_and_val_size(&self) -> (f64, f64) {
        (0.15, 0.15)
    }
    /// `get_grid_search_values`.
    fn grid(&self) -> Grid {
        Grid::upstream_default()
    }
    /// `add_new_features`: the augment operations.
    fn operations(&self) -> Vec<Operation> {
        builtin_operations(self.name())
    }
    /// `ranking_always_included_choices`.
    fn always_included(&self) -> Vec<String> {
        Vec::new()
    }
    /// `add_training_data`: `--data` sets appended to the training set, with a repeat count.
    fn extra_training_sets(&self) -> Vec<(String, usize)> {
        Vec::new()
    }
    /// `filter_df`: keep only inputs whose logged features (name, text as logged) pass; all by
    /// default. Applied before the split.
    fn keep_input(&self, _features: &[(&str, &str)]) -> bool {
        true
    }
}

/// pad_mm: PyTorch's defaults; `orig` as the default choice (for metrics only).
#[derive(Debug, Clone, Copy, Default)]
pub struct PadMm;
impl HeuristicConfig for PadMm {
    fn name(&self) -> &str {
        "pad_mm"
    }
    fn default_choice(&self) -> Option<String> {
        Some("orig".into())
    }
}

/// mm (ranking): single model, 1/19 split, `extern_mm` always included, every wrong allowed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Mm;
impl HeuristicConfig for Mm {
    fn name(&self) -> &str {
        "mm"
    }
    fn default_choice(&self) -> Option<String> {
        Some("extern_mm".into())
    }
    fn allowed_wrong_pct(&self) -> f64 {
        1.0
    }
    fn test_and_val_size(&self) -> (f64, f64) {
        (0.01, 0.19)
    }
    fn grid(&self) -> Grid {
        Grid::single_mm()
    }
    fn always_included(&self) -> Vec<String> {
        vec!["extern_mm".into()]
    }
    fn extra_training_sets(&self) -> Vec<(String, usize)> {
        vec![("train_timm".into(), 3), ("train_hf".into(), 3)]
    }
}

/// mixed_mm: single model, 1/19 split, unsafe when 5% slower than the fallback.
#[derive(Debug, Clone, Copy, Default)]
pub struct MixedMm;
impl HeuristicConfig for MixedMm {
    fn name(&self) -> &str {
        "mixed_mm"
    }
    fn default_choice(&self) -> Option<String> {
        Some("extern_fallback_mixed_mm".into())
    }
    fn unsafe_rule(&self) -> UnsafeRule {
        UnsafeRule::SlowerThan {
            choice: "extern_fallback_mixed_mm".into(),
            factor: 1.05,
        }
    }
    fn allowed_wrong_pct(&self) -> f64 {
        1.0
    }
    fn test_and_val_size(&self) -> (f64, f64) {
        (0.01, 0.19)
    }
    fn grid(&self) -> Grid {
        Grid::single_mm()
    }
}

/// Any other name: PyTorch's defaults, no operations, no default choice.
#[derive(Debug, Clone, Default)]
pub struct Generic {
    /// The optimization name.
    pub name: String,
}
impl HeuristicConfig for Generic {
    fn name(&self) -> &str {
        &self.name
    }
}

/// The config for a log's name.
pub fn config_for(name: &str) -> Box<dyn HeuristicConfig> {
    match name {
        "pad_mm" => Box::new(PadMm),
        "mm" => Box::new(Mm),
        "mixed_mm" => Box::new(MixedMm),
        other => Box::new(Generic {
            name: other.to_string(),
        }),
    }
}

/// Overrides from a JSON config file (`--config FILE`); every field optional.
///
/// ```json
/// {"default_choice": "orig", "allowed_wrong_pct": 0.02, "test_size": 0.15, "val_size": 0.15,
///  "max_depth": [5, 6], "min_samples_leaf": ["1", "0.01"], "criterion": ["entropy"],
///  "always_included": ["extern_mm"], "unsafe_slower_than": ["extern_mm", 1.05],
///  "operations_file": "ops.txt", "builtin_operations": true}
/// ```
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Overrides {
    /// Default choice.
    pub default_choice: Option<String>,
    /// Allowed share of wrong validation predictions (upstream rule).
    pub allowed_wrong_pct: Option<f64>,
    /// Test share.
    pub test_size: Option<f64>,
    /// Validation share.
    pub val_size: Option<f64>,
    /// Grid depths (`null` for unlimited).
    pub max_depth: Option<Vec<Option<usize>>>,
    /// Grid leaf sizes as text (`"10"`, `"0.01"`).
    pub min_samples_leaf: Option<Vec<String>>,
    /// Grid criteria (`gini`, `entropy`).
    pub criterion: Option<Vec<String>>,
    /// Always-included choices for ranking.
    pub always_included: Option<Vec<String>>,
    /// Unsafe-leaf rule: `[choice, factor]`.
    pub unsafe_slower_than: Option<(String, f64)>,
    /// An operations file with extra augment operations (relative to the config file).
    pub operations_file: Option<String>,
    /// Whether to use the name's built-in operations (default true).
    pub builtin_operations: Option<bool>,
}

impl Overrides {
    /// Reads a config file.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| TrainError::io(path, e))?;
        serde_json::from_str(&text).map_err(|e| TrainError::Input {
            path: path.to_path_buf(),
            message: format!("invalid training config: {e}"),
        })
    }
}

/// Resolved training settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Optimization name.
    pub name: String,
    /// Default choice.
    pub default_choice: Option<String>,
    /// Unsafe-leaf rule.
    pub unsafe_rule: UnsafeRule,
    /// Allowed wrong share (upstream selection).
    pub allowed_wrong_pct: f64,
    /// Test and validation shares.
    pub test_and_val: (f64, f64),
    /// Grid.
    pub grid: Grid,
    /// Augment operations (built-in, then the user's).
    pub operations: Vec<Operation>,
    /// Always-included choices (ranking).
    pub always_included: Vec<String>,
    /// Extra training sets and repeat counts.
    pub extra_training_sets: Vec<(String, usize)>,
}

impl Settings {
    /// Resolves a config with overrides (`base_dir` resolves `operations_file`).
    pub fn resolve(cfg: &dyn HeuristicConfig, o: &Overrides, base_dir: &Path) -> Result<Self> {
        let mut grid = cfg.grid();
        if let Some(d) = &o.max_depth {
            grid.max_depth = d.clone();
        }
        if let Some(m) = &o.min_samples_leaf {
            grid.min_samples_leaf = m
                .iter()
                .map(|t| {
                    MinSamplesLeaf::parse(t).ok_or_else(|| {
                        TrainError::Config(format!("min_samples_leaf `{t}` is neither a count >= 1 nor a fraction in (0, 1)"))
                    })
                })
                .collect::<Result<_>>()?;
        }
        if let Some(c) = &o.criterion {
            grid.criterion = c
                .iter()
                .map(|t| match t.as_str() {
                    "gini" => Ok(Criterion::Gini),
                    "entropy" => Ok(Criterion::Entropy),
                    other => Err(TrainError::Config(format!(
                        "criterion `{other}`: use gini or entropy"
                    ))),
                })
                .collect::<Result<_>>()?;
        }
        if grid.configs().is_empty() {
            return Err(TrainError::Config(
                "the grid is empty: give at least one value per parameter".into(),
            ));
        }
        let mut operations = if o.builtin_operations.unwrap_or(true) {
            cfg.operations()
        } else {
            Vec::new()
        };
        if let Some(f) = &o.operations_file {
            operations.extend(ah_core::ops::parse_operations_file(base_dir.join(f))?);
        }
        let (t, v) = (
            o.test_size.unwrap_or(cfg.test_and_val_size().0),
            o.val_size.unwrap_or(cfg.test_and_val_size().1),
        );
        if !(t > 0.0 && v > 0.0 && t + v < 1.0) {
            return Err(TrainError::Config(format!(
                "test_size {t} and val_size {v} must be positive with a sum below 1"
            )));
        }
        Ok(Settings {
            name: cfg.name().to_string(),
            default_choice: o.default_choice.clone().or_else(|| cfg.default_choice()),
            unsafe_rule: match &o.unsafe_slower_than {
                Some((c, f)) => UnsafeRule::SlowerThan {
                    choice: c.clone(),
                    factor: *f,
                },
                None => cfg.unsafe_rule(),
            },
            allowed_wrong_pct: o.allowed_wrong_pct.unwrap_or(cfg.allowed_wrong_pct()),
            test_and_val: (t, v),
            grid,
            operations,
            always_included: o
                .always_included
                .clone()
                .unwrap_or_else(|| cfg.always_included()),
            extra_training_sets: cfg.extra_training_sets(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A config that keeps only bf16 inputs, to show and test the filter hook.
    struct OnlyBf16;
    impl HeuristicConfig for OnlyBf16 {
        fn name(&self) -> &str {
            "pad_mm"
        }
        fn keep_input(&self, features: &[(&str, &str)]) -> bool {
            features
                .iter()
                .any(|(n, v)| *n == "mat1_dtype" && *v == "torch.bfloat16")
        }
    }

    #[test]
    fn filter_hook_reads_logged_text() {
        let c = OnlyBf16;
        assert!(c.keep_input(&[("m", "8"), ("mat1_dtype", "torch.bfloat16")]));
        assert!(!c.keep_input(&[("m", "8"), ("mat1_dtype", "torch.float16")]));
        assert!(PadMm.keep_input(&[("m", "8")]));
        assert_eq!(c.allowed_wrong_pct(), 0.01);
    }

    #[test]
    fn known_configs() {
        assert_eq!(Grid::upstream_default().configs().len(), 36);
        let c = Grid::upstream_default().configs();
        assert_eq!(
            c[1],
            GridConfig {
                max_depth: Some(5),
                min_samples_leaf: MinSamplesLeaf::Count(1),
                criterion: Criterion::Entropy
            }
        );
        let s = Settings::resolve(&MixedMm, &Overrides::default(), Path::new(".")).unwrap();
        assert_eq!(s.operations.len(), 19);
        assert_eq!(s.test_and_val, (0.01, 0.19));
        let s = Settings::resolve(&PadMm, &Overrides::default(), Path::new(".")).unwrap();
        assert_eq!(s.operations.len(), 26);
        assert_eq!(s.default_choice.as_deref(), Some("orig"));
    }
}
