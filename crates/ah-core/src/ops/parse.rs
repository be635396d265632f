//! The recursive-descent parser, loosest operator first; [`parse_expr`] is its entry point.
//!
//! Every expression it accepts is within [`MAX_DEPTH`] and [`MAX_NODES`]: the parser counts
//! its own nesting before it recurses and the depth and size of every node it builds, so
//! neither it nor the recursive code after it (evaluation, printing, code generation,
//! dropping the tree) can overflow the stack on any input.

use super::ast::{BinaryOp, BoolOp, CmpOp, Expr, Func, UnaryOp};
use super::lex::{lex, ParseError, Tok};
use crate::value::Value;

/// The deepest an expression may nest: parentheses, operators and function calls each count
/// a level, and so does each operator of a chain (`a + b + c` is `(a + b) + c`, two levels
/// above its operands). Far beyond any real operation (PyTorch's nest at most 5 levels), and
/// below what the generated code's compilers take: CPython refuses 200 nested parentheses.
pub const MAX_DEPTH: usize = 100;

/// The most nodes (literals, feature references, operators, calls) an expression may have
/// (a chained comparison `a < b < c` counts its middle operand twice).
pub const MAX_NODES: usize = 2_000;

/// A parsed subexpression with its depth and number of nodes.
struct Sub {
    expr: Expr,
    depth: usize,
    nodes: usize,
}

impl Sub {
    fn leaf(expr: Expr) -> Sub {
        Sub {
            expr,
            depth: 1,
            nodes: 1,
        }
    }
}

type PResult = std::result::Result<Sub, ParseError>;

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    /// Nested calls of [`Parser::expr`] and unary operators now open (the recursion depth).
    nesting: usize,
}

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }

    fn col(&self) -> usize {
        self.toks[self.pos].1
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

    /// Opens one level of recursion at the 0-based `col`, refused beyond [`MAX_DEPTH`].
    fn enter(&mut self, col: usize) -> std::result::Result<(), ParseError> {
        self.nesting += 1;
        if self.nesting > MAX_DEPTH {
            return Err(too_deep(col));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.nesting -= 1;
    }

    /// A node over `children` (built by `make`), refused beyond the limits; `extra` nodes
    /// are copies the node holds besides its children (a chained comparison's operand).
    fn node(
        col: usize,
        children: Vec<Sub>,
        extra: usize,
        make: impl FnOnce(Vec<Expr>) -> Expr,
    ) -> PResult {
        let depth = 1 + children.iter().map(|c| c.depth).max().unwrap_or(0);
        let nodes = 1 + extra + children.iter().map(|c| c.nodes).sum::<usize>();
        if depth > MAX_DEPTH {
            return Err(too_deep(col));
        }
        if nodes > MAX_NODES {
            return Err(too_big(col));
        }
        Ok(Sub {
            expr: make(children.into_iter().map(|c| c.expr).collect()),
            depth,
            nodes,
        })
    }

    fn binary(
        col: usize,
        left: Sub,
        right: Sub,
        make: impl FnOnce(Box<Expr>, Box<Expr>) -> Expr,
    ) -> PResult {
        Self::node(col, vec![left, right], 0, |v| {
            let mut it = v.into_iter().map(Box::new);
            let (l, r) = (it.next().expect("left"), it.next().expect("right"));
            make(l, r)
        })
    }

    fn expr(&mut self) -> PResult {
        self.enter(self.col())?;
        let e = self.or_expr();
        self.leave();
        e
    }

    fn or_expr(&mut self) -> PResult {
        let mut left = self.and_expr()?;
        loop {
            let col = self.col();
            if !self.eat_op("or") {
                return Ok(left);
            }
            let right = self.and_expr()?;
            left = Self::binary(col, left, right, |left, right| Expr::Bool {
                op: BoolOp::Or,
                left,
                right,
            })?;
        }
    }

    fn and_expr(&mut self) -> PResult {
        let mut left = self.not_expr()?;
        loop {
            let col = self.col();
            if !self.eat_op("and") {
                return Ok(left);
            }
            let right = self.not_expr()?;
            left = Self::binary(col, left, right, |left, right| Expr::Bool {
                op: BoolOp::And,
                left,
                right,
            })?;
        }
    }

    fn not_expr(&mut self) -> PResult {
        let col = self.col();
        if self.eat_op("not") {
            self.enter(col)?;
            let operand = self.not_expr();
            self.leave();
            return Self::node(col, vec![operand?], 0, |mut v| Expr::Unary {
                op: UnaryOp::Not,
                operand: Box::new(v.remove(0)),
            });
        }
        self.comparison()
    }

    fn cmp_op(&self) -> Option<CmpOp> {
        match self.peek() {
            Tok::Op(s) => CmpOp::ALL.into_iter().find(|c| c.symbol() == *s),
            _ => None,
        }
    }

    /// A comparison, or a chain of them: `a < b <= c` is `a < b and b <= c` (the middle
    /// operand is copied; operands are pure, so this is Python's meaning).
    fn comparison(&mut self) -> PResult {
        let first = self.additive()?;
        let mut result: Option<Sub> = None;
        let mut left = first;
        while let Some(op) = self.cmp_op() {
            let col = self.col();
            self.next();
            let right = self.additive()?;
            // The right operand is also the next comparison's left one: count it twice.
            let copy = Sub {
                expr: right.expr.clone(),
                depth: right.depth,
                nodes: right.nodes,
            };
            let extra = if self.cmp_op().is_some() {
                copy.nodes
            } else {
                0
            };
            let cmp = Self::node(col, vec![left, right], extra, |v| {
                let mut it = v.into_iter().map(Box::new);
                Expr::Compare {
                    op,
                    left: it.next().expect("left"),
                    right: it.next().expect("right"),
                }
            })?;
            result = Some(match result {
                None => cmp,
                Some(prev) => Self::binary(col, prev, cmp, |left, right| Expr::Bool {
                    op: BoolOp::And,
                    left,
                    right,
                })?,
            });
            left = copy;
        }
        Ok(result.unwrap_or(left))
    }

    /// The arithmetic operator at the current token among `ops`, if any.
    fn binary_op(&self, ops: &[BinaryOp]) -> Option<BinaryOp> {
        match self.peek() {
            Tok::Op(s) => ops.iter().copied().find(|o| o.symbol() == *s),
            _ => None,
        }
    }

    fn additive(&mut self) -> PResult {
        self.arithmetic(&[BinaryOp::Add, BinaryOp::Sub], Self::term)
    }

    fn term(&mut self) -> PResult {
        let ops = [
            BinaryOp::Mul,
            BinaryOp::Div,
            BinaryOp::FloorDiv,
            BinaryOp::Mod,
        ];
        self.arithmetic(&ops, Self::unary)
    }

    /// A left-associative chain of `ops` over operands parsed by `operand`.
    fn arithmetic(&mut self, ops: &[BinaryOp], operand: fn(&mut Self) -> PResult) -> PResult {
        let mut left = operand(self)?;
        loop {
            let col = self.col();
            let Some(op) = self.binary_op(ops) else {
                return Ok(left);
            };
            self.next();
            let right = operand(self)?;
            left = Self::binary(col, left, right, |left, right| Expr::Binary {
                op,
                left,
                right,
            })?;
        }
    }

    fn unary(&mut self) -> PResult {
        let col = self.col();
        let op = match self.peek() {
            Tok::Op("-") => UnaryOp::Neg,
            Tok::Op("+") => UnaryOp::Pos,
            _ => return self.primary(),
        };
        self.next();
        self.enter(col)?;
        let operand = self.unary();
        self.leave();
        let operand = operand?;
        match (op, &operand.expr) {
            (UnaryOp::Neg, Expr::Literal(Value::Int(i))) if *i != 0 => {
                Ok(Sub::leaf(Expr::Literal(Value::Int(-i))))
            }
            (UnaryOp::Neg, Expr::Literal(Value::Float(f))) if !f.is_nan() && *f != 0.0 => {
                Ok(Sub::leaf(Expr::Literal(Value::Float(-f))))
            }
            _ => Self::node(col, vec![operand], 0, |mut v| Expr::Unary {
                op,
                operand: Box::new(v.remove(0)),
            }),
        }
    }

    fn primary(&mut self) -> PResult {
        let (tok, col) = self.next();
        match tok {
            Tok::Int(i) => Ok(Sub::leaf(Expr::Literal(Value::Int(i)))),
            Tok::Float(f) => Ok(Sub::leaf(Expr::Literal(Value::Float(f)))),
            Tok::Str(s) => Ok(Sub::leaf(Expr::Literal(Value::Str(s)))),
            Tok::Quoted(n) => Ok(Sub::leaf(Expr::Feature(n))),
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
                    "True" => return Ok(Sub::leaf(Expr::Literal(Value::Bool(true)))),
                    "False" => return Ok(Sub::leaf(Expr::Literal(Value::Bool(false)))),
                    _ => {}
                }
                if !matches!(self.peek(), Tok::LParen) {
                    return Ok(Sub::leaf(Expr::Feature(name)));
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
    fn call(&mut self, name: &str, col: usize) -> PResult {
        let is_if = name == "if";
        let func = Func::from_name(name);
        if !is_if && func.is_none() {
            let known: Vec<&str> = Func::ALL.iter().map(|f| f.name()).collect();
            return Err(ParseError {
                column: col + 1,
                message: format!(
                    "unknown function `{}`: known are if, {}",
                    crate::error::clip_to(name, 40),
                    known.join(", ")
                ),
            });
        }
        self.next();
        let args = self.arguments()?;
        let arity_err = |want: String| ParseError {
            column: col + 1,
            message: format!("{name}() takes {want} arguments, {} given", args.len()),
        };
        if is_if {
            if args.len() != 3 {
                return Err(arity_err("3 (condition, then, else)".into()));
            }
            return Self::node(col, args, 0, |v| {
                let mut it = v.into_iter().map(Box::new);
                let (cond, then, otherwise) = (it.next(), it.next(), it.next());
                Expr::If {
                    cond: cond.expect("three arguments"),
                    then: then.expect("three arguments"),
                    otherwise: otherwise.expect("three arguments"),
                }
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
        Self::node(col, args, 0, |args| Expr::Call { func, args })
    }

    /// The arguments of a call after its `(`, up to and including the `)`.
    fn arguments(&mut self) -> std::result::Result<Vec<Sub>, ParseError> {
        let mut args: Vec<Sub> = Vec::new();
        let mut nodes = 0;
        if !matches!(self.peek(), Tok::RParen) {
            loop {
                let col = self.col();
                let arg = self.expr()?;
                nodes += arg.nodes;
                args.push(arg);
                // Many small arguments: refused here, before the call node is built.
                if nodes > MAX_NODES {
                    return Err(too_big(col));
                }
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
        Ok(args)
    }
}

/// The error for an expression nesting beyond [`MAX_DEPTH`], at the 0-based `col`.
fn too_deep(col: usize) -> ParseError {
    ParseError {
        column: col + 1,
        message: format!(
            "the expression nests deeper than {MAX_DEPTH} levels (the limit of the expression language; each parenthesis, operator and call counts, and `a + b + c` is `(a + b) + c`); split it into several operations, each may read the ones before it"
        ),
    }
}

/// The error for an expression of more than [`MAX_NODES`] nodes, at the 0-based `col`.
fn too_big(col: usize) -> ParseError {
    ParseError {
        column: col + 1,
        message: format!(
            "the expression has more than {MAX_NODES} nodes (the limit of the expression language); split it into several operations, each may read the ones before it"
        ),
    }
}

/// Parses an expression; errors carry the 1-based column and what was expected. The
/// expression is within [`MAX_DEPTH`] and [`MAX_NODES`].
pub fn parse_expr(source: &str) -> std::result::Result<Expr, (usize, String)> {
    let toks = lex(source).map_err(|e| (e.column, e.message))?;
    let mut p = Parser {
        toks,
        pos: 0,
        nesting: 0,
    };
    let e = p.expr().map_err(|e| (e.column, e.message))?;
    if !matches!(p.peek(), Tok::End) {
        let e = p.error("an operator or the end of the expression");
        return Err((e.column, e.message));
    }
    Ok(e.expr)
}
