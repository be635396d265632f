//! What a collection measures, one sample at a time ([`Todo::next`]): this shard's samples in
//! index order ([`Samples`]), less the inputs the log already holds (matched by feature
//! values, counted as a multiset: equal inputs count once each). An input the log holds and
//! its medians sidecar lacks (the sidecar was cut) is measured again for the sidecar alone,
//! so that the two hold the same inputs; a log that has no sidecar (a PyTorch log, or one
//! whose sidecar was not kept) gets none. Nothing is materialised per sample.

use std::collections::BTreeMap;

use super::error::CollectError;
use super::select::Samples;
use crate::runner::DrawnInput;

/// One sample to measure.
pub(super) struct Work {
    /// Its index in the sample space.
    pub(super) index: u64,
    /// Its input.
    pub(super) drawn: DrawnInput,
    /// The log holds it and its medians sidecar does not: its rows go to the sidecar only.
    pub(super) medians_only: bool,
}

/// The samples left to measure.
pub(super) struct Todo<'a> {
    samples: Samples<'a>,
    /// Complete inputs of the log not matched to a sample yet.
    log: BTreeMap<String, u64>,
    /// Complete inputs of the medians sidecar not matched to a sample yet; `None` when the log
    /// has no sidecar to keep whole.
    medians: Option<BTreeMap<String, u64>>,
    /// Samples found in the log (measured again for the sidecar or not).
    pub(super) already_done: u64,
}

/// Takes one of `key` from the multiset `m`; false when it holds none.
fn take(m: &mut BTreeMap<String, u64>, key: &str) -> bool {
    match m.get_mut(key) {
        Some(n) if *n > 0 => {
            *n -= 1;
            true
        }
        _ => false,
    }
}

impl<'a> Todo<'a> {
    /// The samples of `samples` less the complete inputs of the log (`log`) and of its
    /// medians sidecar (`medians`, `None` without one).
    pub(super) fn new(
        samples: Samples<'a>,
        log: BTreeMap<String, u64>,
        medians: Option<BTreeMap<String, u64>>,
    ) -> Self {
        Todo {
            samples,
            log,
            medians,
            already_done: 0,
        }
    }

    /// The next sample to measure, or `None` when every sample was walked.
    pub(super) fn next(&mut self) -> Result<Option<Work>, CollectError> {
        while let Some((index, drawn)) = self.samples.next()? {
            let key = drawn.context.feature_values_csv();
            if !take(&mut self.log, &key) {
                return Ok(Some(Work {
                    index,
                    drawn,
                    medians_only: false,
                }));
            }
            self.already_done += 1;
            if self.medians.as_mut().is_some_and(|m| !take(m, &key)) {
                return Ok(Some(Work {
                    index,
                    drawn,
                    medians_only: true,
                }));
            }
        }
        Ok(None)
    }

    /// `(to measure, already in the log)` as known before the walk: exact for a new log or
    /// a rerun of the same request without `--distinct`/`--exclude`, an estimate otherwise
    /// (the summary has the counts).
    pub(super) fn estimate(&self) -> (u64, u64) {
        let planned = self.samples.planned();
        let in_log: u64 = self.log.values().sum();
        let refill: u64 = match &self.medians {
            Some(m) => self
                .log
                .iter()
                .map(|(k, n)| n.saturating_sub(m.get(k).copied().unwrap_or(0)))
                .sum(),
            None => 0,
        };
        let done = in_log.min(planned);
        (planned - done + refill.min(done), done)
    }

    /// What the walk met so far: this shard's samples drawn, without a draw meeting the
    /// precondition, and the indices skipped.
    pub(super) fn counts(&self) -> super::select::SampleCounts {
        self.samples.counts
    }
}
