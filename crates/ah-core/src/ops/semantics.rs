//! Value-level semantics (Python's), public so that generated Rust code computes exactly the
//! same values: truthiness, unary and binary operators, comparisons and built-in calls, and
//! [`EvalError`], why one of them failed.

use std::cmp::Ordering;

use super::ast::{BinaryOp, BoolOp, CmpOp, Func, UnaryOp};
use super::scalar;
use crate::value::Value;

/// Why evaluating an expression failed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum EvalError {
    /// The context has no feature of that name.
    UnknownFeature(String),
    /// Division or modulo by zero (Python raises `ZeroDivisionError`).
    DivisionByZero,
    /// The integer result does not fit in 64 bits (Python would give a big integer).
    Overflow,
    /// An operation on values of kinds it does not accept (Python raises `TypeError` or
    /// `ValueError`).
    Type(String),
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EvalError::UnknownFeature(name) => write!(
                f,
                "unknown feature `{name}`: the context has no feature of that name"
            ),
            EvalError::DivisionByZero => f.write_str("division by zero"),
            EvalError::Overflow => {
                f.write_str("integer overflow (the result does not fit in 64 bits)")
            }
            EvalError::Type(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for EvalError {}

pub(super) type EvalResult<T> = std::result::Result<T, EvalError>;

/// Python truthiness: `False`, `0`, `0.0` and `""` are falsy, everything else truthy.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Int(i) => *i != 0,
        Value::Float(f) => *f != 0.0,
        Value::Str(s) => !s.is_empty(),
    }
}

/// Whether Python's `left and right` / `left or right` is `left` itself: `and` stops at a
/// falsy left operand, `or` at a truthy one (otherwise the result is `right`, evaluated only
/// then).
pub(super) fn bool_takes_left(op: BoolOp, left: &Value) -> bool {
    match op {
        BoolOp::And => !truthy(left),
        BoolOp::Or => truthy(left),
    }
}

enum Num {
    I(i64),
    F(f64),
}

fn num(v: &Value) -> Option<Num> {
    match v {
        Value::Bool(b) => Some(Num::I(i64::from(*b))),
        Value::Int(i) => Some(Num::I(*i)),
        Value::Float(f) => Some(Num::F(*f)),
        Value::Str(_) => None,
    }
}

fn as_float(n: &Num) -> f64 {
    match n {
        Num::I(i) => *i as f64,
        Num::F(f) => *f,
    }
}

fn type_error(what: &str, a: &Value, b: Option<&Value>) -> EvalError {
    match b {
        Some(b) => EvalError::Type(format!(
            "unsupported operand kinds for {what}: {} ({a}) and {} ({b})",
            a.kind(),
            b.kind()
        )),
        None => EvalError::Type(format!(
            "unsupported operand kind for {what}: {} ({a})",
            a.kind()
        )),
    }
}

/// Applies a unary operator with Python's semantics.
pub fn unary(op: UnaryOp, v: &Value) -> EvalResult<Value> {
    match op {
        UnaryOp::Not => Ok(Value::Bool(!truthy(v))),
        UnaryOp::Neg => match num(v) {
            Some(Num::I(i)) => i.checked_neg().map(Value::Int).ok_or(EvalError::Overflow),
            Some(Num::F(f)) => Ok(Value::Float(-f)),
            None => Err(type_error("unary -", v, None)),
        },
        UnaryOp::Pos => match num(v) {
            Some(Num::I(i)) => Ok(Value::Int(i)),
            Some(Num::F(f)) => Ok(Value::Float(f)),
            None => Err(type_error("unary +", v, None)),
        },
    }
}

/// Python's float floor division (`float_floor_div` in CPython).
fn py_float_floordiv(vx: f64, wx: f64) -> f64 {
    let m = vx % wx;
    let mut div = (vx - m) / wx;
    if m != 0.0 && ((wx < 0.0) != (m < 0.0)) {
        div -= 1.0;
    }
    if div != 0.0 {
        let mut floordiv = div.floor();
        if div - floordiv > 0.5 {
            floordiv += 1.0;
        }
        floordiv
    } else {
        0.0f64.copysign(vx / wx)
    }
}

/// Python's float modulo (`float_rem` in CPython).
fn py_float_mod(vx: f64, wx: f64) -> f64 {
    let mut m = vx % wx;
    if m != 0.0 {
        if (wx < 0.0) != (m < 0.0) {
            m += wx;
        }
    } else {
        m = 0.0f64.copysign(wx);
    }
    m
}

/// Applies an arithmetic operator with Python's semantics.
pub fn binary(op: BinaryOp, a: &Value, b: &Value) -> EvalResult<Value> {
    if let (BinaryOp::Add, Value::Str(x), Value::Str(y)) = (op, a, b) {
        return Ok(Value::Str(format!("{x}{y}")));
    }
    let (Some(x), Some(y)) = (num(a), num(b)) else {
        return Err(type_error(op.symbol(), a, Some(b)));
    };
    if op == BinaryOp::Div {
        let d = as_float(&y);
        if d == 0.0 {
            return Err(EvalError::DivisionByZero);
        }
        return Ok(Value::Float(as_float(&x) / d));
    }
    match (x, y) {
        (Num::I(x), Num::I(y)) => {
            let r = match op {
                BinaryOp::Add => x.checked_add(y),
                BinaryOp::Sub => x.checked_sub(y),
                BinaryOp::Mul => x.checked_mul(y),
                BinaryOp::FloorDiv | BinaryOp::Mod if y == 0 => {
                    return Err(EvalError::DivisionByZero);
                }
                BinaryOp::FloorDiv => scalar::ifloordiv(x, y),
                BinaryOp::Mod => scalar::imod(x, y),
                BinaryOp::Div => unreachable!("handled above"),
            };
            r.map(Value::Int).ok_or(EvalError::Overflow)
        }
        (x, y) => {
            let (x, y) = (as_float(&x), as_float(&y));
            Ok(Value::Float(match op {
                BinaryOp::Add => x + y,
                BinaryOp::Sub => x - y,
                BinaryOp::Mul => x * y,
                BinaryOp::FloorDiv => {
                    if y == 0.0 {
                        return Err(EvalError::DivisionByZero);
                    }
                    py_float_floordiv(x, y)
                }
                BinaryOp::Mod => {
                    if y == 0.0 {
                        return Err(EvalError::DivisionByZero);
                    }
                    py_float_mod(x, y)
                }
                BinaryOp::Div => unreachable!("handled above"),
            }))
        }
    }
}

fn cmp_num(a: &Num, b: &Num) -> Option<Ordering> {
    match (a, b) {
        (Num::I(x), Num::I(y)) => Some(x.cmp(y)),
        (Num::F(x), Num::F(y)) => x.partial_cmp(y),
        (Num::I(x), Num::F(y)) => scalar::cmp_if(*x, *y),
        (Num::F(x), Num::I(y)) => scalar::cmp_if(*y, *x).map(Ordering::reverse),
    }
}

/// Compares two values with Python's semantics. Numbers (including booleans) compare by value,
/// exactly; strings compare by code points; a string and a number are never equal and cannot be
/// ordered (an error). Comparisons with NaN are false (`!=` true).
pub fn compare(op: CmpOp, a: &Value, b: &Value) -> EvalResult<bool> {
    let ord = match (a, b) {
        (Value::Str(x), Value::Str(y)) => Some(x.as_str().cmp(y.as_str())),
        (Value::Str(_), _) | (_, Value::Str(_)) => {
            return match op {
                CmpOp::Eq => Ok(false),
                CmpOp::Ne => Ok(true),
                _ => Err(type_error(op.symbol(), a, Some(b))),
            }
        }
        _ => {
            let (Some(x), Some(y)) = (num(a), num(b)) else {
                unreachable!("non-strings are numbers");
            };
            cmp_num(&x, &y)
        }
    };
    Ok(match op {
        CmpOp::Eq => ord == Some(Ordering::Equal),
        CmpOp::Ne => ord != Some(Ordering::Equal),
        CmpOp::Lt => ord == Some(Ordering::Less),
        CmpOp::Le => matches!(ord, Some(Ordering::Less | Ordering::Equal)),
        CmpOp::Gt => ord == Some(Ordering::Greater),
        CmpOp::Ge => matches!(ord, Some(Ordering::Greater | Ordering::Equal)),
    })
}

/// Calls a built-in function with Python's semantics. The argument count must fit
/// [`Func::arity`] (the parser guarantees it).
pub fn call(func: Func, args: &[Value]) -> EvalResult<Value> {
    let (lo, hi) = func.arity();
    if args.len() < lo || hi.is_some_and(|h| args.len() > h) {
        return Err(EvalError::Type(format!(
            "{}() takes {} argument(s), {} given",
            func.name(),
            lo,
            args.len()
        )));
    }
    let x = &args[0];
    match func {
        Func::Abs => match num(x) {
            Some(Num::I(i)) => i.checked_abs().map(Value::Int).ok_or(EvalError::Overflow),
            Some(Num::F(f)) => Ok(Value::Float(f.abs())),
            None => Err(type_error("abs()", x, None)),
        },
        Func::Min | Func::Max => {
            let want = if func == Func::Min {
                CmpOp::Lt
            } else {
                CmpOp::Gt
            };
            let mut best = x;
            for v in &args[1..] {
                if compare(want, v, best)? {
                    best = v;
                }
            }
            Ok(best.clone())
        }
        Func::Str => Ok(Value::Str(x.to_string())),
        Func::Bool => Ok(Value::Bool(truthy(x))),
        Func::Int => match x {
            Value::Bool(b) => Ok(Value::Int(i64::from(*b))),
            Value::Int(i) => Ok(Value::Int(*i)),
            Value::Float(f) => {
                if !f.is_finite() {
                    Err(EvalError::Type(format!(
                        "cannot convert float {x} to integer"
                    )))
                } else if f.trunc() >= 9_223_372_036_854_775_808.0
                    || f.trunc() < -9_223_372_036_854_775_808.0
                {
                    Err(EvalError::Overflow)
                } else {
                    Ok(Value::Int(f.trunc() as i64))
                }
            }
            Value::Str(s) => s.trim().parse::<i64>().map(Value::Int).map_err(|_| {
                EvalError::Type(format!("invalid literal for int() with base 10: '{s}'"))
            }),
        },
        Func::Float => match x {
            Value::Str(s) => crate::value::parse_python_float(s)
                .map(Value::Float)
                .ok_or_else(|| {
                    EvalError::Type(format!("could not convert string to float: '{s}'"))
                }),
            other => Ok(Value::Float(other.as_f64().expect("numbers convert"))),
        },
    }
}
