//! Preparation, shared by the classification trainer and the regression variant: the log, the
//! resolved settings, the table with the config's row filter, the default choice, the split
//! (`--split` or scikit-learn's) and every evaluation set (`--data`, extra training sets).
//!
//! The two differ only where PyTorch's trainers differ ([`Variant`]): the regression variant
//! first drops inconsistent (input, choice) pairs ([`crate::dataset::filter_log`]), splits
//! 60/20/20 by default, falls back to the first choice as the default, and cannot rank.

use ah_log::Log;

use crate::config::Settings;
use crate::error::{Result, TrainError};
use crate::split::{upstream_split, Split, SplitFile};
use ah_eval::table::{build_table, BuildOptions, Encoding, Key, Table};

use super::params::{Mode, TrainOptions};

/// Which trainer a preparation is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Variant {
    /// Decision trees over the choices (`train::train`).
    Classification,
    /// The regression variant (`regression::train_regression`).
    Regression,
}

/// Test and validation shares of the regression variant's split (PyTorch's
/// `train_regression.py`), unless the config file sets them.
const REGRESSION_TEST_AND_VAL: (f64, f64) = (0.2, 0.2);

/// Everything the trainers need from the inputs.
pub(crate) struct Prepared {
    /// Resolved settings (default choice filled in).
    pub(crate) settings: Settings,
    /// The key of every input of the training log (after the row filter; near-best copies for
    /// ranking), by row: the rows [`Prepared::split`] names. The table they were the keys of is
    /// freed once the sets are taken from it.
    pub(crate) keys: Vec<Key>,
    /// The training log's choices, sorted by name.
    pub(crate) choices: Vec<String>,
    /// The training log's column encoding.
    pub(crate) encoding: Encoding,
    /// Rows of [`Prepared::keys`] in each set.
    pub(crate) split: Split,
    /// `train`, `val`, `test`, then the `--data` sets.
    pub(crate) sets: Vec<(String, Table)>,
    /// Sorted names of the training set's winners.
    pub(crate) classes: Vec<String>,
    /// Warnings so far.
    pub(crate) warnings: Vec<String>,
    /// The training log (regression: after its filters), without its rows: they are freed once
    /// the table is built.
    pub(crate) log: Log,
    /// (input, choice) pairs dropped by the regression filters (0 for classification).
    pub(crate) pairs_dropped: usize,
}

impl Prepared {
    /// Sorted names of the winners of `t`.
    pub(crate) fn classes_of(&self, t: &Table) -> Vec<String> {
        winners(t)
    }
}

fn winners(t: &Table) -> Vec<String> {
    let mut c: Vec<String> = t
        .winner
        .iter()
        .map(|&w| t.choices[w as usize].clone())
        .collect();
    c.sort();
    c.dedup();
    c
}

/// Prepares a training run of `variant`.
pub(crate) fn prepare(opts: &TrainOptions, variant: Variant) -> Result<Prepared> {
    if variant == Variant::Regression && opts.ranking.is_some() {
        return Err(TrainError::Config(
            "--ranking cannot be combined with --regression: the regression variant predicts each choice's speed and decides one choice; it learns no ranking".into(),
        ));
    }
    let mut warnings = Vec::new();
    let (mut log, pairs_dropped) = read_training_log(opts, variant, &mut warnings)?;
    let mut settings = resolve_settings(opts, &log)?;
    let build = build_options(opts, variant);
    let (full, encoding, report) = build_table(&log, "all", &settings.operations, None, build)?;
    // Nothing reads the rows once the table is built (58,000 rows sharing 10,000 inputs'
    // values for pad_mm_a100: freeing them takes well under a millisecond).
    log.rows = Vec::new();
    warnings.extend(report.warnings());
    let mut full = filter_rows(full, &log, &settings, &mut warnings);
    if full.choices.len() < 2 {
        return Err(TrainError::Input {
            path: opts.log.clone(),
            message: format!(
                "the log has a single choice (`{}`); a heuristic chooses between two or more",
                full.choices[0]
            ),
        });
    }
    default_choice(opts, variant, &log, &full, &mut settings, &mut warnings)?;
    if let Some(k) = opts.ranking {
        if k == 0 {
            return Err(TrainError::Config("--ranking needs K >= 1".into()));
        }
        full = full.near_best();
    }
    let split = split_of(opts, variant, &settings, &log, &full)?;
    let mut train = full.take(&split.train, "train");
    let val = full.take(&split.val, "val");
    let test = full.take(&split.test, "test");
    if train.is_empty() || val.is_empty() {
        return Err(TrainError::Input {
            path: opts.log.clone(),
            message: format!(
                "too few inputs ({}) for a training and a validation set; collect more",
                full.len()
            ),
        });
    }
    let data = data_sets(opts, variant, &log, &settings, &encoding, &mut warnings)?;
    for (name, times) in &settings.extra_training_sets {
        if let Some((_, t)) = data.iter().find(|(n, _)| n == name) {
            let pos: Vec<usize> = (0..t.len())
                .flat_map(|i| std::iter::repeat_n(i, *times))
                .collect();
            train = concat(&train, &t.take(&pos, "train"));
        }
    }
    let classes = winners(&train);
    if variant == Variant::Classification && classes.len() == 1 {
        warnings.push(format!(
            "every training input has the same winner `{}`: the heuristic can only ever answer it (collect inputs where other choices win)",
            classes[0]
        ));
    }
    let mut sets = vec![
        ("train".to_string(), train),
        ("val".to_string(), val),
        ("test".to_string(), test),
    ];
    sets.extend(data);
    let Table { keys, choices, .. } = full;
    Ok(Prepared {
        settings,
        keys,
        choices,
        encoding,
        split,
        sets,
        classes,
        warnings,
        log,
        pairs_dropped,
    })
}

/// The training log; for the regression variant after its filters, with the number of
/// (input, choice) pairs they dropped.
fn read_training_log(
    opts: &TrainOptions,
    variant: Variant,
    warnings: &mut Vec<String>,
) -> Result<(Log, usize)> {
    let log = crate::dataset::read_log(&opts.log)?;
    if variant == Variant::Classification {
        return Ok((log, 0));
    }
    use crate::dataset::{filter_log, MAX_REL_STD, MIN_COUNT};
    let (log, dropped) = filter_log(&log);
    if dropped > 0 {
        warnings.push(format!(
            "{dropped} (input, choice) pairs dropped: fewer than {MIN_COUNT} measurements or relative std above {MAX_REL_STD}% (the regression trainer's filters)"
        ));
    }
    if log.rows.is_empty() {
        return Err(TrainError::Input {
            path: opts.log.clone(),
            message: format!("no (input, choice) pair has {MIN_COUNT} or more consistent measurements; the regression variant needs repetitions (collect with --num-reps 3)"),
        });
    }
    Ok((log, dropped))
}

/// The log's settings with the command line's default choice and operations, checked against
/// the log's features.
fn resolve_settings(opts: &TrainOptions, log: &Log) -> Result<Settings> {
    let mut settings = Settings::resolve(&log.metadata.name, &opts.overrides, &opts.config_dir)?;
    if let Some(d) = &opts.default_choice {
        settings.default_choice = Some(d.clone());
    }
    settings
        .operations
        .extend(opts.extra_operations.iter().cloned());
    let logged: Vec<String> = log.metadata.features().map(str::to_string).collect();
    ah_core::ops::check_operations(&settings.operations, &logged).map_err(|e| {
        TrainError::Input {
            path: opts.log.clone(),
            message: format!("{e}"),
        }
    })?;
    Ok(settings)
}

fn build_options(opts: &TrainOptions, variant: Variant) -> BuildOptions {
    BuildOptions {
        // PyTorch's classification trainer keeps inputs whose every choice failed; the
        // regression filters have dropped every failed measurement already.
        keep_all_inf: variant == Variant::Classification && opts.mode == Mode::Upstream,
    }
}

/// The settings' input filter (PyTorch's `filter_df`), on the logged features.
fn filter_rows(full: Table, log: &Log, settings: &Settings, warnings: &mut Vec<String>) -> Table {
    let names: Vec<&str> = log.metadata.features().collect();
    let mut pairs: Vec<(&str, &str)> = Vec::with_capacity(names.len());
    let kept: Vec<usize> = (0..full.len())
        .filter(|&i| {
            pairs.clear();
            pairs.extend(names.iter().copied().zip(full.keys[i].iter()));
            settings.input_filter.keeps(&pairs)
        })
        .collect();
    if kept.len() == full.len() {
        return full;
    }
    warnings.push(format!(
        "{} inputs removed by the `{}` training config's filter",
        full.len() - kept.len(),
        settings.name
    ));
    full.take(&kept, "all")
}

/// Checks the given default choice, or picks one when none is known: the most frequent
/// winner (classification) or the first choice (regression), with a warning.
fn default_choice(
    opts: &TrainOptions,
    variant: Variant,
    log: &Log,
    full: &Table,
    settings: &mut Settings,
    warnings: &mut Vec<String>,
) -> Result<()> {
    if let Some(d) = &settings.default_choice {
        if full.choice_index(d).is_none() {
            return Err(TrainError::Config(format!(
                "default choice `{d}` is not a choice of {} (choices: {}); pass one with --default-choice",
                opts.log.display(),
                full.choices.join(", ")
            )));
        }
        return Ok(());
    }
    let name = &log.metadata.name;
    let choice = match variant {
        Variant::Classification => {
            // Most frequent winner, ties by name.
            let mut counts = vec![0usize; full.choices.len()];
            for &w in &full.winner {
                counts[w as usize] += 1;
            }
            let best = (0..counts.len())
                .max_by(|&a, &b| counts[a].cmp(&counts[b]).then(b.cmp(&a)))
                .unwrap_or(0);
            warnings.push(format!(
                "no default choice is known for `{name}`; using the most frequent winner `{}` for the speedup-over-default metrics (set one with --default-choice)",
                full.choices[best]
            ));
            full.choices[best].clone()
        }
        Variant::Regression => {
            warnings.push(format!(
                "no default choice is known for `{name}`; using `{}` for the metrics",
                full.choices[0]
            ));
            full.choices[0].clone()
        }
    };
    settings.default_choice = Some(choice);
    Ok(())
}

/// The split: `--split`'s file, or scikit-learn's `train_test_split` with the settings' (or
/// the regression variant's) test and validation shares.
fn split_of(
    opts: &TrainOptions,
    variant: Variant,
    settings: &Settings,
    log: &Log,
    full: &Table,
) -> Result<Split> {
    let Some(p) = &opts.split_file else {
        let (t, v) = match variant {
            Variant::Classification => settings.test_and_val,
            Variant::Regression => regression_test_and_val(opts)?,
        };
        return Ok(upstream_split(full.len(), t, v, opts.seed));
    };
    let sf = SplitFile::read(p)?;
    let feats: Vec<String> = log.metadata.features().map(str::to_string).collect();
    if sf.features != feats {
        return Err(TrainError::Input {
            path: p.clone(),
            message: format!(
                "split file features {:?} differ from the log's {:?}",
                sf.features, feats
            ),
        });
    }
    if opts.ranking.is_some() {
        return Err(TrainError::Config(
            "--split cannot be combined with --ranking (copies of one input are split row-wise)"
                .into(),
        ));
    }
    sf.assign(p, &full.keys)
}

/// The regression variant's test and validation shares: 0.2 each unless the config file
/// sets them.
fn regression_test_and_val(opts: &TrainOptions) -> Result<(f64, f64)> {
    let (t, v) = (
        opts.overrides
            .test_size
            .unwrap_or(REGRESSION_TEST_AND_VAL.0),
        opts.overrides.val_size.unwrap_or(REGRESSION_TEST_AND_VAL.1),
    );
    if !(t > 0.0 && v > 0.0 && t + v < 1.0) {
        return Err(TrainError::Config(format!(
            "test_size {t} and val_size {v} must be positive with a sum below 1"
        )));
    }
    Ok((t, v))
}

/// The `--data` sets, encoded as the training log (regression: after its filters).
fn data_sets(
    opts: &TrainOptions,
    variant: Variant,
    log: &Log,
    settings: &Settings,
    encoding: &Encoding,
    warnings: &mut Vec<String>,
) -> Result<Vec<(String, Table)>> {
    let build = build_options(opts, variant);
    let mut sets = Vec::new();
    for (name, path) in &opts.data {
        if ["train", "val", "test"].contains(&name.as_str()) {
            return Err(TrainError::Config(format!(
                "--data set name `{name}` is reserved; pick another"
            )));
        }
        let mut dlog = crate::dataset::read_log(path)?;
        for w in crate::dataset::data_log_warnings(log, &dlog) {
            warnings.push(format!("--data {name}: {w}"));
        }
        if variant == Variant::Regression {
            dlog = crate::dataset::filter_log(&dlog).0;
        }
        let (t, _, rep) = build_table(&dlog, name, &settings.operations, Some(encoding), build)?;
        for w in rep.warnings() {
            warnings.push(format!("--data {name}: {w}"));
        }
        let t = if opts.ranking.is_some() {
            t.near_best()
        } else {
            t
        };
        sets.push((name.clone(), t));
    }
    Ok(sets)
}

/// The rows of `a` then `b`, over the union of their choices (sorted).
pub(crate) fn concat(a: &Table, b: &Table) -> Table {
    // Union of choices (sorted), re-indexing times and labels.
    let mut choices = a.choices.clone();
    for c in &b.choices {
        if !choices.contains(c) {
            choices.push(c.clone());
        }
    }
    choices.sort();
    let mut out = a.take(&[], &a.name);
    out.choices = choices.clone();
    for t in [a, b] {
        let map: Vec<usize> = t
            .choices
            .iter()
            .map(|c| choices.binary_search(c).expect("union"))
            .collect();
        for i in 0..t.len() {
            out.x.extend_from_slice(t.row(i));
            let mut row = vec![f64::NAN; choices.len()];
            for (j, &m) in map.iter().enumerate() {
                row[m] = t.time(i, j);
            }
            out.times.extend(row);
            out.winner.push(map[t.winner[i] as usize] as u32);
            out.actual_winner
                .push(map[t.actual_winner[i] as usize] as u32);
            out.weight.push(t.weight[i]);
            out.speedup.push(t.speedup[i]);
            out.keys.push(t.keys[i].clone());
            out.input.push(t.input[i]);
        }
    }
    out
}
