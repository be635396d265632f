//! Reading a context's values in generated code: by position once the context's schema is
//! known to hold the logged layout ([`VerifiedSchema`]), else by name ([`read_by_name`]); a
//! value as a number ([`number`], [`num`]) or present ([`present`]).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::heuristic::UnsureKind;
use crate::{Context, Feature, Value};

/// The id of the last [`crate::Schema`] whose contexts a generated module found to hold its
/// logged layout (0: none yet), so that the names are compared once per schema.
///
/// Exact: schema ids are never reused and a context carries an id only while it holds that
/// schema's names in order ([`Context::schema_id`]), so a context with the stored id holds
/// the layout. Threads deciding with different schemas each fall back to the comparison (the
/// last one stored wins), never to a wrong answer.
#[derive(Debug, Default)]
pub struct VerifiedSchema(AtomicU64);

impl VerifiedSchema {
    /// No schema verified yet.
    pub const fn new() -> Self {
        VerifiedSchema(AtomicU64::new(0))
    }

    /// `ctx`'s features when they are named `layout`, exactly and in order, else `None`:
    /// without comparing names when its schema was verified before; else comparing them, and
    /// remembering its schema (if any) when they match.
    #[inline]
    pub fn laid_out<'c, const N: usize>(
        &self,
        ctx: &'c Context,
        layout: &[&str; N],
    ) -> Option<&'c [Feature; N]> {
        let features: &[Feature; N] = ctx.features().try_into().ok()?;
        let id = ctx.schema_id();
        if let Some(id) = id {
            if self.0.load(Ordering::Relaxed) == id.get() {
                return Some(features);
            }
        }
        if features.iter().zip(layout).any(|(f, n)| f.name != *n) {
            return None;
        }
        if let Some(id) = id {
            self.0.store(id.get(), Ordering::Relaxed);
        }
        Some(features)
    }

    /// The values of the features named `layout`: by position when `ctx` holds them in
    /// order ([`VerifiedSchema::laid_out`]), else by name ([`read_by_name`]).
    #[inline(always)]
    pub fn read<'c, const N: usize>(
        &self,
        ctx: &'c Context,
        layout: &[&str; N],
    ) -> [Option<&'c Value>; N] {
        let Some(features) = self.laid_out(ctx, layout) else {
            return read_by_name(ctx, layout);
        };
        // A loop, not `each_ref().map(..)`: the array's `map` is not inlined, and costs a
        // decision as much as its tree.
        let mut out = [None; N];
        for (o, f) in out.iter_mut().zip(features) {
            *o = Some(&f.value);
        }
        out
    }
}

/// The values of the features named `names`, by name: a feature missing from `ctx` is
/// `None`; of several of one name, the last (it shadows the others, as in
/// [`Context::get`]).
#[inline]
pub fn read_by_name<'c, const N: usize>(
    ctx: &'c Context,
    names: &[&str; N],
) -> [Option<&'c Value>; N] {
    let mut out = [None; N];
    for f in ctx.features() {
        if let Some(i) = names.iter().position(|n| f.name == *n) {
            out[i] = Some(&f.value);
        }
    }
    out
}

/// A numeric value (booleans count as 0/1); `None` when missing or a string.
#[inline]
pub fn number(v: Option<&Value>) -> Option<f64> {
    match v {
        Some(Value::Int(i)) => Some(*i as f64),
        Some(Value::Float(f)) => Some(*f),
        Some(Value::Bool(b)) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

/// [`number`], else unsure naming the feature.
#[inline]
pub fn num(v: Option<&Value>, name: &'static str) -> Result<f64, UnsureKind> {
    number(v).ok_or(UnsureKind::MissingFeature(name))
}

/// A value that must be present, else unsure naming the feature.
#[inline]
pub fn present<'a>(v: Option<&'a Value>, name: &'static str) -> Result<&'a Value, UnsureKind> {
    v.ok_or(UnsureKind::MissingFeature(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verified_schema_compares_names_once_per_schema_and_exactly() {
        use crate::Schema;
        static VERIFIED: VerifiedSchema = VerifiedSchema::new();
        let values = || vec![Value::Int(1), Value::Int(2)];
        let ab = Schema::new([("a", false), ("b", false)]);
        let ba = Schema::new([("b", false), ("a", false)]);
        let c = Context::from_schema(&ab, values()).unwrap();
        assert!(VERIFIED.laid_out(&c, &["a", "b"]).is_some());
        assert_eq!(VERIFIED.0.load(Ordering::Relaxed), ab.id().get());
        // Verified: held without comparing names (a layout it does not hold shows it).
        assert!(VERIFIED.laid_out(&c, &["x", "y"]).is_some());
        // Another schema with other names is compared, and does not replace the verified one.
        let swapped = Context::from_schema(&ba, values()).unwrap();
        assert!(VERIFIED.laid_out(&swapped, &["a", "b"]).is_none());
        assert_eq!(VERIFIED.0.load(Ordering::Relaxed), ab.id().get());
        // A mutated context has no id: compared by name.
        let mut grown = c.clone();
        grown.add("z", 3i64);
        assert!(VERIFIED.laid_out(&grown, &["a", "b"]).is_none());
        let mut added = Context::new();
        added.add("a", 1i64).add("b", 2i64);
        assert!(VERIFIED.laid_out(&added, &["a", "b"]).is_some());
        assert!(VERIFIED.laid_out(&added, &["a", "c"]).is_none());
    }
}
