//! The lexer: source text to tokens with their 0-based character columns.

use crate::error::clip_to;
use crate::value::python_float_repr;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
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
    pub(super) fn describe(&self) -> String {
        match self {
            Tok::Int(i) => format!("number `{i}`"),
            Tok::Float(f) => format!("number `{}`", python_float_repr(*f)),
            Tok::Str(s) => format!("string '{}'", clip_to(s, 40)),
            Tok::Ident(s) => format!("`{}`", clip_to(s, 40)),
            Tok::Quoted(s) => format!("feature `{}`", clip_to(s, 40)),
            Tok::Op(o) => format!("`{o}`"),
            Tok::LParen => "`(`".into(),
            Tok::RParen => "`)`".into(),
            Tok::Comma => "`,`".into(),
            Tok::End => "the end of the expression".into(),
        }
    }
}

/// A parse error: 1-based column (in characters) and message.
pub(super) struct ParseError {
    pub(super) column: usize,
    pub(super) message: String,
}

type LexResult = std::result::Result<(Tok, usize), ParseError>;

/// An error at the 0-based character `column`.
fn err(column: usize, message: String) -> ParseError {
    ParseError {
        column: column + 1,
        message,
    }
}

/// Splits `src` into tokens, each with the 0-based column of its first character; the last is
/// [`Tok::End`].
pub(super) fn lex(src: &str) -> std::result::Result<Vec<(Tok, usize)>, ParseError> {
    let chars: Vec<char> = src.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let (tok, end) = if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            lex_number(&chars, i)?
        } else if c.is_alphabetic() || c == '_' {
            lex_word(&chars, i)
        } else if c == '`' {
            lex_quoted_name(&chars, i)?
        } else if c == '\'' || c == '"' {
            lex_string(&chars, i)?
        } else {
            lex_punct(&chars, i)?
        };
        toks.push((tok, i));
        i = end;
    }
    toks.push((Tok::End, chars.len()));
    Ok(toks)
}

/// A number starting at `start`: an integer, or a float when it has a `.` or an exponent.
fn lex_number(chars: &[char], start: usize) -> LexResult {
    let mut i = start;
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
    let shown = clip_to(&text, 40);
    let is_float = text.contains(['.', 'e', 'E']);
    let tok = if is_float {
        text.parse::<f64>().ok().map(Tok::Float)
    } else {
        text.parse::<i64>().ok().map(Tok::Int)
    };
    match tok {
        Some(t) => Ok((t, i)),
        None if !is_float && text.chars().all(|c| c.is_ascii_digit()) => Err(err(
            start,
            format!("integer `{shown}` does not fit in 64 bits"),
        )),
        None => Err(err(
            start,
            format!("invalid number `{shown}` (a feature name that starts with a digit must be written in backticks: `{shown}`)"),
        )),
    }
}

/// A keyword, `inf`/`nan`, or an identifier starting at `start`.
fn lex_word(chars: &[char], start: usize) -> (Tok, usize) {
    let mut i = start;
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
    (tok, i)
}

/// A feature name in backticks starting at `start` (the opening backtick).
fn lex_quoted_name(chars: &[char], start: usize) -> LexResult {
    let mut i = start + 1;
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
    Ok((Tok::Quoted(name), i + 1))
}

/// A string literal starting at `start` (the opening quote), with its escapes.
fn lex_string(chars: &[char], start: usize) -> LexResult {
    let quote = chars[start];
    let mut i = start + 1;
    let mut s = String::new();
    loop {
        match chars.get(i) {
            None => {
                return Err(err(
                    start,
                    format!("unterminated string: expected a closing {quote}"),
                ))
            }
            Some(&q) if q == quote => break,
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
    Ok((Tok::Str(s), i + 1))
}

/// An operator or punctuation starting at `start`.
fn lex_punct(chars: &[char], start: usize) -> LexResult {
    let c = chars[start];
    let two: String = chars[start..(start + 2).min(chars.len())].iter().collect();
    let op2 = match two.as_str() {
        "//" => Some("//"),
        "==" => Some("=="),
        "!=" => Some("!="),
        "<=" => Some("<="),
        ">=" => Some(">="),
        _ => None,
    };
    if let Some(op) = op2 {
        return Ok((Tok::Op(op), start + 2));
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
    Ok((tok, start + 1))
}
