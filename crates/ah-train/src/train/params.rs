//! The training options ([`TrainOptions`]: the selection rule [`Mode`], the cost-aware
//! settings [`CostAwareParams`] with their leaf score [`Confidence`], ...), their defaults and
//! their check, in linfa's style: [`TrainOptions::new`] is
//! `ah-train LOG --heuristic-name NAME` with every other flag at its default, and
//! [`TrainOptions::check`] turns an invalid combination into a [`TrainParamsError`] before
//! anything is read. The rules the command line used to apply itself (a ranking is trained
//! with PyTorch's rule; where the range guard is on by default) live here, so a library
//! caller gets what `ah-train` does.

use std::path::PathBuf;

use ah_core::ops::Operation;

use crate::config::Overrides;
use crate::error::TrainParamsError;
use crate::guard::GuardPolicy;
use crate::learner::Learner;

/// How the model and threshold are selected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// PyTorch's rule, exactly.
    Upstream,
    /// Cross-validated, confidence-bounded, cost-aware selection.
    #[default]
    CostAware,
}

impl Mode {
    /// Name recorded in the model.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Upstream => "upstream",
            Mode::CostAware => "cost_aware_cv",
        }
    }
}

/// Settings of the cost-aware mode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostAwareParams {
    /// Cost of one unsure input (an autotune), in the unit of a wrong pick's loss
    /// `ln(t_pick / t_best)`.
    pub autotune_cost: f64,
    /// Bound on the share of inputs with a harmful wrong pick: the one-sided 84 % Wilson upper
    /// bound (z = [`HARM_Z`](super::HARM_Z) = 1.0) of the cross-validated share must not exceed it.
    pub max_harmful: f64,
    /// Number of folds.
    pub folds: usize,
    /// z of the Wilson lower bound on a leaf's majority share ([`WILSON_Z`] by default).
    pub wilson_z: f64,
    /// Leaf score.
    pub confidence: Confidence,
}

/// z of the Wilson lower bound on a leaf's majority share: 1.96, a two-sided 95 % interval.
pub const WILSON_Z: f64 = 1.96;

impl Default for CostAwareParams {
    fn default() -> Self {
        Self {
            autotune_cost: 0.01,
            max_harmful: 0.005,
            folds: 5,
            wilson_z: WILSON_Z,
            confidence: Confidence::Wilson,
        }
    }
}

/// Everything a training run needs.
#[derive(Debug, Clone)]
pub struct TrainOptions {
    /// The training log.
    pub log: PathBuf,
    /// Heuristic (class) name.
    pub heuristic_name: String,
    /// Extra evaluation sets `(name, log)`.
    pub data: Vec<(String, PathBuf)>,
    /// Learner.
    pub learner: Learner,
    /// `--ranking K`.
    pub ranking: Option<usize>,
    /// Default choice override.
    pub default_choice: Option<String>,
    /// Seed of the split and the trees.
    pub seed: u32,
    /// A split file naming each input's set.
    pub split_file: Option<PathBuf>,
    /// Selection rule.
    pub mode: Mode,
    /// Cost-aware settings.
    pub cost: CostAwareParams,
    /// Config-file overrides and the folder they are relative to.
    pub overrides: Overrides,
    /// Folder of the config file.
    pub config_dir: PathBuf,
    /// Extra user operations.
    pub extra_operations: Vec<Operation>,
    /// The command line, recorded in the model.
    pub command: String,
    /// Store the range guard: at run time (and in the final metrics) a numeric feature outside
    /// the range seen in training makes the heuristic unsure.
    pub range_guard: bool,
    /// Which features the guard checks and with what margin (the stored ranges follow it even
    /// when the guard is off). Recorded as `training.extra.guard` unless it is `box`.
    pub guard: GuardPolicy,
    /// Categorical features (logged or augmented) the category guard checks: a deciding leaf
    /// is unsure for a category of one of them that none of its training rows had
    /// ([`crate::category_guard`]). Empty: no guard. Recorded as `training.extra.category_guard`
    /// when set.
    pub category_guard: Vec<String>,
    /// A choice timed `inf` for an input cannot be offered for it at run time: picking it is
    /// unsure (the runtime autotunes), not an infinitely slow wrong pick, in every metric, the
    /// unsafe-leaf rule, the leaf scores and the cross-validated threshold
    /// ([`ah_eval::metrics::EvalSettings::inf_unavailable`]). Recorded in the model as
    /// `training.extra.inf_unavailable`.
    pub inf_unavailable: bool,
}

/// How a leaf's trustworthiness is scored (higher = more trusted; the cross-validated
/// threshold applies to it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confidence {
    /// Wilson lower bound of the leaf's majority share.
    Wilson,
    /// Minus the leaf's expected time lost, `ln(t_pick / t_best)` averaged over its training
    /// inputs, shrunk toward the table's mean `ln(speedup)` with a prior of
    /// [`LOSS_PRIOR_WEIGHT`](super::LOSS_PRIOR_WEIGHT) inputs.
    Loss,
}

impl Mode {
    /// The selection rule of `--upstream` and `--ranking`: PyTorch's when either is given (a
    /// ranking keeps several choices, which the cost-aware rule, deciding one, cannot),
    /// cost-aware otherwise.
    pub fn for_flags(upstream: bool, ranking: Option<usize>) -> Mode {
        if upstream || ranking.is_some() {
            Mode::Upstream
        } else {
            Mode::CostAware
        }
    }
}

impl TrainOptions {
    /// The options of `ah-train LOG --heuristic-name NAME`: the cart learner, seed 42, the
    /// cost-aware rule with [`CostAwareParams::default`], the range guard on, no config file,
    /// no extra data or operations.
    pub fn new(log: impl Into<PathBuf>, heuristic_name: impl Into<String>) -> Self {
        TrainOptions {
            log: log.into(),
            heuristic_name: heuristic_name.into(),
            data: Vec::new(),
            learner: Learner::Cart,
            ranking: None,
            default_choice: None,
            seed: 42,
            split_file: None,
            mode: Mode::CostAware,
            cost: CostAwareParams::default(),
            overrides: Overrides::default(),
            config_dir: PathBuf::from("."),
            extra_operations: Vec::new(),
            command: String::new(),
            range_guard: true,
            guard: GuardPolicy::default(),
            category_guard: Vec::new(),
            inf_unavailable: false,
        }
    }

    /// Whether the range guard is on when neither `--range-guard` nor `--no-range-guard` is
    /// given: off with `--upstream` and for the regression variant (PyTorch has no range
    /// guard), on otherwise.
    pub fn range_guard_default(upstream: bool, regression: bool) -> bool {
        !upstream && !regression
    }

    /// Refuses an invalid combination of options (see [`TrainParamsError`]).
    pub fn check(&self) -> Result<(), TrainParamsError> {
        if let Some(k) = self.ranking {
            if k == 0 {
                return Err(TrainParamsError::RankingZero);
            }
            if self.mode == Mode::CostAware {
                return Err(TrainParamsError::RankingNeedsUpstream);
            }
        }
        let c = &self.cost;
        if c.folds < 2 {
            return Err(TrainParamsError::Folds(c.folds));
        }
        if !(c.autotune_cost.is_finite() && c.autotune_cost >= 0.0) {
            return Err(TrainParamsError::AutotuneCost(c.autotune_cost));
        }
        if !(0.0..=1.0).contains(&c.max_harmful) {
            return Err(TrainParamsError::MaxHarmful(c.max_harmful));
        }
        if !(c.wilson_z.is_finite() && c.wilson_z > 0.0) {
            return Err(TrainParamsError::WilsonZ(c.wilson_z));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_pass_and_bad_combinations_are_refused() {
        let o = TrainOptions::new("train.txt", "PadMMH100");
        assert_eq!(o.check(), Ok(()));
        let mut r = o.clone();
        r.ranking = Some(3);
        assert_eq!(r.check(), Err(TrainParamsError::RankingNeedsUpstream));
        r.mode = Mode::for_flags(false, r.ranking);
        assert_eq!(r.check(), Ok(()));
        r.ranking = Some(0);
        assert_eq!(r.check(), Err(TrainParamsError::RankingZero));
        let mut f = o.clone();
        f.cost.folds = 1;
        assert_eq!(f.check(), Err(TrainParamsError::Folds(1)));
        let mut h = o;
        h.cost.max_harmful = 1.5;
        assert!(h.check().is_err());
    }

    #[test]
    fn flags_map_to_modes_and_guards() {
        assert_eq!(Mode::for_flags(false, None), Mode::CostAware);
        assert_eq!(Mode::for_flags(true, None), Mode::Upstream);
        assert_eq!(Mode::for_flags(false, Some(2)), Mode::Upstream);
        assert!(TrainOptions::range_guard_default(false, false));
        assert!(!TrainOptions::range_guard_default(true, false));
        assert!(!TrainOptions::range_guard_default(false, true));
    }
}
