//! The context of one decision: an ordered list of named features.
//!
//! A context built with [`Context::from_schema`] also carries its [`Schema`]'s id, so that
//! generated heuristics check its layout once per schema rather than once per decision (see
//! [`crate::schema`]). Every mutation clears the id: a context that carries one holds exactly
//! that schema's names, in that order.

use std::borrow::Cow;
use std::num::NonZeroU64;

use crate::schema::{Schema, SchemaError};
use crate::value::Value;

/// One logged feature (PyTorch's `AHFeature`).
#[derive(Debug, Clone, PartialEq)]
pub struct Feature {
    /// Feature name, as in the log header (`m`, `mat1_dtype`, ...).
    pub name: Cow<'static, str>,
    /// Its value for this decision.
    pub value: Value,
    /// Categorical features are one-hot encoded in training and compared as strings at run time.
    pub is_categorical: bool,
}

/// Ordered features of one decision (PyTorch's `AHContext`).
///
/// Insertion order is the log's column order. Lookup by name is a linear scan over a handful
/// of features and allocates nothing, so it may sit on the decision path. Equality compares
/// the features only, not the schema id.
#[derive(Debug, Clone, Default)]
pub struct Context {
    features: Vec<Feature>,
    /// The schema whose names (in order) `features` holds; `None` after any mutation.
    schema_id: Option<NonZeroU64>,
}

impl PartialEq for Context {
    fn eq(&self, other: &Self) -> bool {
        self.features == other.features
    }
}

impl Context {
    /// An empty context.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty context with room for `n` features.
    pub fn with_capacity(n: usize) -> Self {
        Self {
            features: Vec::with_capacity(n),
            schema_id: None,
        }
    }

    /// A context of `schema`'s features (names and categorical flags, in order) with these
    /// values; it carries the schema's id until it is mutated. A number of values other than
    /// the schema's number of features is an error.
    pub fn from_schema(schema: &Schema, values: Vec<Value>) -> Result<Self, SchemaError> {
        if values.len() != schema.len() {
            return Err(SchemaError::ValueCount {
                expected: schema.len(),
                given: values.len(),
            });
        }
        let features = schema
            .features()
            .iter()
            .zip(values)
            .map(|((name, is_categorical), value)| Feature {
                name: name.clone(),
                value,
                is_categorical: *is_categorical,
            })
            .collect();
        Ok(Self {
            features,
            schema_id: Some(schema.id()),
        })
    }

    /// The id of the [`Schema`] this context was built from, while it holds exactly that
    /// schema's names in order (any mutation clears it).
    #[inline]
    pub fn schema_id(&self) -> Option<NonZeroU64> {
        self.schema_id
    }

    /// Appends a numerical feature. A later feature of the same name shadows an earlier one in
    /// lookups, as PyTorch's `context_dict` assignment does.
    pub fn add(
        &mut self,
        name: impl Into<Cow<'static, str>>,
        value: impl Into<Value>,
    ) -> &mut Self {
        self.add_feature(name, value, false)
    }

    /// Appends a categorical feature.
    pub fn add_categorical(
        &mut self,
        name: impl Into<Cow<'static, str>>,
        value: impl Into<Value>,
    ) -> &mut Self {
        self.add_feature(name, value, true)
    }

    /// Appends a feature (PyTorch's `add_feature(name, value, is_categorical)`).
    pub fn add_feature(
        &mut self,
        name: impl Into<Cow<'static, str>>,
        value: impl Into<Value>,
        is_categorical: bool,
    ) -> &mut Self {
        self.schema_id = None;
        self.features.push(Feature {
            name: name.into(),
            value: value.into(),
            is_categorical,
        });
        self
    }

    /// Sets `name` to `value`: replaces the existing feature's value, or appends a new one.
    pub fn set(&mut self, name: impl Into<Cow<'static, str>>, value: Value, is_categorical: bool) {
        self.schema_id = None;
        let name = name.into();
        if let Some(f) = self.features.iter_mut().rev().find(|f| f.name == name) {
            f.value = value;
            f.is_categorical = is_categorical;
        } else {
            self.features.push(Feature {
                name,
                value,
                is_categorical,
            });
        }
    }

    /// The value of a feature, or `None` if the context has no feature of that name.
    #[inline]
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.features
            .iter()
            .rev()
            .find(|f| f.name == name)
            .map(|f| &f.value)
    }

    /// The features in insertion order.
    pub fn features(&self) -> &[Feature] {
        &self.features
    }

    /// Number of features.
    pub fn len(&self) -> usize {
        self.features.len()
    }

    /// True when there are no features.
    pub fn is_empty(&self) -> bool {
        self.features.is_empty()
    }

    /// Names of numerical and of categorical features, each in insertion order.
    pub fn numerical_and_categorical(&self) -> (Vec<String>, Vec<String>) {
        let mut num = Vec::new();
        let mut cat = Vec::new();
        for f in &self.features {
            if f.is_categorical {
                cat.push(f.name.to_string());
            } else {
                num.push(f.name.to_string());
            }
        }
        (num, cat)
    }

    /// `",".join(names)`: the log header's feature part.
    pub fn feature_names_csv(&self) -> String {
        self.features
            .iter()
            .map(|f| f.name.as_ref())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `",".join(str(value))`: a log row's feature part.
    pub fn feature_values_csv(&self) -> String {
        self.features
            .iter()
            .map(|f| f.value.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_orders_and_prints_like_python() {
        let mut c = Context::new();
        c.add("m", 1024i64)
            .add("k", 7i64)
            .add_categorical("mat1_dtype", "torch.float16");
        c.add_categorical("prepadded_mat1", true)
            .add_categorical("using_tf32", "not_float_32");
        assert_eq!(
            c.feature_names_csv(),
            "m,k,mat1_dtype,prepadded_mat1,using_tf32"
        );
        assert_eq!(
            c.feature_values_csv(),
            "1024,7,torch.float16,True,not_float_32"
        );
        let (num, cat) = c.numerical_and_categorical();
        assert_eq!(num, ["m", "k"]);
        assert_eq!(cat, ["mat1_dtype", "prepadded_mat1", "using_tf32"]);
        assert_eq!(c.get("k"), Some(&Value::Int(7)));
        assert_eq!(c.get("x"), None);
    }
}
