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

impl UnaryOp {
    /// Every unary operator, as the parser knows them.
    pub const ALL: [UnaryOp; 3] = [UnaryOp::Neg, UnaryOp::Pos, UnaryOp::Not];

    /// The operator as written in the language and in Python (`not` without its space).
    pub fn symbol(self) -> &'static str {
        match self {
            UnaryOp::Neg => "-",
            UnaryOp::Pos => "+",
            UnaryOp::Not => "not",
        }
    }
}

impl BinaryOp {
    /// Every arithmetic operator, as the parser knows them.
    pub const ALL: [BinaryOp; 6] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::FloorDiv,
        BinaryOp::Mod,
    ];

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
    /// Every comparison operator, as the parser knows them.
    pub const ALL: [CmpOp; 6] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
    ];

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
    /// Both boolean operators, as the parser knows them.
    pub const ALL: [BoolOp; 2] = [BoolOp::And, BoolOp::Or];

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
    /// Every built-in function, as the parser knows them.
    pub const ALL: [Func; 7] = [
        Func::Abs,
        Func::Min,
        Func::Max,
        Func::Str,
        Func::Int,
        Func::Float,
        Func::Bool,
    ];

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
        Func::ALL.into_iter().find(|f| f.name() == name)
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

/// One operator or function of the language: the table the parser reads its operators and
/// functions from ([`Operator::all`]), so that tests over every operation cover a new one
/// as soon as it can be parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// A unary operator.
    Unary(UnaryOp),
    /// An arithmetic operator.
    Binary(BinaryOp),
    /// A comparison.
    Compare(CmpOp),
    /// `and` / `or`.
    Bool(BoolOp),
    /// `if(cond, then, otherwise)`.
    If,
    /// A built-in function.
    Call(Func),
}

impl Operator {
    /// Every operator and function the parser accepts.
    pub fn all() -> Vec<Operator> {
        let mut out: Vec<Operator> = UnaryOp::ALL.into_iter().map(Operator::Unary).collect();
        out.extend(BinaryOp::ALL.into_iter().map(Operator::Binary));
        out.extend(CmpOp::ALL.into_iter().map(Operator::Compare));
        out.extend(BoolOp::ALL.into_iter().map(Operator::Bool));
        out.push(Operator::If);
        out.extend(Func::ALL.into_iter().map(Operator::Call));
        out
    }

    /// How many operands it takes at least (`min`, `max`: 2).
    pub fn arity(self) -> usize {
        match self {
            Operator::Unary(_) => 1,
            Operator::Binary(_) | Operator::Compare(_) | Operator::Bool(_) => 2,
            Operator::If => 3,
            Operator::Call(f) => f.arity().0,
        }
    }

    /// Source text applying the operator to `operands` (source text each; exactly
    /// [`arity`](Self::arity) of them, or more for `min`/`max`), parenthesized so that it
    /// parses to this operator over these operands.
    pub fn apply(self, operands: &[&str]) -> String {
        let op = |i: usize| format!("({})", operands[i]);
        match self {
            Operator::Unary(u) => format!("{} {}", u.symbol(), op(0)),
            Operator::Binary(b) => format!("{} {} {}", op(0), b.symbol(), op(1)),
            Operator::Compare(c) => format!("{} {} {}", op(0), c.symbol(), op(1)),
            Operator::Bool(b) => format!("{} {} {}", op(0), b.symbol(), op(1)),
            Operator::If => format!("if({}, {}, {})", operands[0], operands[1], operands[2]),
            Operator::Call(f) => format!("{}({})", f.name(), operands.join(", ")),
        }
    }
}
