//! The human-facing outputs: the grid table and the markdown report with SVG plots (the
//! Graphviz `.dot` of the tree is `ah_codegen::render_dot`'s).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use ah_core::model::Node;
use plotters::prelude::*;

use crate::train::{GridRow, TrainOutput};
use ah_eval::metrics::{Metrics, EXTRA_METRICS, UPSTREAM_METRICS};

/// `text` (a log's file name, an op or a GEMM as logged: free text) as one markdown table
/// cell: on one line ([`ah_codegen::escape::comment`]'s escapes for line breaks and other unsafe
/// characters) with its pipes escaped. Reports' tables go into generated modules' headers line
/// by line, so a name must not break a row.
pub fn markdown_cell(text: &str) -> String {
    ah_codegen::escape::comment(text).replace('|', "\\|")
}

fn fmt_v(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.6}")
    }
}

/// The grid as a markdown table (one row per model and set), like PyTorch's printout.
pub fn grid_table(grid: &[GridRow], best: usize) -> String {
    let keys = [
        "correct",
        "wrong",
        "unsure",
        "total",
        "wrong_max_speedup",
        "wrong_gmean_speedup",
        "gmean_speedup_over_default",
        "harmful_wrong",
        "pct_of_oracle_autotune",
    ];
    let mut s = String::new();
    let _ = write!(
        s,
        "| set | crit | max_depth | min_samples_leaf | weights | threshold | leaves | cv_cost |"
    );
    for k in keys {
        let _ = write!(s, " {k} |");
    }
    s.push('\n');
    s.push_str(&"|---".repeat(8 + keys.len()));
    s.push_str("|\n");
    for (i, r) in grid.iter().enumerate() {
        for (set, m) in &r.metrics {
            let mark = if i == best { "**" } else { "" };
            let _ = write!(
                s,
                "| {mark}{set}{mark} | {} | {} | {} | {} | {} | {} | {} |",
                r.criterion.name(),
                r.max_depth.map_or("None".into(), |d| d.to_string()),
                r.min_samples_leaf,
                r.weighting,
                // 1e300: the default mode's "decide nothing".
                if r.threshold >= 1e299 {
                    "none".to_string()
                } else {
                    format!("{:.6}", r.threshold)
                },
                r.n_leaves,
                r.cv_cost.map_or("-".into(), |c| format!("{c:.6}")),
            );
            for k in keys {
                let _ = write!(s, " {} |", m.get(k).map_or("-".into(), fmt_v));
            }
            s.push('\n');
        }
    }
    s
}

/// Metrics of the chosen model, one column per set.
pub fn metrics_table(metrics: &BTreeMap<String, Metrics>) -> String {
    let order: Vec<&String> = ["train", "val", "test"]
        .iter()
        .filter_map(|n| metrics.keys().find(|k| k == n))
        .chain(
            metrics
                .keys()
                .filter(|k| !["train", "val", "test"].contains(&k.as_str())),
        )
        .collect();
    let mut s = String::from("| metric |");
    for n in &order {
        let _ = write!(s, " {n} |");
    }
    s.push('\n');
    s.push_str(&"|---".repeat(order.len() + 1));
    s.push_str("|\n");
    for k in UPSTREAM_METRICS.iter().chain(EXTRA_METRICS.iter()) {
        let _ = write!(s, "| {k} |");
        for n in &order {
            let _ = write!(s, " {} |", metrics[*n].get(k).map_or("-".into(), fmt_v));
        }
        s.push('\n');
    }
    s
}

/// A histogram SVG of `values` (log2 bins of a ratio), as text.
pub fn histogram_svg(title: &str, x_label: &str, values: &[f64], log_scale: bool) -> String {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (860, 420)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let xs: Vec<f64> = values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && *v > 0.0)
            .map(|v| if log_scale { v.log2() } else { v })
            .collect();
        let (lo, hi) = xs
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                (a.min(x), b.max(x))
            });
        let (lo, hi) = if xs.is_empty() {
            (0.0, 1.0)
        } else if hi - lo < 1e-9 {
            (lo - 0.5, hi + 0.5)
        } else {
            (lo, hi)
        };
        let bins = 40usize;
        let w = (hi - lo) / bins as f64;
        let mut counts = vec![0u32; bins];
        for &x in &xs {
            let b = (((x - lo) / w) as usize).min(bins - 1);
            counts[b] += 1;
        }
        let ymax = counts.iter().copied().max().unwrap_or(1).max(1);
        if let Ok(mut chart) = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(lo..hi, 0u32..(ymax + ymax / 10 + 1))
        {
            let _ = chart
                .configure_mesh()
                .x_desc(x_label)
                .y_desc("inputs")
                .disable_x_mesh()
                .draw();
            let _ = chart.draw_series(counts.iter().enumerate().map(|(i, &c)| {
                let x0 = lo + i as f64 * w;
                Rectangle::new([(x0, 0), (x0 + w, c)], BLUE.mix(0.6).filled())
            }));
        }
        let _ = root.present();
    }
    buf
}

/// The markdown report.
pub fn markdown(out: &TrainOutput, speedup_svg: &str, regret_svg: &str, dot_file: &str) -> String {
    let m = &out.model;
    let mut s = String::new();
    let _ = writeln!(s, "# {} ({})\n", m.heuristic_name, m.name);
    let _ = writeln!(
        s,
        "Trained by `{}` from `{}` (sha256 `{}`), ah-train {}.\n",
        m.provenance.command,
        m.provenance.dataset,
        m.provenance.dataset_hash,
        m.provenance.tool_version
    );
    let _ = writeln!(s, "## Model\n");
    let t = &m.training;
    let _ = writeln!(s, "| setting | value |\n|---|---|");
    let _ = writeln!(s, "| selection mode | `{}` |", t.mode);
    let _ = writeln!(s, "| learner | `{}` |", t.learner);
    let _ = writeln!(
        s,
        "| criterion / max_depth / min_samples_leaf | {} / {} / {} |",
        t.criterion,
        t.max_depth.map_or("None".into(), |d| d.to_string()),
        t.min_samples_leaf
    );
    let _ = writeln!(
        s,
        "| threshold (runtime: probability <= threshold is unsure) | {} |",
        m.threshold
    );
    let leaves = m.tree.leaves();
    let unsafe_n = m
        .tree
        .nodes
        .iter()
        .filter(|n| {
            matches!(
                n,
                Node::Leaf {
                    unsafe_leaf: true,
                    ..
                }
            )
        })
        .count();
    let _ = writeln!(s, "| leaves (unsafe) | {leaves} ({unsafe_n}) |");
    let _ = writeln!(s, "| depth | {} |", m.tree.depth());
    let _ = writeln!(s, "| choices | {} |", m.choices.join(", "));
    let _ = writeln!(
        s,
        "| default choice | {} |",
        m.default_choice.clone().unwrap_or_default()
    );
    for (k, v) in &t.extra {
        let _ = writeln!(s, "| {k} | {v} |");
    }
    let sizes: Vec<String> = out.sizes.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let _ = writeln!(s, "| set sizes | {} |", sizes.join(", "));
    let _ = writeln!(s, "\n## Metrics of the chosen model\n");
    if t.mode == "cost_aware_cv" {
        let _ = writeln!(
            s,
            "Selection mode `cost_aware_cv`: `train` and `val` were both used to fit and select (5-fold cross-validation, then a refit), so their metrics are in-sample; `test` and `--data` sets are not. Leaves whose confidence is at or below the cross-validated cut are stored unsafe (unsure) and the threshold is 0.\n"
        );
    }
    s.push_str(&metrics_table(&out.metrics));
    let _ = writeln!(s, "\n`pct_of_oracle`: unsure inputs take the default choice; `pct_of_oracle_autotune`: unsure inputs are autotuned (take the best). `regret`: time lost to wrong picks over the sum of best times. `harmful_wrong`: wrong picks more than 10% slower than the best.\n");
    let _ = writeln!(s, "## Plots (test set)\n");
    let _ = writeln!(s, "![speedup over default]({speedup_svg})\n");
    let _ = writeln!(s, "![regret]({regret_svg})\n");
    let _ = writeln!(
        s,
        "The tree: [`{dot_file}`]({dot_file}) (`dot -Tsvg {dot_file}`).\n"
    );
    if !out.warnings.is_empty() {
        let _ = writeln!(s, "## Warnings\n");
        for w in &out.warnings {
            let _ = writeln!(s, "- {w}");
        }
        s.push('\n');
    }
    let _ = writeln!(s, "## Grid (chosen model in bold)\n");
    s.push_str(&grid_table(&out.grid, out.best));
    s
}
