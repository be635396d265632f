//! Scoring reduction picks against measured times: per-input times from a log (median over
//! repetitions, as training labels them), fixed baselines (always persistent, always looped)
//! and the metrics `docs/reduction.md` reports (geomean speedup, share of the oracle, picks
//! more than 10% slower than the best).

use ah_core::stats::median;
use std::collections::BTreeMap;

use ah_bench::dtype::DType;
use ah_bench::runners::reduction::kernels::{Family, Op, Variant};
use ah_bench::runners::reduction::reduction_context;
use ah_core::{Context, Value};
use ah_eval::score::{gmean, PickSummary, PickTimes};
use ah_log::Log;

/// One input of a reduction log with the time of every variant.
#[derive(Debug, Clone, PartialEq)]
pub struct InputTimes {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Element type.
    pub dtype: DType,
    /// Sum or softmax.
    pub op: Op,
    /// Time per variant in ms (median over repetitions; `inf` when it failed or does not fit).
    pub times: BTreeMap<Variant, f64>,
}

impl InputTimes {
    /// The decision context, as the runner logs it.
    pub fn context(&self) -> Context {
        reduction_context(self.rows, self.cols, self.dtype, self.op)
    }

    /// The time of a variant (`inf` when not measured).
    pub fn time(&self, v: Variant) -> f64 {
        self.times.get(&v).copied().unwrap_or(f64::INFINITY)
    }

    /// The fastest variant and its time (ties: the first in [`Variant::all`] order).
    pub fn best(&self) -> (Variant, f64) {
        let mut best = (Variant::all()[0], f64::INFINITY);
        for v in Variant::all() {
            let t = self.time(v);
            if t < best.1 {
                best = (v, t);
            }
        }
        best
    }
}

/// Parses `torch.float16` and friends.
pub fn parse_dtype(s: &str) -> Option<DType> {
    [DType::F32, DType::F16, DType::BF16]
        .into_iter()
        .find(|d| d.torch_name() == s)
}

/// Groups a reduction log into inputs (in order of first appearance) with the median time of
/// each variant over its repetitions. Inputs where no variant has a finite time are dropped.
pub fn inputs_from_log(log: &Log) -> Result<Vec<InputTimes>, String> {
    let col = |name: &str| {
        log.column(name)
            .ok_or_else(|| format!("{}: no `{name}` column", log.path.display()))
    };
    let (rows_i, cols_i, dtype_i, op_i) = (col("rows")?, col("cols")?, col("dtype")?, col("op")?);
    let mut order: Vec<Vec<Value>> = Vec::new();
    let mut samples: BTreeMap<usize, BTreeMap<Variant, Vec<f64>>> = BTreeMap::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for row in &log.rows {
        let key: String = row.values.iter().map(|v| format!("{v},")).collect();
        let i = *index.entry(key).or_insert_with(|| {
            order.push(row.values.to_vec());
            order.len() - 1
        });
        let choice = log.choice_name(row);
        let v = Variant::parse(choice)
            .ok_or_else(|| format!("{}: unknown choice `{choice}`", log.path.display()))?;
        samples
            .entry(i)
            .or_default()
            .entry(v)
            .or_default()
            .push(row.feedback);
    }
    let mut out = Vec::with_capacity(order.len());
    for (i, values) in order.iter().enumerate() {
        let int = |j: usize| {
            values[j]
                .as_f64()
                .filter(|x| *x >= 1.0 && x.fract() == 0.0)
                .map(|x| x as usize)
                .ok_or_else(|| format!("input {i}: `{}` is not a positive integer", values[j]))
        };
        let dtype = parse_dtype(&values[dtype_i].to_string())
            .ok_or_else(|| format!("input {i}: unknown dtype `{}`", values[dtype_i]))?;
        let op = Op::parse(&values[op_i].to_string())
            .ok_or_else(|| format!("input {i}: unknown op `{}`", values[op_i]))?;
        let times: BTreeMap<Variant, f64> = samples
            .remove(&i)
            .unwrap_or_default()
            .into_iter()
            .map(|(v, mut t)| (v, median(&mut t)))
            .collect();
        let input = InputTimes {
            rows: int(rows_i)?,
            cols: int(cols_i)?,
            dtype,
            op,
            times,
        };
        if input.best().1.is_finite() {
            out.push(input);
        }
    }
    Ok(out)
}

/// The fixed policy "always `family` with `block` threads": persistent where the row fits and
/// looped (same block) where it does not, as Inductor generates a persistent reduction only
/// when the row fits.
pub fn fixed_pick(family: Family, block: u32, cols: usize) -> Variant {
    let v = Variant { family, block };
    if v.fits(cols) {
        v
    } else {
        Variant {
            family: Family::Looped,
            block,
        }
    }
}

/// How a policy's picks compare with the measured times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    /// Inputs scored.
    pub n: usize,
    /// Geometric mean over inputs of `oracle time / picked time` (1.0 = always the best).
    pub share_of_oracle: f64,
    /// `sum(oracle times) / sum(picked times)`.
    pub total_time_share: f64,
    /// Picks more than 10% slower than the best (ah-eval's harmful picks).
    pub over_10pct: usize,
    /// Picks that are the measured best.
    pub exact: usize,
}

/// Scores a policy (`pick` gives a variant per input) with ah-eval's per-input score.
pub fn score(inputs: &[InputTimes], mut pick: impl FnMut(&InputTimes) -> Variant) -> Score {
    let mut times = Vec::with_capacity(inputs.len());
    let mut exact = 0;
    for i in inputs {
        let (bv, bt) = i.best();
        let v = pick(i);
        let t = i.time(v);
        times.push(PickTimes {
            picked_ms: t,
            best_ms: bt,
            // No default choice here: the summary's speedups over it are not used.
            default_ms: t,
        });
        if v == bv || t == bt {
            exact += 1;
        }
    }
    let s = PickSummary::of(&times);
    Score {
        n: s.n,
        share_of_oracle: s.share_of_oracle,
        total_time_share: s.total_time_share,
        over_10pct: s.harmful,
        exact,
    }
}

/// Geometric mean over inputs of `baseline time / picked time` (NaN for no input).
pub fn geomean_speedup(
    inputs: &[InputTimes],
    mut baseline: impl FnMut(&InputTimes) -> Variant,
    mut pick: impl FnMut(&InputTimes) -> Variant,
) -> f64 {
    let speedups: Vec<f64> = inputs
        .iter()
        .map(|i| i.time(baseline(i)) / i.time(pick(i)))
        .collect();
    gmean(&speedups).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use ah_core::Metadata;
    use ah_log::LogWriter;

    use super::*;

    fn v(s: &str) -> Variant {
        Variant::parse(s).unwrap()
    }

    fn input(cols: usize, times: &[(&str, f64)]) -> InputTimes {
        InputTimes {
            rows: 4,
            cols,
            dtype: DType::F16,
            op: Op::Sum,
            times: times.iter().map(|(n, t)| (v(n), *t)).collect(),
        }
    }

    #[test]
    fn fixed_policy_falls_back_to_looped_for_long_rows() {
        assert_eq!(
            fixed_pick(Family::Persistent, 256, 1000),
            v("persistent-256")
        );
        assert_eq!(fixed_pick(Family::Persistent, 256, 20_000), v("looped-256"));
        assert_eq!(fixed_pick(Family::Looped, 512, 10), v("looped-512"));
    }

    #[test]
    fn scores_and_speedups() {
        let a = input(100, &[("persistent-256", 1.0), ("looped-256", 2.0)]);
        let b = input(100, &[("persistent-256", 4.0), ("looped-256", 1.0)]);
        let inputs = vec![a, b];
        assert_eq!(inputs[0].best(), (v("persistent-256"), 1.0));
        let oracle = score(&inputs, |i| i.best().0);
        assert_eq!(
            (oracle.share_of_oracle, oracle.over_10pct, oracle.exact),
            (1.0, 0, 2)
        );
        let always_p = score(&inputs, |_| v("persistent-256"));
        assert!(
            (always_p.share_of_oracle - 0.5).abs() < 1e-12,
            "sqrt(1 * 1/4)"
        );
        assert_eq!((always_p.over_10pct, always_p.exact), (1, 1));
        assert!((always_p.total_time_share - 2.0 / 5.0).abs() < 1e-12);
        let s = geomean_speedup(&inputs, |_| v("persistent-256"), |i| i.best().0);
        assert!((s - 2.0).abs() < 1e-12, "sqrt(1 * 4)");
        // A missing variant is inf: never the best, infinitely slow as a pick.
        assert_eq!(inputs[0].time(v("looped-1024")), f64::INFINITY);
        assert_eq!(score(&inputs, |_| v("looped-1024")).share_of_oracle, 0.0);
    }

    #[test]
    fn log_rows_group_into_inputs_with_median_times() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.txt");
        let ctx = reduction_context(3, 100, DType::BF16, Op::Softmax);
        let other = reduction_context(1, 40_000, DType::F32, Op::Sum);
        let (num, cat) = ctx.numerical_and_categorical();
        let md = Metadata::new(ah_core::DeviceIdentity::H100, "reduction", num, cat);
        let names: Vec<String> = ctx.features().iter().map(|f| f.name.to_string()).collect();
        let mut w = LogWriter::append(&path, &md, &names).unwrap();
        for (c, name, t) in [
            (&ctx, "persistent-128", 3.0),
            (&ctx, "looped-128", 2.0),
            (&other, "persistent-128", f64::INFINITY),
            (&other, "looped-128", 5.0),
            (&ctx, "persistent-128", 1.0),
            (&ctx, "looped-128", 2.5),
            (&ctx, "persistent-128", 2.0),
            (&ctx, "looped-128", 9.0),
        ] {
            w.write_row(c, name, t).unwrap();
        }
        drop(w);
        let log = Log::read(&path, Default::default()).unwrap();
        let inputs = inputs_from_log(&log).unwrap();
        assert_eq!(inputs.len(), 2);
        assert_eq!((inputs[0].rows, inputs[0].cols), (3, 100));
        assert_eq!((inputs[0].dtype, inputs[0].op), (DType::BF16, Op::Softmax));
        assert_eq!(inputs[0].time(v("persistent-128")), 2.0);
        assert_eq!(inputs[0].time(v("looped-128")), 2.5);
        assert_eq!(inputs[0].best(), (v("persistent-128"), 2.0));
        assert_eq!(inputs[1].best(), (v("looped-128"), 5.0));
        assert_eq!(inputs[0].context(), ctx);
        assert_eq!(parse_dtype("torch.float32"), Some(DType::F32));
        assert_eq!(parse_dtype("float32"), None);
    }
}
