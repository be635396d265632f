//! A one-hot column's category in generated code, decided without formatting.

use crate::Value;

/// A one-hot column's category: Python's `str(value) == text`, decided without formatting
/// (the generator works out which integer, float or boolean prints as `text`).
#[derive(Debug, Clone, Copy)]
pub struct Category {
    /// The category as logged.
    pub text: &'static str,
    /// The integer whose `str()` is `text`, if any.
    pub int: Option<i64>,
    /// The bits of the float whose `str()` is `text`, if any (`nan` is [`Category::nan`]).
    pub float_bits: Option<u64>,
    /// `text` is `nan`.
    pub nan: bool,
}

impl Category {
    /// A category that no integer, float or NaN prints as (`torch.float16`, `False`).
    pub const fn text(text: &'static str) -> Self {
        Category {
            text,
            int: None,
            float_bits: None,
            nan: false,
        }
    }

    /// Whether `str(v) == self.text`.
    #[inline]
    pub fn matches(&self, v: &Value) -> bool {
        match v {
            Value::Str(s) => s == self.text,
            Value::Bool(b) => self.text == if *b { "True" } else { "False" },
            Value::Int(i) => self.int == Some(*i),
            Value::Float(f) if f.is_nan() => self.nan,
            Value::Float(f) => self.float_bits == Some(f.to_bits()),
        }
    }
}
