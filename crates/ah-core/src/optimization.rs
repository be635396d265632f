//! The registry of optimisations: everything the tools know about one optimisation name.
//!
//! An optimisation is a decision PyTorch's AutoHeuristic learns (`pad_mm`, `mm`, `mixed_mm`);
//! its name is the `name` of a log's metadata. Per name, this module is the one owner of
//! - the **default choice**, PyTorch's choice when no heuristic answers (`get_default_config`):
//!   the baseline of the speedup metrics (`ah-train`, `ah-eval`) and of `ah-use run`;
//! - the **built-in augment operations** (`add_new_features`, written in [`crate::ops`]'s
//!   language), which [`crate::ops::builtin_operations`] returns.
//!
//! [`lookup`] answers for every name: a name not in [`builtin`] (a user's optimisation, or
//! `reduction`, which PyTorch does not train) gets [`GENERIC`], with no default choice and no
//! operations. The training defaults per name (what PyTorch's `AHTrainDecision` subclasses
//! override) are the trainer's: `ah_train::defaults`. To add an optimisation, add an entry to the table in this
//! file (`docs/adding-a-heuristic.md`).
//!
//! The types are plain data; the consumers decide what to do with them.

use crate::ops::{mixed_mm_operations, mm_operations, pad_mm_operations, Operation};

/// Everything known about one optimisation name.
#[derive(Debug, Clone, Copy)]
pub struct Optimization {
    /// The optimisation name, as in a log's metadata (empty for [`GENERIC`], which stands for
    /// every name not in [`builtin`]).
    pub name: &'static str,
    /// PyTorch's choice when no heuristic answers, when it has one.
    pub default_choice: Option<&'static str>,
    /// Builds the built-in augment operations.
    operations: fn() -> Vec<Operation>,
}

impl Optimization {
    /// PyTorch's built-in augment operations for this optimisation, in PyTorch's order
    /// (verbatim names and formulas; none for [`GENERIC`]).
    pub fn operations(&self) -> Vec<Operation> {
        (self.operations)()
    }
}

fn no_operations() -> Vec<Operation> {
    Vec::new()
}

/// Any name not in [`builtin`]: PyTorch's defaults, no default choice, no operations.
pub static GENERIC: Optimization = Optimization {
    name: "",
    default_choice: None,
    operations: no_operations,
};

/// The optimisations PyTorch trains, with PyTorch's settings
/// (`torchgen/_autoheuristic/*/train_decision_*.py`).
static BUILTIN: [Optimization; 3] = [
    Optimization {
        name: "pad_mm",
        // Do not pad; the default choice serves the metrics only.
        default_choice: Some("orig"),
        operations: pad_mm_operations,
    },
    Optimization {
        name: "mm",
        default_choice: Some("extern_mm"),
        operations: mm_operations,
    },
    Optimization {
        name: "mixed_mm",
        default_choice: Some("extern_fallback_mixed_mm"),
        operations: mixed_mm_operations,
    },
];

/// The optimisations with their own entry, in a fixed order.
pub fn builtin() -> &'static [Optimization] {
    &BUILTIN
}

/// The entry of `name`, when it has its own.
pub fn find(name: &str) -> Option<&'static Optimization> {
    BUILTIN.iter().find(|o| o.name == name)
}

/// What is known about `name`: its own entry, else [`GENERIC`].
pub fn lookup(name: &str) -> &'static Optimization {
    find(name).unwrap_or(&GENERIC)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        for (i, o) in builtin().iter().enumerate() {
            assert!(!o.name.is_empty());
            assert_eq!(find(o.name).map(|f| f.name), Some(o.name));
            assert!(builtin()[..i].iter().all(|p| p.name != o.name));
        }
        assert!(find("").is_none(), "the generic entry is not found by name");
        assert!(find("reduction").is_none());
    }

    #[test]
    fn default_choices() {
        let d = |n| lookup(n).default_choice;
        assert_eq!(d("pad_mm"), Some("orig"));
        assert_eq!(d("mm"), Some("extern_mm"));
        assert_eq!(d("mixed_mm"), Some("extern_fallback_mixed_mm"));
        assert_eq!(d("reduction"), None);
        assert_eq!(d("my_opt"), None);
    }

    #[test]
    fn operations_per_entry() {
        let counts: Vec<usize> = builtin().iter().map(|o| o.operations().len()).collect();
        assert_eq!(counts, [26, 4, 19]);
        assert!(lookup("reduction").operations().is_empty());
    }
}
