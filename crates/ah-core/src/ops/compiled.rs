//! [`CompiledOps`]: operations with feature names resolved to slots of one context layout, so
//! that running them does no name lookups.

use super::ast::{BinaryOp, BoolOp, CmpOp, Expr, Func, UnaryOp};
use super::operation::Operation;
use super::semantics::{
    binary, bool_takes_left, call, compare, truthy, unary, EvalError, EvalResult,
};
use crate::context::Context;
use crate::value::Value;

/// An expression with feature names resolved to slots (see [`CompiledOps`]).
#[derive(Debug, Clone, PartialEq)]
enum SlotExpr {
    Literal(Value),
    Slot(usize),
    Missing(String),
    Unary(UnaryOp, Box<SlotExpr>),
    Binary(BinaryOp, Box<SlotExpr>, Box<SlotExpr>),
    Compare(CmpOp, Box<SlotExpr>, Box<SlotExpr>),
    Bool(BoolOp, Box<SlotExpr>, Box<SlotExpr>),
    If(Box<SlotExpr>, Box<SlotExpr>, Box<SlotExpr>),
    Call(Func, Vec<SlotExpr>),
}

impl SlotExpr {
    fn compile(e: &Expr, names: &[(String, usize)]) -> SlotExpr {
        SlotExpr::compile_with(e, &|n| {
            names.iter().rev().find(|(m, _)| m == n).map(|(_, s)| *s)
        })
    }

    /// `e` with each feature name resolved by `slot` (`None`: missing).
    fn compile_with(e: &Expr, slot: &dyn Fn(&str) -> Option<usize>) -> SlotExpr {
        let c = |e: &Expr| Box::new(SlotExpr::compile_with(e, slot));
        match e {
            Expr::Literal(v) => SlotExpr::Literal(v.clone()),
            Expr::Feature(n) => match slot(n) {
                Some(s) => SlotExpr::Slot(s),
                None => SlotExpr::Missing(n.clone()),
            },
            Expr::Unary { op, operand } => SlotExpr::Unary(*op, c(operand)),
            Expr::Binary { op, left, right } => SlotExpr::Binary(*op, c(left), c(right)),
            Expr::Compare { op, left, right } => SlotExpr::Compare(*op, c(left), c(right)),
            Expr::Bool { op, left, right } => SlotExpr::Bool(*op, c(left), c(right)),
            Expr::If {
                cond,
                then,
                otherwise,
            } => SlotExpr::If(c(cond), c(then), c(otherwise)),
            Expr::Call { func, args } => SlotExpr::Call(
                *func,
                args.iter()
                    .map(|a| SlotExpr::compile_with(a, slot))
                    .collect(),
            ),
        }
    }

    fn eval(&self, slots: &[Value]) -> EvalResult<Value> {
        match self {
            SlotExpr::Literal(v) => Ok(v.clone()),
            SlotExpr::Slot(i) => Ok(slots[*i].clone()),
            SlotExpr::Missing(n) => Err(EvalError::UnknownFeature(n.clone())),
            SlotExpr::Unary(op, a) => unary(*op, &a.eval(slots)?),
            SlotExpr::Binary(op, a, b) => binary(*op, &a.eval(slots)?, &b.eval(slots)?),
            SlotExpr::Compare(op, a, b) => {
                compare(*op, &a.eval(slots)?, &b.eval(slots)?).map(Value::Bool)
            }
            SlotExpr::Bool(op, a, b) => {
                let l = a.eval(slots)?;
                if bool_takes_left(*op, &l) {
                    Ok(l)
                } else {
                    b.eval(slots)
                }
            }
            SlotExpr::If(c, t, o) => {
                if truthy(&c.eval(slots)?) {
                    t.eval(slots)
                } else {
                    o.eval(slots)
                }
            }
            SlotExpr::Call(func, args) => {
                let vals = args
                    .iter()
                    .map(|a| a.eval(slots))
                    .collect::<EvalResult<Vec<_>>>()?;
                call(*func, &vals)
            }
        }
    }
}

/// One operation with its feature names resolved to slots by the caller's rule, for running it
/// on many inputs without name lookups: [`SlotOperation::eval`] gives what
/// [`Operation::eval`] gives with a lookup that answers each name by its slot (and a name
/// without one as unknown), value and error alike.
#[derive(Debug, Clone)]
pub struct SlotOperation {
    name: String,
    expr: SlotExpr,
}

impl SlotOperation {
    /// Resolves the feature names `op` reads with `slot` (`None`: an unknown feature).
    pub fn compile(op: &Operation, slot: &dyn Fn(&str) -> Option<usize>) -> Self {
        SlotOperation {
            name: op.name.clone(),
            expr: SlotExpr::compile_with(&op.expr, slot),
        }
    }

    /// Evaluates the operation on the values by slot; a slot must be below `slots.len()`.
    pub fn eval(&self, slots: &[Value]) -> crate::error::Result<Value> {
        self.expr
            .eval(slots)
            .map_err(|source| crate::error::Error::Operation {
                name: self.name.clone(),
                source,
            })
    }
}

/// Operations compiled for one context *layout* (the ordered feature names of the contexts they
/// will run on): every feature reference is resolved to a slot once, so running them does no
/// name lookups. Values are those of [`apply_operations`](super::apply_operations) on the same
/// context, bit for bit: a name resolves to the last feature of that name or the latest
/// operation defining it, as [`Context::get`] after [`Context::set`] does.
#[derive(Debug, Clone)]
pub struct CompiledOps {
    layout: Vec<String>,
    slots: usize,
    ops: Vec<(usize, SlotExpr)>,
    names: Vec<(String, usize)>,
}

impl CompiledOps {
    /// Compiles `ops` for contexts whose feature names are `layout`, in order.
    pub fn compile(ops: &[Operation], layout: &[&str]) -> Self {
        let mut names: Vec<(String, usize)> = layout
            .iter()
            .enumerate()
            .map(|(i, n)| (n.to_string(), i))
            .collect();
        let mut slots = layout.len();
        let mut compiled = Vec::with_capacity(ops.len());
        for op in ops {
            let expr = SlotExpr::compile(&op.expr, &names);
            let target = match names.iter().rev().find(|(m, _)| *m == op.name) {
                Some((_, slot)) => *slot,
                None => {
                    names.push((op.name.clone(), slots));
                    slots += 1;
                    slots - 1
                }
            };
            compiled.push((target, expr));
        }
        Self {
            layout: layout.iter().map(|s| s.to_string()).collect(),
            slots,
            ops: compiled,
            names,
        }
    }

    /// Compiles `ops` for the layout of `ctx`.
    pub fn for_context(ops: &[Operation], ctx: &Context) -> Self {
        let layout: Vec<&str> = ctx.features().iter().map(|f| f.name.as_ref()).collect();
        Self::compile(ops, &layout)
    }

    /// True when `ctx` has exactly the layout this was compiled for.
    pub fn matches(&self, ctx: &Context) -> bool {
        let f = ctx.features();
        f.len() == self.layout.len()
            && f.iter()
                .zip(&self.layout)
                .all(|(a, b)| a.name == b.as_str())
    }

    /// The slot holding a feature or operation result after [`run`](Self::run) (the last
    /// definition of the name), `None` for names neither in the layout nor defined.
    pub fn slot(&self, name: &str) -> Option<usize> {
        self.names
            .iter()
            .rev()
            .find(|(m, _)| m == name)
            .map(|(_, s)| *s)
    }

    /// Number of slots (layout features plus new operation results).
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Runs the operations on a context of the compiled layout (check with
    /// [`matches`](Self::matches)): `slots` receives the feature values, then each result.
    /// On failure, the index of the failing operation and why.
    pub fn run(
        &self,
        ctx: &Context,
        slots: &mut Vec<Value>,
    ) -> std::result::Result<(), (usize, EvalError)> {
        debug_assert!(
            self.matches(ctx),
            "CompiledOps::run on a context of another layout"
        );
        slots.clear();
        slots.extend(ctx.features().iter().map(|f| f.value.clone()));
        slots.resize(self.slots, Value::Bool(false));
        for (i, (target, expr)) in self.ops.iter().enumerate() {
            slots[*target] = expr.eval(slots).map_err(|e| (i, e))?;
        }
        Ok(())
    }
}
