//! Logged values as pandas types, sorts and prints them: a column's kind, a value's text, the
//! order of values, an input's text for error messages.

use std::borrow::Cow;
use std::cmp::Ordering;

use ah_core::Value;

/// How pandas would type a logged column (it decides sorting and the text of values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ColumnKind {
    Bool,
    Int,
    Float,
    Str,
}

pub(super) fn kind_of<'v>(values: impl Iterator<Item = &'v Value>) -> ColumnKind {
    let (mut b, mut i, mut f, mut s) = (false, false, false, false);
    for v in values {
        match v {
            Value::Bool(_) => b = true,
            Value::Int(_) => i = true,
            Value::Float(_) => f = true,
            Value::Str(_) => s = true,
        }
    }
    if s || (b && (i || f)) {
        ColumnKind::Str
    } else if b {
        ColumnKind::Bool
    } else if f {
        ColumnKind::Float
    } else {
        ColumnKind::Int
    }
}

/// Text of a value as pandas would print it for a column of the given kind.
pub(super) fn text_of(v: &Value, kind: ColumnKind) -> Cow<'_, str> {
    match (kind, v) {
        (ColumnKind::Float, Value::Int(i)) => {
            Cow::Owned(ah_core::value::python_float_repr(*i as f64))
        }
        (_, Value::Bool(true)) => Cow::Borrowed("True"),
        (_, Value::Bool(false)) => Cow::Borrowed("False"),
        (_, Value::Str(s)) => Cow::Borrowed(s.as_str()),
        _ => Cow::Owned(v.to_string()),
    }
}

/// Appends [`text_of`] `v` to `out`, without a string of its own for integers and text.
pub(super) fn push_text(out: &mut String, v: &Value, kind: ColumnKind) {
    match (kind, v) {
        (ColumnKind::Float, Value::Int(_)) | (_, Value::Float(_)) => {
            out.push_str(&text_of(v, kind))
        }
        (_, Value::Int(i)) => out.push_str(itoa::Buffer::new().format(*i)),
        (_, Value::Bool(true)) => out.push_str("True"),
        (_, Value::Bool(false)) => out.push_str("False"),
        (_, Value::Str(s)) => out.push_str(s),
    }
}

pub(super) fn cmp_values(a: &Value, b: &Value, kind: ColumnKind) -> Ordering {
    match kind {
        ColumnKind::Str => display_text(a).cmp(&display_text(b)),
        _ => {
            let x = a.as_f64().unwrap_or(f64::NAN);
            let y = b.as_f64().unwrap_or(f64::NAN);
            match (a, b) {
                (Value::Int(p), Value::Int(q)) => p.cmp(q),
                _ => x.total_cmp(&y),
            }
        }
    }
}

/// A value's `Display` text, borrowed when it is a string.
fn display_text(v: &Value) -> Cow<'_, str> {
    match v {
        Value::Str(s) => Cow::Borrowed(s.as_str()),
        _ => Cow::Owned(v.to_string()),
    }
}

pub(super) fn row_text(features: &[String], values: &[Value]) -> String {
    let parts: Vec<String> = features
        .iter()
        .zip(values)
        .map(|(f, v)| format!("{f}={v}"))
        .collect();
    parts.join(", ")
}
