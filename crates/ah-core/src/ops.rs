//! Augment operations: derived features computed from logged ones (PyTorch's `AHOperation`).
//!
//! An [`Operation`] is a name, an expression over feature names and a categorical flag. The
//! expression is written in a tiny language that is parsed once into a public AST ([`Expr`]) and
//! evaluated with Python's semantics, so that training (here), the in-memory model, generated
//! Rust code and generated Python code all compute the same value of the same kind. PyTorch's
//! built-in operations (`pad_mm`, `mm`, `mixed_mm`, spec section 4) are written in the same
//! language ([`builtin_operations`]); users add their own in a file ([`parse_operations_file`],
//! format in `docs/augment-ops.md`).
//!
//! # The language
//! - literals: integers (`1024`), floats (`0.0`, `1e-3`, `inf`, `nan`), `True`/`False`, strings
//!   in single or double quotes (`'torch.bfloat16'`);
//! - feature references: identifiers (`m`, `mat1_stride_0`), or any name in backticks
//!   (`` `m*k` ``, `` `1LEQmLEQ16` ``);
//! - operators, loosest first: `or`; `and`; `not`; comparisons `== != < <= > >=` (chainable as
//!   in Python: `1 <= m <= 16`); `+ -`; `* / // %`; unary `-` and `+`;
//! - functions: `if(cond, then, else)` (only the taken branch is evaluated), `abs(x)`,
//!   `min(a, b, ...)`, `max(a, b, ...)`, `str(x)`, `int(x)`, `float(x)`, `bool(x)`.
//!
//! # Semantics (Python's)
//! Booleans count as integers in arithmetic (`True + True == 2`); `int op int` stays an integer
//! for `+ - * // %`, `/` is always float division; `//` and `%` floor towards negative infinity;
//! `and`/`or` return one of their operands, as Python does; `==` between a string and a number is
//! `False`, ordering them is an error; `str(x)` prints as Python's `str()`.
//!
//! Where Python differs from what we can do in 64 bits, evaluation fails instead of giving a
//! different answer: **division or modulo by zero** is an error ([`EvalError::DivisionByZero`],
//! Python raises `ZeroDivisionError`) and an **integer overflow** beyond `i64` is an error
//! ([`EvalError::Overflow`], Python has big integers). At run time a failed operation makes the
//! heuristic unsure ([`crate::UnsureReason::MissingFeature`] naming the operation).

pub mod scalar;

use std::cmp::Ordering;
use std::fmt;
use std::path::Path;

use crate::context::Context;
use crate::error::{Error, Result};
use crate::model::OperationSpec;
use crate::value::{python_float_repr, Value};

/// Unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x`.
    Neg,
    /// `+x` (numbers only; booleans become integers, as in Python).
    Pos,
    /// `not x` (Python truthiness).
    Not,
}

/// Arithmetic operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `+` (also concatenates two strings).
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/`: always float division.
    Div,
    /// `//`: floor division.
    FloorDiv,
    /// `%`: modulo with the divisor's sign.
    Mod,
}

impl BinaryOp {
    /// The operator as written in the language and in Python.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::FloorDiv => "//",
            BinaryOp::Mod => "%",
        }
    }
}

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
}

impl CmpOp {
    /// The operator as written in the language and in Python.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

/// Short-circuit boolean operators (Python's `and`/`or`, returning an operand).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BoolOp {
    /// `and`: the left operand if it is falsy, else the right one.
    And,
    /// `or`: the left operand if it is truthy, else the right one.
    Or,
}

impl BoolOp {
    /// The keyword.
    pub fn symbol(self) -> &'static str {
        match self {
            BoolOp::And => "and",
            BoolOp::Or => "or",
        }
    }
}

/// Built-in functions (besides `if`, which is [`Expr::If`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Func {
    /// `abs(x)`.
    Abs,
    /// `min(a, b, ...)`: the first smallest argument.
    Min,
    /// `max(a, b, ...)`: the first largest argument.
    Max,
    /// `str(x)`: Python's `str()`.
    Str,
    /// `int(x)`: truncates floats, parses strings.
    Int,
    /// `float(x)`.
    Float,
    /// `bool(x)`: Python truthiness.
    Bool,
}

impl Func {
    /// The function's name in the language and in Python.
    pub fn name(self) -> &'static str {
        match self {
            Func::Abs => "abs",
            Func::Min => "min",
            Func::Max => "max",
            Func::Str => "str",
            Func::Int => "int",
            Func::Float => "float",
            Func::Bool => "bool",
        }
    }

    fn from_name(name: &str) -> Option<Func> {
        Some(match name {
            "abs" => Func::Abs,
            "min" => Func::Min,
            "max" => Func::Max,
            "str" => Func::Str,
            "int" => Func::Int,
            "float" => Func::Float,
            "bool" => Func::Bool,
            _ => return None,
        })
    }

    /// `(min, max)` number of arguments (`max` is `None` for variadic functions).
    pub fn arity(self) -> (usize, Option<usize>) {
        match self {
            Func::Min | Func::Max => (2, None),
            _ => (1, Some(1)),
        }
    }
}

/// The expression AST. Chained comparisons (`a <= b <= c`) are parsed into
/// `a <= b and b <= c` (operands are pure, so this is Python's meaning).
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A literal: `Int`, `Float`, `Bool` or `Str`.
    Literal(Value),
    /// The value of a feature (logged or computed by an earlier operation).
    Feature(String),
    /// A unary operation.
    Unary {
        /// The operator.
        op: UnaryOp,
        /// Its operand.
        operand: Box<Expr>,
    },
    /// An arithmetic operation.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// Left operand.
        left: Box<Expr>,
        /// Right operand.
        right: Box<Expr>,
    },
    /// A comparison, giving a `bool`.
    Compare {
        /// The operator.
        op: CmpOp,
        /// Left operand.
        left: Box<Expr>,
        /// Right operand.
        right: Box<Expr>,
    },
    /// `and` / `or`.
    Bool {
        /// The operator.
        op: BoolOp,
        /// Left operand (always evaluated).
        left: Box<Expr>,
        /// Right operand (evaluated only when needed).
        right: Box<Expr>,
    },
    /// `if(cond, then, otherwise)`: Python's `then if cond else otherwise`.
    If {
        /// The condition (Python truthiness).
        cond: Box<Expr>,
        /// Value when the condition is truthy.
        then: Box<Expr>,
        /// Value otherwise.
        otherwise: Box<Expr>,
    },
    /// A function call.
    Call {
        /// The function.
        func: Func,
        /// Its arguments.
        args: Vec<Expr>,
    },
}

/// Why evaluating an expression failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// The context has no feature of that name.
    #[error("unknown feature `{0}`: the context has no feature of that name")]
    UnknownFeature(String),
    /// Division or modulo by zero (Python raises `ZeroDivisionError`).
    #[error("division by zero")]
    DivisionByZero,
    /// The integer result does not fit in 64 bits (Python would give a big integer).
    #[error("integer overflow (the result does not fit in 64 bits)")]
    Overflow,
    /// An operation on values of kinds it does not accept (Python raises `TypeError` or
    /// `ValueError`).
    #[error("{0}")]
    Type(String),
}

type EvalResult<T> = std::result::Result<T, EvalError>;

// ---------------------------------------------------------------------------------------------
// Value-level semantics, public so that generated Rust code computes exactly the same values.

/// Python truthiness: `False`, `0`, `0.0` and `""` are falsy, everything else truthy.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Int(i) => *i != 0,
        Value::Float(f) => *f != 0.0,
        Value::Str(s) => !s.is_empty(),
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

// ---------------------------------------------------------------------------------------------
// Evaluation.

impl Expr {
    /// Evaluates the expression; `lookup` gives feature values by name.
    pub fn eval(&self, lookup: &dyn Fn(&str) -> Option<Value>) -> EvalResult<Value> {
        match self {
            Expr::Literal(v) => Ok(v.clone()),
            Expr::Feature(name) => {
                lookup(name).ok_or_else(|| EvalError::UnknownFeature(name.clone()))
            }
            Expr::Unary { op, operand } => unary(*op, &operand.eval(lookup)?),
            Expr::Binary { op, left, right } => {
                binary(*op, &left.eval(lookup)?, &right.eval(lookup)?)
            }
            Expr::Compare { op, left, right } => {
                compare(*op, &left.eval(lookup)?, &right.eval(lookup)?).map(Value::Bool)
            }
            Expr::Bool { op, left, right } => {
                let l = left.eval(lookup)?;
                let take_left = match op {
                    BoolOp::And => !truthy(&l),
                    BoolOp::Or => truthy(&l),
                };
                if take_left {
                    Ok(l)
                } else {
                    right.eval(lookup)
                }
            }
            Expr::If {
                cond,
                then,
                otherwise,
            } => {
                if truthy(&cond.eval(lookup)?) {
                    then.eval(lookup)
                } else {
                    otherwise.eval(lookup)
                }
            }
            Expr::Call { func, args } => {
                let vals = args
                    .iter()
                    .map(|a| a.eval(lookup))
                    .collect::<EvalResult<Vec<_>>>()?;
                call(*func, &vals)
            }
        }
    }

    /// Referenced feature names, in order of first use, without duplicates.
    pub fn inputs(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.visit_features(&mut |n| {
            if !out.contains(&n) {
                out.push(n);
            }
        });
        out
    }

    fn visit_features<'a>(&'a self, f: &mut dyn FnMut(&'a str)) {
        match self {
            Expr::Literal(_) => {}
            Expr::Feature(n) => f(n),
            Expr::Unary { operand, .. } => operand.visit_features(f),
            Expr::Binary { left, right, .. }
            | Expr::Compare { left, right, .. }
            | Expr::Bool { left, right, .. } => {
                left.visit_features(f);
                right.visit_features(f);
            }
            Expr::If {
                cond,
                then,
                otherwise,
            } => {
                cond.visit_features(f);
                then.visit_features(f);
                otherwise.visit_features(f);
            }
            Expr::Call { args, .. } => args.iter().for_each(|a| a.visit_features(f)),
        }
    }

    /// Python source for the expression; `feature` renders a feature reference (for example
    /// `|n| format!("context.get_value({n:?})")`). Division by zero raises `ZeroDivisionError`
    /// there, as evaluation here fails.
    pub fn to_python(&self, feature: &dyn Fn(&str) -> String) -> String {
        let mut s = String::new();
        self.write(&mut s, Style::Python(feature), 0);
        s
    }

    fn prec(&self) -> u8 {
        match self {
            Expr::Bool { op: BoolOp::Or, .. } => 1,
            Expr::Bool {
                op: BoolOp::And, ..
            } => 2,
            Expr::Unary {
                op: UnaryOp::Not, ..
            } => 3,
            Expr::Compare { .. } => 4,
            Expr::Binary {
                op: BinaryOp::Add | BinaryOp::Sub,
                ..
            } => 5,
            Expr::Binary { .. } => 6,
            Expr::Unary { .. } => 7,
            Expr::Literal(Value::Int(i)) if *i < 0 => 7,
            Expr::Literal(Value::Float(f)) if f.is_sign_negative() => 7,
            // `(a if c else b)` is parenthesized by the printer itself.
            _ => 9,
        }
    }

    fn write(&self, out: &mut String, style: Style<'_>, min_prec: u8) {
        let p = self.prec();
        let paren = p < min_prec;
        if paren {
            out.push('(');
        }
        match self {
            Expr::Literal(v) => write_literal(out, v, style),
            Expr::Feature(n) => match style {
                Style::Source => write_name(out, n),
                Style::Python(f) => out.push_str(&f(n)),
            },
            Expr::Unary { op, operand } => {
                out.push_str(match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Pos => "+",
                    UnaryOp::Not => "not ",
                });
                operand.write(out, style, p);
            }
            Expr::Binary { op, left, right } => {
                left.write(out, style, p);
                out.push(' ');
                out.push_str(op.symbol());
                out.push(' ');
                right.write(out, style, p + 1);
            }
            Expr::Compare { op, left, right } => {
                // Comparisons chain in Python: parenthesize comparison operands.
                left.write(out, style, p + 1);
                out.push(' ');
                out.push_str(op.symbol());
                out.push(' ');
                right.write(out, style, p + 1);
            }
            Expr::Bool { op, left, right } => {
                left.write(out, style, p);
                out.push(' ');
                out.push_str(op.symbol());
                out.push(' ');
                right.write(out, style, p + 1);
            }
            Expr::If {
                cond,
                then,
                otherwise,
            } => match style {
                Style::Source => {
                    out.push_str("if(");
                    cond.write(out, style, 0);
                    out.push_str(", ");
                    then.write(out, style, 0);
                    out.push_str(", ");
                    otherwise.write(out, style, 0);
                    out.push(')');
                }
                Style::Python(_) => {
                    out.push('(');
                    then.write(out, style, 1);
                    out.push_str(" if ");
                    cond.write(out, style, 1);
                    out.push_str(" else ");
                    otherwise.write(out, style, 1);
                    out.push(')');
                }
            },
            Expr::Call { func, args } => {
                out.push_str(func.name());
                out.push('(');
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    a.write(out, style, 0);
                }
                out.push(')');
            }
        }
        if paren {
            out.push(')');
        }
    }
}

#[derive(Clone, Copy)]
enum Style<'a> {
    Source,
    Python(&'a dyn Fn(&str) -> String),
}

fn write_literal(out: &mut String, v: &Value, style: Style<'_>) {
    match v {
        Value::Float(f) if !f.is_finite() => match style {
            Style::Source => out.push_str(&python_float_repr(*f)),
            Style::Python(_) => {
                out.push_str(&format!("float('{}')", python_float_repr(*f)));
            }
        },
        // Python: every character that could break the generated artifact is escaped.
        Value::Str(s) if matches!(style, Style::Python(_)) => {
            out.push_str(&crate::value::python_str_literal(s));
        }
        Value::Str(s) => {
            out.push('\'');
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\'' => out.push_str("\\'"),
                    '\n' => out.push_str("\\n"),
                    '\t' => out.push_str("\\t"),
                    c => out.push(c),
                }
            }
            out.push('\'');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn is_plain_ident(n: &str) -> bool {
    let mut chars = n.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !matches!(
            n,
            "and" | "or" | "not" | "True" | "False" | "inf" | "nan" | "if"
        )
}

fn write_name(out: &mut String, n: &str) {
    if is_plain_ident(n) {
        out.push_str(n);
    } else {
        out.push('`');
        out.push_str(n);
        out.push('`');
    }
}

/// Canonical source: minimal parentheses, single spaces around binary operators, names that are
/// not identifiers in backticks. Parsing it gives the same AST.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.write(&mut s, Style::Source, 0);
        f.write_str(&s)
    }
}

// ---------------------------------------------------------------------------------------------
// Lexer and parser.

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i64),
    Float(f64),
    Str(String),
    Ident(String),
    Quoted(String),
    Op(&'static str),
    LParen,
    RParen,
    Comma,
    End,
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Int(i) => format!("number `{i}`"),
            Tok::Float(f) => format!("number `{}`", python_float_repr(*f)),
            Tok::Str(s) => format!("string '{s}'"),
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Quoted(s) => format!("feature `{s}`"),
            Tok::Op(o) => format!("`{o}`"),
            Tok::LParen => "`(`".into(),
            Tok::RParen => "`)`".into(),
            Tok::Comma => "`,`".into(),
            Tok::End => "the end of the expression".into(),
        }
    }
}

/// A parse error: 1-based column (in characters) and message.
struct ParseError {
    column: usize,
    message: String,
}

fn lex(src: &str) -> std::result::Result<Vec<(Tok, usize)>, ParseError> {
    let chars: Vec<char> = src.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    let err = |column: usize, message: String| ParseError {
        column: column + 1,
        message,
    };
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '.' || chars[i] == '_')
                || (i > start
                    && matches!(chars[i - 1], 'e' | 'E')
                    && i < chars.len()
                    && matches!(chars[i], '+' | '-'))
            {
                i += 1;
            }
            let text: String = chars[start..i].iter().filter(|c| **c != '_').collect();
            let is_float = text.contains(['.', 'e', 'E']);
            let tok = if is_float {
                text.parse::<f64>().ok().map(Tok::Float)
            } else {
                text.parse::<i64>().ok().map(Tok::Int)
            };
            match tok {
                Some(t) => toks.push((t, start)),
                None if !is_float && text.chars().all(|c| c.is_ascii_digit()) => {
                    return Err(err(start, format!("integer `{text}` does not fit in 64 bits")))
                }
                None => {
                    return Err(err(
                        start,
                        format!("invalid number `{text}` (a feature name that starts with a digit must be written in backticks: `{text}`)"),
                    ))
                }
            }
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            let tok = match text.as_str() {
                "and" => Tok::Op("and"),
                "or" => Tok::Op("or"),
                "not" => Tok::Op("not"),
                "inf" => Tok::Float(f64::INFINITY),
                "nan" => Tok::Float(f64::NAN),
                _ => Tok::Ident(text),
            };
            toks.push((tok, start));
            continue;
        }
        if c == '`' {
            i += 1;
            while i < chars.len() && chars[i] != '`' {
                i += 1;
            }
            if i == chars.len() {
                return Err(err(
                    start,
                    "unterminated feature name: expected a closing backtick".into(),
                ));
            }
            let name: String = chars[start + 1..i].iter().collect();
            if name.is_empty() {
                return Err(err(start, "empty feature name in backticks".into()));
            }
            i += 1;
            toks.push((Tok::Quoted(name), start));
            continue;
        }
        if c == '\'' || c == '"' {
            i += 1;
            let mut s = String::new();
            loop {
                match chars.get(i) {
                    None => {
                        return Err(err(
                            start,
                            format!("unterminated string: expected a closing {c}"),
                        ))
                    }
                    Some(&q) if q == c => break,
                    Some('\\') => {
                        let e = chars.get(i + 1).copied();
                        s.push(match e {
                            Some('n') => '\n',
                            Some('t') => '\t',
                            Some(other @ ('\\' | '\'' | '"')) => other,
                            _ => {
                                return Err(err(
                                    i,
                                    "unknown escape: use \\\\, \\', \\\", \\n or \\t".into(),
                                ))
                            }
                        });
                        i += 2;
                    }
                    Some(&other) => {
                        s.push(other);
                        i += 1;
                    }
                }
            }
            i += 1;
            toks.push((Tok::Str(s), start));
            continue;
        }
        let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
        let op2 = match two.as_str() {
            "//" => Some("//"),
            "==" => Some("=="),
            "!=" => Some("!="),
            "<=" => Some("<="),
            ">=" => Some(">="),
            _ => None,
        };
        if let Some(op) = op2 {
            toks.push((Tok::Op(op), start));
            i += 2;
            continue;
        }
        let tok = match c {
            '+' => Tok::Op("+"),
            '-' => Tok::Op("-"),
            '*' => Tok::Op("*"),
            '/' => Tok::Op("/"),
            '%' => Tok::Op("%"),
            '<' => Tok::Op("<"),
            '>' => Tok::Op(">"),
            '(' => Tok::LParen,
            ')' => Tok::RParen,
            ',' => Tok::Comma,
            '=' => return Err(err(start, "unexpected `=`: use `==` to compare".into())),
            '&' | '|' | '!' => {
                return Err(err(
                    start,
                    format!("unexpected `{c}`: use `and`, `or`, `not`"),
                ))
            }
            _ => return Err(err(start, format!("unexpected character `{c}`"))),
        };
        toks.push((tok, start));
        i += 1;
    }
    toks.push((Tok::End, chars.len()));
    Ok(toks)
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }

    fn next(&mut self) -> (Tok, usize) {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn error(&self, expected: &str) -> ParseError {
        let (tok, col) = &self.toks[self.pos];
        ParseError {
            column: col + 1,
            message: format!("expected {expected}, found {}", tok.describe()),
        }
    }

    fn eat_op(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Tok::Op(o) if *o == op) {
            self.next();
            true
        } else {
            false
        }
    }

    fn expr(&mut self) -> std::result::Result<Expr, ParseError> {
        let mut left = self.and_expr()?;
        while self.eat_op("or") {
            let right = self.and_expr()?;
            left = Expr::Bool {
                op: BoolOp::Or,
                left: Box::new(left),
                right: Box::new(right),
            };
        }
        Ok(left)
    }

    fn and_expr(&mut self) -> std::result::Result<Expr, ParseError> {
        let mut left = self.not_expr()?;
        while self.eat_op("and") {
            let right = self.not_expr()?;
            left = Expr::Bool {
                op: BoolOp::And,
                left: Box::new(left),
                right: Box::new(right),
            };
        }
        Ok(left)
    }

    fn not_expr(&mut self) -> std::result::Result<Expr, ParseError> {
        if self.eat_op("not") {
            let operand = self.not_expr()?;
            return Ok(Expr::Unary {
                op: UnaryOp::Not,
                operand: Box::new(operand),
            });
        }
        self.comparison()
    }

    fn cmp_op(&self) -> Option<CmpOp> {
        match self.peek() {
            Tok::Op("==") => Some(CmpOp::Eq),
            Tok::Op("!=") => Some(CmpOp::Ne),
            Tok::Op("<") => Some(CmpOp::Lt),
            Tok::Op("<=") => Some(CmpOp::Le),
            Tok::Op(">") => Some(CmpOp::Gt),
            Tok::Op(">=") => Some(CmpOp::Ge),
            _ => None,
        }
    }

    fn comparison(&mut self) -> std::result::Result<Expr, ParseError> {
        let first = self.additive()?;
        let mut result: Option<Expr> = None;
        let mut left = first.clone();
        let mut last = first;
        while let Some(op) = self.cmp_op() {
            self.next();
            let right = self.additive()?;
            let cmp = Expr::Compare {
                op,
                left: Box::new(left),
                right: Box::new(right.clone()),
            };
            result = Some(match result {
                None => cmp,
                Some(prev) => Expr::Bool {
                    op: BoolOp::And,
                    left: Box::new(prev),
                    right: Box::new(cmp),
                },
            });
            left = right.clone();
            last = right;
        }
        Ok(result.unwrap_or(last))
    }

    fn additive(&mut self) -> std::result::Result<Expr, ParseError> {
        let mut left = self.term()?;
        loop {
            let op = match self.peek() {
                Tok::Op("+") => BinaryOp::Add,
                Tok::Op("-") => BinaryOp::Sub,
                _ => return Ok(left),
            };
            self.next();
            let right = self.term()?;
            left = Expr::Binary {
                op,
                left: Box::new(left),
                right: Box::new(right),
            };
        }
    }

    fn term(&mut self) -> std::result::Result<Expr, ParseError> {
        let mut left = self.unary()?;
        loop {
            let op = match self.peek() {
                Tok::Op("*") => BinaryOp::Mul,
                Tok::Op("/") => BinaryOp::Div,
                Tok::Op("//") => BinaryOp::FloorDiv,
                Tok::Op("%") => BinaryOp::Mod,
                _ => return Ok(left),
            };
            self.next();
            let right = self.unary()?;
            left = Expr::Binary {
                op,
                left: Box::new(left),
                right: Box::new(right),
            };
        }
    }

    fn unary(&mut self) -> std::result::Result<Expr, ParseError> {
        if self.eat_op("-") {
            let operand = self.unary()?;
            return Ok(match operand {
                Expr::Literal(Value::Int(i)) if i != 0 => Expr::Literal(Value::Int(-i)),
                Expr::Literal(Value::Float(f)) if !f.is_nan() && f != 0.0 => {
                    Expr::Literal(Value::Float(-f))
                }
                other => Expr::Unary {
                    op: UnaryOp::Neg,
                    operand: Box::new(other),
                },
            });
        }
        if self.eat_op("+") {
            let operand = self.unary()?;
            return Ok(Expr::Unary {
                op: UnaryOp::Pos,
                operand: Box::new(operand),
            });
        }
        self.primary()
    }

    fn primary(&mut self) -> std::result::Result<Expr, ParseError> {
        let (tok, col) = self.next();
        match tok {
            Tok::Int(i) => Ok(Expr::Literal(Value::Int(i))),
            Tok::Float(f) => Ok(Expr::Literal(Value::Float(f))),
            Tok::Str(s) => Ok(Expr::Literal(Value::Str(s))),
            Tok::Quoted(n) => Ok(Expr::Feature(n)),
            Tok::LParen => {
                let e = self.expr()?;
                if !matches!(self.peek(), Tok::RParen) {
                    return Err(self.error("`)` or an operator"));
                }
                self.next();
                Ok(e)
            }
            Tok::Ident(name) => {
                match name.as_str() {
                    "True" => return Ok(Expr::Literal(Value::Bool(true))),
                    "False" => return Ok(Expr::Literal(Value::Bool(false))),
                    _ => {}
                }
                if !matches!(self.peek(), Tok::LParen) {
                    return Ok(Expr::Feature(name));
                }
                let is_if = name == "if";
                let func = Func::from_name(&name);
                if !is_if && func.is_none() {
                    return Err(ParseError {
                        column: col + 1,
                        message: format!(
                            "unknown function `{name}`: known are if, abs, min, max, str, int, float, bool"
                        ),
                    });
                }
                self.next();
                let mut args = Vec::new();
                if !matches!(self.peek(), Tok::RParen) {
                    loop {
                        args.push(self.expr()?);
                        if matches!(self.peek(), Tok::Comma) {
                            self.next();
                            continue;
                        }
                        if matches!(self.peek(), Tok::RParen) {
                            break;
                        }
                        return Err(self.error("`,` or `)`"));
                    }
                }
                self.next();
                let arity_err = |want: String| ParseError {
                    column: col + 1,
                    message: format!("{name}() takes {want} arguments, {} given", args.len()),
                };
                if is_if {
                    if args.len() != 3 {
                        return Err(arity_err("3 (condition, then, else)".into()));
                    }
                    let mut it = args.into_iter();
                    let (c, t, o) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
                    return Ok(Expr::If {
                        cond: Box::new(c),
                        then: Box::new(t),
                        otherwise: Box::new(o),
                    });
                }
                let func = func.expect("checked above");
                let (lo, hi) = func.arity();
                if args.len() < lo || hi.is_some_and(|h| args.len() > h) {
                    return Err(arity_err(match hi {
                        Some(h) if h == lo => format!("{lo}"),
                        _ => format!("at least {lo}"),
                    }));
                }
                Ok(Expr::Call { func, args })
            }
            other => {
                self.pos -= usize::from(!matches!(other, Tok::End));
                Err(ParseError {
                    column: col + 1,
                    message: format!(
                        "expected a number, a string, a feature name, a function call or `(`, found {}",
                        other.describe()
                    ),
                })
            }
        }
    }
}

/// Parses an expression; errors carry the 1-based column and what was expected.
pub fn parse_expr(source: &str) -> std::result::Result<Expr, (usize, String)> {
    let toks = lex(source).map_err(|e| (e.column, e.message))?;
    let mut p = Parser { toks, pos: 0 };
    let e = p.expr().map_err(|e| (e.column, e.message))?;
    if !matches!(p.peek(), Tok::End) {
        let e = p.error("an operator or the end of the expression");
        return Err((e.column, e.message));
    }
    Ok(e)
}

// ---------------------------------------------------------------------------------------------
// Operations.

/// One augment operation: `name = expr`, numerical or categorical.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    /// The feature the operation defines (`m*k`, `arith_intensity`, ...).
    pub name: String,
    /// The expression source as given.
    pub source: String,
    /// Categorical results are one-hot encoded (compared as strings).
    pub is_categorical: bool,
    /// The parsed expression.
    pub expr: Expr,
}

impl Operation {
    /// Parses an operation. Errors name the operation, the column and what was expected.
    pub fn parse(name: &str, source: &str, is_categorical: bool) -> Result<Operation> {
        if name.is_empty() || name.contains([',', '\n', '\r', '`']) || name.trim() != name {
            return Err(Error::Other(format!(
                "invalid operation name {name:?}: a name must be non-empty, without commas, backticks, line breaks or surrounding spaces (it becomes a CSV column)"
            )));
        }
        let expr = parse_expr(source).map_err(|(column, message)| Error::Expression {
            name: name.to_string(),
            source_text: source.to_string(),
            column,
            message,
        })?;
        Ok(Operation {
            name: name.to_string(),
            source: source.to_string(),
            is_categorical,
            expr,
        })
    }

    /// Parses an operation recorded in a model.
    pub fn from_spec(spec: &OperationSpec) -> Result<Operation> {
        Self::parse(&spec.name, &spec.expr, spec.categorical)
    }

    /// The operation as recorded in a model.
    pub fn spec(&self) -> OperationSpec {
        OperationSpec {
            name: self.name.clone(),
            expr: self.source.clone(),
            categorical: self.is_categorical,
        }
    }

    /// Referenced feature names, in order of first use, without duplicates.
    pub fn inputs(&self) -> Vec<&str> {
        self.expr.inputs()
    }

    /// Evaluates the operation; an unknown feature name is an error naming it.
    pub fn eval(&self, lookup: &dyn Fn(&str) -> Option<Value>) -> Result<Value> {
        self.expr.eval(lookup).map_err(|source| Error::Operation {
            name: self.name.clone(),
            source,
        })
    }

    /// Evaluates the operation on a context.
    pub fn eval_context(&self, ctx: &Context) -> Result<Value> {
        self.eval(&|n| ctx.get(n).cloned())
    }
}

/// Applies operations to a context in order (each result is set on the context, so later
/// operations see earlier ones), as PyTorch's `AHContext.apply_operations` does.
///
/// Unlike PyTorch (which only updates `context_dict`), the results become features of `ctx`,
/// so apply them to a copy when the context is logged afterwards.
pub fn apply_operations(ops: &[Operation], ctx: &mut Context) -> Result<()> {
    for op in ops {
        let v = op.eval_context(ctx)?;
        ctx.set(op.name.clone(), v, op.is_categorical);
    }
    Ok(())
}

/// Checks that every operation reads only `available` features or results of earlier
/// operations. The error names the operation and the unknown feature.
pub fn check_operations(ops: &[Operation], available: &[String]) -> Result<()> {
    let mut known: Vec<&str> = available.iter().map(String::as_str).collect();
    for op in ops {
        for input in op.inputs() {
            if !known.contains(&input) {
                let later = ops.iter().any(|o| o.name == input);
                let hint = if later {
                    " (it is defined by a later operation: move that one up)".to_string()
                } else {
                    format!("; known features: {}", known.join(", "))
                };
                return Err(Error::Other(format!(
                    "operation `{}` reads unknown feature `{input}`{hint}",
                    op.name
                )));
            }
        }
        known.push(&op.name);
    }
    Ok(())
}

/// An expression with feature names resolved to slots (see [`CompiledOps`]).
#[derive(Debug, Clone, PartialEq)]
enum SlotExpr {
    Literal(Value),
    Slot(usize),
    Missing(String),
    Unary(UnaryOp, Box<SlotExpr>),
    Binary(BinaryOp, Box<SlotExpr>, Box<SlotExpr>),
    Compare(CmpOp, Box<SlotExpr>, Box<SlotExpr>),
    Bool(BoolOp, Box<SlotExpr>, Box<SlotExpr>),
    If(Box<SlotExpr>, Box<SlotExpr>, Box<SlotExpr>),
    Call(Func, Vec<SlotExpr>),
}

impl SlotExpr {
    fn compile(e: &Expr, names: &[(String, usize)]) -> SlotExpr {
        let c = |e: &Expr| Box::new(SlotExpr::compile(e, names));
        match e {
            Expr::Literal(v) => SlotExpr::Literal(v.clone()),
            Expr::Feature(n) => match names.iter().rev().find(|(m, _)| m == n) {
                Some((_, slot)) => SlotExpr::Slot(*slot),
                None => SlotExpr::Missing(n.clone()),
            },
            Expr::Unary { op, operand } => SlotExpr::Unary(*op, c(operand)),
            Expr::Binary { op, left, right } => SlotExpr::Binary(*op, c(left), c(right)),
            Expr::Compare { op, left, right } => SlotExpr::Compare(*op, c(left), c(right)),
            Expr::Bool { op, left, right } => SlotExpr::Bool(*op, c(left), c(right)),
            Expr::If {
                cond,
                then,
                otherwise,
            } => SlotExpr::If(c(cond), c(then), c(otherwise)),
            Expr::Call { func, args } => SlotExpr::Call(
                *func,
                args.iter().map(|a| SlotExpr::compile(a, names)).collect(),
            ),
        }
    }

    fn eval(&self, slots: &[Value]) -> EvalResult<Value> {
        match self {
            SlotExpr::Literal(v) => Ok(v.clone()),
            SlotExpr::Slot(i) => Ok(slots[*i].clone()),
            SlotExpr::Missing(n) => Err(EvalError::UnknownFeature(n.clone())),
            SlotExpr::Unary(op, a) => unary(*op, &a.eval(slots)?),
            SlotExpr::Binary(op, a, b) => binary(*op, &a.eval(slots)?, &b.eval(slots)?),
            SlotExpr::Compare(op, a, b) => {
                compare(*op, &a.eval(slots)?, &b.eval(slots)?).map(Value::Bool)
            }
            SlotExpr::Bool(op, a, b) => {
                let l = a.eval(slots)?;
                let take_left = match op {
                    BoolOp::And => !truthy(&l),
                    BoolOp::Or => truthy(&l),
                };
                if take_left {
                    Ok(l)
                } else {
                    b.eval(slots)
                }
            }
            SlotExpr::If(c, t, o) => {
                if truthy(&c.eval(slots)?) {
                    t.eval(slots)
                } else {
                    o.eval(slots)
                }
            }
            SlotExpr::Call(func, args) => {
                let vals = args
                    .iter()
                    .map(|a| a.eval(slots))
                    .collect::<EvalResult<Vec<_>>>()?;
                call(*func, &vals)
            }
        }
    }
}

/// Operations compiled for one context *layout* (the ordered feature names of the contexts they
/// will run on): every feature reference is resolved to a slot once, so running them does no
/// name lookups. Values are those of [`apply_operations`] on the same context, bit for bit:
/// a name resolves to the last feature of that name or the latest operation defining it, as
/// [`Context::get`] after [`Context::set`] does.
#[derive(Debug, Clone)]
pub struct CompiledOps {
    layout: Vec<String>,
    slots: usize,
    ops: Vec<(usize, SlotExpr)>,
    names: Vec<(String, usize)>,
}

impl CompiledOps {
    /// Compiles `ops` for contexts whose feature names are `layout`, in order.
    pub fn compile(ops: &[Operation], layout: &[&str]) -> Self {
        let mut names: Vec<(String, usize)> = layout
            .iter()
            .enumerate()
            .map(|(i, n)| (n.to_string(), i))
            .collect();
        let mut slots = layout.len();
        let mut compiled = Vec::with_capacity(ops.len());
        for op in ops {
            let expr = SlotExpr::compile(&op.expr, &names);
            let target = match names.iter().rev().find(|(m, _)| *m == op.name) {
                Some((_, slot)) => *slot,
                None => {
                    names.push((op.name.clone(), slots));
                    slots += 1;
                    slots - 1
                }
            };
            compiled.push((target, expr));
        }
        Self {
            layout: layout.iter().map(|s| s.to_string()).collect(),
            slots,
            ops: compiled,
            names,
        }
    }

    /// Compiles `ops` for the layout of `ctx`.
    pub fn for_context(ops: &[Operation], ctx: &Context) -> Self {
        let layout: Vec<&str> = ctx.features().iter().map(|f| f.name.as_ref()).collect();
        Self::compile(ops, &layout)
    }

    /// True when `ctx` has exactly the layout this was compiled for.
    pub fn matches(&self, ctx: &Context) -> bool {
        let f = ctx.features();
        f.len() == self.layout.len()
            && f.iter()
                .zip(&self.layout)
                .all(|(a, b)| a.name == b.as_str())
    }

    /// The slot holding a feature or operation result after [`run`](Self::run) (the last
    /// definition of the name), `None` for names neither in the layout nor defined.
    pub fn slot(&self, name: &str) -> Option<usize> {
        self.names
            .iter()
            .rev()
            .find(|(m, _)| m == name)
            .map(|(_, s)| *s)
    }

    /// Number of slots (layout features plus new operation results).
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Runs the operations on a context of the compiled layout (check with
    /// [`matches`](Self::matches)): `slots` receives the feature values, then each result.
    /// On failure, the index of the failing operation and why.
    pub fn run(
        &self,
        ctx: &Context,
        slots: &mut Vec<Value>,
    ) -> std::result::Result<(), (usize, EvalError)> {
        debug_assert!(
            self.matches(ctx),
            "CompiledOps::run on a context of another layout"
        );
        slots.clear();
        slots.extend(ctx.features().iter().map(|f| f.value.clone()));
        slots.resize(self.slots, Value::Bool(false));
        for (i, (target, expr)) in self.ops.iter().enumerate() {
            slots[*target] = expr.eval(slots).map_err(|e| (i, e))?;
        }
        Ok(())
    }
}

fn op(name: &str, source: &str, is_categorical: bool) -> Operation {
    Operation::parse(name, source, is_categorical).expect("built-in operations parse")
}

fn mm_ops() -> Vec<Operation> {
    vec![
        op("m*k", "m * k", false),
        op("m*n", "m * n", false),
        op("k*n", "k * n", false),
        op(
            "arith_intensity",
            "if(m == 0 or k == 0 or n == 0, 0.0, m * k * n / (m * k + k * n + m * n))",
            false,
        ),
    ]
}

/// PyTorch's built-in operations for an optimization name (spec section 4), verbatim names and
/// formulas: `pad_mm` (26), `mm` (4), `mixed_mm` (4 + 15); other names have none.
pub fn builtin_operations(name: &str) -> Vec<Operation> {
    match name {
        "mm" => mm_ops(),
        "mixed_mm" => {
            let mut ops = mm_ops();
            for dim in ["m", "k", "n"] {
                for (lo, hi) in [(1, 16), (17, 32), (33, 64), (65, 128), (129, 256)] {
                    ops.push(op(
                        &format!("{lo}LEQ{dim}LEQ{hi}"),
                        &format!("{dim} >= {lo} and {dim} <= {hi}"),
                        true,
                    ));
                }
            }
            ops
        }
        "pad_mm" => {
            let mut ops = mm_ops();
            let arith = ops.pop().expect("mm ops end with arith_intensity");
            ops.push(op("k/(m*n)", "k / (m * n)", false));
            ops.push(op(
                "bfloat_perf_hit",
                "k > m * 1024 and k > n * 1024 and str(mat1_dtype) == 'torch.bfloat16'",
                true,
            ));
            ops.push(arith);
            ops.push(op(
                "mat1_innermost_needs_padding",
                "(mat1_stride_0 == 1 and m_padded_length != 0) or (mat1_stride_1 == 1 and k_padded_length != 0)",
                true,
            ));
            ops.push(op(
                "mat2_innermost_needs_padding",
                "(mat2_stride_0 == 1 and k_padded_length != 0) or (mat2_stride_1 == 1 and n_padded_length != 0)",
                true,
            ));
            ops.push(op(
                "num_dims_needs_padding",
                "if(m_padded_length != 0, 1, 0) + if(k_padded_length != 0, 1, 0) + if(n_padded_length != 0, 1, 0)",
                false,
            ));
            for dim in ["m", "k", "n"] {
                for mult in [2, 4, 8, 16, 32] {
                    ops.push(op(
                        &format!("{dim}_multiple_{mult}"),
                        &format!("{dim} % {mult} == 0"),
                        true,
                    ));
                }
            }
            ops.push(op(
                "mat1_iscontig",
                "mat1_stride_0 == k and mat1_stride_1 == 1",
                true,
            ));
            ops.push(op(
                "mat2_iscontig",
                "mat2_stride_0 == n and mat2_stride_1 == 1",
                true,
            ));
            ops
        }
        _ => Vec::new(),
    }
}

/// Parses an operations file (format in `docs/augment-ops.md`):
///
/// ```text
/// # comment
/// m_plus_n = m + n
/// big_k :cat = k >= 4096
/// ```
///
/// One operation per line, `NAME = EXPR` or `NAME :cat = EXPR` (`:num` is accepted and is the
/// default); blank lines and lines starting with `#` are skipped. Errors name the file, the
/// line and the column.
pub fn parse_operations_file(path: impl AsRef<Path>) -> Result<Vec<Operation>> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse_operations_str(&text, path)
}

/// [`parse_operations_file`] on text already read; `path` is used in messages.
pub fn parse_operations_str(text: &str, path: &Path) -> Result<Vec<Operation>> {
    let mut ops: Vec<Operation> = Vec::new();
    let err = |line: usize, message: String| Error::FileFormat {
        path: path.to_path_buf(),
        line,
        message,
    };
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some(eq) = find_definition_eq(line) else {
            return Err(err(
                lineno,
                format!("expected `NAME = EXPR` or `NAME :cat = EXPR`, found `{line}`"),
            ));
        };
        let (lhs, rhs_raw) = (line[..eq].trim(), &line[eq + 1..]);
        let rhs = rhs_raw.trim();
        let (name, categorical) = if let Some(n) = lhs.strip_suffix(":cat") {
            (n.trim_end(), true)
        } else if let Some(n) = lhs.strip_suffix(":num") {
            (n.trim_end(), false)
        } else {
            (lhs, false)
        };
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(err(
                lineno,
                format!("invalid operation name `{name}`: expected one word before `=` (optionally followed by `:cat`)"),
            ));
        }
        if ops.iter().any(|o| o.name == name) {
            return Err(err(lineno, format!("operation `{name}` is defined twice")));
        }
        // Column of the expression's first character within the raw line, for messages.
        let offset = raw.len() - raw.trim_start().len()
            + eq
            + 1
            + (rhs_raw.len() - rhs_raw.trim_start().len());
        let offset_chars = raw[..offset].chars().count();
        match Operation::parse(name, rhs, categorical) {
            Ok(op) => ops.push(op),
            Err(Error::Expression {
                column, message, ..
            }) => {
                return Err(err(
                    lineno,
                    format!(
                        "column {}: {message} (in operation `{name}`)",
                        offset_chars + column
                    ),
                ))
            }
            Err(e) => return Err(err(lineno, e.to_string())),
        }
    }
    Ok(ops)
}

/// The `=` that separates name and expression: the first `=` not part of `==`, `<=`, `>=`, `!=`.
fn find_definition_eq(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    (0..b.len()).find(|&i| {
        b[i] == b'='
            && !(i > 0 && matches!(b[i - 1], b'=' | b'<' | b'>' | b'!'))
            && b.get(i + 1) != Some(&b'=')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn pad_mm_ctx(
        m: i64,
        k: i64,
        n: i64,
        strides: [i64; 4],
        padded: [i64; 3],
        dtype: &str,
    ) -> Context {
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
        check_operations(&[b, a], &avail).unwrap();
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
}
