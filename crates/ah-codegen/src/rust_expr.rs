//! Augment operations compiled to typed Rust (the allocation-free fast path).
//!
//! Each operation's AST is rendered as a Rust expression over typed locals, assuming the
//! context gives numerical features as `Value::Int` and categorical ones as `Value::Str`
//! (what PyTorch logs). Semantics are `ah_core::ops`' (Python's): integers stay integers
//! with overflow checks, `/` is float division, `//` and `%` floor, division by zero and
//! overflow are failures (the heuristic is unsure, naming the operation). Whatever cannot
//! be typed statically (string arithmetic, `str()` of a number, mixed-kind `and`/`or`) makes
//! the model use the generic path only, which evaluates with `ah_core::ops` itself.

use std::collections::BTreeSet;

use ah_core::ops::{BinaryOp, BoolOp, CmpOp, Expr, Func, UnaryOp};
use ah_core::value::{python_float_repr, Value};

/// Static kind of a typed value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// `i64`.
    I,
    /// `f64`.
    F,
    /// `bool`.
    B,
    /// `&str`.
    S,
}

impl Ty {
    /// The Rust type.
    pub fn rust(self) -> &'static str {
        match self {
            Ty::I => "i64",
            Ty::F => "f64",
            Ty::B => "bool",
            Ty::S => "&str",
        }
    }
}

/// Renders expressions of one model; collects the helpers they need.
pub struct Renderer<'a> {
    /// Typed local for a feature name: (Rust expression, kind), or `None` when the name
    /// cannot be typed.
    pub lookup: &'a dyn Fn(&str) -> Option<(String, Ty)>,
    /// `UnsureKind` expression for a failure of the current operation.
    pub fail: String,
    /// Functions of `ah_core::ops::scalar` used so far (the module imports them).
    pub helpers: BTreeSet<&'static str>,
    /// Whether an expression rendered so far can fail (holds a `?`).
    pub fallible: bool,
    /// Prefix of the temporaries (`t{prefix}_{n}`), unique per operation.
    pub prefix: String,
    /// Statements binding hoisted subexpressions, one list per scope: the operation's, then
    /// one per lazy branch being rendered (see [`Renderer::hoist`]).
    pub scopes: Vec<Vec<String>>,
    /// Temporaries made so far.
    pub temps: usize,
}

/// The expression cannot be typed statically.
#[derive(Debug)]
pub struct Untyped;

/// Rust operator precedence of a rendered expression (higher binds tighter).
pub type Prec = u8;
/// `if`/block expressions: parenthesized in every operand position.
pub const P_BLOCK: Prec = 0;
const P_OR: Prec = 1;
const P_AND: Prec = 2;
const P_CMP: Prec = 3;
const P_ADD: Prec = 4;
const P_MUL: Prec = 5;
const P_CAST: Prec = 6;
const P_UNARY: Prec = 7;
/// Identifiers, literals, calls, method calls, `?`, macros.
pub const P_ATOM: Prec = 8;

/// Parentheses an eager operand may nest before it is bound to a temporary. rustfmt's time
/// grows steeply with nested calls: a chain of 100 comparisons, each operand converted
/// (`i64::from(i64::from(... <= m) <= m)`), took it 10 s on one expression; hoisted every
/// 16 levels, the whole generation of that model takes 70 ms.
const MAX_NESTING: usize = 16;

/// The deepest parenthesis nesting in `code` (parentheses inside string literals count too:
/// an overestimate only hoists sooner).
fn nesting(code: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for b in code.bytes() {
        match b {
            b'(' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// A rendered expression: code without redundant outer parentheses, its kind and precedence.
#[derive(Debug, Clone)]
pub struct Code {
    /// Rust source.
    pub code: String,
    /// Static kind.
    pub ty: Ty,
    /// Precedence.
    pub prec: Prec,
}

impl Code {
    fn new(code: String, ty: Ty, prec: Prec) -> Self {
        Code { code, ty, prec }
    }

    /// The code, parenthesized unless it binds at least as tight as `min`.
    pub fn at(&self, min: Prec) -> String {
        if self.prec < min {
            format!("({})", self.code)
        } else {
            self.code.clone()
        }
    }
}

type R = Result<Code, Untyped>;

/// A Rust `f64` literal for a value (shortest round trip), or the `f64` constant.
pub fn f64_lit(x: f64) -> String {
    if x.is_nan() {
        "f64::NAN".into()
    } else if x == f64::INFINITY {
        "f64::INFINITY".into()
    } else if x == f64::NEG_INFINITY {
        "f64::NEG_INFINITY".into()
    } else {
        python_float_repr(x)
    }
}

/// A Rust string literal: `Debug`'s escaping, and any character of
/// [`ah_core::value::is_unsafe_in_code`] it leaves (bidirectional controls, separators) as a
/// `\u{..}` escape, so the literal is one line and rustc's deny-by-default
/// `text_direction_codepoint_in_literal` never fires.
pub fn str_lit(s: &str) -> String {
    let debug = format!("{s:?}");
    if !debug.chars().any(ah_core::value::is_unsafe_in_code) {
        return debug;
    }
    debug
        .chars()
        .map(|c| {
            if ah_core::value::is_unsafe_in_code(c) {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The comparison that holds exactly when `op` does not, over a total order.
fn negated(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Eq => CmpOp::Ne,
        CmpOp::Ne => CmpOp::Eq,
        CmpOp::Lt => CmpOp::Ge,
        CmpOp::Ge => CmpOp::Lt,
        CmpOp::Le => CmpOp::Gt,
        CmpOp::Gt => CmpOp::Le,
    }
}

fn as_f(c: &Code) -> Code {
    // An integer literal that `f64` holds exactly is written as a float literal.
    let exact = c
        .code
        .strip_suffix("_i64")
        .and_then(|n| n.parse::<i64>().ok())
        .filter(|n| n.unsigned_abs() <= 1 << 53);
    match (c.ty, exact) {
        (Ty::F, _) => c.clone(),
        (Ty::I, Some(n)) => Code::new(format!("{n}_f64"), Ty::F, c.prec),
        (Ty::I, None) => Code::new(format!("{} as f64", c.at(P_UNARY)), Ty::F, P_CAST),
        (Ty::B, _) => Code::new(format!("f64::from(u8::from({}))", c.code), Ty::F, P_ATOM),
        (Ty::S, _) => unreachable!("strings are not numbers"),
    }
}

fn as_i(c: &Code) -> Code {
    match c.ty {
        Ty::I => c.clone(),
        Ty::B => Code::new(format!("i64::from({})", c.code), Ty::I, P_ATOM),
        _ => unreachable!("only integers and booleans"),
    }
}

/// Python truthiness of a typed value, as a `bool` expression.
pub fn truthy(c: &Code) -> Code {
    match c.ty {
        Ty::B => c.clone(),
        Ty::I => Code::new(format!("{} != 0", c.at(P_UNARY)), Ty::B, P_CMP),
        Ty::F => Code::new(format!("{} != 0.0", c.at(P_UNARY)), Ty::B, P_CMP),
        Ty::S => Code::new(format!("!{}.is_empty()", c.at(P_ATOM)), Ty::B, P_UNARY),
    }
}

fn is_num(t: Ty) -> bool {
    matches!(t, Ty::I | Ty::F | Ty::B)
}

/// `a OP b` for a binary operator of precedence `p` (left-associative).
fn bin(a: &Code, op: &str, b: &Code, p: Prec, ty: Ty) -> Code {
    Code::new(format!("{} {op} {}", a.at(p), b.at(p + 1)), ty, p)
}

/// A comparison: operands that end in a cast are parenthesized (`x as f64 < y` would parse
/// `<` as generics).
fn cmp(a: &Code, op: &str, b: &Code) -> Code {
    let wrap = |c: &Code| {
        if c.prec <= P_CAST {
            format!("({})", c.code)
        } else {
            c.code.clone()
        }
    };
    Code::new(format!("{} {op} {}", wrap(a), wrap(b)), Ty::B, P_CMP)
}

impl Renderer<'_> {
    /// Binds `c` to a temporary in the current scope (`let t: T = c;`) and returns the
    /// temporary, unless it is already an atom. The scope's statements run before the
    /// expression, where the subexpression would have run anyway (it is eager there; the
    /// order of failures does not matter, every one is the same unsure answer). So the
    /// generated code nests no blocks in blocks however deep the expression: rustc, clippy
    /// and rustfmt take time exponential in such nesting.
    fn hoist(&mut self, c: Code) -> Code {
        if c.prec == P_ATOM && !c.code.contains(['{', '(']) {
            return c;
        }
        let name = format!("t{}_{}", self.prefix, self.temps);
        self.temps += 1;
        let scope = self.scopes.last_mut().expect("a scope is open");
        scope.push(format!("let {name}: {} = {};", c.ty.rust(), c.code));
        Code::new(name, c.ty, P_ATOM)
    }

    /// Renders `e` as a lazy branch (evaluated only when taken), in a scope of its own: the
    /// statements it hoisted (they go inside the branch's braces) and its expression.
    fn branch(&mut self, e: &Expr) -> Result<(Vec<String>, Code), Untyped> {
        self.scopes.push(Vec::new());
        let c = self.render(e);
        let stmts = self.scopes.pop().expect("the branch's scope");
        Ok((stmts, c?))
    }

    /// Renders an eager operand: a block, or code nested deeper than [`MAX_NESTING`], is
    /// hoisted (see [`Renderer::hoist`]).
    fn operand(&mut self, e: &Expr) -> R {
        let c = self.render(e)?;
        Ok(if c.prec == P_BLOCK || nesting(&c.code) > MAX_NESTING {
            self.hoist(c)
        } else {
            c
        })
    }

    fn checked(&mut self, code: String) -> String {
        self.fallible = true;
        format!("{code}.ok_or({})?", self.fail)
    }

    /// Renders `e` as a Rust expression; `?` propagates failures as `self.fail`.
    pub fn render(&mut self, e: &Expr) -> R {
        match e {
            Expr::Literal(v) => Ok(literal(v)),
            Expr::Feature(n) => {
                let (code, ty) = (self.lookup)(n).ok_or(Untyped)?;
                Ok(Code::new(code, ty, P_ATOM))
            }
            Expr::Unary { op, operand } => self.unary(*op, operand),
            Expr::Binary { op, left, right } => self.binary(*op, left, right),
            Expr::Compare { op, left, right } => self.compare(*op, left, right),
            Expr::Bool { op, left, right } => self.bool_op(*op, left, right),
            Expr::If {
                cond,
                then,
                otherwise,
            } => self.if_else(cond, then, otherwise),
            Expr::Call { func, args } => self.call(*func, args),
        }
    }

    /// A unary operator.
    fn unary(&mut self, op: UnaryOp, operand: &Expr) -> R {
        if let (UnaryOp::Not, Expr::Compare { op, left, right }) = (op, operand) {
            return self.compare_or_not(*op, left, right, true);
        }
        let c = self.operand(operand)?;
        match (op, c.ty) {
            (UnaryOp::Not, _) => Ok(Code::new(
                format!("!{}", truthy(&c).at(P_UNARY)),
                Ty::B,
                P_UNARY,
            )),
            (UnaryOp::Neg, Ty::I) => Ok(Code::new(
                self.checked(format!("{}.checked_neg()", c.at(P_ATOM))),
                Ty::I,
                P_ATOM,
            )),
            (UnaryOp::Neg, Ty::F) => Ok(Code::new(format!("-{}", c.at(P_UNARY)), Ty::F, P_UNARY)),
            (UnaryOp::Neg, Ty::B) => {
                Ok(Code::new(format!("-i64::from({})", c.code), Ty::I, P_UNARY))
            }
            (UnaryOp::Pos, Ty::I | Ty::F) => Ok(c),
            (UnaryOp::Pos, Ty::B) => Ok(as_i(&c)),
            _ => Err(Untyped),
        }
    }

    /// An arithmetic operator (Python's semantics over integers and floats).
    fn binary(&mut self, op: BinaryOp, left: &Expr, right: &Expr) -> R {
        let a = self.operand(left)?;
        let b = self.operand(right)?;
        if !is_num(a.ty) || !is_num(b.ty) {
            return Err(Untyped);
        }
        let ints = a.ty != Ty::F && b.ty != Ty::F;
        Ok(match (op, ints) {
            (BinaryOp::Div, _) => {
                self.helpers.insert("fdiv");
                let call = format!("fdiv({}, {})", as_f(&a).code, as_f(&b).code);
                Code::new(self.checked(call), Ty::F, P_ATOM)
            }
            (BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul, true) => {
                let m = match op {
                    BinaryOp::Add => "checked_add",
                    BinaryOp::Sub => "checked_sub",
                    _ => "checked_mul",
                };
                let call = format!("{}.{m}({})", as_i(&a).at(P_ATOM), as_i(&b).code);
                Code::new(self.checked(call), Ty::I, P_ATOM)
            }
            (BinaryOp::Add | BinaryOp::Sub, false) => {
                bin(&as_f(&a), op.symbol(), &as_f(&b), P_ADD, Ty::F)
            }
            (BinaryOp::Mul, false) => bin(&as_f(&a), "*", &as_f(&b), P_MUL, Ty::F),
            // By a positive literal, Python's `//` and `%` are Euclid's: they
            // cannot fail.
            (BinaryOp::FloorDiv | BinaryOp::Mod, true) if positive_literal(right) => {
                let m = if op == BinaryOp::Mod {
                    "rem_euclid"
                } else {
                    "div_euclid"
                };
                let call = format!("{}.{m}({})", as_i(&a).at(P_ATOM), b.code);
                Code::new(call, Ty::I, P_ATOM)
            }
            (BinaryOp::FloorDiv, true) => {
                self.helpers.insert("ifloordiv");
                let call = format!("ifloordiv({}, {})", as_i(&a).code, as_i(&b).code);
                Code::new(self.checked(call), Ty::I, P_ATOM)
            }
            (BinaryOp::Mod, true) => {
                self.helpers.insert("imod");
                let call = format!("imod({}, {})", as_i(&a).code, as_i(&b).code);
                Code::new(self.checked(call), Ty::I, P_ATOM)
            }
            // Float floor division and modulo: the generic path.
            _ => return Err(Untyped),
        })
    }

    /// A comparison (exact between integers and floats).
    fn compare(&mut self, op: CmpOp, left: &Expr, right: &Expr) -> R {
        self.compare_or_not(op, left, right, false)
    }

    /// A comparison, or with `not` its negation: over a total order (integers, booleans,
    /// strings) the opposite operator (`a < b` for `not a >= b`), else `!(a OP b)` (a float
    /// may be NaN).
    fn compare_or_not(&mut self, op: CmpOp, left: &Expr, right: &Expr, not: bool) -> R {
        let a = self.operand(left)?;
        let b = self.operand(right)?;
        let total = !matches!(a.ty, Ty::F) && !matches!(b.ty, Ty::F);
        if not && !total {
            let c = self.finish_compare(op, a, b)?;
            return Ok(Code::new(format!("!{}", c.at(P_UNARY)), Ty::B, P_UNARY));
        }
        let op = if not { negated(op) } else { op };
        self.finish_compare(op, a, b)
    }

    fn finish_compare(&mut self, op: CmpOp, a: Code, b: Code) -> R {
        let sym = op.symbol();
        Ok(match (a.ty, b.ty) {
            (Ty::S, Ty::S) | (Ty::F, Ty::F) | (Ty::B, Ty::B) => cmp(&a, sym, &b),
            (Ty::S, _) | (_, Ty::S) => return Err(Untyped),
            (Ty::F, _) | (_, Ty::F) => {
                self.helpers.insert("cmp_if");
                let ord = if a.ty == Ty::F {
                    format!(
                        "cmp_if({}, {}).map(core::cmp::Ordering::reverse)",
                        as_i(&b).code,
                        a.code
                    )
                } else {
                    format!("cmp_if({}, {})", as_i(&a).code, b.code)
                };
                let code = match op {
                    CmpOp::Eq => format!("{ord} == Some(core::cmp::Ordering::Equal)"),
                    CmpOp::Ne => format!("{ord} != Some(core::cmp::Ordering::Equal)"),
                    CmpOp::Lt => format!("{ord} == Some(core::cmp::Ordering::Less)"),
                    CmpOp::Gt => format!("{ord} == Some(core::cmp::Ordering::Greater)"),
                    CmpOp::Le => {
                        return Ok(Code::new(
                            format!("matches!({ord}, Some(core::cmp::Ordering::Less | core::cmp::Ordering::Equal))"),
                            Ty::B,
                            P_ATOM,
                        ))
                    }
                    CmpOp::Ge => {
                        return Ok(Code::new(
                            format!("matches!({ord}, Some(core::cmp::Ordering::Greater | core::cmp::Ordering::Equal))"),
                            Ty::B,
                            P_ATOM,
                        ))
                    }
                };
                Code::new(code, Ty::B, P_CMP)
            }
            _ => cmp(&as_i(&a), sym, &as_i(&b)),
        })
    }

    /// `and` / `or`: Python returns an operand. The left one is eager (hoisted, so it is
    /// evaluated once), the right one a lazy branch.
    fn bool_op(&mut self, op: BoolOp, left: &Expr, right: &Expr) -> R {
        let a = self.operand(left)?;
        let (stmts, b) = self.branch(right)?;
        if a.ty != b.ty {
            return Err(Untyped);
        }
        if a.ty == Ty::B && stmts.is_empty() {
            return Ok(match op {
                BoolOp::And => bin(&a, "&&", &b, P_AND, Ty::B),
                BoolOp::Or => bin(&a, "||", &b, P_OR, Ty::B),
            });
        }
        // `a` is matched, not bound by `let`: the result names it once, and a chain of them
        // does not make clippy's constant evaluation follow each binding twice (exponential).
        let t = truthy(&Code::new("l".into(), a.ty, P_ATOM)).code;
        let b = body(&stmts, &b.code);
        let code = match op {
            BoolOp::And => format!("match {} {{ l if {t} => {{ {b} }}, l => l }}", a.code),
            BoolOp::Or => format!("match {} {{ l if {t} => l, _ => {{ {b} }} }}", a.code),
        };
        Ok(Code::new(code, a.ty, P_BLOCK))
    }

    /// `a if cond else b`: the condition is eager, the branches lazy.
    fn if_else(&mut self, cond: &Expr, then: &Expr, otherwise: &Expr) -> R {
        let c = self.operand(cond)?;
        let (sa, a) = self.branch(then)?;
        let (sb, b) = self.branch(otherwise)?;
        if a.ty != b.ty {
            return Err(Untyped);
        }
        let code = format!(
            "if {} {{ {} }} else {{ {} }}",
            truthy(&c).code,
            body(&sa, &a.code),
            body(&sb, &b.code)
        );
        Ok(Code::new(code, a.ty, P_BLOCK))
    }

    /// A call of a built-in function.
    fn call(&mut self, func: Func, args: &[Expr]) -> R {
        let mut r = Vec::with_capacity(args.len());
        for a in args {
            r.push(self.operand(a)?);
        }
        let x = r[0].clone();
        match func {
            Func::Abs => match x.ty {
                Ty::I => Ok(Code::new(
                    self.checked(format!("{}.checked_abs()", x.at(P_ATOM))),
                    Ty::I,
                    P_ATOM,
                )),
                Ty::F => Ok(Code::new(format!("{}.abs()", x.at(P_ATOM)), Ty::F, P_ATOM)),
                Ty::B => Ok(as_i(&x)),
                Ty::S => Err(Untyped),
            },
            Func::Min | Func::Max => self.min_max(func, &r),
            Func::Str => match x.ty {
                Ty::S => Ok(x),
                Ty::B => Ok(Code::new(
                    format!("if {} {{ \"True\" }} else {{ \"False\" }}", x.code),
                    Ty::S,
                    P_BLOCK,
                )),
                _ => Err(Untyped),
            },
            Func::Int => match x.ty {
                Ty::I => Ok(x),
                Ty::B => Ok(as_i(&x)),
                _ => Err(Untyped),
            },
            Func::Float => match x.ty {
                Ty::S => Err(Untyped),
                _ => Ok(as_f(&x)),
            },
            Func::Bool => Ok(truthy(&x)),
        }
    }

    /// `min` / `max` over operands of one kind, folded left to right.
    fn min_max(&mut self, func: Func, r: &[Code]) -> R {
        let x = &r[0];
        if r.iter().any(|c| c.ty != x.ty) || x.ty == Ty::B {
            return Err(Untyped);
        }
        let mut acc = x.clone();
        for y in &r[1..] {
            let code = match (func, x.ty) {
                (Func::Min, Ty::F) => {
                    self.helpers.insert("fmin");
                    format!("fmin({}, {})", acc.code, y.code)
                }
                (Func::Max, Ty::F) => {
                    self.helpers.insert("fmax");
                    format!("fmax({}, {})", acc.code, y.code)
                }
                (f, _) => {
                    let o = if f == Func::Min { "<" } else { ">" };
                    // Matched, so each operand is named once (see `bool_op`); the
                    // accumulator is hoisted, so the blocks do not nest.
                    let block = format!(
                        "match ({}, {}) {{ (a, b) if b {o} a => b, (a, _) => a }}",
                        acc.code, y.code
                    );
                    acc = self.hoist(Code::new(block, x.ty, P_BLOCK));
                    continue;
                }
            };
            acc = Code::new(code, x.ty, P_ATOM);
        }
        Ok(acc)
    }
}

/// A branch's body: its statements, then its value.
fn body(stmts: &[String], code: &str) -> String {
    let mut out = stmts.join(" ");
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(code);
    out
}

/// A literal.
fn literal(v: &Value) -> Code {
    match v {
        Value::Int(i) if *i < 0 => Code::new(format!("{i}_i64"), Ty::I, P_UNARY),
        Value::Int(i) => Code::new(format!("{i}_i64"), Ty::I, P_ATOM),
        Value::Float(f) if !f.is_finite() => Code::new(f64_lit(*f), Ty::F, P_ATOM),
        Value::Float(f) if f.is_sign_negative() => {
            Code::new(format!("{}_f64", f64_lit(*f)), Ty::F, P_UNARY)
        }
        Value::Float(f) => Code::new(format!("{}_f64", f64_lit(*f)), Ty::F, P_ATOM),
        Value::Bool(b) => Code::new(b.to_string(), Ty::B, P_ATOM),
        Value::Str(s) => Code::new(str_lit(s), Ty::S, P_ATOM),
    }
}

/// An integer literal greater than zero (a divisor that can neither be zero nor overflow).
fn positive_literal(e: &Expr) -> bool {
    matches!(e, Expr::Literal(Value::Int(d)) if *d > 0)
}

/// Rust expression for Python's `str(v) == lit` over a typed value; `None` when no value of
/// that kind prints as `lit` (the comparison is always false and reads nothing).
pub fn typed_str_eq(code: &str, ty: Ty, lit: &str) -> Option<String> {
    match ty {
        Ty::S => Some(format!("{code} == {}", str_lit(lit))),
        Ty::B => match lit {
            "True" => Some(code.to_string()),
            "False" => Some(format!("!{code}")),
            _ => None,
        },
        Ty::I => canonical_int(lit).map(|i| format!("{code} == {i}")),
        Ty::F => canonical_float(lit).map(|f| {
            if f.is_nan() {
                format!("{code}.is_nan()")
            } else {
                format!("{code}.to_bits() == {:#x}", f.to_bits())
            }
        }),
    }
}

/// The fields of an `ah_core::generated::Category` for `lit` (Python's `str(v) == lit`
/// decided without formatting): `(int, float_bits, nan)` as Rust expressions.
pub fn category_fields(lit: &str) -> (String, String, bool) {
    let int = match canonical_int(lit) {
        Some(i) => format!("Some({i})"),
        None => "None".into(),
    };
    let (float, nan) = match canonical_float(lit) {
        Some(f) if f.is_nan() => ("None".into(), true),
        Some(f) => (format!("Some({:#x})", f.to_bits()), false),
        None => ("None".into(), false),
    };
    (int, float, nan)
}

/// `lit` when Python's `str()` of some `int` prints exactly it.
fn canonical_int(lit: &str) -> Option<i64> {
    lit.parse::<i64>().ok().filter(|i| i.to_string() == lit)
}

/// `lit` when Python's `str()` of some `float` prints exactly it.
fn canonical_float(lit: &str) -> Option<f64> {
    ah_core::value::parse_python_float(lit).filter(|f| python_float_repr(*f) == lit)
}
