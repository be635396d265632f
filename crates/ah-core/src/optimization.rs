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
static BUILTIN: &[Optimization] = &[
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
    Optimization {
        name: CUBLASLT_MM,
        // Our cuBLASLt algorithm ranking (ah-collect's `cublaslt_mm` runner, docs/cublaslt-mm-ranking.md):
        // PyTorch's mm features and mm's ranking settings, but choices of its own (cuBLASLt's
        // candidates), so it is not PyTorch's `mm` hook.
        // mm's training defaults too (`ah_train::defaults`).
        default_choice: Some("extern_mm"),
        operations: mm_operations,
    },
    // A new optimisation is one more entry here, nothing else (docs/tutorial.md, step 2).
];

/// The name of ah-collect's cuBLASLt ranking runner and of its heuristics. Its logs written
/// before the rename carry the name `mm` ([`log_name`] reads them as this one).
pub const CUBLASLT_MM: &str = "cublaslt_mm";

/// The optimisation a log's metadata `name` stands for, given the log's choices: the name
/// itself, except for logs of our cuBLASLt runner written before it was renamed, whose name is
/// PyTorch's `mm` but whose choices are all cuBLASLt's (`extern_mm` and `lt2`, ... or
/// `algo12-tile0-...`): those are [`CUBLASLT_MM`]. Any other `mm` log (PyTorch's own, with
/// Inductor's choice names) stays `mm`.
pub fn log_name<'a>(name: &'a str, choices: impl Iterator<Item = &'a str>) -> &'a str {
    if name != "mm" {
        return name;
    }
    // cuBLASLt's candidates: ranks (`lt2`) or algorithm configurations (`algo12-tile0-...`),
    // beside cuBLASLt's own pick `extern_mm`.
    let candidate = |c: &str| {
        c.strip_prefix("lt")
            .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
            || (c.starts_with("algo") && c.contains("-tile"))
    };
    let (mut ours, mut others) = (false, false);
    for c in choices {
        if candidate(c) {
            ours = true;
        } else if c != "extern_mm" {
            others = true;
        }
    }
    if ours && !others {
        CUBLASLT_MM
    } else {
        name
    }
}

/// Whether a log whose metadata names `logged` may be resumed by the runner `runner`: the
/// same name, or the name `runner`'s logs had before a rename (`mm` for [`CUBLASLT_MM`]).
pub fn is_former_name(logged: &str, runner: &str) -> bool {
    runner == CUBLASLT_MM && logged == "mm"
}

/// Whether `choice` can be a choice of PyTorch's AutoHeuristic hook `name`: `None` when `name`
/// is not one of PyTorch's hooks ([`PYTORCH_HOOKS`]). A heuristic installed into PyTorch under a
/// hook's name is asked by Inductor at that call site, which drops every choice it does not
/// know: a heuristic whose choices are not the hook's must not take its name (`ah-codegen`
/// refuses to write such a Python artifact).
/// - `pad_mm`: `orig`, `pad`;
/// - `mm`: `extern_mm` and Inductor's choice names (`type=triton_...`, `extern_...`,
///   `subgraph_...`);
/// - `mixed_mm`: `extern_fallback_mixed_mm` and Inductor's choice names as for `mm`.
pub fn pytorch_hook_accepts(name: &str, choice: &str) -> Option<bool> {
    let inductor = |c: &str| {
        c.starts_with("type=triton_") || c.starts_with("extern_") || c.starts_with("subgraph_")
    };
    match name {
        "pad_mm" => Some(matches!(choice, "orig" | "pad")),
        "mm" | "mixed_mm" => Some(inductor(choice)),
        _ => None,
    }
}

/// The names of PyTorch's AutoHeuristic hooks (Inductor's `autoheuristic_use` values) that
/// [`pytorch_hook_accepts`] knows the choices of.
pub const PYTORCH_HOOKS: [&str; 3] = ["pad_mm", "mm", "mixed_mm"];

/// The optimisations with their own entry, in a fixed order.
pub fn builtin() -> &'static [Optimization] {
    BUILTIN
}

/// The entry of `name`, when it has its own.
pub fn find(name: &str) -> Option<&'static Optimization> {
    BUILTIN.iter().find(|o| o.name == name)
}

/// What is known about `name`: its own entry, else [`GENERIC`].
pub fn lookup(name: &str) -> &'static Optimization {
    find(name).unwrap_or(&GENERIC)
}

/// PyTorch's built-in operations for an optimization name (spec section 4), verbatim names and
/// formulas: `pad_mm` (26), `mm` (4), `mixed_mm` (4 + 15); other names have none. The
/// registry's [`Optimization::operations`] of the name.
pub fn builtin_operations(name: &str) -> Vec<Operation> {
    lookup(name).operations()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn former_cublaslt_logs_read_as_cublaslt_mm() {
        let ours = ["extern_mm", "lt2", "lt3"];
        assert_eq!(log_name("mm", ours.into_iter()), CUBLASLT_MM);
        let configs = [
            "extern_mm",
            "algo12-tile0-stages0-splitk1-red0-swz0-cus0-in0-cl0",
        ];
        assert_eq!(log_name("mm", configs.into_iter()), CUBLASLT_MM);
        let inductor = ["extern_mm", "type=triton_BLOCK-M=64_numwarps=4"];
        assert_eq!(log_name("mm", inductor.into_iter()), "mm");
        assert_eq!(log_name("pad_mm", ["orig", "x"].into_iter()), "pad_mm");
        // Neither PyTorch's nor ours: left as logged.
        assert_eq!(log_name("mm", ["a", "b"].into_iter()), "mm");
        assert_eq!(log_name("mm", ["extern_mm", "lt2", "zz"].into_iter()), "mm");
        assert_eq!(log_name("mm", ["extern_mm"].into_iter()), "mm");
        assert!(is_former_name("mm", CUBLASLT_MM));
        assert!(!is_former_name("mm", "pad_mm"));
        assert_eq!(
            lookup(CUBLASLT_MM).default_choice,
            lookup("mm").default_choice
        );
    }

    #[test]
    fn pytorch_hooks_know_their_choices() {
        for hook in PYTORCH_HOOKS {
            assert!(pytorch_hook_accepts(hook, "zzz") == Some(false), "{hook}");
        }
        assert_eq!(pytorch_hook_accepts("pad_mm", "pad"), Some(true));
        assert_eq!(pytorch_hook_accepts("pad_mm", "extern_mm"), Some(false));
        assert_eq!(pytorch_hook_accepts("mm", "extern_mm"), Some(true));
        assert_eq!(
            pytorch_hook_accepts("mm", "type=triton_BLOCK-M=64_BLOCK-K=32_numwarps=4"),
            Some(true)
        );
        assert_eq!(pytorch_hook_accepts("mm", "lt2"), Some(false));
        assert_eq!(
            pytorch_hook_accepts("mixed_mm", "extern_fallback_mixed_mm"),
            Some(true)
        );
        assert_eq!(pytorch_hook_accepts("cublaslt_mm", "lt2"), None);
    }

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

    /// PyTorch's operation counts per optimisation, by name: an entry added to the table
    /// (a user's optimisation) changes none of them.
    #[test]
    fn operations_per_entry() {
        let count = |name| find(name).map(|o| o.operations().len());
        assert_eq!(count("pad_mm"), Some(26));
        assert_eq!(count("mm"), Some(4));
        assert_eq!(count("mixed_mm"), Some(19));
        assert_eq!(count(CUBLASLT_MM), Some(4));
        assert!(lookup("reduction").operations().is_empty());
    }
}
