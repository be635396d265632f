//! The expression language's syntax tree: operators, built-in functions and [`Expr`].

use crate::value::Value;

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

    pub(super) fn from_name(name: &str) -> Option<Func> {
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
