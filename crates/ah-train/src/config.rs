//! Training settings: what PyTorch users get by subclassing `AHTrainDecision`.
//!
//! The defaults per optimisation name are the trainer's [`crate::defaults`] (allowed wrong
//! share, split sizes, grid kind, always-included choices, unsafe-leaf rule, extra training
//! sets, input filter) and the core's registry [`ah_core::optimization`] (default choice,
//! built-in operations); this module maps them onto the
//! trainer's types ([`Grid`], [`UnsafeRule`]) and applies the overrides of a JSON config file
//! ([`Overrides`]). [`Settings`] is the resolved result. To add an optimisation, add it to the
//! registry; see `docs/adding-a-heuristic.md`.

use std::path::Path;

use ah_core::ops::Operation;
use ah_core::optimization;

use crate::defaults::{self, GridKind, InputFilter};
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

    /// The grid of a registry [`GridKind`].
    pub fn of(kind: GridKind) -> Self {
        match kind {
            GridKind::Upstream => Grid::upstream_default(),
            GridKind::SingleModel => Grid::single_mm(),
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

impl From<defaults::UnsafeRule> for UnsafeRule {
    fn from(rule: defaults::UnsafeRule) -> Self {
        match rule {
            defaults::UnsafeRule::Never => UnsafeRule::Never,
            defaults::UnsafeRule::SlowerThan { choice, factor } => UnsafeRule::SlowerThan {
                choice: choice.to_string(),
                factor,
            },
        }
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
    /// Which inputs training keeps (`filter_df`), applied before the split.
    pub input_filter: InputFilter,
}

impl Settings {
    /// The registry's settings for the optimisation `name` with the overrides `o`
    /// (`base_dir` resolves `operations_file`).
    pub fn resolve(name: &str, o: &Overrides, base_dir: &Path) -> Result<Self> {
        let opt = optimization::lookup(name);
        let defaults = defaults::training_defaults(name);
        let grid = grid_with(Grid::of(defaults.grid), o)?;
        let mut operations = if o.builtin_operations.unwrap_or(true) {
            opt.operations()
        } else {
            Vec::new()
        };
        if let Some(f) = &o.operations_file {
            operations.extend(ah_core::ops::parse_operations_file(base_dir.join(f))?);
        }
        let (t, v) = (
            o.test_size.unwrap_or(defaults.test_size),
            o.val_size.unwrap_or(defaults.val_size),
        );
        if !(t > 0.0 && v > 0.0 && t + v < 1.0) {
            return Err(TrainError::Config(format!(
                "test_size {t} and val_size {v} must be positive with a sum below 1"
            )));
        }
        Ok(Settings {
            name: name.to_string(),
            default_choice: o
                .default_choice
                .clone()
                .or_else(|| opt.default_choice.map(str::to_string)),
            unsafe_rule: match &o.unsafe_slower_than {
                Some((c, f)) => UnsafeRule::SlowerThan {
                    choice: c.clone(),
                    factor: *f,
                },
                None => defaults.unsafe_rule.into(),
            },
            allowed_wrong_pct: o.allowed_wrong_pct.unwrap_or(defaults.allowed_wrong_pct),
            test_and_val: (t, v),
            grid,
            operations,
            always_included: o.always_included.clone().unwrap_or_else(|| {
                defaults
                    .always_included
                    .iter()
                    .map(|c| c.to_string())
                    .collect()
            }),
            extra_training_sets: defaults
                .extra_training_sets
                .iter()
                .map(|&(n, times)| (n.to_string(), times))
                .collect(),
            input_filter: defaults.input_filter,
        })
    }
}

/// `grid` with the overrides' depths, leaf sizes and criteria; an error when one is invalid
/// or the grid is empty.
fn grid_with(mut grid: Grid, o: &Overrides) -> Result<Grid> {
    if let Some(d) = &o.max_depth {
        grid.max_depth = d.clone();
    }
    if let Some(m) = &o.min_samples_leaf {
        grid.min_samples_leaf = m
            .iter()
            .map(|t| {
                MinSamplesLeaf::parse(t).ok_or_else(|| {
                    TrainError::Config(format!(
                        "min_samples_leaf `{t}` is neither a count >= 1 nor a fraction in (0, 1)"
                    ))
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
    Ok(grid)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let s = Settings::resolve("mixed_mm", &Overrides::default(), Path::new(".")).unwrap();
        assert_eq!(s.operations.len(), 19);
        assert_eq!(s.test_and_val, (0.01, 0.19));
        assert_eq!(s.grid, Grid::single_mm());
        assert_eq!(s.allowed_wrong_pct, 1.0);
        assert_eq!(
            s.unsafe_rule,
            UnsafeRule::SlowerThan {
                choice: "extern_fallback_mixed_mm".into(),
                factor: 1.05
            }
        );
        let s = Settings::resolve("pad_mm", &Overrides::default(), Path::new(".")).unwrap();
        assert_eq!(s.operations.len(), 26);
        assert_eq!(s.default_choice.as_deref(), Some("orig"));
        assert_eq!(s.grid, Grid::upstream_default());
        assert_eq!(s.input_filter, InputFilter::All);
        let s = Settings::resolve("mm", &Overrides::default(), Path::new(".")).unwrap();
        assert_eq!(s.always_included, ["extern_mm"]);
        assert_eq!(
            s.extra_training_sets,
            [("train_timm".to_string(), 3), ("train_hf".to_string(), 3)]
        );
        let s = Settings::resolve("my_opt", &Overrides::default(), Path::new(".")).unwrap();
        assert_eq!(s.name, "my_opt");
        assert!(s.operations.is_empty() && s.default_choice.is_none());
        assert_eq!((s.allowed_wrong_pct, s.test_and_val), (0.01, (0.15, 0.15)));
        assert_eq!(s.unsafe_rule, UnsafeRule::Never);
    }

    #[test]
    fn overrides_replace_the_registry_defaults() {
        let o: Overrides = serde_json::from_str(
            r#"{"default_choice": "pad", "allowed_wrong_pct": 0.02, "test_size": 0.1,
                "max_depth": [4, null], "criterion": ["gini"], "always_included": ["orig"],
                "unsafe_slower_than": ["orig", 1.1], "builtin_operations": false}"#,
        )
        .unwrap();
        let s = Settings::resolve("pad_mm", &o, Path::new(".")).unwrap();
        assert_eq!(s.default_choice.as_deref(), Some("pad"));
        assert_eq!((s.allowed_wrong_pct, s.test_and_val), (0.02, (0.1, 0.15)));
        assert_eq!(s.grid.max_depth, [Some(4), None]);
        assert_eq!(s.grid.criterion, [Criterion::Gini]);
        assert_eq!(s.grid.min_samples_leaf.len(), 6);
        assert_eq!(s.always_included, ["orig"]);
        assert_eq!(
            s.unsafe_rule,
            UnsafeRule::SlowerThan {
                choice: "orig".into(),
                factor: 1.1
            }
        );
        assert!(s.operations.is_empty());
        let bad: Overrides = serde_json::from_str(r#"{"criterion": []}"#).unwrap();
        assert!(Settings::resolve("pad_mm", &bad, Path::new(".")).is_err());
    }
}
