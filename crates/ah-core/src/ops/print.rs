//! Printers: the canonical source ([`std::fmt::Display`], which parses back to the same AST)
//! and Python source ([`Expr::to_python`]).

use std::fmt;

use super::ast::{BinaryOp, BoolOp, Expr, UnaryOp};
use crate::value::{python_float_repr, Value};

impl Expr {
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
