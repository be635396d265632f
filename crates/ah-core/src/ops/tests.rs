//! Unit tests of the augment operations: built-ins on hand-checked inputs, Python's semantics,
//! errors, printing and the compiled form.

use super::*;
use crate::context::Context;
use crate::error::Error;
use crate::value::Value;

fn ctx_from(pairs: &[(&str, Value)]) -> Context {
    let mut c = Context::new();
    for (n, v) in pairs {
        c.add(n.to_string(), v.clone());
    }
    c
}

fn eval_src(src: &str, ctx: &Context) -> std::result::Result<Value, EvalError> {
    parse_expr(src).unwrap().eval(&|n| ctx.get(n).cloned())
}

fn pad_mm_ctx(m: i64, k: i64, n: i64, strides: [i64; 4], padded: [i64; 3], dtype: &str) -> Context {
    let mut c = Context::new();
    c.add("m", m).add("k", k).add("n", n);
    c.add("mat1_stride_0", strides[0])
        .add("mat1_stride_1", strides[1]);
    c.add("mat2_stride_0", strides[2])
        .add("mat2_stride_1", strides[3]);
    c.add("m_padded_length", padded[0])
        .add("k_padded_length", padded[1])
        .add("n_padded_length", padded[2]);
    c.add("mat1_align_size", 8i64).add("mat2_align_size", 8i64);
    c.add_categorical("mat1_dtype", dtype)
        .add_categorical("mat2_dtype", dtype);
    c.add_categorical("prepadded_mat1", false)
        .add_categorical("prepadded_mat2", true);
    c.add_categorical("using_tf32", "not_float_32");
    c
}

#[test]
fn builtin_counts_and_names() {
    let names = |n: &str| {
        builtin_operations(n)
            .into_iter()
            .map(|o| o.name)
            .collect::<Vec<_>>()
    };
    let pad = names("pad_mm");
    assert_eq!(pad.len(), 26);
    assert_eq!(
        &pad[..9],
        [
            "m*k",
            "m*n",
            "k*n",
            "k/(m*n)",
            "bfloat_perf_hit",
            "arith_intensity",
            "mat1_innermost_needs_padding",
            "mat2_innermost_needs_padding",
            "num_dims_needs_padding"
        ]
    );
    assert_eq!(pad[9], "m_multiple_2");
    assert_eq!(pad[13], "m_multiple_32");
    assert_eq!(pad[14], "k_multiple_2");
    assert_eq!(pad[23], "n_multiple_32");
    assert_eq!(&pad[24..], ["mat1_iscontig", "mat2_iscontig"]);
    assert_eq!(names("mm"), ["m*k", "m*n", "k*n", "arith_intensity"]);
    let mixed = names("mixed_mm");
    assert_eq!(mixed.len(), 19);
    assert_eq!(&mixed[4..6], ["1LEQmLEQ16", "17LEQmLEQ32"]);
    assert_eq!(mixed[8], "129LEQmLEQ256");
    assert_eq!(mixed[9], "1LEQkLEQ16");
    assert_eq!(mixed[18], "129LEQnLEQ256");
    assert!(names("flex_attention").is_empty());
    let cat = |n: &str| {
        builtin_operations(n)
            .iter()
            .filter(|o| o.is_categorical)
            .count()
    };
    assert_eq!(cat("pad_mm"), 1 + 2 + 15 + 2);
    assert_eq!(cat("mm"), 0);
    assert_eq!(cat("mixed_mm"), 15);
}

#[test]
fn pad_mm_ops_on_hand_checked_inputs() {
    // The first row of the public pad_mm log: m=29088 k=41523 n=5535, mat1 transposed.
    let mut c = pad_mm_ctx(
        29088,
        41523,
        5535,
        [1, 29088, 5535, 1],
        [0, 5, 1],
        "torch.bfloat16",
    );
    apply_operations(&builtin_operations("pad_mm"), &mut c).unwrap();
    let g = |n: &str| c.get(n).unwrap().clone();
    assert_eq!(g("m*k"), Value::Int(29088 * 41523));
    assert_eq!(g("m*n"), Value::Int(29088 * 5535));
    assert_eq!(g("k*n"), Value::Int(41523 * 5535));
    assert_eq!(g("k/(m*n)"), Value::Float(41523.0 / (29088.0 * 5535.0)));
    assert_eq!(g("bfloat_perf_hit"), Value::Bool(false));
    let (m, k, n) = (29088i64, 41523i64, 5535i64);
    let ai = (m * k * n) as f64 / (m * k + k * n + m * n) as f64;
    assert_eq!(g("arith_intensity"), Value::Float(ai));
    // python3 -c 'm,k,n=29088,41523,5535; print(m*k*n/(m*k+k*n+m*n), k/(m*n))'
    assert_eq!(g("arith_intensity").to_string(), "4181.8266680675715");
    assert_eq!(g("k/(m*n)").to_string(), "0.00025790350037713797");
    // mat1 stride_0 == 1 but m_padded_length == 0; stride_1 != 1.
    assert_eq!(g("mat1_innermost_needs_padding"), Value::Bool(false));
    // mat2 stride_1 == 1 and n_padded_length == 1.
    assert_eq!(g("mat2_innermost_needs_padding"), Value::Bool(true));
    assert_eq!(g("num_dims_needs_padding"), Value::Int(2));
    // 29088 = 2^5 * 909; 41523 odd; 5535 odd.
    for mult in [2, 4, 8, 16, 32] {
        assert_eq!(
            g(&format!("m_multiple_{mult}")),
            Value::Bool(true),
            "m % {mult}"
        );
        assert_eq!(g(&format!("k_multiple_{mult}")), Value::Bool(false));
        assert_eq!(g(&format!("n_multiple_{mult}")), Value::Bool(false));
    }
    assert_eq!(g("mat1_iscontig"), Value::Bool(false));
    assert_eq!(g("mat2_iscontig"), Value::Bool(true));
    assert_eq!(g("m_multiple_2").to_string(), "True");
    assert_eq!(g("mat1_iscontig").to_string(), "False");

    // bfloat_perf_hit: k > 1024*m and k > 1024*n and bf16; not for fp16.
    let mut c = pad_mm_ctx(2, 4096, 3, [4096, 1, 3, 1], [0, 0, 5], "torch.bfloat16");
    apply_operations(&builtin_operations("pad_mm"), &mut c).unwrap();
    assert_eq!(c.get("bfloat_perf_hit"), Some(&Value::Bool(true)));
    assert_eq!(c.get("mat1_iscontig"), Some(&Value::Bool(true)));
    assert_eq!(c.get("num_dims_needs_padding"), Some(&Value::Int(1)));
    assert_eq!(c.get("m_multiple_2"), Some(&Value::Bool(true)));
    assert_eq!(c.get("m_multiple_4"), Some(&Value::Bool(false)));
    let mut c = pad_mm_ctx(2, 4096, 3, [4096, 1, 3, 1], [0, 0, 5], "torch.float16");
    apply_operations(&builtin_operations("pad_mm"), &mut c).unwrap();
    assert_eq!(c.get("bfloat_perf_hit"), Some(&Value::Bool(false)));
    let mut c = pad_mm_ctx(2, 4096, 4, [4096, 1, 3, 1], [0, 0, 5], "torch.bfloat16");
    apply_operations(&builtin_operations("pad_mm"), &mut c).unwrap();
    assert_eq!(
        c.get("bfloat_perf_hit"),
        Some(&Value::Bool(false)),
        "4096 > 4*1024 is false"
    );
}

#[test]
fn mm_and_mixed_mm_ops() {
    let mut c = ctx_from(&[("m", 0.into()), ("k", 8.into()), ("n", 16.into())]);
    apply_operations(&builtin_operations("mixed_mm"), &mut c).unwrap();
    assert_eq!(c.get("arith_intensity"), Some(&Value::Float(0.0)));
    assert_eq!(c.get("m*k"), Some(&Value::Int(0)));
    assert_eq!(c.get("1LEQmLEQ16"), Some(&Value::Bool(false)));
    assert_eq!(c.get("1LEQkLEQ16"), Some(&Value::Bool(true)));
    assert_eq!(c.get("1LEQnLEQ16"), Some(&Value::Bool(true)));
    assert_eq!(c.get("17LEQnLEQ32"), Some(&Value::Bool(false)));
    let mut c = ctx_from(&[("m", 128.into()), ("k", 4096.into()), ("n", 17.into())]);
    apply_operations(&builtin_operations("mixed_mm"), &mut c).unwrap();
    assert_eq!(c.get("65LEQmLEQ128"), Some(&Value::Bool(true)));
    assert_eq!(c.get("129LEQmLEQ256"), Some(&Value::Bool(false)));
    assert_eq!(c.get("129LEQkLEQ256"), Some(&Value::Bool(false)));
    assert_eq!(c.get("17LEQnLEQ32"), Some(&Value::Bool(true)));
    // python3 -c 'm,k,n=128,4096,17; print(m*k*n/(m*k+k*n+m*n))'
    assert_eq!(
        c.get("arith_intensity").unwrap().to_string(),
        "14.952115095555078"
    );
    assert_eq!(c.get("k*n"), Some(&Value::Int(4096 * 17)));
}

#[test]
fn python_arithmetic_semantics() {
    let c = ctx_from(&[
        ("a", 7.into()),
        ("b", (-2).into()),
        ("t", true.into()),
        ("x", 2.5.into()),
    ]);
    let e = |s: &str| eval_src(s, &c).unwrap();
    assert_eq!(e("a / 2"), Value::Float(3.5));
    assert_eq!(e("4 / 2"), Value::Float(2.0));
    assert_eq!(e("a // b"), Value::Int(-4));
    assert_eq!(e("a % b"), Value::Int(-1));
    assert_eq!(e("-a % 3"), Value::Int(2));
    assert_eq!(e("-7.5 // 2"), Value::Float(-4.0));
    assert_eq!(e("-7.5 % 2"), Value::Float(0.5));
    assert_eq!(e("t + t"), Value::Int(2));
    assert_eq!(e("a * x"), Value::Float(17.5));
    assert_eq!(e("-t"), Value::Int(-1));
    assert_eq!(e("abs(b)"), Value::Int(2));
    assert_eq!(e("min(a, b, 3)"), Value::Int(-2));
    assert_eq!(
        e("max(1, 1.0)"),
        Value::Int(1),
        "first of equals wins, as in Python"
    );
    assert_eq!(e("str(t)"), Value::Str("True".into()));
    assert_eq!(e("str(x * 2)"), Value::Str("5.0".into()));
    assert_eq!(e("int(-2.7)"), Value::Int(-2));
    assert_eq!(e("float(a)"), Value::Float(7.0));
    assert_eq!(e("bool(0.0)"), Value::Bool(false));
    assert_eq!(e("a > 1 and 5"), Value::Int(5), "`and` returns an operand");
    assert_eq!(e("0 or 'x'"), Value::Str("x".into()));
    assert_eq!(e("not a"), Value::Bool(false));
    assert_eq!(e("1 <= a <= 7"), Value::Bool(true));
    assert_eq!(e("1 <= a < 7"), Value::Bool(false));
    assert_eq!(e("a == 7.0"), Value::Bool(true));
    assert_eq!(e("t == 1"), Value::Bool(true));
    assert_eq!(e("'7' == a"), Value::Bool(false));
    assert_eq!(e("'7' != a"), Value::Bool(true));
    assert_eq!(e("'ab' < 'b'"), Value::Bool(true));
    assert_eq!(e("if(a > 3, 'big', 'small')"), Value::Str("big".into()));
    assert_eq!(
        e("if(b > 3, 1 / 0, 0)"),
        Value::Int(0),
        "only the taken branch runs"
    );
    assert_eq!(
        e("9007199254740993 > 9007199254740992.0"),
        Value::Bool(true),
        "exact int/float"
    );
    assert_eq!(e("2 * 3 + 4 * 5 - 6 // 4"), Value::Int(25));
    assert_eq!(e("2 - 3 - 4"), Value::Int(-5));
    assert_eq!(e("nan == nan"), Value::Bool(false));
    assert_eq!(e("nan != nan"), Value::Bool(true));
    assert!(matches!(eval_src("'a' < 1", &c), Err(EvalError::Type(_))));
}

/// Division by zero is an error (Python raises ZeroDivisionError), integer overflow too.
#[test]
fn division_by_zero_and_overflow_are_errors() {
    let c = ctx_from(&[
        ("m", 0.into()),
        ("k", 5.into()),
        ("n", 3.into()),
        ("big", i64::MAX.into()),
    ]);
    for src in [
        "k / (m * n)",
        "k // m",
        "k % m",
        "1.5 / 0",
        "1.5 // 0.0",
        "k % 0.0",
    ] {
        assert_eq!(eval_src(src, &c), Err(EvalError::DivisionByZero), "{src}");
    }
    assert_eq!(eval_src("big + 1", &c), Err(EvalError::Overflow));
    assert_eq!(eval_src("big * 2", &c), Err(EvalError::Overflow));
    assert_eq!(
        eval_src("big * 2.0", &c),
        Ok(Value::Float(i64::MAX as f64 * 2.0))
    );
    let ops = builtin_operations("pad_mm");
    let kdiv = ops.iter().find(|o| o.name == "k/(m*n)").unwrap();
    let err = kdiv.eval_context(&c).unwrap_err().to_string();
    assert_eq!(err, "operation `k/(m*n)`: division by zero");
}

#[test]
fn unknown_names_are_errors() {
    let op = Operation::parse("x", "m * `k*n` + q", false).unwrap();
    assert_eq!(op.inputs(), ["m", "k*n", "q"]);
    let c = ctx_from(&[("m", 1.into()), ("k*n", 2.into())]);
    let err = op.eval_context(&c).unwrap_err().to_string();
    assert_eq!(
        err,
        "operation `x`: unknown feature `q`: the context has no feature of that name"
    );

    let avail = vec!["m".to_string(), "k".to_string(), "n".to_string()];
    check_operations(&builtin_operations("mm"), &avail).unwrap();
    let err = check_operations(&builtin_operations("pad_mm"), &avail)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("operation `bfloat_perf_hit` reads unknown feature `mat1_dtype`"),
        "{err}"
    );
    let a = Operation::parse("a", "`b` + 1", false).unwrap();
    let b = Operation::parse("b", "m", false).unwrap();
    let err = check_operations(&[a.clone(), b.clone()], &avail)
        .unwrap_err()
        .to_string();
    assert!(err.contains("defined by a later operation"), "{err}");
    check_operations(&[b.clone(), a], &avail).unwrap();
    // A user operation of a built-in operation's name (built-in ones first, as ah-train
    // lists them): which one the tree reads would depend on the order.
    let mut ops = builtin_operations("mm");
    ops.push(b);
    ops.push(Operation::parse("m*k", "m + k", false).unwrap());
    let err = check_operations(&ops, &avail).unwrap_err().to_string();
    assert!(
        err.starts_with(
            "operation `m*k` is defined twice (operations 1 and 6, built-in ones first)"
        ),
        "{err}"
    );
    // Every built-in list is free of duplicates.
    for name in ["pad_mm", "mm", "mixed_mm"] {
        let ops = builtin_operations(name);
        let names: std::collections::HashSet<&str> = ops.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names.len(), ops.len(), "{name}");
    }
}

#[test]
fn parse_errors_say_where_and_what() {
    let cases = [
        ("m *", 4, "expected a number, a string, a feature name, a function call or `(`, found the end of the expression"),
        ("(m + k", 7, "expected `)` or an operator, found the end of the expression"),
        ("m k", 3, "expected an operator or the end of the expression, found `k`"),
        ("m = k", 3, "unexpected `=`: use `==` to compare"),
        ("foo(m)", 1, "unknown function `foo`"),
        ("if(m, 1)", 1, "if() takes 3 (condition, then, else) arguments, 2 given"),
        ("min(m)", 1, "min() takes at least 2 arguments, 1 given"),
        ("`m*k", 1, "unterminated feature name"),
        ("'abc", 1, "unterminated string"),
        ("m && k", 3, "unexpected `&`"),
        ("1LEQm", 1, "invalid number `1LEQm`"),
        ("99999999999999999999", 1, "integer `99999999999999999999` does not fit in 64 bits"),
    ];
    for (src, col, want) in cases {
        let err = Operation::parse("op", src, false).unwrap_err();
        match &err {
            Error::Expression {
                column, message, ..
            } => {
                assert_eq!(*column, col, "{src}: {message}");
                assert!(message.starts_with(want), "{src}: {message}");
            }
            other => panic!("{src}: {other}"),
        }
        let text = err.to_string();
        assert!(text.starts_with("operation `op`: column"), "{text}");
        assert!(text.contains(&format!("\n    {src}\n")), "{text}");
    }
    assert!(Operation::parse("a,b", "1", false).is_err());
}

#[test]
fn display_and_python_round_trip() {
    for op in ["pad_mm", "mixed_mm"]
        .iter()
        .flat_map(|n| builtin_operations(n))
    {
        let shown = op.expr.to_string();
        assert_eq!(parse_expr(&shown).unwrap(), op.expr, "{shown}");
    }
    for src in [
        "-(a + b) * c",
        "a - (b - c)",
        "not (a and b) or c",
        "(a < b) == c",
        "-3 // 2",
        "a * -b",
        "`m*k` / 2.5e-07",
        "if(a, 'x\\'y', inf)",
        "-(-a)",
    ] {
        let e = parse_expr(src).unwrap();
        assert_eq!(parse_expr(&e.to_string()).unwrap(), e, "{src} -> {e}");
    }
    let e = parse_expr("if(m == 0, 0.0, m * k / (k + `m*n`))").unwrap();
    assert_eq!(
        e.to_python(&|n| format!("context.get_value({n:?})")),
        "(0.0 if context.get_value(\"m\") == 0 else context.get_value(\"m\") * context.get_value(\"k\") / (context.get_value(\"k\") + context.get_value(\"m*n\")))"
    );
    let e = parse_expr("1 <= m <= 16").unwrap();
    assert_eq!(e.to_string(), "1 <= m and m <= 16");
    assert_eq!(parse_expr("a - -1").unwrap().to_string(), "a - -1");
    assert_eq!(parse_expr("2 ** 3").map_err(|e| e.0), Err(4));
}

#[test]
fn spec_round_trip() {
    for op in builtin_operations("pad_mm") {
        assert_eq!(Operation::from_spec(&op.spec()).unwrap(), op);
    }
}

#[test]
fn operations_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ops.txt");
    std::fs::write(
        &path,
        "# my ops\n\nm_plus_n = m + n\nbig_k :cat = k >= 4096 # no inline comments; this is an error\n",
    )
    .unwrap();
    let err = parse_operations_file(&path).unwrap_err().to_string();
    assert!(
        err.ends_with("ops.txt:4: column 24: unexpected character `#` (in operation `big_k`)"),
        "{err}"
    );
    std::fs::write(
        &path,
        "m_plus_n = m + n\nbig_k :cat = k >= 4096\nratio:num=m_plus_n/k\n",
    )
    .unwrap();
    let ops = parse_operations_file(&path).unwrap();
    assert_eq!(
        ops.iter()
            .map(|o| (o.name.as_str(), o.is_categorical))
            .collect::<Vec<_>>(),
        [("m_plus_n", false), ("big_k", true), ("ratio", false)]
    );
    let mut c = ctx_from(&[("m", 2.into()), ("k", 4096.into()), ("n", 6.into())]);
    apply_operations(&ops, &mut c).unwrap();
    assert_eq!(c.get("ratio"), Some(&Value::Float(8.0 / 4096.0)));
    assert_eq!(c.get("big_k"), Some(&Value::Bool(true)));
    for (text, want) in [
        ("x\n", "ops.txt:1: expected `NAME = EXPR`"),
        ("a b = 1\n", "ops.txt:1: invalid operation name `a b`"),
        (
            "a = 1\na = 2\n",
            "ops.txt:2: operation `a` is defined twice",
        ),
        ("\n a = (1\n", "ops.txt:2: column 8: expected `)`"),
    ] {
        std::fs::write(&path, text).unwrap();
        let err = parse_operations_file(&path).unwrap_err().to_string();
        assert!(err.contains(want), "{text:?}: {err}");
    }
    // `==` on the right-hand side is not the definition's `=`.
    std::fs::write(&path, "is_one :cat = m == 1\n").unwrap();
    assert_eq!(parse_operations_file(&path).unwrap()[0].source, "m == 1");
}

#[test]
fn compiled_ops_equal_dynamic_ops() {
    let ops = builtin_operations("pad_mm");
    let mut shadow = ops.clone();
    // Redefinitions and shadowing: an op overwriting a logged feature, one redefining an
    // earlier op, one reading a name defined only later (missing at its time).
    shadow.push(Operation::parse("m", "m + 1", false).unwrap());
    shadow.push(Operation::parse("m*k", "m * k", false).unwrap());
    shadow.push(Operation::parse("early", "`late` + 1", false).unwrap());
    shadow.push(Operation::parse("late", "1", false).unwrap());
    for (m, k, n) in [
        (29088, 41523, 5535),
        (2, 4096, 3),
        (0, 8, 16),
        (4097, 4095, 1),
    ] {
        let c = pad_mm_ctx(m, k, n, [k, 1, n, 1], [m % 3, 0, n % 5], "torch.bfloat16");
        for list in [&ops[..], &shadow[..]] {
            let compiled = CompiledOps::for_context(list, &c);
            assert!(compiled.matches(&c));
            let mut dynamic = c.clone();
            let want = apply_operations(list, &mut dynamic);
            let mut slots = Vec::new();
            let got = compiled.run(&c, &mut slots);
            match (want, got) {
                (Ok(()), Ok(())) => {
                    for f in dynamic.features() {
                        let slot = compiled.slot(&f.name).unwrap();
                        let (a, b) = (&slots[slot], dynamic.get(&f.name).unwrap());
                        assert_eq!(a.to_string(), b.to_string(), "{}", f.name);
                        assert_eq!(a.kind(), b.kind(), "{}", f.name);
                    }
                }
                (Err(e), Err((i, ee))) => {
                    assert_eq!(e.to_string(), format!("operation `{}`: {ee}", list[i].name))
                }
                (w, g) => panic!("dynamic {w:?} vs compiled {g:?}"),
            }
        }
    }
    let c = pad_mm_ctx(1, 2, 3, [2, 1, 3, 1], [0, 0, 0], "torch.float16");
    let mut other = Context::new();
    other.add("m", 1i64);
    assert!(!CompiledOps::for_context(&ops, &c).matches(&other));
    let compiled = CompiledOps::for_context(&shadow, &c);
    let mut slots = Vec::new();
    let err = compiled.run(&c, &mut slots).unwrap_err();
    assert_eq!(shadow[err.0].name, "early");
    assert_eq!(err.1, EvalError::UnknownFeature("late".into()));
}

/// Source nesting `n` levels of `open`/`close` around `inner`.
fn nest(open: &str, inner: &str, close: &str, n: usize) -> String {
    format!("{}{inner}{}", open.repeat(n), close.repeat(n))
}

#[test]
fn the_limits_hold_at_their_edge_for_every_shape() {
    // At the limit: accepted (the innermost operand is one level).
    let d = MAX_DEPTH - 1;
    for src in [
        nest("(", "m", ")", d),
        format!("m{}", " + m".repeat(d)),
        // `-(` is two levels: the operator and the parenthesis.
        nest("-(", "m", ")", d / 2),
        format!("{}m", "not ".repeat(d)),
        nest("abs(", "m", ")", d),
        nest("if(m, ", "m", ", 0)", d),
    ] {
        let e = parse_expr(&src).unwrap_or_else(|e| panic!("{}: {}", &src[..40], e.1));
        // Printing and evaluating the deepest expression need no special stack.
        let back = parse_expr(&e.to_string()).unwrap();
        assert_eq!(back, e);
        let _ = e.eval(&|_| Some(Value::Int(1)));
    }
    // One level more: refused with the column of the level beyond.
    for (src, what) in [
        (nest("(", "m", ")", MAX_DEPTH + 1), "nests deeper than 100"),
        (
            format!("m{}", " + m".repeat(MAX_DEPTH)),
            "nests deeper than 100",
        ),
        (
            format!("{}m", "not ".repeat(MAX_DEPTH)),
            "nests deeper than 100",
        ),
        (
            nest("if(m, ", "m", ", 0)", MAX_DEPTH),
            "nests deeper than 100",
        ),
    ] {
        let (column, message) = parse_expr(&src).unwrap_err();
        assert!(message.contains(what), "{message}");
        assert!(
            message.contains("split it into several operations"),
            "{message}"
        );
        assert!(column > 1 && column <= src.chars().count(), "{column}");
    }
}

#[test]
fn node_count_is_bounded_also_through_chained_comparisons() {
    // Wide but shallow: many arguments of `max`.
    let wide = format!("max({})", vec!["m"; MAX_NODES + 1].join(", "));
    let (_, message) = parse_expr(&wide).unwrap_err();
    assert!(message.contains("more than 2000 nodes"), "{message}");
    // A chained comparison copies its middle operand: nesting chains doubles the size with
    // each level; refused long before memory or time is spent.
    let mut src = "m".to_string();
    for _ in 0..40 {
        src = format!("1 < ({src}) < 2");
    }
    let (_, message) = parse_expr(&src).unwrap_err();
    assert!(message.contains("nodes"), "{message}");
    let ok = format!("max({})", vec!["m"; 1000].join(", "));
    assert!(parse_expr(&ok).is_ok());
}

#[test]
fn huge_inputs_give_short_errors_and_no_overflow_on_a_small_stack() {
    let cases = [
        nest("(", "m", ")", 100_000),
        format!("m{}", "+m".repeat(100_000)),
        "-".repeat(200_000) + "m",
        "not ".repeat(100_000) + "m",
        nest("if(m,", "1", ",0)", 50_000),
        format!("m + {}", "9".repeat(10_000)),
        format!("`{}", "x".repeat(100_000)),
        format!("foo{}(m)", "o".repeat(100_000)),
        format!("'{}' + ", "s".repeat(100_000)),
        format!("m {}", "#".repeat(10_000)),
    ];
    // A thread with a small stack (1 MiB, half a test thread's): the parser's recursion is
    // bounded long before. 256 KiB overflowed in a debug build without incremental compilation
    // (fewer codegen units, larger frames: the depth limit of 100 passes through about ten
    // precedence levels each).
    let handle = std::thread::Builder::new()
        .stack_size(1024 * 1024)
        .spawn(move || {
            for src in &cases {
                let (column, message) = parse_expr(src).unwrap_err();
                assert!(message.len() < 400, "{}", &message[..400]);
                assert!(column <= src.chars().count() + 1);
                let err = Operation::parse("o", src, false).unwrap_err().to_string();
                assert!(err.len() < 800, "{}", &err[..800]);
            }
        })
        .unwrap();
    handle.join().unwrap();
}

#[test]
fn every_operator_of_the_table_parses_and_prints_back() {
    for op in Operator::all() {
        let operands: Vec<&str> = ["m", "k", "n"][..op.arity()].to_vec();
        let src = op.apply(&operands);
        let e = parse_expr(&src).unwrap_or_else(|e| panic!("{src}: {}", e.1));
        assert_eq!(parse_expr(&e.to_string()).unwrap(), e, "{src}");
    }
}

/// The list of known features in an unknown-feature error quotes each name clipped: a
/// hand-edited model's feature name of thousands of characters does not flood the message
/// (found by `hostile_props::any_hand_edit_of_a_model_is_loaded_or_refused_at_its_line`).
#[test]
fn known_features_in_an_error_are_clipped() {
    let long = "(".repeat(5000);
    let op = Operation::parse("x", "m - k", false).unwrap();
    let (_, e) = super::operation::first_unknown_input(&[op], &[long]).unwrap();
    let message = e.to_string();
    assert!(message.len() < 600, "{} characters", message.len());
    assert!(message.contains("more characters"), "{message}");
}
