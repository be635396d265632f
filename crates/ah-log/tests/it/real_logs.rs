//! Golden tests on PyTorch's public AutoHeuristic logs in `../shared/data/pytorch/`: every file
//! loads with its exact row counts, and re-rendering every row gives the file's bytes.
//! Skipped (with a message) when `../shared` is absent.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use ah_core::ops::{apply_operations, builtin_operations, check_operations};
use ah_core::{Context, DeviceIdentity, Metadata, Value};
use ah_log::open_maybe_gz;
use ah_log::{Log, LogWriter, ReadOptions};

fn data_dir() -> Option<PathBuf> {
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/pytorch"
    ));
    (!ah_test_support::skip_without(dir)).then(|| dir.to_path_buf())
}

struct Expect {
    file: &'static str,
    name: &'static str,
    rows: usize,
    inputs: usize,
    choices: usize,
    inf_rows: usize,
    blank_lines: usize,
    old_metadata_layout: bool,
}

const FILES: [Expect; 3] = [
    Expect {
        file: "pad_mm_a100.txt",
        name: "pad_mm",
        rows: 58_183,
        inputs: 9_701,
        choices: 2,
        inf_rows: 0,
        blank_lines: 0,
        old_metadata_layout: true,
    },
    Expect {
        file: "mixed_mm_a100.txt.gz",
        name: "mixed_mm",
        rows: 254_037,
        inputs: 4_299,
        choices: 54,
        inf_rows: 0,
        blank_lines: 0,
        old_metadata_layout: false,
    },
    Expect {
        file: "mm_a100_random.txt.gz",
        name: "mm",
        rows: 238_032,
        inputs: 2_641,
        choices: 175,
        inf_rows: 14_790,
        blank_lines: 1,
        old_metadata_layout: false,
    },
];

fn raw_text(path: &Path) -> String {
    let mut s = String::new();
    open_maybe_gz(path).unwrap().read_to_string(&mut s).unwrap();
    s
}

/// Loads every file, checks the counts, then re-renders every row and compares it with the
/// file's own line, byte for byte.
#[test]
fn shared_logs_load_and_round_trip() {
    let Some(dir) = data_dir() else { return };
    for e in &FILES {
        let path = dir.join(e.file);
        let log = Log::read(&path, ReadOptions { strict: true })
            .unwrap_or_else(|err| panic!("{}: {err}", e.file));
        assert_eq!(log.rows.len(), e.rows, "{}: rows", e.file);
        assert_eq!(log.choices.len(), e.choices, "{}: distinct choices", e.file);
        assert_eq!(log.blank_lines, e.blank_lines, "{}: blank lines", e.file);
        assert!(
            log.malformed.is_empty(),
            "{}: {:?}",
            e.file,
            &log.malformed[..1]
        );
        assert_eq!(log.metadata.name, e.name);
        assert_eq!(log.metadata.device(), DeviceIdentity::A100);
        let inf = log.rows.iter().filter(|r| r.feedback.is_infinite()).count();
        assert_eq!(inf, e.inf_rows, "{}: inf rows", e.file);
        // Values hold floats (not `Hash`), so hash their rendering instead.
        let inputs_text: HashSet<String> = log
            .rows
            .iter()
            .map(|r| {
                r.values
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect();
        assert_eq!(inputs_text.len(), e.inputs, "{}: distinct inputs", e.file);

        let text = raw_text(&path);
        let mut lines = text.split_inclusive('\n');
        let first = lines.next().unwrap().trim_end_matches('\n');
        assert_eq!(
            log.metadata_line, first,
            "{}: metadata line kept as is",
            e.file
        );
        let rewritten = log.metadata.to_json_line();
        if e.old_metadata_layout {
            assert_ne!(
                rewritten, first,
                "{}: the June-2024 layout is not the current one",
                e.file
            );
            assert!(first.contains("\"choices\": [\"orig\", \"pad\"]"));
        } else {
            assert_eq!(rewritten, first, "{}: current layout is byte exact", e.file);
        }
        assert_eq!(format!("{}\n", log.header_line()), lines.next().unwrap());
        let mut rows = log.rows.iter();
        let mut lineno = 2;
        for line in lines {
            lineno += 1;
            if line == "\n" {
                continue;
            }
            let row = rows
                .next()
                .unwrap_or_else(|| panic!("{}: more lines than rows", e.file));
            let want = line.strip_suffix('\n').unwrap_or(line);
            assert_eq!(
                log.row_line(row),
                want,
                "{}:{lineno}: row does not round-trip",
                e.file
            );
        }
        assert!(rows.next().is_none(), "{}: more rows than lines", e.file);
        assert!(text.ends_with('\n'));
    }
}

#[test]
fn mm_blank_line_is_at_180663() {
    let Some(dir) = data_dir() else { return };
    let text = raw_text(&dir.join("mm_a100_random.txt.gz"));
    let blanks: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.is_empty())
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(blanks, [180_663]);
}

/// The spec's literal lines (section 3): writing the head of `a100_mm.txt` gives its bytes, and
/// the first pad_mm rows are what the shared file holds.
#[test]
fn spec_literal_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a100_mm.txt");
    let header = "m,k,n,mat1_dtype,mat2_dtype,mat1_stride_0,mat1_stride_1,mat2_stride_0,mat2_stride_1,mat1_iscontig,mat2_iscontig,using_tf32";
    let categorical = [
        "mat1_dtype",
        "mat2_dtype",
        "mat1_iscontig",
        "mat2_iscontig",
        "using_tf32",
    ];
    let values =
        "1920,1024,12288,torch.float16,torch.float16,1024,1,12288,1,True,True,not_float_32";
    let mut ctx = Context::new();
    for (name, v) in header.split(',').zip(values.split(',')) {
        ctx.add_feature(
            name.to_string(),
            Value::parse(v),
            categorical.contains(&name),
        );
    }
    let (num, cat) = ctx.numerical_and_categorical();
    let md = Metadata::new(DeviceIdentity::A100, "mm", num, cat);
    let features: Vec<String> = header.split(',').map(str::to_string).collect();
    let mut w = LogWriter::append(&path, &md, &features).unwrap();
    w.write_row(&ctx, "extern_mm", 0.2266560047864914).unwrap();
    w.write_row(
        &ctx,
        "type=triton_BLOCK-M=16_BLOCK-K=16_BLOCK-N=32_numstages=3_numwarps=2",
        1.2625279426574707,
    )
    .unwrap();
    let want = r#"{"shared_memory": 166912, "device_capa": [8, 0], "name": "mm", "numerical_features": ["m", "k", "n", "mat1_stride_0", "mat1_stride_1", "mat2_stride_0", "mat2_stride_1"], "categorical_features": ["mat1_dtype", "mat2_dtype", "mat1_iscontig", "mat2_iscontig", "using_tf32"]}
m,k,n,mat1_dtype,mat2_dtype,mat1_stride_0,mat1_stride_1,mat2_stride_0,mat2_stride_1,mat1_iscontig,mat2_iscontig,using_tf32,choice,feedback
1920,1024,12288,torch.float16,torch.float16,1024,1,12288,1,True,True,not_float_32,extern_mm,0.2266560047864914
1920,1024,12288,torch.float16,torch.float16,1024,1,12288,1,True,True,not_float_32,type=triton_BLOCK-M=16_BLOCK-K=16_BLOCK-N=32_numstages=3_numwarps=2,1.2625279426574707
"#;
    assert_eq!(std::fs::read_to_string(&path).unwrap(), want);

    let Some(data) = data_dir() else { return };
    let text = raw_text(&data.join("pad_mm_a100.txt"));
    let head: Vec<&str> = text.lines().take(4).collect();
    assert_eq!(head[2], "29088,41523,5535,1,29088,5535,1,0,5,1,8,8,torch.bfloat16,torch.bfloat16,False,True,not_float_32,orig,148.8771209716797");
    assert_eq!(head[3], "29088,41523,5535,1,29088,5535,1,0,5,1,8,8,torch.bfloat16,torch.bfloat16,False,True,not_float_32,pad,86.64131164550781");
}

/// The built-in operations apply to every row of the shared logs (all their inputs exist, no
/// division by zero), and give the kinds Python gives.
#[test]
fn builtin_operations_apply_to_shared_logs() {
    let Some(dir) = data_dir() else { return };
    for e in &FILES {
        let log = Log::read(dir.join(e.file), ReadOptions::default()).unwrap();
        let ops = builtin_operations(e.name);
        check_operations(&ops, &log.features).unwrap();
        // Every 97th row keeps this fast in the test profile while covering all inputs kinds.
        for row in log.rows.iter().step_by(97) {
            let mut ctx = Context::with_capacity(log.features.len() + ops.len());
            for (name, v) in log.features.iter().zip(row.values.iter()) {
                ctx.add_feature(name.clone(), v.clone(), log.metadata.is_categorical(name));
            }
            apply_operations(&ops, &mut ctx).unwrap_or_else(|err| panic!("{}: {err}", e.file));
            for op in &ops {
                let v = ctx.get(&op.name).unwrap();
                let want = if op.is_categorical {
                    "bool"
                } else if op.name.contains('/') || op.name == "arith_intensity" {
                    "float"
                } else {
                    "int"
                };
                assert_eq!(v.kind(), want, "{}: {} = {v}", e.file, op.name);
            }
        }
    }
}
