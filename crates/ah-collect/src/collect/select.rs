//! Which samples a collection measures: deterministic per-sample inputs, `--shard`,
//! `--distinct` and `--exclude`.

use std::collections::HashSet;
use std::path::PathBuf;

use ah_log::{Log, ReadOptions};

use super::{CollectConfig, CollectError};
pub use crate::runner::sample_rng;
use crate::runner::{DrawnInput, DynRunner, Target};

/// The samples a collection measures (this shard's), before resume is taken into account.
pub(super) struct Selection {
    /// `(sample index, feature values)` of this shard's samples, in index order.
    pub(super) drawn: Vec<(u64, String)>,
    /// The first drawn input (its context names the log's features).
    pub(super) first: Option<DrawnInput>,
    /// This shard's samples without a draw meeting the precondition.
    pub(super) no_precondition: u64,
    /// Sample indices skipped as repeats or excluded inputs (all shards).
    pub(super) skipped: u64,
}

/// Input keys (feature values as logged, comma-joined) of the logs in `paths`, which must be
/// logs of `runner` with the features `features` (else nothing would ever match).
fn excluded_keys(
    paths: &[PathBuf],
    runner: &str,
    features: Option<Vec<String>>,
) -> Result<HashSet<String>, CollectError> {
    let mut keys = HashSet::new();
    for path in paths {
        let log = Log::read(path, ReadOptions::default())?;
        if log.metadata.name != runner
            && !ah_core::optimization::is_former_name(&log.metadata.name, runner)
        {
            return Err(CollectError::Invalid(format!(
                "{}: a `{}` log; --exclude takes logs of the runner being collected (`{runner}`)",
                path.display(),
                log.metadata.name
            )));
        }
        if let Some(f) = features.as_ref().filter(|f| **f != log.features) {
            return Err(CollectError::Invalid(format!(
                "{}: its features ({}) are not the `{runner}` runner's ({}), so none of its \
                 inputs could match; give a log this version of the runner wrote",
                path.display(),
                log.features.join(", "),
                f.join(", ")
            )));
        }
        for row in &log.rows {
            let key: Vec<String> = row.values.iter().map(ToString::to_string).collect();
            keys.insert(key.join(","));
        }
    }
    Ok(keys)
}

/// Sample indices to measure (this shard's part of them). Indices are walked in order over
/// the whole sample space (drawing is cheap, host only) until `num_samples` were taken: plainly
/// `0..num_samples`; with `--distinct` or `--exclude`, indices whose input repeats an earlier
/// one or is excluded are skipped. The same indices on every shard, machine and resume.
pub(super) fn select_samples(
    runner: &dyn DynRunner,
    cfg: &CollectConfig,
    target: &Target,
) -> Result<Selection, CollectError> {
    let mut sel = Selection {
        drawn: Vec::new(),
        first: None,
        no_precondition: 0,
        skipped: 0,
    };
    let excluded = if cfg.exclude.is_empty() {
        HashSet::new()
    } else {
        let features = runner
            .draw(&mut sample_rng(cfg.seed, 0), target, cfg.max_draws)
            .map(|d| {
                d.context
                    .features()
                    .iter()
                    .map(|f| f.name.to_string())
                    .collect()
            });
        excluded_keys(&cfg.exclude, runner.name(), features)?
    };
    let mut seen: HashSet<String> = HashSet::new();
    // A sample space too small for the request ends the walk instead of looping forever.
    const MAX_SKIPS_IN_A_ROW: u64 = 100_000;
    let (mut taken, mut i, mut in_a_row) = (0u64, 0u64, 0u64);
    while taken < cfg.num_samples {
        if in_a_row >= MAX_SKIPS_IN_A_ROW {
            return Err(CollectError::Invalid(format!(
                "only {taken} of {} distinct{} inputs found ({MAX_SKIPS_IN_A_ROW} draws in a row \
                 gave nothing new, seed {}): the runner's sample space is too small; ask for \
                 fewer --num-samples",
                cfg.num_samples,
                if excluded.is_empty() {
                    ""
                } else {
                    ", not excluded,"
                },
                cfg.seed
            )));
        }
        let mut rng = sample_rng(cfg.seed, i);
        match runner.draw(&mut rng, target, cfg.max_draws) {
            Some(d) => {
                let key = d.context.feature_values_csv();
                if excluded.contains(&key) || (cfg.distinct && !seen.insert(key.clone())) {
                    sel.skipped += 1;
                    in_a_row += 1;
                } else {
                    taken += 1;
                    in_a_row = 0;
                    if cfg.shard.contains(i) {
                        sel.drawn.push((i, key));
                        sel.first.get_or_insert(d);
                    }
                }
            }
            None => {
                taken += 1;
                in_a_row = 0;
                if cfg.shard.contains(i) {
                    sel.no_precondition += 1;
                }
            }
        }
        i += 1;
    }
    Ok(sel)
}
