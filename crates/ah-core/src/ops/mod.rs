//! Augment operations: derived features computed from logged ones (PyTorch's `AHOperation`).
//!
//! An [`Operation`] is a name, an expression over feature names and a categorical flag. The
//! expression is written in a tiny language that is parsed once into a public AST ([`Expr`]) and
//! evaluated with Python's semantics, so that training (here), the in-memory model, generated
//! Rust code and generated Python code all compute the same value of the same kind. PyTorch's
//! built-in operations (`pad_mm`, `mm`, `mixed_mm`, spec section 4) are written in the same
//! language ([`builtin_operations`]); users add their own in a file ([`parse_operations_file`],
//! format in `docs/augment-ops.md`).
//!
//! # The language
//! - literals: integers (`1024`), floats (`0.0`, `1e-3`, `inf`, `nan`), `True`/`False`, strings
//!   in single or double quotes (`'torch.bfloat16'`);
//! - feature references: identifiers (`m`, `mat1_stride_0`), or any name in backticks
//!   (`` `m*k` ``, `` `1LEQmLEQ16` ``);
//! - operators, loosest first: `or`; `and`; `not`; comparisons `== != < <= > >=` (chainable as
//!   in Python: `1 <= m <= 16`); `+ -`; `* / // %`; unary `-` and `+`;
//! - functions: `if(cond, then, else)` (only the taken branch is evaluated), `abs(x)`,
//!   `min(a, b, ...)`, `max(a, b, ...)`, `str(x)`, `int(x)`, `float(x)`, `bool(x)`.
//!
//! # Limits
//! An expression nests at most [`MAX_DEPTH`] levels deep and has at most [`MAX_NODES`]
//! nodes; the parser refuses anything beyond (with the column and what to do) before its
//! own recursion could overflow, so every [`Expr`] it returns can be evaluated, printed and
//! turned into Rust or Python by the recursive code of this crate and of `ah-codegen`.
//! [`Operator::all`] is the table of every operator and function the parser accepts.
//!
//! # Semantics (Python's)
//! Booleans count as integers in arithmetic (`True + True == 2`); `int op int` stays an integer
//! for `+ - * // %`, `/` is always float division; `//` and `%` floor towards negative infinity;
//! `and`/`or` return one of their operands, as Python does; `==` between a string and a number is
//! `False`, ordering them is an error; `str(x)` prints as Python's `str()`.
//!
//! Where Python differs from what we can do in 64 bits, evaluation fails instead of giving a
//! different answer: **division or modulo by zero** is an error ([`EvalError::DivisionByZero`],
//! Python raises `ZeroDivisionError`) and an **integer overflow** beyond `i64` is an error
//! ([`EvalError::Overflow`], Python has big integers). At run time a failed operation makes the
//! heuristic unsure ([`crate::UnsureReason::MissingFeature`] naming the operation).
//!
//! # Layout
//! The syntax tree lives in `ast.rs`, the value-level semantics in `semantics.rs` (over
//! [`scalar`], shared with generated code), the lexer and parser in `lex.rs`/`parse.rs`, the
//! interpreter in `eval.rs`, the printers in `print.rs`, operations in `operation.rs`, their
//! slot-compiled form in `compiled.rs`, PyTorch's built-ins in `builtin.rs` and the operations
//! file in `file.rs`.

mod ast;
mod builtin;
mod compiled;
mod eval;
mod file;
mod lex;
mod operation;
mod parse;
mod print;
pub mod scalar;
mod semantics;
#[cfg(test)]
mod tests;

pub use crate::optimization::builtin_operations;
pub use ast::{BinaryOp, BoolOp, CmpOp, Expr, Func, Operator, UnaryOp};
pub(crate) use builtin::{mixed_mm_operations, mm_operations, pad_mm_operations};
pub use compiled::{CompiledOps, SlotOperation};
#[cfg(feature = "fs")]
pub use file::parse_operations_file;
pub use file::parse_operations_str;
pub(crate) use operation::first_unknown_input;
pub use operation::{apply_operations, check_operations, Operation, OperationSpec};
pub use parse::{parse_expr, MAX_DEPTH, MAX_NODES};
pub use semantics::{binary, call, compare, truthy, unary, EvalError};
