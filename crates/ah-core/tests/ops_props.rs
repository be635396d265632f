//! Property tests of the augment-operation language (`ah_core::ops`):
//!
//! - printing a parsed expression and parsing the text again gives the same expression;
//! - operations compiled to slots ([`CompiledOps`]) compute what the interpreter
//!   ([`apply_operations`]) computes, value and kind, or fail on the same operation with the
//!   same error, on random contexts;
//! - integer `//` and `%`, and comparisons between integers, floats, booleans and strings,
//!   match reference implementations of Python's rules written here independently (floor
//!   towards negative infinity, the remainder takes the divisor's sign, exact int/float
//!   comparison, strings by code points).

use ah_core::ops::{
    binary, compare, parse_expr, BinaryOp, BoolOp, CmpOp, CompiledOps, EvalError, Expr, Func,
    UnaryOp,
};
use ah_core::{apply_operations, Context, Operation, Value};
use proptest::prelude::*;

const FEATURES: [&str; 6] = ["a", "b", "m*k", "if", "o0", "o1"];

fn literal() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-50i64..50).prop_map(Value::Int),
        prop::sample::select(vec![i64::MAX, i64::MIN + 1, 4096]).prop_map(Value::Int),
        prop::sample::select(vec![0.0, 0.5, 2.5, -1.25, 1e-7, 3e20, f64::INFINITY])
            .prop_map(Value::Float),
        any::<bool>().prop_map(Value::Bool),
        "[a-z'\"\\\\ ]{0,3}".prop_map(Value::Str),
    ]
}

/// A numeric literal `-x` would parse back to (so `Unary(Neg, it)` prints as a literal).
fn folds_under_neg(e: &Expr) -> bool {
    matches!(e, Expr::Literal(Value::Int(i)) if *i != 0)
        || matches!(e, Expr::Literal(Value::Float(f)) if !f.is_nan() && *f != 0.0)
}

fn bx(e: Expr) -> Box<Expr> {
    Box::new(e)
}

/// Expressions the parser can produce (it folds `-literal` into a literal).
fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        literal().prop_map(Expr::Literal),
        prop::sample::select(FEATURES.to_vec()).prop_map(|n| Expr::Feature(n.to_string())),
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        let unop = prop::sample::select(UnaryOp::ALL.to_vec());
        let binop = prop::sample::select(BinaryOp::ALL.to_vec());
        let cmpop = prop::sample::select(CmpOp::ALL.to_vec());
        let boolop = prop::sample::select(BoolOp::ALL.to_vec());
        let func = prop::sample::select(Func::ALL.to_vec());
        prop_oneof![
            (unop, inner.clone()).prop_map(|(op, e)| {
                let op = if op == UnaryOp::Neg && folds_under_neg(&e) {
                    UnaryOp::Pos
                } else {
                    op
                };
                Expr::Unary { op, operand: bx(e) }
            }),
            (binop, inner.clone(), inner.clone()).prop_map(|(op, l, r)| Expr::Binary {
                op,
                left: bx(l),
                right: bx(r),
            }),
            (cmpop, inner.clone(), inner.clone()).prop_map(|(op, l, r)| Expr::Compare {
                op,
                left: bx(l),
                right: bx(r),
            }),
            (boolop, inner.clone(), inner.clone()).prop_map(|(op, l, r)| Expr::Bool {
                op,
                left: bx(l),
                right: bx(r),
            }),
            (inner.clone(), inner.clone(), inner.clone()).prop_map(|(c, t, o)| Expr::If {
                cond: bx(c),
                then: bx(t),
                otherwise: bx(o),
            }),
            (func, prop::collection::vec(inner, 3)).prop_map(|(func, mut args)| {
                let n = if matches!(func, Func::Min | Func::Max) {
                    2 + args.len() % 2
                } else {
                    1
                };
                args.truncate(n);
                Expr::Call { func, args }
            }),
        ]
    })
}

/// A context over some of the feature names, with values of every kind.
fn context() -> impl Strategy<Value = Context> {
    let value = prop_oneof![
        (-1000i64..1000).prop_map(Value::Int),
        (-1e6f64..1e6).prop_map(Value::Float),
        prop::sample::select(vec![0.0, -0.0, f64::NAN, f64::NEG_INFINITY]).prop_map(Value::Float),
        any::<bool>().prop_map(Value::Bool),
        "[a-c]{0,2}".prop_map(Value::Str),
    ];
    prop::collection::vec((prop::sample::select(FEATURES[..4].to_vec()), value), 0..5).prop_map(
        |pairs| {
            let mut c = Context::new();
            for (n, v) in pairs {
                c.add(n.to_string(), v);
            }
            c
        },
    )
}

/// Python's `//` and `%` on integers, by the definition: `x == q * y + r` with `r` zero or of
/// `y`'s sign and `|r| < |y|`; `None` for a zero divisor, `Overflow` beyond `i64`.
fn reference_divmod(x: i64, y: i64) -> Option<(Result<i64, EvalError>, Result<i64, EvalError>)> {
    if y == 0 {
        return None;
    }
    let (x, y) = (i128::from(x), i128::from(y));
    let mut r = x.rem_euclid(y);
    if y < 0 && r != 0 {
        r += y;
    }
    let q = (x - r) / y;
    let fit = |v: i128| i64::try_from(v).map_err(|_| EvalError::Overflow);
    Some((fit(q), fit(r)))
}

/// Python's exact ordering of an integer and a float (via the float's floor); `None` for NaN.
fn reference_cmp_int_float(i: i64, f: f64) -> Option<std::cmp::Ordering> {
    use std::cmp::Ordering::*;
    if f.is_nan() {
        return None;
    }
    let fl = f.floor();
    if fl >= 2f64.powi(63) {
        return Some(Less);
    }
    if fl < -(2f64.powi(63)) {
        return Some(Greater);
    }
    let (i, fi) = (i128::from(i), fl as i128);
    Some(if i < fi {
        Less
    } else if i > fi {
        Greater
    } else if f > fl {
        Less
    } else {
        Equal
    })
}

fn expect(op: CmpOp, ord: Option<std::cmp::Ordering>) -> bool {
    use std::cmp::Ordering::*;
    match op {
        CmpOp::Eq => ord == Some(Equal),
        CmpOp::Ne => ord != Some(Equal),
        CmpOp::Lt => ord == Some(Less),
        CmpOp::Le => matches!(ord, Some(Less | Equal)),
        CmpOp::Gt => ord == Some(Greater),
        CmpOp::Ge => matches!(ord, Some(Greater | Equal)),
    }
}

/// Floats near an integer: itself, off by fractions, or the edges of `i64`.
fn float_near(i: i64) -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(i as f64),
        prop::sample::select(vec![-0.5, -1e-9, 0.25, 1.0, -3.0]).prop_map(move |d| i as f64 + d),
        prop::sample::select(vec![
            9_223_372_036_854_775_808.0,
            -9_223_372_036_854_775_808.0,
            9.2e18,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ]),
        any::<f64>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn print_then_parse_gives_the_same_expression(e in expr()) {
        let text = e.to_string();
        let back = parse_expr(&text);
        prop_assert_eq!(back.as_ref().map_err(|x| x.1.clone()), Ok(&e), "{}", text);
        prop_assert_eq!(back.unwrap().to_string(), text);
    }

    #[test]
    fn compiled_ops_equal_interpreted_ops(
        exprs in prop::collection::vec((expr(), any::<bool>()), 1..4),
        ctx in context(),
    ) {
        let ops: Vec<Operation> = exprs
            .iter()
            .enumerate()
            .map(|(i, (e, cat))| Operation::parse(&format!("o{}", i % 2), &e.to_string(), *cat))
            .collect::<Result<_, _>>()
            .unwrap();
        let mut dynamic = ctx.clone();
        let want = apply_operations(&ops, &mut dynamic);
        let compiled = CompiledOps::for_context(&ops, &ctx);
        prop_assert!(compiled.matches(&ctx));
        let mut slots = Vec::new();
        match (want, compiled.run(&ctx, &mut slots)) {
            (Ok(()), Ok(())) => {
                for f in dynamic.features() {
                    let slot = compiled.slot(&f.name).unwrap();
                    let (a, b) = (&slots[slot], dynamic.get(&f.name).unwrap());
                    prop_assert_eq!(a.to_string(), b.to_string(), "{}", f.name);
                    prop_assert_eq!(a.kind(), b.kind(), "{}", f.name);
                }
            }
            (Err(e), Err((i, ee))) => {
                prop_assert_eq!(e.to_string(), format!("operation `{}`: {ee}", ops[i].name));
            }
            (w, g) => prop_assert!(false, "interpreted {:?} vs compiled {:?}", w, g),
        }
    }

    #[test]
    fn integer_floor_division_and_modulo_follow_python(
        x in prop_oneof![any::<i64>(), -100i64..100, Just(i64::MIN)],
        y in prop_oneof![any::<i64>(), -10i64..10, Just(-1i64)],
    ) {
        let (a, b) = (Value::Int(x), Value::Int(y));
        let q = binary(BinaryOp::FloorDiv, &a, &b);
        let r = binary(BinaryOp::Mod, &a, &b);
        match reference_divmod(x, y) {
            None => {
                prop_assert_eq!(q, Err(EvalError::DivisionByZero));
                prop_assert_eq!(r, Err(EvalError::DivisionByZero));
            }
            Some((wq, wr)) => {
                // `i64::MIN // -1` is 2**63 in Python, which does not fit: `Overflow`.
                prop_assert_eq!(q, wq.map(Value::Int));
                // Every `x % -1` and `x % 1` is 0, `i64::MIN % -1` included.
                prop_assert_eq!(r, wr.map(Value::Int));
            }
        }
        // Booleans are integers; small integers as floats give the same values as floats.
        let t = Value::Bool(true);
        prop_assert_eq!(binary(BinaryOp::Mod, &a, &t), Ok(Value::Int(0)));
        if x.unsigned_abs() < 1 << 40 && y != 0 && y.unsigned_abs() < 1 << 40 {
            let (wq, wr) = reference_divmod(x, y).unwrap();
            let (fa, fb) = (Value::Float(x as f64), Value::Float(y as f64));
            let fq = binary(BinaryOp::FloorDiv, &fa, &fb).unwrap();
            let fr = binary(BinaryOp::Mod, &fa, &b).unwrap();
            prop_assert_eq!(fq.as_f64(), Some(wq.unwrap() as f64));
            prop_assert_eq!(fr.as_f64(), Some(wr.unwrap() as f64));
        }
    }

    #[test]
    fn float_modulo_takes_the_divisor_sign(x in -1e12f64..1e12, y in -1e6f64..1e6) {
        prop_assume!(y != 0.0);
        let r = binary(BinaryOp::Mod, &Value::Float(x), &Value::Float(y)).unwrap();
        let r = r.as_f64().unwrap();
        prop_assert!(r.abs() <= y.abs(), "{x} % {y} = {r}");
        prop_assert_eq!(r.is_sign_negative(), y.is_sign_negative(), "{} % {} = {}", x, y, r);
    }

    #[test]
    fn int_float_comparisons_are_exact(
        (i, f) in prop_oneof![any::<i64>(), -1000i64..1000, Just(i64::MAX), Just(i64::MIN)]
            .prop_flat_map(|i| (Just(i), float_near(i))),
    ) {
        let want = reference_cmp_int_float(i, f);
        for op in CmpOp::ALL {
            prop_assert_eq!(compare(op, &Value::Int(i), &Value::Float(f)), Ok(expect(op, want)));
            let rev = want.map(std::cmp::Ordering::reverse);
            prop_assert_eq!(compare(op, &Value::Float(f), &Value::Int(i)), Ok(expect(op, rev)));
        }
        let j = i.wrapping_add(1);
        for op in CmpOp::ALL {
            prop_assert_eq!(
                compare(op, &Value::Int(i), &Value::Int(j)),
                Ok(expect(op, Some(i.cmp(&j))))
            );
            let bi = i64::from(i > 0);
            prop_assert_eq!(
                compare(op, &Value::Bool(i > 0), &Value::Int(j)),
                Ok(expect(op, Some(bi.cmp(&j))))
            );
        }
    }

    #[test]
    fn strings_compare_by_code_points_and_never_equal_numbers(
        s in "[a-cé😀]{0,3}",
        t in "[a-cé😀]{0,3}",
        n in -5i64..5,
    ) {
        let want = s.chars().collect::<Vec<_>>().cmp(&t.chars().collect::<Vec<_>>());
        let (vs, vt, vn) = (Value::Str(s), Value::Str(t), Value::Int(n));
        for op in CmpOp::ALL {
            prop_assert_eq!(compare(op, &vs, &vt), Ok(expect(op, Some(want))));
            let mixed = compare(op, &vs, &vn);
            match op {
                CmpOp::Eq => prop_assert_eq!(mixed, Ok(false)),
                CmpOp::Ne => prop_assert_eq!(mixed, Ok(true)),
                _ => prop_assert!(matches!(mixed, Err(EvalError::Type(_)))),
            }
        }
    }
}
