//! Feature values that keep their kind and print exactly as Python's `str()` does.

use std::fmt;

/// One feature value as PyTorch logs it.
///
/// The kind is kept so that writing a value back gives the bytes Python's `str()` gives:
/// `True`/`False` for booleans, integers without a decimal point, floats in Python's shortest
/// round-trip `repr` (`1.0`, `1e-05`, `inf`), and strings as they are (`torch.float16`,
/// `not_float_32`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// A Python `bool`.
    Bool(bool),
    /// A Python `int` (fits in 64 bits in every known log).
    Int(i64),
    /// A Python `float`.
    Float(f64),
    /// Anything else: dtype names such as `torch.bfloat16`, markers such as `not_float_32`.
    Str(String),
}

impl Value {
    /// Parses one logged cell the way it was written: `True`/`False` become booleans, integer
    /// literals integers, float literals (including `inf`, `-inf`, `nan`) floats, and the rest
    /// strings. `parse(v.to_string()) == v` for every value a writer produces.
    pub fn parse(text: &str) -> Value {
        match text {
            "True" => return Value::Bool(true),
            "False" => return Value::Bool(false),
            _ => {}
        }
        if let Ok(i) = text.parse::<i64>() {
            return Value::Int(i);
        }
        if looks_like_float(text) {
            if let Some(f) = parse_python_float(text) {
                return Value::Float(f);
            }
        }
        Value::Str(text.to_string())
    }

    /// The value as a number for numerical features and split comparisons: integers and
    /// floats as themselves, booleans as 0/1 (as numpy does), strings as `None`.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            Value::Str(_) => None,
        }
    }

    /// True for a Python `bool`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// A short name of the kind, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(true) => f.write_str("True"),
            Value::Bool(false) => f.write_str("False"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => f.write_str(&python_float_repr(*x)),
            Value::Str(s) => f.write_str(s),
        }
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}
impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Int(i64::from(v))
    }
}
impl From<usize> for Value {
    fn from(v: usize) -> Self {
        Value::Int(v as i64)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Str(v.to_string())
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Str(v)
    }
}

fn looks_like_float(text: &str) -> bool {
    let t = text.strip_prefix(['-', '+']).unwrap_or(text);
    matches!(t, "inf" | "nan" | "infinity" | "Infinity")
        || (t.starts_with(|c: char| c.is_ascii_digit() || c == '.')
            && t.chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+')))
}

/// Parses a float the way Python's `float()` does for the forms that appear in logs
/// (`1.5`, `1e-05`, `inf`, `-inf`, `nan`).
pub fn parse_python_float(text: &str) -> Option<f64> {
    let t = text.trim();
    match t {
        "inf" | "+inf" | "infinity" | "Infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" | "-Infinity" => Some(f64::NEG_INFINITY),
        "nan" | "+nan" | "-nan" | "NaN" => Some(f64::NAN),
        _ => t.parse::<f64>().ok(),
    }
}

/// A Python string literal for `s`, single-quoted as PyTorch writes them, safe to put in
/// generated code: backslash, quote, line breaks, tab, every other control character (NUL
/// included), Unicode line and paragraph separators, the byte-order mark and bidirectional-text
/// controls are escaped (`\n`, `\x00`, `\u2028`); other characters, non-ASCII included, are
/// kept as they are (Python source is UTF-8). `eval` of the result gives `s` back.
pub fn python_str_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe_in_code(c) && (c as u32) < 0x100 => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if is_unsafe_in_code(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Characters that must never appear raw in generated source (Rust, Python, Graphviz), even
/// inside a comment or a string literal: control characters (line breaks, NUL, escape, ...),
/// Unicode line and paragraph separators, the byte-order mark and the bidirectional-text
/// controls (rustc rejects those; they can make code read differently from how it runs).
pub fn is_unsafe_in_code(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}'
                | '\u{2029}'
                | '\u{feff}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{061c}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// Formats a float exactly as Python's `repr(float)` (and `str(float)`) does: the shortest
/// digits that round-trip, positional notation for exponents in `-4 <= e < 16`, otherwise
/// scientific with a sign and at least two exponent digits (`1e-05`, `1.5e+16`); integral
/// values keep a trailing `.0`; `inf`, `-inf`, `nan`.
pub fn python_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // Rust's `{:e}` gives the shortest round-trip digit count; when two strings of that length
    // round-trip (the value lies exactly half-way, e.g. 84.559234619140625), Python prints the
    // correctly rounded one (ties to even), which `{:.*e}` gives. Keep that if it round-trips.
    let shortest = format!("{x:e}");
    let n_digits = shortest
        .split_once('e')
        .map_or(1, |(m, _)| m.chars().filter(char::is_ascii_digit).count());
    let rounded = format!("{:.*e}", n_digits.saturating_sub(1), x);
    let sci = if rounded.parse::<f64>().ok() == Some(x) {
        rounded
    } else {
        shortest
    };
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` always has an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` exponent is an integer");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let n = digits.len() as i32;
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let int_len = exp + 1;
            if n <= int_len {
                let zeros = "0".repeat((int_len - n) as usize);
                format!("{sign}{digits}{zeros}.0")
            } else {
                let (a, b) = digits.split_at(int_len as usize);
                format!("{sign}{a}.{b}")
            }
        } else {
            let zeros = "0".repeat((-exp - 1) as usize);
            format!("{sign}0.{zeros}{digits}")
        }
    } else {
        let m = if n == 1 {
            digits.clone()
        } else {
            format!("{}.{}", &digits[..1], &digits[1..])
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{m}e{esign}{:02}", exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_matches_python() {
        let cases = [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (148.8771209716797, "148.8771209716797"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123456789012345.0, "123456789012345.0"),
            (1234567890123456.0, "1234567890123456.0"),
            (-2.5, "-2.5"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (0.0, "0.0"),
            (1.7025303314066, "1.7025303314066"),
            (2.2250738585072014e-308, "2.2250738585072014e-308"),
            (0.2266560047864914, "0.2266560047864914"),
            // Exactly 84.559234619140625, half-way between two 16-digit strings: Python rounds
            // half to even.
            (84.55923461914062, "84.55923461914062"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (9007199254740992.0, "9007199254740992.0"),
        ];
        for (x, want) in cases {
            assert_eq!(python_float_repr(x), want, "repr of {x:e}");
            assert_eq!(parse_python_float(want).unwrap().to_bits(), x.to_bits());
        }
        assert_eq!(python_float_repr(f64::NAN), "nan");
    }

    #[test]
    fn values_keep_their_kind() {
        for text in [
            "True",
            "False",
            "5",
            "-3",
            "torch.bfloat16",
            "not_float_32",
            "1.5",
            "inf",
            "1e-05",
        ] {
            let v = Value::parse(text);
            assert_eq!(v.to_string(), text);
        }
        assert_eq!(Value::parse("True"), Value::Bool(true));
        assert_eq!(Value::parse("42"), Value::Int(42));
        assert_eq!(Value::parse("0.5"), Value::Float(0.5));
        assert_eq!(
            Value::parse("torch.float16"),
            Value::Str("torch.float16".into())
        );
        assert_eq!(Value::parse("1.50"), Value::Float(1.5));
    }
}
