//! [`Table`]: one processed dataset, its rows (inputs) and their column values, times and
//! labels; the rows of a set taken from it, and its near-best copies for ranking.

use super::key::Key;

/// One processed dataset: one row per input (or per near-best copy when ranking).
#[derive(Debug, Clone)]
pub struct Table {
    /// Where it came from.
    pub name: String,
    /// Choices of this log, sorted by name; columns of [`Table::times`].
    pub choices: Vec<String>,
    /// Column values, row-major (`n x columns`), `f64` (one-hot 0/1).
    pub x: Vec<f64>,
    /// Number of columns.
    pub n_cols: usize,
    /// Median time per row and choice, `NaN` where the choice was not measured (`n x choices`).
    pub times: Vec<f64>,
    /// Index of the fastest choice (the label).
    pub winner: Vec<u32>,
    /// For ranking copies: the true winner; otherwise equal to `winner`.
    pub actual_winner: Vec<u32>,
    /// Sample weight (1, or `relative_performance` for ranking copies).
    pub weight: Vec<f64>,
    /// Second-best time over best time.
    pub speedup: Vec<f64>,
    /// Logged feature text per row, metadata order (for split files and reports); shared
    /// between a table and the sets taken from it.
    pub keys: Vec<Key>,
    /// Index of the original input (ranking copies share it).
    pub input: Vec<u32>,
}

impl Table {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.winner.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.winner.is_empty()
    }

    /// Row `i`'s column values.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.x[i * self.n_cols..(i + 1) * self.n_cols]
    }

    /// Time of choice column `c` for row `i` (`NaN` when not measured).
    pub fn time(&self, i: usize, c: usize) -> f64 {
        self.times[i * self.choices.len() + c]
    }

    /// Column of a choice name.
    pub fn choice_index(&self, name: &str) -> Option<usize> {
        self.choices.binary_search_by(|c| c.as_str().cmp(name)).ok()
    }

    /// The rows at `pos`, in that order.
    pub fn take(&self, pos: &[usize], name: &str) -> Table {
        let k = self.choices.len();
        let mut t = Table {
            name: name.to_string(),
            choices: self.choices.clone(),
            x: Vec::with_capacity(pos.len() * self.n_cols),
            n_cols: self.n_cols,
            times: Vec::with_capacity(pos.len() * k),
            winner: Vec::with_capacity(pos.len()),
            actual_winner: Vec::with_capacity(pos.len()),
            weight: Vec::with_capacity(pos.len()),
            speedup: Vec::with_capacity(pos.len()),
            keys: Vec::with_capacity(pos.len()),
            input: Vec::with_capacity(pos.len()),
        };
        for &i in pos {
            t.x.extend_from_slice(self.row(i));
            t.times.extend_from_slice(&self.times[i * k..(i + 1) * k]);
            t.winner.push(self.winner[i]);
            t.actual_winner.push(self.actual_winner[i]);
            t.weight.push(self.weight[i]);
            t.speedup.push(self.speedup[i]);
            t.keys.push(self.keys[i].clone());
            t.input.push(self.input[i]);
        }
        t
    }

    /// Best (smallest) measured time of row `i`.
    pub fn best_time(&self, i: usize) -> f64 {
        self.time(i, self.actual_winner[i] as usize)
    }

    /// Near-best copies for ranking (spec 7.1 step 5): every choice within `min_t / t >= 0.98`
    /// of the best becomes a row labelled with it, weighted by its relative performance.
    /// Copies follow their input, fastest first.
    pub fn near_best(&self) -> Table {
        let k = self.choices.len();
        let mut pos = Vec::new();
        let mut labels = Vec::new();
        let mut weights = Vec::new();
        for i in 0..self.len() {
            let best = self.best_time(i);
            let mut cands: Vec<(f64, usize)> = (0..k)
                .filter_map(|c| {
                    let t = self.time(i, c);
                    (!t.is_nan() && best / t >= 0.98).then_some((t, c))
                })
                .collect();
            cands.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for (t, c) in cands {
                pos.push(i);
                labels.push(c as u32);
                weights.push(best / t);
            }
        }
        let mut out = self.take(&pos, &self.name);
        out.winner = labels;
        out.weight = weights;
        out
    }
}
