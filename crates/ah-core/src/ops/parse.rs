//! The recursive-descent parser, loosest operator first; [`parse_expr`] is its entry point.

use super::ast::{BinaryOp, BoolOp, CmpOp, Expr, Func, UnaryOp};
use super::lex::{lex, ParseError, Tok};
use crate::value::Value;

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
                self.call(&name, col)
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

    /// A call of `name` (the token at `col`) whose `(` is next: `if(...)` or a [`Func`].
    fn call(&mut self, name: &str, col: usize) -> std::result::Result<Expr, ParseError> {
        let is_if = name == "if";
        let func = Func::from_name(name);
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
