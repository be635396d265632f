//! The generic path of generated code: a model's operations, parsed once and evaluated with
//! [`crate::ops`].

use std::sync::OnceLock;

use crate::heuristic::UnsureKind;
use crate::ops::{EvalError, Operation};
use crate::Context;

/// A model's operations for the generic path: parsed once, evaluated with [`crate::ops`] on a
/// copy of the context, as [`crate::model::ModelEvaluator`] does.
#[derive(Debug)]
pub struct Operations {
    /// (name, expression, categorical), in order.
    specs: &'static [(&'static str, &'static str, bool)],
    /// Every name the operations read (for allocation-free unsure reasons).
    inputs: &'static [&'static str],
    parsed: OnceLock<Vec<Operation>>,
}

impl Operations {
    /// The operations of a generated module.
    pub const fn new(
        specs: &'static [(&'static str, &'static str, bool)],
        inputs: &'static [&'static str],
    ) -> Self {
        Operations {
            specs,
            inputs,
            parsed: OnceLock::new(),
        }
    }

    fn parsed(&self) -> &[Operation] {
        self.parsed.get_or_init(|| {
            self.specs
                .iter()
                .map(|(name, expr, categorical)| {
                    Operation::parse(name, expr, *categorical).expect("generated operations parse")
                })
                .collect()
        })
    }

    /// The context with every operation's value set; a failure is unsure, naming the
    /// missing input or the operation.
    pub fn apply(&self, ctx: &Context) -> Result<Context, UnsureKind> {
        let mut s = ctx.clone();
        for (op, (name, _, _)) in self.parsed().iter().zip(self.specs) {
            let v = op.expr.eval(&|n| s.get(n).cloned()).map_err(|e| match e {
                EvalError::UnknownFeature(f) => UnsureKind::MissingFeature(
                    self.inputs
                        .iter()
                        .copied()
                        .find(|n| *n == f)
                        .unwrap_or(name),
                ),
                _ => UnsureKind::MissingFeature(name),
            })?;
            s.set(op.name.clone(), v, op.is_categorical);
        }
        Ok(s)
    }
}
