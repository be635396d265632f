//! Tests of building a table from a log.

use super::*;
use ah_log::{Log, ReadOptions};
use std::path::Path;

/// The training table of a log read from `text` (named `t.txt`), default options.
fn build(text: &str) -> (Table, Encoding, BuildReport) {
    let log =
        Log::from_reader(Path::new("t.txt"), text.as_bytes(), ReadOptions::default()).unwrap();
    build_table(&log, "train", &[], None, BuildOptions::default()).unwrap()
}

const MD: &str = r#"{"shared_memory": 0, "device_capa": [0, 0], "name": "t", "numerical_features": ["m"], "categorical_features": ["d"]}"#;

#[test]
fn median_winner_speedup_and_order() {
    let text = format!(
        "{MD}\nm,d,choice,feedback\n10,x,b,3.0\n10,x,a,2.0\n10,x,a,4.0\n10,x,a,1.0\n2,y,a,1.0\n2,y,b,0.5\n5,x,a,1.0\n"
    );
    let (t, enc, rep) = build(&text);
    assert_eq!(rep.single_choice_inputs, 1);
    assert_eq!(t.len(), 2);
    assert_eq!(t.choices, ["a", "b"]);
    // sorted by m: 2 then 10
    assert_eq!(t.keys[0].to_vec(), ["2", "y"]);
    assert_eq!(t.winner, [1, 0]);
    assert_eq!(t.time(1, 0), 2.0); // median of 1,2,4
    assert_eq!(t.speedup[1], 1.5);
    // categories in order of appearance in the (sorted) table
    assert_eq!(enc.categories[0].1, ["y", "x"]);
    assert_eq!(t.row(0), [2.0, 1.0, 0.0]);
}

#[test]
fn malformed_and_non_positive_rows_are_warned_with_file_and_line() {
    let text = format!("{MD}\nm,d,choice,feedback\n1,x,a,1.0\n1,x,b,-1.0\n1,x,b,0.0\n1,x,b,2.0\n");
    let (_, _, rep) = build(&text);
    let w = rep.warnings().join("\n");
    assert!(w.contains("2 malformed lines skipped"), "{w}");
    assert!(w.contains("t.txt:4: feedback `-1.0` is not a time"), "{w}");
    assert!(w.contains("t.txt:5: feedback `0.0`"), "{w}");
}

#[test]
fn inf_and_nan_feedback() {
    let text = format!(
        "{MD}\nm,d,choice,feedback\n1,x,a,inf\n1,x,b,inf\n2,x,a,nan\n2,x,a,1.0\n2,x,b,inf\n"
    );
    let (t, _, rep) = build(&text);
    assert_eq!(rep.all_inf_inputs, 1);
    assert_eq!(rep.nan_feedback_rows, 1);
    assert_eq!(t.len(), 1);
    assert_eq!(t.winner, [0]);
    assert!(t.speedup[0].is_infinite());
}

#[test]
fn augment_values_and_the_first_failing_input_in_table_order() {
    let ops = [
        ah_core::ops::Operation::parse("m2", "m * 2", false).unwrap(),
        ah_core::ops::Operation::parse("big", "m2 > 10", true).unwrap(),
    ];
    let text = format!("{MD}\nm,d,choice,feedback\n10,x,a,1.0\n10,x,b,2.0\n2,y,a,2.0\n2,y,b,1.0\n");
    let log =
        Log::from_reader(Path::new("t.txt"), text.as_bytes(), ReadOptions::default()).unwrap();
    let (t, enc, _) = build_table(&log, "train", &ops, None, BuildOptions::default()).unwrap();
    // Columns: m, m2, then one-hot d (y, x) and big (False, True), rows sorted by m.
    assert_eq!(enc.categories[1].1, ["False", "True"]);
    assert_eq!(t.row(0), [2.0, 4.0, 1.0, 0.0, 1.0, 0.0]);
    assert_eq!(t.row(1), [10.0, 20.0, 0.0, 1.0, 0.0, 1.0]);
    // Two inputs overflow `m * 2`: the message names the first of the table (sorted by m), whose
    // first row is line 7.
    let max = i64::MAX;
    let text = format!(
        "{MD}\nm,d,choice,feedback\n1,x,a,1.0\n1,x,b,2.0\n{max},y,a,2.0\n{max},y,b,1.0\n{},x,a,1.0\n{},x,b,1.0\n",
        max - 1,
        max - 1
    );
    let log =
        Log::from_reader(Path::new("t.txt"), text.as_bytes(), ReadOptions::default()).unwrap();
    let e = build_table(&log, "train", &ops, None, BuildOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!(
            "t.txt:7: augment operation failed on input m={}",
            max - 1
        )),
        "{e}"
    );
}
