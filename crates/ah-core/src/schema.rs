//! A decision's feature layout, built once and shared: [`Schema`].
//!
//! Generated heuristics read a context by position when its features are the logged layout,
//! and check that layout by comparing every feature's name first (a third of a decision's
//! time for a 17-feature `pad_mm` context). A caller that builds many contexts of one layout
//! builds a [`Schema`] once and each context with [`crate::Context::from_schema`]; the context
//! then carries the schema's [`Schema::id`], and generated code compares the names once per
//! schema instead of once per decision
//! ([`crate::generated::VerifiedSchema`]).
//!
//! Exactness rests on two rules: an id is never reused within a process (a global counter
//! assigns it at construction, and a schema cannot be cloned), and a context carries an id only
//! while it holds exactly that schema's names in that order (every mutation of a context
//! clears it). So two contexts with the same id have the same names in the same order.

use std::borrow::Cow;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

/// The next schema id; ids start at 1 and are never reused.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// An immutable, ordered list of (feature name, is categorical), with a process-unique id.
///
/// Share it as `Arc<Schema>`; it is deliberately not `Clone` (a clone would share the id).
#[derive(Debug, PartialEq, Eq)]
pub struct Schema {
    id: NonZeroU64,
    features: Vec<(Cow<'static, str>, bool)>,
}

/// Errors of building a context from a [`Schema`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaError {
    /// The number of values differs from the schema's number of features.
    ValueCount {
        /// The schema's number of features.
        expected: usize,
        /// The number of values given.
        given: usize,
    },
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SchemaError::ValueCount { expected, given } => write!(
                f,
                "the schema has {expected} features but {given} values were given"
            ),
        }
    }
}

impl std::error::Error for SchemaError {}

impl Schema {
    /// A schema of these (name, is categorical) features, in order, with a fresh id.
    pub fn new<N: Into<Cow<'static, str>>>(features: impl IntoIterator<Item = (N, bool)>) -> Self {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        Schema {
            id: NonZeroU64::new(id).expect("schema ids start at 1 and do not wrap in a process"),
            features: features
                .into_iter()
                .map(|(n, categorical)| (n.into(), categorical))
                .collect(),
        }
    }

    /// The process-unique id (never reused, never 0).
    pub fn id(&self) -> NonZeroU64 {
        self.id
    }

    /// The (name, is categorical) features, in order.
    pub fn features(&self) -> &[(Cow<'static, str>, bool)] {
        &self.features
    }

    /// Number of features.
    pub fn len(&self) -> usize {
        self.features.len()
    }

    /// True when the schema has no features.
    pub fn is_empty(&self) -> bool {
        self.features.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::{Context, Value};

    fn schema() -> Arc<Schema> {
        Arc::new(Schema::new([("m", false), ("k", false), ("dtype", true)]))
    }

    fn values() -> Vec<Value> {
        vec![
            Value::Int(8),
            Value::Int(4),
            Value::Str("torch.float16".into()),
        ]
    }

    #[test]
    fn ids_are_unique_and_nonzero() {
        let a = schema();
        let b = schema();
        assert_ne!(a.id(), b.id());
        let ids: std::collections::BTreeSet<u64> = (0..100)
            .map(|_| Schema::new([("m", false)]).id().get())
            .collect();
        assert_eq!(ids.len(), 100);
        assert!(!ids.contains(&a.id().get()) && !ids.contains(&b.id().get()));
    }

    #[test]
    fn context_from_schema_has_its_names_flags_and_id() {
        let s = schema();
        let c = Context::from_schema(&s, values()).unwrap();
        assert_eq!(c.schema_id(), Some(s.id()));
        assert_eq!(c.feature_names_csv(), "m,k,dtype");
        assert_eq!(c.feature_values_csv(), "8,4,torch.float16");
        let (num, cat) = c.numerical_and_categorical();
        assert_eq!(
            (num, cat),
            (vec!["m".to_string(), "k".into()], vec!["dtype".into()])
        );
        assert_eq!(c.clone().schema_id(), Some(s.id()));
    }

    #[test]
    fn a_count_mismatch_is_an_error() {
        let s = schema();
        let mut v = values();
        v.pop();
        assert_eq!(
            Context::from_schema(&s, v),
            Err(SchemaError::ValueCount {
                expected: 3,
                given: 2
            })
        );
        let mut v = values();
        v.push(Value::Int(1));
        assert_eq!(
            Context::from_schema(&s, v).unwrap_err().to_string(),
            "the schema has 3 features but 4 values were given"
        );
    }

    #[test]
    fn every_mutation_clears_the_id() {
        let s = schema();
        let fresh = || Context::from_schema(&s, values()).unwrap();
        type Mutation = fn(&mut Context);
        let mutations: [(&str, Mutation); 5] = [
            ("add", |c| {
                c.add("n", 1i64);
            }),
            ("add_categorical", |c| {
                c.add_categorical("x", "a");
            }),
            ("add_feature", |c| {
                c.add_feature("y", 2i64, false);
            }),
            ("set existing", |c| c.set("m", Value::Int(9), false)),
            ("set new", |c| c.set("z", Value::Int(9), true)),
        ];
        for (what, mutate) in mutations {
            let mut c = fresh();
            assert!(c.schema_id().is_some(), "{what}");
            mutate(&mut c);
            assert_eq!(c.schema_id(), None, "{what}");
        }
    }

    #[test]
    fn equality_ignores_the_id() {
        let s = schema();
        let with_id = Context::from_schema(&s, values()).unwrap();
        let mut added = Context::new();
        added
            .add("m", 8i64)
            .add("k", 4i64)
            .add_categorical("dtype", "torch.float16");
        assert_eq!(added.schema_id(), None);
        assert_eq!(with_id, added);
        let other = Arc::new(Schema::new([("m", false), ("k", false), ("dtype", true)]));
        assert_eq!(with_id, Context::from_schema(&other, values()).unwrap());
        let mut changed = added.clone();
        changed.set("k", Value::Int(5), false);
        assert_ne!(with_id, changed);
    }
}
