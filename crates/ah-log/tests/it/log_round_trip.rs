//! Property: writing a log with `LogWriter` and reading it back gives the same rows, and
//! rendering them again gives the file's bytes (for both readers, and for the row spans that
//! tools editing a log in place use).

use ah_core::{Context, DeviceIdentity, Metadata, Value};
use ah_log::row_spans;
use ah_log::{Log, LogWriter, ReadOptions};
use proptest::prelude::*;

/// A feature value of any kind, as a log can hold it: a string that would read back as
/// another kind (`12`, `inf`) is not a string of a log.
fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::Int),
        any::<f64>()
            .prop_filter("nan is not equal to itself", |x| !x.is_nan())
            .prop_map(Value::Float),
        any::<bool>().prop_map(Value::Bool),
        "[a-zA-Z][a-zA-Z0-9_.]{0,8}"
            .prop_filter("reads back as a string", |s| matches!(
                Value::parse(s),
                Value::Str(_)
            ))
            .prop_map(Value::Str),
    ]
}

/// A feedback time: positive, `inf` for a failed choice.
fn feedback() -> impl Strategy<Value = f64> {
    prop_oneof![
        9 => any::<f64>().prop_filter("a time is positive", |x| *x > 0.0),
        1 => Just(f64::INFINITY),
    ]
}

/// Features (distinct names, categorical or not), choices and rows of values over them.
#[allow(clippy::type_complexity)]
fn log_content() -> impl Strategy<
    Value = (
        Vec<(String, bool)>,
        Vec<String>,
        Vec<(Vec<Value>, usize, f64)>,
    ),
> {
    let features = prop::collection::btree_map("[a-z][a-z0-9_]{0,6}", any::<bool>(), 1..6)
        .prop_map(|m| m.into_iter().collect::<Vec<_>>());
    let choices = prop::collection::btree_set("[a-z][a-z0-9_=-]{0,10}", 1..5)
        .prop_map(|s| s.into_iter().collect::<Vec<_>>());
    (features, choices).prop_flat_map(|(f, c)| {
        let row = (
            prop::collection::vec(value(), f.len()),
            0..c.len(),
            feedback(),
        );
        (Just(f), Just(c), prop::collection::vec(row, 0..24))
    })
}

fn context(features: &[(String, bool)], values: &[Value]) -> Context {
    let mut ctx = Context::new();
    for ((name, categorical), v) in features.iter().zip(values) {
        ctx.add_feature(name.clone(), v.clone(), *categorical);
    }
    ctx
}

fn check_rows(log: &Log, rows: &[(Vec<Value>, usize, f64)], choices: &[String]) {
    assert_eq!(log.rows.len(), rows.len());
    for (got, (values, choice, feedback)) in log.rows.iter().zip(rows) {
        assert_eq!(&got.values[..], &values[..]);
        assert_eq!(log.choice_name(got), choices[*choice]);
        assert_eq!(got.feedback.to_bits(), feedback.to_bits());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn write_then_read_gives_the_rows_and_the_bytes(
        (features, choices, rows) in log_content()
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("train.txt");
        let names: Vec<String> = features.iter().map(|(n, _)| n.clone()).collect();
        let empty = vec![Value::Int(0); features.len()];
        let (num, cat) = context(&features, &empty).numerical_and_categorical();
        let metadata = Metadata::new(DeviceIdentity::H100, "round_trip", num, cat);
        let mut w = LogWriter::append(&path, &metadata, &names).unwrap();
        for (values, choice, feedback) in &rows {
            w.write_row(&context(&features, values), &choices[*choice], *feedback)
                .unwrap();
        }
        drop(w);

        let log = Log::read(&path, ReadOptions { strict: true }).unwrap();
        check_rows(&log, &rows, &choices);
        prop_assert_eq!(&log.features, &names);
        let parallel = Log::read_parallel(&path, ReadOptions { strict: true }).unwrap();
        check_rows(&parallel, &rows, &choices);

        // Rendering what was read gives the file, byte for byte.
        let text = std::fs::read_to_string(&path).unwrap();
        let mut again = format!("{}\n{}\n", log.metadata_line, log.header_line());
        for row in &log.rows {
            again.push_str(&log.row_line(row));
            again.push('\n');
        }
        prop_assert_eq!(&again, &text);

        // The row spans name each row's input and choice where it stands.
        let spans = row_spans(&text);
        prop_assert_eq!(spans.len(), rows.len());
        for (s, (values, choice, _)) in spans.iter().zip(&rows) {
            prop_assert_eq!(s.key, context(&features, values).feature_values_csv());
            prop_assert_eq!(s.choice, &choices[*choice]);
            prop_assert_eq!(&text[s.start..s.end], format!("{}\n", s.line));
        }
    }
}
