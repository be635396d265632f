//! [`Operation`]: a named, parsed expression (from its [`OperationSpec`], as a model records
//! it); applying operations to a context in order and checking that each reads only known
//! features.

use serde::{Deserialize, Serialize};

use super::ast::Expr;
use super::parse::parse_expr;
use crate::context::Context;
use crate::error::{clip_to, Error, Result};
use crate::value::Value;

/// An augment operation as recorded in the model: a name, the expression source (see
/// [`crate::ops`]) and whether the result is categorical.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperationSpec {
    /// Feature name the operation defines (`m*k`, `arith_intensity`, ...).
    pub name: String,
    /// Expression source over feature names.
    pub expr: String,
    /// Categorical results are one-hot encoded (compared as strings).
    pub categorical: bool,
}

/// One augment operation: `name = expr`, numerical or categorical.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    /// The feature the operation defines (`m*k`, `arith_intensity`, ...).
    pub name: String,
    /// The expression source as given.
    pub source: String,
    /// Categorical results are one-hot encoded (compared as strings).
    pub is_categorical: bool,
    /// The parsed expression.
    pub expr: Expr,
}

impl Operation {
    /// Parses an operation. Errors name the operation, the column and what was expected.
    pub fn parse(name: &str, source: &str, is_categorical: bool) -> Result<Operation> {
        if name.is_empty() || name.contains([',', '\n', '\r', '`']) || name.trim() != name {
            return Err(Error::Other(format!(
                "invalid operation name {:?}: a name must be non-empty, without commas, backticks, line breaks or surrounding spaces (it becomes a CSV column)",
                clip_to(name, 60)
            )));
        }
        let expr = parse_expr(source).map_err(|(column, message)| Error::Expression {
            name: name.to_string(),
            source_text: source.to_string(),
            column,
            message,
        })?;
        Ok(Operation {
            name: name.to_string(),
            source: source.to_string(),
            is_categorical,
            expr,
        })
    }

    /// Parses an operation recorded in a model.
    pub fn from_spec(spec: &OperationSpec) -> Result<Operation> {
        Self::parse(&spec.name, &spec.expr, spec.categorical)
    }

    /// The operation as recorded in a model.
    pub fn spec(&self) -> OperationSpec {
        OperationSpec {
            name: self.name.clone(),
            expr: self.source.clone(),
            categorical: self.is_categorical,
        }
    }

    /// Referenced feature names, in order of first use, without duplicates.
    pub fn inputs(&self) -> Vec<&str> {
        self.expr.inputs()
    }

    /// Evaluates the operation; an unknown feature name is an error naming it.
    pub fn eval(&self, lookup: &dyn Fn(&str) -> Option<Value>) -> Result<Value> {
        self.expr.eval(lookup).map_err(|source| Error::Operation {
            name: self.name.clone(),
            source,
        })
    }

    /// Evaluates the operation on a context.
    pub fn eval_context(&self, ctx: &Context) -> Result<Value> {
        self.eval(&|n| ctx.get(n).cloned())
    }
}

/// Applies operations to a context in order (each result is set on the context, so later
/// operations see earlier ones), as PyTorch's `AHContext.apply_operations` does.
///
/// Unlike PyTorch (which only updates `context_dict`), the results become features of `ctx`,
/// so apply them to a copy when the context is logged afterwards.
pub fn apply_operations(ops: &[Operation], ctx: &mut Context) -> Result<()> {
    for op in ops {
        let v = op.eval_context(ctx)?;
        ctx.set(op.name.clone(), v, op.is_categorical);
    }
    Ok(())
}

/// Checks that no two operations share a name and that every operation reads only
/// `available` features or results of earlier operations. The error names the operation (and
/// the unknown feature). Two definitions of one name would leave it to their order which one
/// a later operation or the tree reads: every reader of a list of operations (an operations
/// file, a training's built-in and user operations, a model) refuses them.
pub fn check_operations(ops: &[Operation], available: &[String]) -> Result<()> {
    if let Some((i, first)) =
        crate::duplicates::first_duplicate(ops.iter().map(|o| o.name.as_str()))
    {
        return Err(Error::Other(format!(
            "operation `{}` is defined twice (operations {} and {}, built-in ones first): \
             rename yours (a built-in operation's name is taken while built-in operations are on)",
            clip_to(&ops[i].name, 60),
            first + 1,
            i + 1
        )));
    }
    match first_unknown_input(ops, available) {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// The first operation (its index) that reads a feature neither in `available` nor defined
/// by an earlier operation, and the error naming both.
pub(crate) fn first_unknown_input(
    ops: &[Operation],
    available: &[String],
) -> Option<(usize, Error)> {
    let mut known: Vec<&str> = available.iter().map(String::as_str).collect();
    for (i, op) in ops.iter().enumerate() {
        for input in op.inputs() {
            if !known.contains(&input) {
                let later = ops.iter().any(|o| o.name == input);
                let hint = if later {
                    " (it is defined by a later operation: move that one up)".to_string()
                } else {
                    // Names are clipped like every quote: a hand-edited model may hold a
                    // feature name of thousands of characters.
                    let shown: Vec<_> = known.iter().take(20).map(|k| clip_to(k, 60)).collect();
                    let more = known.len().saturating_sub(shown.len());
                    let more = if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    };
                    format!("; known features: {}{more}", shown.join(", "))
                };
                let e = Error::Other(format!(
                    "operation `{}` reads unknown feature `{}`{hint}",
                    clip_to(&op.name, 60),
                    clip_to(input, 60)
                ));
                return Some((i, e));
            }
        }
        known.push(&op.name);
    }
    None
}
