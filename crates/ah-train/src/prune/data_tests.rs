//! Tests of loading logs and of sizing kept configs, on the shipped logs: what a GEMM is when
//! logs are merged or grown, and that the trainer, `naming.py` and the logs agree on how
//! Inductor sizes a config to a GEMM.

use super::data::{self, Choice, Sample, Samples};
use super::keymap;
use super::parity_tests::run_python;
use super::policy::{self, Policy};
use super::{train, FeatureSource, PruneParams};
use ah_core::Value;

/// Logs are read in the order given, each GEMM names its log, a GEMM of two logs counts once,
/// and a log of another runner or device is refused with its path.
#[test]
fn logs_load_together_only_when_they_match() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let main = root.join("data/inductor_mm_h100.txt");
    let decode = root.join("data/inductor_mm_decode_h100.txt");
    let one = data::load_logs(std::slice::from_ref(&main), FeatureSource::Logged).unwrap();
    let both = data::load_logs(&[main.clone(), decode.clone()], FeatureSource::Logged).unwrap();
    let other = data::load_logs(std::slice::from_ref(&decode), FeatureSource::Logged).unwrap();
    assert_eq!(both.samples.len(), one.samples.len() + other.samples.len());
    assert_eq!(both.samples[..one.samples.len()], one.samples[..]);
    let logs: Vec<&str> = both.samples.iter().map(|s| s.log.as_str()).collect();
    let (from_main, from_decode) = logs.split_at(one.samples.len());
    assert!(from_main.iter().all(|l| *l == "inductor_mm_h100.txt"));
    assert!(from_decode
        .iter()
        .all(|l| *l == "inductor_mm_decode_h100.txt"));
    let twice = data::load_logs(&[main.clone(), main.clone()], FeatureSource::Logged).unwrap();
    assert_eq!(twice.samples.len(), one.samples.len());
    let pad = root.join("data/pad_mm_h100.txt");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("pad.txt");
    std::fs::copy(&pad, &copy).unwrap();
    std::fs::write(ah_log::extras_path(&copy), "").unwrap();
    let err = data::load_logs(&[main, copy.clone()], FeatureSource::Logged)
        .unwrap_err()
        .to_string();
    assert!(err.contains(&copy.display().to_string()), "{err}");
    assert!(err.contains("one runner and device"), "{err}");
    assert!(data::load_logs(&[], FeatureSource::Logged).is_err());
}

/// An extras sidecar kept gzip-compressed (`LOG.extras.jsonl.gz`, as `data/` keeps finished
/// logs' ones) loads the same GEMMs as the plain file; a bad line names the `.gz` file, and a
/// log with neither file is refused naming the sidecar.
#[test]
fn a_compressed_extras_sidecar_loads_the_same_gemms_as_the_plain_one() {
    use std::io::Write as _;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let shipped = root.join("data/inductor_mm_tiny_h100.txt");
    let (_, extras) = ah_log::read_sidecar(&ah_log::extras_path(&shipped))
        .unwrap()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("tiny.txt");
    std::fs::copy(&shipped, &log).unwrap();
    let plain = ah_log::extras_path(&log);
    let gz = dir.path().join("tiny.txt.extras.jsonl.gz");
    let gzip = |bytes: &[u8]| {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        enc.write_all(bytes).unwrap();
        std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    };
    std::fs::write(&plain, &extras).unwrap();
    let from_plain = data::load(&log, &plain).unwrap();
    std::fs::remove_file(&plain).unwrap();
    gzip(&extras);
    let from_gz = data::load(&log, &plain).unwrap();
    assert!(from_plain.samples.len() > 100);
    assert_eq!(from_gz.samples, from_plain.samples);
    assert_eq!(from_gz.without_extras, from_plain.without_extras);
    gzip(b"{\"features\": \"1\"}\n{oops\n");
    let err = data::load(&log, &plain).unwrap_err().to_string();
    assert!(
        err.contains("tiny.txt.extras.jsonl.gz:2: not a JSON object"),
        "{err}"
    );
    std::fs::remove_file(&gz).unwrap();
    let err = data::load(&log, &plain).unwrap_err().to_string();
    assert!(
        err.contains("tiny.txt.extras.jsonl: no such file, nor a gzip-compressed one"),
        "{err}"
    );
}

/// `--features seen` trains the GEMMs that Inductor padded before lowering as the handler sees
/// them: 15 of the main H100 log's and 4 of the attention log's, every other GEMM unchanged, and
/// each changed one to a wider, aligned `n` or `k`.
#[test]
fn seen_features_replace_the_logged_ones_where_inductor_padded() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for (name, padded) in [
        ("inductor_mm_h100", 15),
        ("inductor_mm_decode_h100", 0),
        ("inductor_mm_attention_h100", 4),
        ("inductor_mm_tiny_h100", 0),
    ] {
        let log = root.join(format!("data/{name}.txt"));
        let logged = data::load(&log, &ah_log::extras_path(&log)).unwrap();
        let mut seen = logged.clone();
        assert_eq!(seen.use_seen(), padded, "{name}");
        let at = |f: &str| logged.features.iter().position(|x| x == f).unwrap();
        for (a, b) in logged.samples.iter().zip(&seen.samples) {
            if a.values != b.values {
                let wider = |f: &str| b.values[at(f)].as_f64() >= a.values[at(f)].as_f64();
                assert!(
                    wider("n") && wider("k") && wider("m"),
                    "{name}: {:?} -> {:?}",
                    a.values,
                    b.values
                );
            }
        }
    }
}

/// A GEMM the collector drew twice is logged twice (four in the main H100 log): it loads as one
/// GEMM whose choices each appear once, with the later times, as its later extras line wins.
#[test]
fn a_gemm_logged_twice_loads_once_with_its_first_times() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let log = root.join("data/inductor_mm_h100.txt");
    let data = data::load(&log, &ah_log::extras_path(&log)).unwrap();
    let op_at = data.features.iter().position(|f| f == "op").unwrap();
    for s in &data.samples {
        let op = s.op.map(|o| Value::Str(o.name().into()));
        assert_eq!(
            op.as_ref(),
            Some(&s.values[op_at]),
            "the op read from the feature"
        );
        let mut names: Vec<&str> = s.choices().iter().map(|c| c.name.as_str()).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "{:?}", s.values);
    }
    // The first twice-logged GEMM: its first logged extern_mm time is the one kept.
    let text = std::fs::read_to_string(&log).unwrap();
    let key = "8,768,768,1,mm,torch.bfloat16,torch.bfloat16,768,1,1,768,True,False,not_float_32,";
    let times: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix(key)?.strip_prefix("extern_mm,"))
        .collect();
    assert!(times.len() >= 2 && times[0] != times[1], "{times:?}");
    let first: f64 = times[0].parse().unwrap();
    let values = key.trim_end_matches(',');
    let s = data
        .samples
        .iter()
        .find(|s| {
            s.values
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(",")
                == values
        })
        .unwrap();
    assert_eq!(s.kept_extern().unwrap().bench_ms, first);
}

/// The shipped default log (`data/inductor_mm_h100.txt`) and its extras lines, to cut test
/// logs from.
struct ShippedLog {
    text: String,
    extras: String,
}

impl ShippedLog {
    fn read() -> ShippedLog {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let log = root.join("data/inductor_mm_h100.txt");
        let (_, extras) = ah_log::read_sidecar(&ah_log::extras_path(&log))
            .unwrap()
            .expect("the shipped log's extras sidecar (plain or .gz)");
        ShippedLog {
            text: std::fs::read_to_string(&log).unwrap(),
            extras: String::from_utf8(extras).unwrap(),
        }
    }

    fn extras_lines(&self) -> Vec<&str> {
        self.extras.lines().collect()
    }

    /// The prefix of GEMM `i`'s rows: its features and a comma.
    fn key(&self, i: usize) -> String {
        let line = self.extras.lines().nth(i).unwrap();
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        v["features"].as_str().unwrap().to_string() + ","
    }

    /// The log's two header lines and the rows of GEMMs `range`.
    fn rows(&self, range: std::ops::Range<usize>) -> String {
        let keys: Vec<String> = range.map(|i| self.key(i)).collect();
        let rows = self
            .text
            .lines()
            .skip(2)
            .filter(|l| keys.iter().any(|k| l.starts_with(k)));
        self.text
            .lines()
            .take(2)
            .chain(rows)
            .map(|l| format!("{l}\n"))
            .collect()
    }
}

/// A log grown by appending (new GEMMs, and one pinned GEMM measured again with other times
/// and other templates) trains the same `--first` tree on the same GEMMs: the shipped command stays reproducible
/// while its logs grow.
#[test]
fn appending_to_a_log_changes_nothing_of_a_first_n_tree() {
    let shipped = ShippedLog::read();
    let lines = shipped.extras_lines();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("inductor_mm_h100.txt");
    let params = PruneParams {
        first: vec![40],
        ..Default::default()
    };
    let write = |rows: String, extra: &[&str]| {
        std::fs::write(&log, rows).unwrap();
        std::fs::write(ah_log::extras_path(&log), extra.join("\n") + "\n").unwrap();
        let (model, data) = train(std::slice::from_ref(&log), "Grown", &params, &|_| {}).unwrap();
        (model.tree, data.samples)
    };
    let pinned = write(shipped.rows(0..40), &lines[..40]);
    // 20 more GEMMs, then GEMM 3 again: its rows with every time doubled and a template renamed.
    let mut grown = shipped.rows(0..60);
    let again = shipped.key(3);
    for l in shipped
        .text
        .lines()
        .filter(|l| l.starts_with(again.as_str()))
    {
        let (head, t) = l.rsplit_once(',').unwrap();
        let head = head.replace("BLOCK-M=64", "BLOCK-M=16");
        grown += &format!("{head},{}\n", 2.0 * t.parse::<f64>().unwrap());
    }
    let mut more: Vec<&str> = lines[..60].to_vec();
    more.push(lines[3]);
    let (tree, samples) = write(grown, &more);
    assert!(samples == pinned.1, "the training GEMMs changed");
    assert_eq!(tree, pinned.0);
}

/// With one `--first` count per log, an earlier log that grows changes nothing of the
/// training GEMMs, where one count over the logs in a row takes the earlier log's new GEMMs
/// and drops the later log's last ones; the grown GEMMs are held out. A count per log that
/// does not match the logs is refused.
#[test]
fn first_per_log_keeps_the_training_gemms_when_an_earlier_log_grows() {
    let shipped = ShippedLog::read();
    let lines = shipped.extras_lines();
    let dir = tempfile::tempdir().unwrap();
    // A log of GEMMs `range` of the shipped log: its header, their rows and extras lines.
    let write = |name: &str, range: std::ops::Range<usize>| {
        let log = dir.path().join(name);
        std::fs::write(&log, shipped.rows(range.clone())).unwrap();
        std::fs::write(ah_log::extras_path(&log), lines[range].join("\n") + "\n").unwrap();
        log
    };
    let b = write("b.txt", 30..50);
    let load = |a_len: usize, first: Vec<usize>| {
        let a = write("a.txt", 0..a_len);
        let params = PruneParams {
            first,
            ..Default::default()
        };
        let (_, data) = train(&[a, b.clone()], "Grown", &params, &|_| {}).unwrap();
        data
    };
    let pinned = load(20, vec![20, 15]);
    let grown = load(25, vec![20, 15]);
    assert!(
        grown.samples == pinned.samples,
        "the training GEMMs changed"
    );
    assert_eq!((pinned.later.len(), grown.later.len()), (5, 10));
    let in_a_row = load(25, vec![35]);
    assert!(in_a_row.samples != pinned.samples);
    // A count above what a log holds would take its later GEMMs once it grows: refused.
    for (first, says) in [
        (vec![21, 15], "a.txt: --first 21, but only 20 GEMMs"),
        (vec![20, 21], "b.txt: --first 21, but only 20 GEMMs"),
        (vec![41], "b.txt: --first 41, but only 40 GEMMs"),
    ] {
        let a = write("a.txt", 0..20);
        let params = PruneParams {
            first: first.clone(),
            ..Default::default()
        };
        let err = train(&[a, b.clone()], "Over", &params, &|_| {})
            .unwrap_err()
            .to_string();
        assert!(err.contains(says), "{first:?}: {err}");
    }
    let params = PruneParams {
        first: vec![1, 2, 3],
        ..Default::default()
    };
    let err = train(&[b.clone(), b], "Bad", &params, &|_| {}).unwrap_err();
    assert!(err.to_string().contains("3 counts for 2 logs"), "{err}");
}

/// The sizing rule of `prune::sizing` is Inductor's: on every GEMM of the three shipped logs,
/// each Triton config Inductor offered is a config it offered the large GEMMs (m, n and k at
/// least 256) sized to this one, and sizing it again changes nothing.
#[test]
fn every_logged_config_is_a_large_gemms_config_sized() {
    use super::sizing::sized_config;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let logs: Vec<_> = [
        "inductor_mm_h100",
        "inductor_mm_decode_h100",
        "inductor_mm_attention_h100",
    ]
    .iter()
    .map(|n| root.join(format!("data/{n}.txt")))
    .collect();
    let data = data::load_logs(&logs, FeatureSource::Logged).unwrap();
    let at = |f: &str| data.features.iter().position(|x| x == f).unwrap();
    let dims = |s: &Sample| {
        let int = |i: usize| s.values[i].to_string().parse::<i64>().unwrap();
        (int(at("m")), int(at("n")), int(at("k")))
    };
    let templates = |s: &Sample| -> Vec<String> {
        s.choices()
            .iter()
            .filter(|c| c.name.starts_with("triton_mm_"))
            .map(|c| c.name.clone())
            .collect()
    };
    let mut large: Vec<String> = data
        .samples
        .iter()
        .filter(|s| {
            let (m, n, k) = dims(s);
            m.min(n).min(k) >= 256
        })
        .flat_map(templates)
        .collect();
    large.sort();
    large.dedup();
    assert!(large.len() >= 15, "{large:?}");
    let mut small = 0;
    for s in &data.samples {
        let (m, n, k) = dims(s);
        let offered: Vec<String> = large
            .iter()
            .map(|c| sized_config(c, m, n, k).into_owned())
            .collect();
        for name in templates(s) {
            assert!(offered.contains(&name), "{name} of {:?}", s.values);
            assert_eq!(sized_config(&name, m, n, k), name.as_str());
        }
        small += usize::from(templates(s).iter().any(|t| !large.contains(t)));
    }
    assert!(small >= 100, "only {small} GEMMs offered sized configs");
}

/// A kept config keeps, on a small GEMM, the choice Inductor sized from it: a leaf's list
/// learned on large GEMMs no longer leaves a 1-row GEMM cuBLAS alone.
#[test]
fn a_kept_config_keeps_its_sized_choice() {
    let big = "triton_mm_BLOCK-M=64_BLOCK-K=32_BLOCK-N=64_numstages=5_numwarps=8_GROUP-M=8";
    let sized = "triton_mm_BLOCK-M=16_BLOCK-K=32_BLOCK-N=64_numstages=5_numwarps=4_GROUP-M=8";
    let choice = |name: &str, ms: f64| Choice::new(name.into(), ms, 1.0);
    let sample = |m: i64, names: &[(&str, f64)]| {
        Sample::new(
            vec![Value::Int(m), Value::Int(64), Value::Int(64)],
            names.iter().map(|&(n, t)| choice(n, t)).collect(),
            1.0,
            0.5,
            2.0,
        )
    };
    let mut data = Samples {
        metadata: ah_core::Metadata {
            shared_memory: 0,
            device_capa: (9, 0),
            name: "inductor_mm".into(),
            numerical_features: vec!["m".into(), "n".into(), "k".into()],
            categorical_features: Vec::new(),
            choices: None,
        },
        features: vec!["m".into(), "n".into(), "k".into()],
        samples: vec![
            sample(1, &[("extern_mm", 1.0), (sized, 0.5)]),
            sample(512, &[("extern_mm", 1.0), (big, 0.5)]),
        ],
        without_extras: 0,
        later: Vec::new(),
    };
    let keep = Policy::Keep {
        choices: vec![big.to_string()],
    };
    assert_eq!(
        keep.outcome(&data.samples[0]).run_ms,
        1.0,
        "unsized: nothing kept"
    );
    data.size_offers();
    for s in &data.samples {
        assert_eq!(keep.outcome(s).run_ms, 0.5);
        assert_eq!(keep.outcome(s).cost_s, 2.0);
    }
    // The small GEMM's choice ranks under the config it was sized from.
    let refs: Vec<&Sample> = data.samples.iter().collect();
    assert_eq!(policy::ranking(&refs[..1]), vec![big.to_string()]);
}

/// A kept list whose configs all need more shared memory than the device has at a GEMM's
/// widths is scored, once marked (`--model-unfit`), as the handler runs it: the full list.
/// One config that fits, a bf16 GEMM, or a log without `shared_memory` keeps the list.
#[test]
fn a_kept_list_that_cannot_run_is_scored_as_the_full_list_once_marked() {
    // 5 x (128 x 64 + 64 x 128) elements: 160 KiB in bf16, 320 KiB in fp32 (limit 227 KiB).
    let big = "triton_mm_BLOCK-M=128_BLOCK-K=64_BLOCK-N=128_numstages=5_numwarps=8_GROUP-M=8";
    let small = "triton_mm_BLOCK-M=64_BLOCK-K=32_BLOCK-N=64_numstages=3_numwarps=4_GROUP-M=8";
    let sample = |dtype: &str| {
        let choices = [("extern_mm", 1.0), (big, f64::INFINITY), (small, 0.5)]
            .map(|(n, ms)| Choice::new(n.into(), ms, 1.0));
        let d = Value::Str(dtype.into());
        Sample::new(vec![d.clone(), d], choices.to_vec(), 1.0, 0.5, 7.0)
    };
    let data = |shared_memory: u64| {
        let features = vec!["mat1_dtype".to_string(), "mat2_dtype".to_string()];
        Samples {
            metadata: ah_core::Metadata {
                shared_memory,
                device_capa: (9, 0),
                name: "inductor_mm".into(),
                numerical_features: Vec::new(),
                categorical_features: features.clone(),
                choices: None,
            },
            features,
            samples: vec![sample("torch.float32"), sample("torch.bfloat16")],
            without_extras: 0,
            later: Vec::new(),
        }
    };
    let keep = |names: &[&str]| Policy::Keep {
        choices: names.iter().map(|n| n.to_string()).collect(),
    };
    let full = Policy::Default.outcome(&data(0).samples[0]);
    for limit in [0, 232448] {
        let mut d = data(limit);
        let unmarked = keep(&[big]).outcome(&d.samples[0]);
        assert_eq!(
            (unmarked.run_ms, unmarked.cost_s),
            (1.0, 2.0),
            "cuBLAS alone picked"
        );
        d.mark_unfit();
        let fp32 = keep(&[big]).outcome(&d.samples[0]);
        assert_eq!(fp32 == full, limit > 0, "{limit}");
        assert_eq!(keep(&[big]).outcome(&d.samples[1]).run_ms, 1.0, "bf16 fits");
        assert_eq!(keep(&[big, small]).outcome(&d.samples[0]).run_ms, 0.5);
    }
}

/// `naming.py`'s `sized_config` (the handler's and the artifact's) sizes every template name of
/// the shipped logs to every logged GEMM as `prune::sizing` does, hostile names included.
#[test]
fn python_sizes_configs_as_the_trainer() {
    use super::data::universe;
    use super::sizing::sized_config;
    if ah_test_support::skip_without_python("the sizing parity test") {
        return;
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let logs = [
        root.join("data/inductor_mm_h100.txt"),
        root.join("data/inductor_mm_attention_h100.txt"),
    ];
    let data = data::load_logs(&logs, FeatureSource::Logged).unwrap();
    let mut names = universe(data.samples.iter());
    names.extend(
        [
            "triton_mm_BLOCK-M=-64_BLOCK-K=32_BLOCK-N=64",
            "triton_mm_BLOCK-M=064_BLOCK-K=32_BLOCK-N=64_numwarps=8",
            "triton_mm_BLOCK-M=99999999999999999999_BLOCK-K=32_BLOCK-N=64",
            "triton_mm_BLOCK-M=64_BLOCK-N=64",
            "triton_mm__BLOCK-M=64_BLOCK-K=32_BLOCK-N=64",
            "triton_mm_BLOCK-M=64_BLOCK-M=32_BLOCK-K=32_BLOCK-N=64_numwarps=8",
            "extern_mm",
        ]
        .map(String::from),
    );
    let at = |f: &str| data.features.iter().position(|x| x == f).unwrap();
    let mut cases = String::new();
    let mut want = String::new();
    for s in &data.samples {
        let int = |f: &str| s.values[at(f)].to_string().parse::<i64>().unwrap();
        let (m, n, k) = (int("m"), int("n"), int("k"));
        for name in &names {
            cases += &format!("{name} {m} {n} {k}\n");
            want += &format!("{}\n", sized_config(name, m, n, k));
        }
    }
    let out = run_python(&root.join("python"), SIZING_PARITY, &cases);
    assert!(out == want, "Python sizes some config otherwise than Rust");
}

/// `sized_config` of each "name m n k" line of stdin, a line each.
const SIZING_PARITY: &str = r#"
import sys
sys.path.insert(0, sys.argv[1])
from ah_inductor.naming import sized_config
out = []
for line in sys.stdin:
    name, m, n, k = line.split()
    out.append(sized_config(name, int(m), int(n), int(k)))
sys.stdout.write("".join(x + "\n" for x in out))
"#;

/// `naming.py`'s `pipeline_bytes` (the handler's and the artifact's) gives every template name
/// of the shipped logs, hostile names included, the trainer's value at each element width,
/// and its `DTYPE_BYTES` is the table the generated code and the trainer read.
#[test]
fn python_counts_pipeline_bytes_as_the_trainer() {
    use super::data::universe;
    use super::sizing::pipeline_bytes;
    if ah_test_support::skip_without_python("the pipeline-bytes parity test") {
        return;
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let logs = [root.join("data/inductor_mm_h100.txt")];
    let data = data::load_logs(&logs, FeatureSource::Logged).unwrap();
    let mut names = universe(data.samples.iter());
    names.extend(
        [
            "triton_mm_BLOCK-M=999999999999999999_BLOCK-K=999999999999999999_BLOCK-N=1_numstages=9",
            "triton_mm_BLOCK-M=64_BLOCK-K=32_BLOCK-N=64",
            "triton_mm_BLOCK-M=64_BLOCK-K=32_BLOCK-N=64_numstages=03",
            "extern_mm",
        ]
        .map(String::from),
    );
    let mut cases = String::new();
    let mut want = String::new();
    for name in &names {
        for (a, b) in [(2, 2), (4, 4), (4, 2), (8, 1)] {
            cases += &format!("{name} {a} {b}\n");
            want += &format!("{:?}\n", pipeline_bytes(name, a, b));
        }
    }
    let table: Vec<String> = ah_codegen::prune_tree::DTYPE_BYTES
        .iter()
        .map(|(d, b)| format!("{d}={b}"))
        .collect();
    want += &format!("{}\n", table.join(" "));
    let out = run_python(&root.join("python"), PIPELINE_PARITY, &cases);
    assert!(
        out == want,
        "Python counts some pipeline otherwise than Rust:\n{out}"
    );
}

/// `pipeline_bytes` of each "name a b" line of stdin as Rust's `{:?}` of an `Option<i64>`, then
/// naming.py's `DTYPE_BYTES` as "dtype=bytes" pairs.
const PIPELINE_PARITY: &str = r#"
import sys
sys.path.insert(0, sys.argv[1])
from ah_inductor.naming import DTYPE_BYTES, pipeline_bytes
out = []
for line in sys.stdin:
    name, a, b = line.split()
    need = pipeline_bytes(name, int(a), int(b))
    out.append("None" if need is None else f"Some({need})")
out.append(" ".join(f"{d}={b}" for d, b in DTYPE_BYTES.items()))
sys.stdout.write("".join(x + "\n" for x in out))
"#;

/// The rule the handler leaves a kept list by holds in the shipped logs: no `triton_mm` config
/// within the device's shared memory at its GEMM's widths ever failed to benchmark, and most
/// beyond it did (`sizing::pipeline_bytes`, `Samples::mark_unfit`).
#[test]
fn configs_within_the_shared_memory_always_ran_in_the_shipped_logs() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let logs: Vec<_> = [
        "h100",
        "decode_h100",
        "attention_h100",
        "tiny_h100",
        "tokens_h100",
    ]
    .iter()
    .map(|n| root.join(format!("data/inductor_mm_{n}.txt")))
    .collect();
    let mut data = data::load_logs(&logs, FeatureSource::Logged).unwrap();
    assert_eq!(data.metadata.shared_memory, 232448);
    data.mark_unfit();
    let mut within = (0, 0);
    let mut beyond = (0, 0);
    for c in data.samples.iter().flat_map(|s| s.choices()) {
        if !c.name.starts_with("triton_mm_") {
            continue;
        }
        let count = if c.is_unfit() {
            &mut beyond
        } else {
            &mut within
        };
        count.0 += 1;
        count.1 += usize::from(!c.bench_ms.is_finite());
    }
    assert_eq!(within.1, 0, "{within:?} within, {beyond:?} beyond");
    assert!(
        within.0 > 20000 && beyond.1 * 2 > beyond.0,
        "{within:?} {beyond:?}"
    );
}

/// The tokens log's `decompose_k` splits load as one family choice per GEMM, at the fastest
/// split's benchmark time (`super::family`), and no GEMM has a name twice.
#[test]
fn decompose_k_splits_load_as_one_family_choice() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let log = root.join("data/inductor_mm_tokens_h100.txt");
    let data = data::load(&log, &ah_log::extras_path(&log)).unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    let mut fastest: std::collections::HashMap<String, f64> = Default::default();
    for line in text.lines().skip(2) {
        let (rest, time) = line.rsplit_once(',').unwrap();
        let (gemm, choice) = rest.rsplit_once(',').unwrap();
        if choice.starts_with("subgraph_decompose_k_ksplit=") {
            let t: f64 = time.parse().unwrap();
            let best = fastest.entry(gemm.to_string()).or_insert(t);
            *best = best.min(t);
        }
    }
    assert!(
        fastest.len() >= 30,
        "{} GEMMs offer decompose_k",
        fastest.len()
    );
    let mut seen = 0;
    for s in &data.samples {
        let names: Vec<&str> = s.choices().iter().map(|c| c.name.as_str()).collect();
        assert!(names
            .iter()
            .all(|n| !n.starts_with("subgraph_decompose_k_")));
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{:?}", s.values);
        let gemm: Vec<String> = s.values.iter().map(|v| v.to_string()).collect();
        let family = s
            .choices()
            .iter()
            .find(|c| c.name == "subgraph_decompose_k");
        match (fastest.get(&gemm.join(",")), family) {
            (Some(&t), Some(c)) => {
                assert_eq!(c.bench_ms, t, "{gemm:?}");
                seen += 1;
            }
            (None, None) => {}
            (t, c) => panic!("{gemm:?}: logged {t:?}, loaded {:?}", c.map(|c| c.bench_ms)),
        }
    }
    assert_eq!(seen, fastest.len());
}

/// A family's splits become one choice, priced as all of them, where its first split was.
#[test]
fn a_family_becomes_one_choice_priced_as_all_its_members() {
    use super::family;
    let choice = |name: &str, bench_ms, price_s, (gen_s, pre_s)| {
        Choice::new(data::config_name(name), bench_ms, price_s).with_parts(gen_s, pre_s)
    };
    let choices = vec![
        choice("extern_mm", 1.0, 0.1, (0.0, 0.0)),
        choice("subgraph_decompose_k_ksplit=2", 0.9, 0.5, (0.2, 1.0)),
        choice("triton_mm_BLOCK-M=64", 1.1, 0.3, (0.1, 0.4)),
        choice("subgraph_decompose_k_ksplit=8", 0.7, 0.6, (0.3, 2.0)),
        choice(
            "subgraph_decompose_k_ksplit=4",
            f64::INFINITY,
            0.2,
            (0.1, 0.5),
        ),
    ];
    let out = family::merge(choices, |c| c.name.as_str(), Choice::family);
    let names: Vec<&str> = out.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["extern_mm", "subgraph_decompose_k", "triton_mm_BLOCK-M=64"]
    );
    let dk = &out[1];
    assert_eq!(dk.bench_ms, 0.7, "Inductor picks the fastest split");
    assert!((dk.price_s - 1.3).abs() < 1e-12, "every split is paid for");
    assert!((dk.gen_s() - 0.6).abs() < 1e-12);
    assert_eq!(dk.precompile_s(), 2.0, "the splits precompile in parallel");
    assert_eq!(
        dk.others(),
        (2, 0.9),
        "the failed split counts, without a time"
    );
    assert_eq!(out[0].others(), (0, 0.0));
}

#[test]
fn a_key_map_hashes_a_name_key_as_itself_and_other_input_by_its_bytes() {
    use std::hash::{BuildHasher, Hasher};
    let build = std::hash::BuildHasherDefault::<keymap::KeyHasher>::default();
    let key = data::name_key("triton_mm_BLOCK-M=64");
    assert_eq!(build.hash_one(key), key);
    let bytes = |b: &[u8]| {
        let mut h = build.build_hasher();
        h.write(b);
        h.finish()
    };
    assert_ne!(bytes(b"ab"), bytes(b"ba"));
    let mut map: keymap::KeyMap<&str> = Default::default();
    map.insert(key, "kept");
    assert_eq!(map.get(&key), Some(&"kept"));
}
