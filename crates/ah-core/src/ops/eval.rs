//! The interpreter: [`Expr::eval`] on feature values looked up by name, and the feature names an
//! expression reads.

use super::ast::Expr;
use super::semantics::{
    binary, bool_takes_left, call, compare, truthy, unary, EvalError, EvalResult,
};
use crate::value::Value;

impl Expr {
    /// Evaluates the expression; `lookup` gives feature values by name.
    pub fn eval(&self, lookup: &dyn Fn(&str) -> Option<Value>) -> EvalResult<Value> {
        match self {
            Expr::Literal(v) => Ok(v.clone()),
            Expr::Feature(name) => {
                lookup(name).ok_or_else(|| EvalError::UnknownFeature(name.clone()))
            }
            Expr::Unary { op, operand } => unary(*op, &operand.eval(lookup)?),
            Expr::Binary { op, left, right } => {
                binary(*op, &left.eval(lookup)?, &right.eval(lookup)?)
            }
            Expr::Compare { op, left, right } => {
                compare(*op, &left.eval(lookup)?, &right.eval(lookup)?).map(Value::Bool)
            }
            Expr::Bool { op, left, right } => {
                let l = left.eval(lookup)?;
                if bool_takes_left(*op, &l) {
                    Ok(l)
                } else {
                    right.eval(lookup)
                }
            }
            Expr::If {
                cond,
                then,
                otherwise,
            } => {
                if truthy(&cond.eval(lookup)?) {
                    then.eval(lookup)
                } else {
                    otherwise.eval(lookup)
                }
            }
            Expr::Call { func, args } => {
                let vals = args
                    .iter()
                    .map(|a| a.eval(lookup))
                    .collect::<EvalResult<Vec<_>>>()?;
                call(*func, &vals)
            }
        }
    }

    /// Referenced feature names, in order of first use, without duplicates.
    pub fn inputs(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.visit_features(&mut |n| {
            if !out.contains(&n) {
                out.push(n);
            }
        });
        out
    }

    fn visit_features<'a>(&'a self, f: &mut dyn FnMut(&'a str)) {
        match self {
            Expr::Literal(_) => {}
            Expr::Feature(n) => f(n),
            Expr::Unary { operand, .. } => operand.visit_features(f),
            Expr::Binary { left, right, .. }
            | Expr::Compare { left, right, .. }
            | Expr::Bool { left, right, .. } => {
                left.visit_features(f);
                right.visit_features(f);
            }
            Expr::If {
                cond,
                then,
                otherwise,
            } => {
                cond.visit_features(f);
                then.visit_features(f);
                otherwise.visit_features(f);
            }
            Expr::Call { args, .. } => args.iter().for_each(|a| a.visit_features(f)),
        }
    }
}
