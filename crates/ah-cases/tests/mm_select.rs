//! The shipped mm ranking heuristic through the select-algorithm runtime, on the H100
//! evaluation log (inputs not used in training): for every sample, `SelectAlgorithm` in use
//! mode asks the generated `CublasLtRankingH100` for its top 5 plus `extern_mm`, and the `Autotuner`
//! benchmarks only those (the "benchmark" returns the logged time). Checks the goals on
//! this fixed log: the autotuned pick is never slower than cuBLASLt's pick, it is the fastest
//! candidate on at least 90 % of the samples, and fewer choices are benchmarked than offered.
//! No GPU needed.

use std::path::PathBuf;

use ah_bench::runners::mm::EXTERN_MM;
use ah_core::{DeviceIdentity, Registry, Value};
use ah_log::{Log, ReadOptions};
use ah_runtime::select::{AutotuneRequest, Autotuner, SelectAlgorithm};
use ah_runtime::{Config, DeviceInfo};

fn eval_log() -> Log {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/mm_h100_eval_rank.txt");
    Log::read(&path, ReadOptions { strict: true }).expect("the committed evaluation log")
}

/// One sample: its feature values and `(choice, ms)` in logging order.
type Sample = (Vec<Value>, Vec<(String, f64)>);

/// Samples in log order.
fn samples(log: &Log) -> Vec<Sample> {
    let mut out: Vec<Sample> = Vec::new();
    for row in &log.rows {
        let choice = log.choice_name(row).to_string();
        if choice == EXTERN_MM || out.is_empty() {
            out.push((row.values.to_vec(), Vec::new()));
        }
        out.last_mut().unwrap().1.push((choice, row.feedback));
    }
    out
}

#[test]
fn top5_autotuning_beats_cublaslt_and_benchmarks_less() {
    let log = eval_log();
    let mut registry = Registry::new();
    registry.register(&ah_heuristics::cublas_lt_ranking_h100::HEURISTIC);
    let config =
        Config::from_vars(|k| (k == "AUTOHEURISTIC_USE").then(|| "cublaslt_mm".to_string()));
    let device = DeviceInfo::new(DeviceIdentity::H100, "NVIDIA H100 80GB HBM3");
    let always = vec![EXTERN_MM.to_string()];
    let (mut n, mut ranked, mut fastest, mut benchmarked, mut offered) =
        (0u32, 0u32, 0u32, 0usize, 0usize);
    let mut log_speedup = 0.0;
    for (values, times) in samples(&log) {
        let ctx = log.metadata.row_context(&log.features, &values);
        let ids: Vec<String> = times.iter().map(|(c, _)| c.clone()).collect();
        let key = format!("{values:?}");
        let sel = SelectAlgorithm::builder("cublaslt_mm", ids.clone(), key.clone())
            .context(ctx)
            .config(config.clone())
            .device(device.clone())
            .registry(&registry)
            .build()
            .unwrap();
        let top = sel.get_top_k_choices(5, &always);
        if let Some(t) = &top {
            ranked += 1;
            assert!(t.len() <= 6, "top 5 plus extern_mm: {t:?}");
            assert!(t.contains(&always[0]));
            assert!(
                t.iter().all(|c| ids.contains(c)),
                "only offered choices: {t:?}"
            );
        }
        let request = AutotuneRequest {
            name: "cublaslt_mm".into(),
            inputs_key: key,
            choices: top.unwrap_or_else(|| ids.clone()),
            use_cache: false,
        };
        let time = |c: &str| times.iter().find(|(x, _)| x == c).map(|(_, t)| *t).unwrap();
        let mut timed = 0;
        let result = Autotuner::without_cache().autotune(&request, |c| {
            timed += 1;
            time(c)
        });
        let pick = time(result.choice.as_deref().expect("a finite choice"));
        let ext = time(EXTERN_MM);
        let best = times.iter().map(|(_, t)| *t).fold(f64::INFINITY, f64::min);
        assert!(pick <= ext, "the pick is never slower than cuBLASLt's");
        n += 1;
        fastest += u32::from(pick <= best);
        benchmarked += timed;
        offered += ids.len();
        log_speedup += (ext / pick).ln();
    }
    let share = f64::from(fastest) / f64::from(n);
    let geomean = (log_speedup / f64::from(n)).exp();
    eprintln!(
        "{n} samples, {ranked} ranked: fastest in the benchmarked set {:.1} %, {benchmarked} of {offered} choices benchmarked, pick {geomean:.4}x extern_mm",
        100.0 * share
    );
    assert_eq!(n, 400);
    assert!(share >= 0.9, "fastest within top 5 + extern_mm on {share}");
    assert!(benchmarked * 4 < offered * 3, "{benchmarked} of {offered}");
    assert!(geomean > 1.03, "{geomean}");
}
