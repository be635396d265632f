//! The training options' defaults and their check, in linfa's style: [`TrainOptions::new`] is
//! `ah-train LOG --heuristic-name NAME` with every other flag at its default, and
//! [`TrainOptions::check`] turns an invalid combination into a [`TrainParamsError`] before
//! anything is read. The rules the command line used to apply itself (a ranking is trained
//! with PyTorch's rule; where the range guard is on by default) live here, so a library
//! caller gets what `ah-train` does.

use std::path::PathBuf;

use super::{CostAwareParams, Mode, TrainOptions};
use crate::config::Overrides;
use crate::error::TrainParamsError;
use crate::guard::GuardPolicy;
use crate::learner::Learner;

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
