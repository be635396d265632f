//! Which samples a collection measures: deterministic per-sample inputs, `--shard`,
//! `--distinct` and `--exclude`, drawn one at a time ([`Samples`]): nothing is held per
//! sample, so memory does not grow with `--num-samples` (only `--distinct` keeps the inputs
//! drawn so far, to skip repeats).

use std::collections::HashSet;
use std::path::PathBuf;

use ah_log::{Log, ReadOptions};

use super::config::CollectConfig;
use super::error::CollectError;
pub use crate::runner::sample_rng;
use crate::runner::{DrawnInput, DynRunner, Target};

/// What the walk over the sample space has met so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct SampleCounts {
    /// This shard's samples drawn (with an input meeting the precondition).
    pub(super) drawn: u64,
    /// This shard's samples without a draw meeting the precondition.
    pub(super) no_precondition: u64,
    /// Sample indices skipped as repeats or excluded inputs (all shards).
    pub(super) skipped: u64,
}

/// This shard's samples, drawn in index order as they are asked for. Indices are walked over
/// the whole sample space (drawing is cheap, host only) until `num_samples` were taken:
/// plainly `0..num_samples`; with `--distinct` or `--exclude`, indices whose input repeats an
/// earlier one or is excluded are skipped. The same indices on every shard, machine and
/// resume.
pub(super) struct Samples<'a> {
    runner: &'a dyn DynRunner,
    cfg: &'a CollectConfig,
    target: Target,
    excluded: HashSet<String>,
    seen: HashSet<String>,
    /// The next index to draw.
    next: u64,
    /// Samples taken so far (all shards).
    taken: u64,
    /// Indices skipped in a row.
    in_a_row: u64,
    /// A sample drawn ahead ([`Samples::first`]).
    ahead: Option<(u64, DrawnInput)>,
    pub(super) counts: SampleCounts,
}

/// A sample space too small for the request ends the walk instead of looping forever.
const MAX_SKIPS_IN_A_ROW: u64 = 100_000;

impl<'a> Samples<'a> {
    /// The samples of `cfg` (the `--exclude` logs read now).
    pub(super) fn new(
        runner: &'a dyn DynRunner,
        cfg: &'a CollectConfig,
        target: &Target,
    ) -> Result<Self, CollectError> {
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
        Ok(Samples {
            runner,
            cfg,
            target: *target,
            excluded,
            seen: HashSet::new(),
            next: 0,
            taken: 0,
            in_a_row: 0,
            ahead: None,
            counts: SampleCounts::default(),
        })
    }

    /// This shard's first drawn sample, drawn ahead (its context names the log's features);
    /// `None` when this shard draws none.
    pub(super) fn first(&mut self) -> Result<Option<&DrawnInput>, CollectError> {
        if self.ahead.is_none() {
            self.ahead = self.draw_next()?;
        }
        Ok(self.ahead.as_ref().map(|(_, d)| d))
    }

    /// This shard's next drawn sample, `(index, input)`, or `None` when all are taken.
    pub(super) fn next(&mut self) -> Result<Option<(u64, DrawnInput)>, CollectError> {
        match self.ahead.take() {
            Some(s) => Ok(Some(s)),
            None => self.draw_next(),
        }
    }

    /// This shard's samples in the whole request, when the walk takes every index (neither
    /// `--distinct` nor `--exclude`); otherwise about that many.
    pub(super) fn planned(&self) -> u64 {
        let (n, shard) = (self.cfg.num_samples, self.cfg.shard);
        if n > shard.index {
            (n - shard.index - 1) / shard.count + 1
        } else {
            0
        }
    }

    fn draw_next(&mut self) -> Result<Option<(u64, DrawnInput)>, CollectError> {
        let cfg = self.cfg;
        while self.taken < cfg.num_samples {
            if self.in_a_row >= MAX_SKIPS_IN_A_ROW {
                return Err(self.too_small());
            }
            let i = self.next;
            self.next += 1;
            let mut rng = sample_rng(cfg.seed, i);
            let Some(d) = self.runner.draw(&mut rng, &self.target, cfg.max_draws) else {
                self.taken += 1;
                self.in_a_row = 0;
                if cfg.shard.contains(i) {
                    self.counts.no_precondition += 1;
                }
                continue;
            };
            let key = d.context.feature_values_csv();
            if self.excluded.contains(&key) || (cfg.distinct && !self.seen.insert(key)) {
                self.counts.skipped += 1;
                self.in_a_row += 1;
                continue;
            }
            self.taken += 1;
            self.in_a_row = 0;
            if cfg.shard.contains(i) {
                self.counts.drawn += 1;
                return Ok(Some((i, d)));
            }
        }
        Ok(None)
    }

    fn too_small(&self) -> CollectError {
        CollectError::Invalid(format!(
            "only {} of {} distinct{} inputs found ({MAX_SKIPS_IN_A_ROW} draws in a row gave \
             nothing new, seed {}): the runner's sample space is too small; ask for fewer \
             --num-samples (the inputs measured so far are kept: run again with fewer to \
             finish)",
            self.taken,
            self.cfg.num_samples,
            if self.excluded.is_empty() {
                ""
            } else {
                ", not excluded,"
            },
            self.cfg.seed
        ))
    }
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
                ah_core::error::shown(path),
                ah_core::error::clip(&log.metadata.name)
            )));
        }
        if let Some(f) = features.as_ref().filter(|f| **f != log.features) {
            return Err(CollectError::Invalid(format!(
                "{}: its features ({}) are not the `{runner}` runner's ({}), so none of its \
                 inputs could match; give a log this version of the runner wrote",
                ah_core::error::shown(path),
                ah_core::error::clip(&log.features.join(", ")),
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
