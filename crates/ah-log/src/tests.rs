//! Tests of the log module.

use std::path::Path;

use super::*;
use ah_core::context::Context;
use ah_core::error::Result;
use ah_core::metadata::{DeviceIdentity, Metadata};

fn fa_metadata() -> Metadata {
    Metadata::new(DeviceIdentity::A100, "test", vec!["fa".into()], vec![])
}

#[test]
fn unit_test_literal_of_the_spec() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("train.txt");
    let mut ctx = Context::new();
    ctx.add("fa", 5i64);
    let mut w = LogWriter::append(&path, &fa_metadata(), &["fa".to_string()]).unwrap();
    for (c, t) in [("a", 1.0), ("b", 2.0), ("c", 3.0)] {
        w.write_row(&ctx, c, t).unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(
        lines[0],
        r#"{"shared_memory": 166912, "device_capa": [8, 0], "name": "test", "numerical_features": ["fa"], "categorical_features": []}"#
    );
    assert_eq!(
        &lines[1..],
        ["fa,choice,feedback", "5,a,1.0", "5,b,2.0", "5,c,3.0"]
    );
    let log = Log::read(&path, ReadOptions { strict: true }).unwrap();
    assert_eq!(log.rows.len(), 3);
    assert_eq!(log.choices, ["a", "b", "c"]);
}

#[test]
fn append_with_other_metadata_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("train.txt");
    LogWriter::append(&path, &fa_metadata(), &["fa".to_string()]).unwrap();
    let mut other = fa_metadata();
    other.shared_memory = 232448;
    let err = LogWriter::append(&path, &other, &["fa".to_string()]).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("InconsistentMetadata"), "{msg}");
    assert!(msg.contains("shared_memory 166912 vs 232448"), "{msg}");
    assert!(msg.contains("train.txt"), "{msg}");
}

#[test]
fn the_difference_names_every_field_that_differs_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("train.txt");
    LogWriter::append(&path, &fa_metadata(), &["fa".to_string()]).unwrap();
    let other = Metadata::new(DeviceIdentity::H100, "other", vec![], vec!["fb".into()]);
    let err = LogWriter::append(&path, &other, &["fb".to_string()]).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains(
            "difference: shared_memory 166912 vs 232448; device_capa (8, 0) vs (9, 0); \
             name \"test\" vs \"other\"; numerical_features [\"fa\"] vs []; \
             categorical_features [] vs [\"fb\"]\n"
        ),
        "{msg}"
    );
    let same = Metadata::new(DeviceIdentity::A100, "test", vec!["fa".into()], vec![]);
    assert!(LogWriter::append(&path, &same, &["fa".to_string()]).is_ok());
}

#[test]
fn malformed_rows_are_counted_or_refused() {
    let text = format!(
        "{}\nfa,choice,feedback\n5,a,1.0\n5,a\n\n5,b,x\n6,b,inf\n",
        fa_metadata().to_json_line()
    );
    let log =
        Log::from_reader(Path::new("t.txt"), text.as_bytes(), ReadOptions::default()).unwrap();
    assert_eq!(log.rows.len(), 2);
    assert_eq!(log.blank_lines, 1);
    assert_eq!(
        log.malformed.iter().map(|m| m.line).collect::<Vec<_>>(),
        [4, 6]
    );
    assert!(log.rows[1].feedback.is_infinite());
    let err = Log::from_reader(
        Path::new("t.txt"),
        text.as_bytes(),
        ReadOptions { strict: true },
    )
    .unwrap_err();
    assert!(
        err.to_string().starts_with("t.txt:4: expected 3 fields"),
        "{err}"
    );
}

#[test]
fn torn_tail_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("train.txt");
    let head = format!(
        "{}\nfa,choice,feedback\n5,a,1.0\n",
        fa_metadata().to_json_line()
    );
    std::fs::write(&path, format!("{head}5,b,2.")).unwrap();
    assert_eq!(
        Log::repair_torn_tail(&path).unwrap().as_deref(),
        Some("5,b,2.")
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), head);
    assert_eq!(Log::repair_torn_tail(&path).unwrap(), None, "already whole");
    std::fs::write(&path, "").unwrap();
    assert_eq!(Log::repair_torn_tail(&path).unwrap(), None);
    std::fs::write(&path, "{\"torn").unwrap();
    assert_eq!(
        Log::repair_torn_tail(&path).unwrap().as_deref(),
        Some("{\"torn")
    );
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    // Longer than one scan chunk.
    let long = format!("{head}{}", "9".repeat(200_000));
    std::fs::write(&path, &long).unwrap();
    assert_eq!(
        Log::repair_torn_tail(&path).unwrap().map(|s| s.len()),
        Some(200_000)
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), head);
    assert!(Log::repair_torn_tail(dir.path().join("missing.txt")).is_err());
}

fn read_text(bytes: &[u8], strict: bool) -> Result<Log> {
    Log::from_reader(Path::new("t.txt"), bytes, ReadOptions { strict })
}

#[test]
fn not_utf8_names_the_line_on_every_line() {
    let md = fa_metadata().to_json_line();
    let head = format!("{md}\nfa,choice,feedback\n");
    let cat = |parts: &[&[u8]]| parts.concat();
    let cases: [(Vec<u8>, usize); 4] = [
        (cat(&[b"{\"shared", &[0xff]]), 1),
        (
            cat(&[md.as_bytes(), b"\nfa,cho", &[0xe9], b"ice,feedback\n"]),
            2,
        ),
        (
            cat(&[head.as_bytes(), b"5,a,1.0\n5,", &[0xff], b",1.0\n"]),
            4,
        ),
        (cat(&[head.as_bytes(), b"\n5,a,1.", &[0xc3]]), 4),
    ];
    for (bytes, line) in cases {
        for strict in [false, true] {
            let err = read_text(&bytes, strict).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("t.txt:{line}: not UTF-8")),
                "{err}"
            );
        }
    }
}

#[test]
fn non_positive_times_are_malformed_and_inf_is_a_failure() {
    let text = format!(
        "{}\nfa,choice,feedback\n5,a,1.0\n5,b,0.0\n5,c,-2.5\n5,d,inf\n5,e,-inf\n5,f,nan\n",
        fa_metadata().to_json_line()
    );
    let log = read_text(text.as_bytes(), false).unwrap();
    assert_eq!(log.rows.len(), 3, "1.0, inf and nan stay rows");
    assert!(log.rows[1].feedback.is_infinite());
    let bad: Vec<usize> = log.malformed.iter().map(|m| m.line).collect();
    assert_eq!(bad, [4, 5, 7]);
    assert!(
        log.malformed[0].reason.contains("is not a time"),
        "{:?}",
        log.malformed
    );
    let err = read_text(text.as_bytes(), true).unwrap_err().to_string();
    assert!(
        err.starts_with("t.txt:4: feedback `0.0` is not a time"),
        "{err}"
    );
}

#[test]
fn wide_headers_are_checked_in_linear_time_with_short_messages() {
    let names: Vec<String> = (0..50_000).map(|i| format!("f{i}")).collect();
    let mut md = fa_metadata();
    md.numerical_features = names.clone();
    let row = "1,".repeat(names.len());
    let text = format!(
        "{}\n{},choice,feedback\n{row}a,1.0\n",
        md.to_json_line(),
        names.join(",")
    );
    let log = read_text(text.as_bytes(), true).unwrap();
    assert_eq!(
        (log.features.len(), log.rows[0].values.len()),
        (50_000, 50_000)
    );
    let bad = text.replace(",choice,feedback", ",choice,time");
    let err = read_text(bad.as_bytes(), true).unwrap_err().to_string();
    assert!(err.starts_with("t.txt:2: the header must end"), "{err}");
    assert!(
        err.len() < 200,
        "the message quotes only the header's end: {err}"
    );
    let missing = text.replacen(",f49999,", ",g,", 1);
    let err = read_text(missing.as_bytes(), true).unwrap_err().to_string();
    assert!(err.contains("feature `f49999`"), "{err}");
}

#[test]
fn a_corrupt_gzip_names_the_line() {
    use std::io::Write as _;
    let text = format!("{}\nfa,choice,feedback\n", fa_metadata().to_json_line())
        + &"5,a,1.0\n".repeat(10_000);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(text.as_bytes()).unwrap();
    let mut bytes = gz.finish().unwrap();
    let cut = bytes.len() / 2;
    bytes.truncate(cut);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.txt.gz");
    std::fs::write(&path, &bytes).unwrap();
    let err = Log::read(&path, ReadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("t.txt.gz:") && err.contains("cannot read this line"),
        "{err}"
    );
}

#[test]
fn device_difference_names_both_identities() {
    let a = fa_metadata();
    let mut b = fa_metadata();
    assert_eq!(device_difference(&a, &b), None);
    b.device_capa = (9, 0);
    b.shared_memory = 232448;
    assert_eq!(
        device_difference(&a, &b).unwrap(),
        "shared_memory 166912 vs 232448, device_capa (8, 0) vs (9, 0)"
    );
}

const MD: &str = r#"{"shared_memory": 0, "device_capa": [0, 0], "name": "t", "numerical_features": ["m"], "categorical_features": ["d"]}"#;

#[test]
fn errors_of_the_parallel_reader_name_the_line_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.txt");
    let mut bytes = format!("{MD}\nm,d,choice,feedback\n").into_bytes();
    for i in 0..120_000 {
        bytes.extend_from_slice(format!("{},x,a,1.5\n", i % 7).as_bytes());
    }
    // Line 120,003: not UTF-8, in the second half that is read in parallel.
    bytes.extend_from_slice(b"1,\xff,a,1.0\n");
    std::fs::write(&path, &bytes).unwrap();
    let e = Log::read_parallel(&path, ReadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("big.txt:120003: not UTF-8"), "{e}");
}

#[test]
fn parallel_read_equals_the_plain_reader() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.txt");
    let mut s = format!("{MD}\nm,d,choice,feedback\n");
    let mut i = 0;
    while s.len() < (1 << 20) + 5000 {
        let c = ["a", "b", "c"][i % 3];
        s.push_str(&format!("{},x,{c},{}\n", i % 1000, i as f64 / 7.0));
        if i % 9999 == 0 {
            s.push_str("bad line\n\n");
        }
        i += 1;
    }
    std::fs::write(&path, &s).unwrap();
    let plain = Log::read(&path, ReadOptions::default()).unwrap();
    let fast = Log::read_parallel(&path, ReadOptions::default()).unwrap();
    assert_eq!(fast.rows.len(), plain.rows.len());
    assert_eq!(fast.malformed, plain.malformed);
    assert_eq!(fast.blank_lines, plain.blank_lines);
    for (a, b) in fast.rows.iter().zip(&plain.rows) {
        assert_eq!(a.values, b.values);
        assert_eq!(
            fast.choices[a.choice as usize],
            plain.choices[b.choice as usize]
        );
        assert_eq!(a.feedback.to_bits(), b.feedback.to_bits());
    }
}
