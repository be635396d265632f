//! Repairing logs after a kill: [`Log::repair_torn_tail`] cuts a torn last line, and
//! [`repair_inputs`] also the rows of an incomplete last input (a collector's resume);
//! [`keep_inputs`] keeps in a sidecar log only the inputs its main log has.
//!
//! An input is a run of consecutive rows with the same feature values: a collector writes
//! between [`Repetitions::long`] and [`Repetitions::max`] rows for each of an input's choices,
//! the same number for every choice (repetition-major: every choice once, then again).
//!
//! **Which inputs are complete.** A run of `c` rows per choice of one feature key (equal
//! inputs drawn in a row share a run) holds `ceil(c / max)` inputs, and is complete when every
//! choice has the same count `c` and `ceil(c / max) * long <= c`. At a fixed count
//! (`long == max`) that is the old rule: `c` a multiple of `max`, `c / max` inputs. With fewer
//! repetitions for long inputs (`long < max`) the count is ambiguous only for equal inputs
//! drawn in a row (e.g. `c = 3` at `long = 1, max = 2`: a 2-rep input then a 1-rep one, or
//! three 1-rep inputs): counting the fewest inputs means that at worst one equal input is
//! measured again on resume, never that a missing one is taken as logged.
//!
//! **What is cut.** A torn last line always; then, when the last run is incomplete (choices
//! with unequal counts, or a count no mix of inputs gives), its rows back to the longest
//! prefix of whole repetitions (`long` rows of every choice at a time) that is complete. At a
//! fixed count that is the old rule: back to the last whole input, keeping the complete equal
//! inputs before the torn one. With `long < max` the torn input keeps its whole repetitions
//! (e.g. `orig, pad, orig` of a 2-rep input becomes `orig, pad`): one whole measurement of
//! every choice, as a long input has, counted as logged, so that input is not measured again
//! (a kill exactly between two repetitions leaves the same rows). Cutting the whole torn
//! input instead would be ambiguous exactly there, and could cut from the medians sidecar
//! (written first, so never behind the log) an input the log keeps. A last run that lacks a
//! choice which every other run of the log has is incomplete (a write cut after the first rows
//! of an input, at a line end; a log of one input has nothing to tell its choices, so there
//! such rows stay). For a runner whose choices depend on the input (`mm`), a last input that
//! really has fewer choices than all before it is measured again on each resume: one input,
//! never a row lost.
//!
//! **A torn line tells more.** A collector writes an input's rows in one write, so a torn last
//! line (no newline) is a row of an input whose write was cut. When it begins a row of the
//! last run's feature values for a choice that run lacks, or is cut before its choice and
//! nothing tells the choices (a log of one input, or a fixed count), the run's last input is
//! cut too: an input with a choice missing (`--num-reps 1`: `orig` kept, `pad` torn) is never
//! counted as logged, at worst an input is measured once more than needed. A torn row of a
//! choice the run has is a further repetition (or an equal input's first row), judged by the
//! counts as above. A last line without its newline is torn for a collector even when it
//! reads as a row (a reader and a merge keep it): its number may be cut (`15.3` as `1`).

use std::collections::{BTreeMap, HashSet};
use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::in_memory::Log;
use super::read::{log_text, read_bytes};
use super::rows::{row_spans, RowSpan};
use ah_core::error::{Error, Result};

impl Log {
    /// Repairs a log whose last line was torn (a collector killed mid-write): when the file does
    /// not end with `\n`, truncates it after the last `\n` and returns the bytes cut off (lossy
    /// UTF-8; their first [`crate::MAX_LINE_BYTES`] only, so that a huge torn line is not held).
    /// Returns `None` when the file is empty or already ends with a newline. Plain
    /// (uncompressed) files only.
    pub fn repair_torn_tail(path: impl AsRef<Path>) -> Result<Option<String>> {
        Ok(cut_torn_tail(path.as_ref())?.map(|(_, text)| text))
    }
}

/// [`Log::repair_torn_tail`], with the number of bytes cut.
fn cut_torn_tail(path: &Path) -> Result<Option<(u64, String)>> {
    let io = |e| Error::io(path, e);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    if len == 0 {
        return Ok(None);
    }
    let mut magic = [0u8; 2];
    if len >= 2 {
        file.read_exact(&mut magic).map_err(io)?;
        if magic == [0x1f, 0x8b] {
            return Err(Error::Other(format!(
                "{}: cannot repair a gzip-compressed log; decompress it first",
                path.display()
            )));
        }
    }
    // Scan backwards in chunks for the last newline.
    let mut end = len;
    let mut keep = 0u64;
    let mut buf = vec![0u8; 64 * 1024];
    'scan: while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let chunk = &mut buf[..(end - start) as usize];
        file.seek(SeekFrom::Start(start)).map_err(io)?;
        file.read_exact(chunk).map_err(io)?;
        if end == len && chunk.last() == Some(&b'\n') {
            return Ok(None);
        }
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            keep = start + i as u64 + 1;
            break 'scan;
        }
        end = start;
    }
    let shown = (len - keep).min(crate::MAX_LINE_BYTES as u64);
    let mut cut = Vec::with_capacity(shown as usize);
    file.seek(SeekFrom::Start(keep)).map_err(io)?;
    (&mut file).take(shown).read_to_end(&mut cut).map_err(io)?;
    file.set_len(keep).map_err(io)?;
    file.sync_data().map_err(io)?;
    Ok(Some((
        len - keep,
        String::from_utf8_lossy(&cut).into_owned(),
    )))
}

/// Result of [`repair_inputs`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputRepair {
    /// Bytes removed at the end of the file.
    pub removed_bytes: u64,
    /// Complete inputs in the log: feature-values CSV -> how many times.
    pub complete: BTreeMap<String, u64>,
}

/// Consecutive data rows with the same feature values: one input, or equal inputs drawn in a
/// row.
struct Group<'t> {
    /// Feature values as logged.
    key: &'t str,
    /// Byte offset of the group's first line.
    start: usize,
    /// Choice and end offset (after the newline) of each row.
    rows: Vec<(&'t str, usize)>,
}

/// The data rows of a log's text (from line 3), grouped into inputs.
fn groups_of<'t>(spans: &[RowSpan<'t>]) -> Vec<Group<'t>> {
    let mut groups: Vec<Group<'t>> = Vec::new();
    for s in spans {
        match groups.last_mut() {
            Some(g) if g.key == s.key => g.rows.push((s.choice, s.end)),
            _ => groups.push(Group {
                key: s.key,
                start: s.start,
                rows: vec![(s.choice, s.end)],
            }),
        }
    }
    groups
}

/// How many rows per choice a collector writes for one input: `max` repetitions, or `long`
/// (`1 <= long <= max`) for an input whose choices are all long (`ah-collect --long-reps`).
/// A fixed count is `long == max` (`From<usize>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repetitions {
    /// Repetitions of an input in general (`--num-reps`).
    pub max: usize,
    /// Repetitions of an input whose choices are all long (`--long-reps`).
    pub long: usize,
}

impl Repetitions {
    /// Every input `n` times.
    pub const fn fixed(n: usize) -> Self {
        Repetitions { max: n, long: n }
    }

    /// True when some inputs may be measured fewer than `max` times.
    pub const fn is_adaptive(&self) -> bool {
        self.long < self.max
    }

    /// The inputs of a run of `count` rows per choice (equal inputs drawn in a row), counted
    /// as the fewest that fit (see the module docs); `None` when no mix of inputs of `long` to
    /// `max` repetitions gives `count`. A policy with `max == 0` fits nothing.
    pub fn inputs(&self, count: usize) -> Option<usize> {
        if self.max == 0 {
            return None;
        }
        let m = count.div_ceil(self.max);
        (m * self.long.max(1) <= count).then_some(m)
    }
}

impl From<usize> for Repetitions {
    fn from(n: usize) -> Self {
        Repetitions::fixed(n)
    }
}

/// Rows per choice when every choice of `rows` has the same count, else `None`.
fn common_count(rows: &[(&str, usize)]) -> Option<usize> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (choice, _) in rows {
        *counts.entry(choice).or_insert(0) += 1;
    }
    let first = *counts.values().next()?;
    counts.values().all(|&c| c == first).then_some(first)
}

/// Complete inputs in `rows` (equal inputs drawn in a row share a group): every choice has
/// the same number of rows, which inputs of `reps` can make up ([`Repetitions::inputs`]).
fn complete_inputs(rows: &[(&str, usize)], reps: Repetitions) -> Option<usize> {
    common_count(rows).and_then(|c| reps.inputs(c))
}

/// The choices of a group, sorted.
fn choice_set<'t>(rows: &[(&'t str, usize)]) -> Vec<&'t str> {
    let mut set: Vec<&str> = rows.iter().map(|r| r.0).collect();
    set.sort_unstable();
    set.dedup();
    set
}

/// The choices every group before the last has, when they all have the same ones; `None`
/// with fewer than two groups or when they differ (choices that depend on the input).
fn shared_choices<'t>(groups: &[Group<'t>]) -> Option<Vec<&'t str>> {
    let (_, before) = groups.split_last()?;
    let first = choice_set(&before.first()?.rows);
    before[1..]
        .iter()
        .all(|g| choice_set(&g.rows) == first)
        .then_some(first)
}

/// The repetitions per input of a log's rows, inferred from its text when nothing records
/// them: the greatest common divisor of the rows per choice of its inputs (the last input,
/// which may be cut, only when it is the only one). `None` without data rows. A log whose
/// long inputs were measured fewer times ([`Repetitions`]) infers the gcd of both counts
/// (e.g. 1): only a provenance record says its policy.
pub fn infer_reps(text: &str) -> Option<usize> {
    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let groups = groups_of(&row_spans(text));
    let whole = match groups.len() {
        0 => return None,
        1 => &groups[..],
        n => &groups[..n - 1],
    };
    let r = whole
        .iter()
        .filter_map(|g| common_count(&g.rows))
        .fold(0, gcd);
    (r > 0).then_some(r)
}

/// Repairs a plain log after a kill and counts its complete inputs: cuts a torn last line (no
/// trailing newline) and then the rows of the last input if that input is incomplete (its
/// choices have unequal counts, or counts no input of `reps` has; see the module docs);
/// complete equal inputs before it in the same run of rows are kept. `reps` is a fixed count
/// (`usize`) or a [`Repetitions`] policy. The caller holds the log's lock
/// ([`super::lock_log`]). A log that is not UTF-8 is an error naming the line.
pub fn repair_inputs(path: &Path, reps: impl Into<Repetitions>) -> Result<InputRepair> {
    let reps = reps.into();
    let (torn, torn_text) = match cut_torn_tail(path)? {
        Some((n, text)) => (n, Some(text)),
        None => (0, None),
    };
    let bytes = read_bytes(path)?;
    let text = log_text(path, &bytes)?;
    let spans = row_spans(text);
    let mut groups = groups_of(&spans);
    let shared = shared_choices(&groups);
    let mut keep = text.len();
    if let Some(last) = groups.last_mut() {
        let torn = torn_text
            .as_deref()
            .map_or(Torn::Other, |t| torn_row(t, last.key));
        let own = choice_set(&last.rows);
        // The choices the last input must have, when the log (or its torn row) says.
        let expected: Option<Vec<&str>> = match torn {
            Torn::Choice(c) if !own.contains(&c) => {
                let mut all = shared.clone().unwrap_or_else(|| own.clone());
                all.push(c);
                all.sort_unstable();
                all.dedup();
                Some(all)
            }
            _ => shared.clone(),
        };
        let lacks_choices = expected.as_ref().is_some_and(|s| *s != own);
        let rows = last.rows.len();
        if matches!(torn, Torn::Unknown) && expected.is_none() {
            // A torn row of this input, of a choice nothing tells: its last input is not
            // trusted (measured again: at worst one input more than needed).
            keep = cut_incomplete(last, reps, None, rows.saturating_sub(1));
        } else if lacks_choices || complete_inputs(&last.rows, reps).is_none() {
            keep = cut_incomplete(last, reps, expected.as_deref(), rows);
        }
    }
    let removed = bytes.len() - keep;
    if removed > 0 {
        let io = |e| Error::io(path, e);
        let file = OpenOptions::new().write(true).open(path).map_err(io)?;
        file.set_len(keep as u64).map_err(io)?;
        file.sync_all().map_err(io)?;
    }
    Ok(InputRepair {
        removed_bytes: removed as u64 + torn,
        complete: complete_of(&groups, reps),
    })
}

/// The complete inputs of groups of rows: feature values -> how many times.
fn complete_of(groups: &[Group<'_>], reps: Repetitions) -> BTreeMap<String, u64> {
    let mut complete = BTreeMap::new();
    for g in groups {
        if let Some(m) = complete_inputs(&g.rows, reps).filter(|&m| m > 0) {
            *complete.entry(g.key.to_string()).or_insert(0) += m as u64;
        }
    }
    complete
}

/// What the torn line cut from a log says of its last group (the row it began).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Torn<'t> {
    /// Not a row of the last group's input (another input's first row), or nothing was torn.
    Other,
    /// A row of the last group's input (or of an equal one) for this choice.
    Choice(&'t str),
    /// Perhaps a row of the last group's input, cut before its choice was whole.
    Unknown,
}

/// What the torn text `torn` says of the group of feature values `key`.
fn torn_row<'t>(torn: &'t str, key: &str) -> Torn<'t> {
    let lead = format!("{key},");
    match torn.strip_prefix(&lead) {
        Some(rest) => rest
            .split_once(',')
            .map_or(Torn::Unknown, |(c, _)| Torn::Choice(c)),
        None if lead.starts_with(torn) => Torn::Unknown,
        None => Torn::Other,
    }
}

/// Keeps the longest complete prefix of the last group of at most `most` rows: returns the
/// offset to cut the file at and drops the cut rows from the group. `choices`: the choices
/// every input has, when the log says ([`shared_choices`]); else the group's own.
fn cut_incomplete(
    last: &mut Group<'_>,
    reps: Repetitions,
    choices: Option<&[&str]>,
    most: usize,
) -> usize {
    // Whole repetitions: `long` rows of each of the `k` choices at a time.
    let k = choices.map_or_else(
        || last.rows.iter().map(|r| r.0).collect::<HashSet<_>>().len(),
        <[&str]>::len,
    );
    let step = (reps.long * k).max(1);
    let whole = (1..=most.min(last.rows.len()) / step)
        .rev()
        .map(|m| m * step)
        .find(|&n| {
            complete_inputs(&last.rows[..n], reps).is_some()
                && choices.is_none_or(|c| choice_set(&last.rows[..n]) == c)
        })
        .unwrap_or(0);
    let keep = if whole == 0 {
        last.start
    } else {
        last.rows[whole - 1].1
    };
    last.rows.truncate(whole);
    keep
}

/// Keeps in a sidecar log only the inputs that its main log has, `main` (complete inputs ->
/// how many times, from [`repair_inputs`] of the main log): after a kill between the two
/// writes the sidecar may hold one more. Repairs the sidecar first; rewrites it (through a
/// temporary file and a rename) only when something is dropped. Returns the complete inputs
/// the sidecar keeps: fewer than `main` when it was cut (its missing inputs are for the
/// caller to measure again).
pub fn keep_inputs(
    path: &Path,
    reps: impl Into<Repetitions>,
    main: &BTreeMap<String, u64>,
) -> Result<BTreeMap<String, u64>> {
    let reps = reps.into();
    let own = repair_inputs(path, reps)?.complete;
    let bytes = read_bytes(path)?;
    let text = log_text(path, &bytes)?;
    let mut lines = text.lines();
    let (Some(l1), Some(l2)) = (lines.next(), lines.next()) else {
        return Ok(BTreeMap::new());
    };
    let mut budget = main.clone();
    let mut out = format!("{l1}\n{l2}\n");
    let mut current: Option<(&str, bool)> = None;
    let mut changed = false;
    let spans = row_spans(text);
    for s in &spans {
        let keep = match current {
            Some((k, keep)) if k == s.key => keep,
            _ => {
                let keep = match budget.get_mut(s.key) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        true
                    }
                    _ => false,
                };
                current = Some((s.key, keep));
                keep
            }
        };
        if keep {
            // As `str::lines` gives it: without the `\r` of a `\r\n`.
            let closed = text.as_bytes()[..s.end].last() == Some(&b'\n');
            let line = match s.line.strip_suffix('\r') {
                Some(l) if closed => l,
                _ => s.line,
            };
            out.push_str(line);
            out.push('\n');
        } else {
            changed = true;
        }
    }
    if !changed {
        return Ok(own);
    }
    ah_core::fs::write_atomic(path, out.as_bytes())?;
    Ok(complete_of(&groups_of(&row_spans(&out)), reps))
}
