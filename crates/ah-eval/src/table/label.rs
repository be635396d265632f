//! Labelling inputs: per input the median time of each choice, the winner and the speedup;
//! inputs with a single choice, and all-`inf` inputs unless kept, are dropped.

use ah_core::stats::median;
use ah_log::Log;

use super::group::RawInput;
use super::options::BuildOptions;
use super::report::BuildReport;

/// The labelled inputs of a table: per kept input its median times, winner and speedup.
pub(super) struct Labels {
    /// Choices sorted by name.
    pub(super) choices: Vec<String>,
    /// Ids of the kept inputs, in table order.
    pub(super) kept: Vec<usize>,
    /// Median time per kept input and choice (`kept x choices`).
    pub(super) times: Vec<f64>,
    /// Index of the fastest choice per kept input.
    pub(super) winner: Vec<u32>,
    /// Second-best time over best time per kept input.
    pub(super) speedup: Vec<f64>,
}

/// Median times, winner and speedup of each input in `order`; inputs with fewer than two
/// choices, and all-`inf` inputs unless kept, are counted in `report` and dropped.
pub(super) fn label_inputs(
    log: &Log,
    raw: &[RawInput],
    order: &[usize],
    options: BuildOptions,
    report: &mut BuildReport,
) -> Labels {
    let mut choices: Vec<String> = log.choices.clone();
    choices.sort();
    let choice_col: Vec<usize> = log
        .choices
        .iter()
        .map(|c| choices.binary_search(c).expect("present"))
        .collect();
    let k = choices.len();
    let mut labels = Labels {
        choices,
        kept: Vec::new(),
        times: Vec::new(),
        winner: Vec::new(),
        speedup: Vec::new(),
    };
    let mut buf = MedianBuffers::default();
    for &id in order {
        let at = labels.times.len();
        labels.times.resize(at + k, f64::NAN);
        let t = &mut labels.times[at..];
        let n_choices = buf.median_times(&raw[id].feedback, &choice_col, t);
        if n_choices < 2 {
            report.single_choice_inputs += 1;
            labels.times.truncate(at);
            continue;
        }
        if t.iter().all(|x| x.is_nan() || x.is_infinite()) {
            report.all_inf_inputs += 1;
            if !options.keep_all_inf {
                labels.times.truncate(at);
                continue;
            }
        }
        // Fastest; exact ties go to the first choice in name order (a stable sort).
        let mut best = usize::MAX;
        for c in 0..k {
            if t[c].is_nan() {
                continue;
            }
            if best == usize::MAX || t[c] < t[best] {
                best = c;
            }
        }
        let sorted = &mut buf.sorted;
        sorted.clear();
        sorted.extend(t.iter().copied().filter(|x| !x.is_nan()));
        sorted.sort_by(f64::total_cmp);
        labels.speedup.push(sorted[1] / sorted[0]);
        labels.winner.push(best as u32);
        labels.kept.push(id);
    }
    labels
}

/// Buffers reused from input to input by [`label_inputs`].
#[derive(Default)]
struct MedianBuffers {
    feedback: Vec<(u32, f64)>,
    values: Vec<f64>,
    sorted: Vec<f64>,
}

impl MedianBuffers {
    /// Fills `t` (one slot per choice column, `NaN` on entry) with an input's median feedback
    /// per choice (`inf` if any repetition is `inf`); returns the number of choices measured.
    fn median_times(
        &mut self,
        feedback: &[(u32, f64)],
        choice_col: &[usize],
        t: &mut [f64],
    ) -> usize {
        let fb = &mut self.feedback;
        fb.clear();
        fb.extend_from_slice(feedback);
        fb.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let mut n_choices = 0;
        let mut i = 0;
        while i < fb.len() {
            let c = fb[i].0;
            let j = i + fb[i..].iter().take_while(|x| x.0 == c).count();
            let vals = &mut self.values;
            vals.clear();
            vals.extend(fb[i..j].iter().map(|x| x.1));
            let m = if vals.iter().any(|x| x.is_infinite()) {
                f64::INFINITY
            } else {
                median(vals)
            };
            t[choice_col[c as usize]] = m;
            n_choices += 1;
            i = j;
        }
        n_choices
    }
}
