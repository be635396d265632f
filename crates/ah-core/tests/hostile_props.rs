//! Hostile input for the core's three readers: the expression parser, the operations file and
//! the model JSON. Whatever they are given, they answer `Ok` or an error that says where and
//! is short, never a panic, a stack overflow or a hang:
//!
//! - any string (random, or built to nest deep) fed to the parser, in a thread with the
//!   default stack of a spawned thread (2 MiB), as a test harness or a worker pool runs it;
//! - any text as an operations file: errors name the file and a line of it;
//! - a valid model JSON with one value replaced by a hostile one: errors name the file, the
//!   line and the JSON path; a model that is accepted decides without panicking.
//!
//! The corpus `tests/corpus/expressions.txt` holds hand-made hostile expressions (add new
//! finds there); proptest keeps its failing cases in `proptest-regressions/`.

use std::path::Path;

use ah_core::ops::{parse_expr, parse_operations_str, MAX_DEPTH};
use ah_core::{Context, Model, Operation, Value};
use proptest::prelude::*;

/// The longest message a reader may give for one problem.
const MAX_MESSAGE: usize = 800;

/// Runs `f` in a spawned thread with the default stack size (no `stack_size`), so a deep
/// recursion would overflow here as it would in a program's worker thread.
fn on_default_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::spawn(f).join().expect("no panic")
}

/// Checks one parser answer: `Ok`, or an error with a column in the text and a short message.
fn check_parse(src: &str) -> Result<(), TestCaseError> {
    if let Err((column, message)) = parse_expr(src) {
        prop_assert!(
            column >= 1 && column <= src.chars().count() + 1,
            "column {}",
            column
        );
        prop_assert!(message.len() < MAX_MESSAGE, "{}", message);
    }
    Ok(())
}

/// Pieces of the language, recombined at random: deep nesting, long chains and broken syntax.
fn fragments() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "(", ")", "if(", ",", "not ", "-", "+", "*", "//", " and ", " or ", "<", "<=", "==", "m",
        "`m*k`", "1", "2.5", "'s'", "abs(", "min(", "max(", "str(", "True", "nan", "#", "`", "'",
        "\\",
    ]);
    prop::collection::vec((piece, 1usize..400), 1..12).prop_map(|parts| {
        parts
            .into_iter()
            .map(|(p, n)| p.repeat(n))
            .collect::<String>()
    })
}

#[test]
fn the_corpus_parses_or_is_refused_briefly() {
    let text = include_str!("corpus/expressions.txt");
    let lines: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    on_default_stack(move || {
        for src in &lines {
            check_parse(src).unwrap();
            if let Err(e) = Operation::parse("o", src, false) {
                assert!(e.to_string().len() < MAX_MESSAGE, "{e}");
            }
        }
    });
}

#[test]
fn expressions_far_beyond_the_limits_are_refused_on_the_default_stack() {
    on_default_stack(|| {
        for n in [MAX_DEPTH + 1, 5_000, 100_000] {
            for src in [
                format!("{}m{}", "(".repeat(n), ")".repeat(n)),
                format!("m{}", " + m".repeat(n)),
                format!("{}m{}", "if(m > 1, ".repeat(n), ", 0)".repeat(n)),
                format!("{}m", "-".repeat(n)),
            ] {
                let (_, message) = parse_expr(&src).unwrap_err();
                assert!(message.contains("nests deeper than"), "{message}");
            }
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn any_string_parses_or_is_refused_briefly(
        src in prop_oneof![any::<String>(), fragments(), "[-+*/%()<>=!,'`a-z0-9. ]{0,200}"],
    ) {
        on_default_stack(move || check_parse(&src))?;
    }

    #[test]
    fn any_operations_file_is_read_or_refused_at_a_line(
        lines in prop::collection::vec(
            prop_oneof![
                any::<String>(),
                fragments().prop_map(|e| format!("x{} = {e}", e.len())),
                "[a-z]{1,3}( :cat| :num)? = [-+*()a-z0-9 ]{0,30}",
            ],
            0..8,
        ),
    ) {
        let text = lines.join("\n");
        let count = text.lines().count();
        on_default_stack(move || -> Result<(), TestCaseError> {
            match parse_operations_str(&text, Path::new("ops.txt")) {
                Ok(ops) => prop_assert!(ops.len() <= count),
                Err(ah_core::Error::FileFormat { path, line, message }) => {
                    prop_assert_eq!(path, Path::new("ops.txt"));
                    prop_assert!(line >= 1 && line <= count, "line {} of {}", line, count);
                    prop_assert!(message.len() < MAX_MESSAGE, "{}", message);
                }
                Err(e) => prop_assert!(false, "not a file error: {}", e),
            }
            Ok(())
        })?;
    }

    #[test]
    fn any_hand_edit_of_a_model_is_loaded_or_refused_at_its_line(
        target in 0usize..10_000,
        value in prop_oneof![
            Just(serde_json::json!(null)),
            Just(serde_json::json!(-1)),
            Just(serde_json::json!(1.5)),
            Just(serde_json::json!(0)),
            Just(serde_json::json!(1e300)),
            Just(serde_json::json!(u64::MAX)),
            Just(serde_json::json!("")),
            Just(serde_json::json!("m")),
            Just(serde_json::json!("orig")),
            Just(serde_json::json!([])),
            Just(serde_json::json!({})),
            fragments().prop_map(serde_json::Value::String),
        ],
    ) {
        let text = include_str!("../../ah-codegen/tests/fixtures/selftest_ops.model.json");
        let mut json: serde_json::Value = serde_json::from_str(text).unwrap();
        let mut slots = Vec::new();
        leaf_paths(&json, String::new(), &mut slots);
        let at = &slots[target % slots.len()];
        *json.pointer_mut(at).unwrap() = value;
        let edited = serde_json::to_string_pretty(&json).unwrap();
        let lines = edited.lines().count();
        on_default_stack(move || -> Result<(), TestCaseError> {
            match Model::from_json(Path::new("m.model.json"), &edited) {
                Ok(model) => {
                    // Accepted: it decides (any answer) without panicking.
                    let mut ctx = Context::new();
                    ctx.add("m", 64i64).add("k", 0i64).add("n", 7i64);
                    ctx.add_categorical("mat1_dtype", Value::Str("torch.float16".into()));
                    let _ = model.decide(&ctx);
                }
                Err(e) => {
                    let message = e.to_string();
                    prop_assert!(message.starts_with("m.model.json"), "{}", message);
                    prop_assert!(message.len() < MAX_MESSAGE + 200, "{}", message);
                    if let Some(line) = message
                        .strip_prefix("m.model.json:")
                        .and_then(|r| r.split(':').next())
                        .and_then(|l| l.parse::<usize>().ok())
                    {
                        prop_assert!(line >= 1 && line <= lines, "line {} of {}", line, lines);
                    }
                }
            }
            Ok(())
        })?;
    }
}

/// JSON pointers of every scalar and array element in `v`.
fn leaf_paths(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                leaf_paths(x, format!("{at}/{k}"), out);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                leaf_paths(x, format!("{at}/{i}"), out);
            }
            out.push(at);
        }
        _ => out.push(at),
    }
}
