//! The generator's view of one model ([`Gen`]): the plan, the context features it gathers,
//! the columns the tree uses, the category constants and the leaf tables, and how a value, the
//! range guard and the column steps are read. `crate::rust` renders the module from it and
//! `crate::rust_fast` its typed paths.

use std::collections::{BTreeMap, BTreeSet};

use ah_core::model::{leaf_best_choices, Column, ModelKind, Node};
use serde::Serialize;

use crate::plan::{feature_of, Plan, Source};
use crate::rust_columns::{ColumnKinds, Finish, ValueSource};
use crate::rust_expr::{f64_lit, Ty};

/// A distinct leaf distribution of a decision tree: `(probability, choice)` literals. Leaves
/// that predict the same distribution share one table (`DIST_{index}`).
#[derive(Serialize)]
pub(crate) struct Leaf {
    index: usize,
    items: Vec<(String, usize)>,
}

/// The decision leaves' tables: the distinct distributions, in the order the nodes first
/// predict them, and each safe leaf's table.
#[derive(Default)]
pub(crate) struct LeafTables {
    pub(crate) tables: Vec<Leaf>,
    pub(crate) of_node: BTreeMap<usize, usize>,
}

/// The state of one module's generation.
pub(crate) struct Gen<'p, 'm> {
    pub(crate) plan: &'p Plan<'m>,
    /// Context features gathered from the context (`x{i}`).
    pub(crate) gathered: Vec<String>,
    /// Columns the emitted tree splits on.
    pub(crate) used: BTreeSet<usize>,
    /// The decision leaves' tables.
    pub(crate) leaves: LeafTables,
    /// Category constant of each used one-hot column (over a value of any kind).
    pub(crate) categories: BTreeMap<usize, usize>,
    /// Used one-hot columns over a context feature: `Columns` holds the `&Value` and the tree
    /// compares it on its path.
    pub(crate) lazy: BTreeSet<usize>,
    /// The texts of the category constants, in order.
    pub(crate) category_texts: Vec<String>,
}

impl<'p, 'm> Gen<'p, 'm> {
    pub(crate) fn new(plan: &'p Plan<'m>) -> Self {
        let leaves = leaf_tables(plan);
        let mut g = Gen {
            plan,
            gathered: plan.all_context_features(),
            used: plan.read_columns(),
            leaves,
            categories: BTreeMap::new(),
            lazy: BTreeSet::new(),
            category_texts: Vec::new(),
        };
        for (c, col) in plan.model.columns.iter().enumerate() {
            if let Column::OneHot { value, .. } = col {
                let source = plan.source(feature_of(col));
                if g.used.contains(&c) && source != Source::Choice {
                    let k = match g.category_texts.iter().position(|t| t == value) {
                        Some(k) => k,
                        None => {
                            g.category_texts.push(value.clone());
                            g.category_texts.len() - 1
                        }
                    };
                    g.categories.insert(c, k);
                    if source == Source::Context {
                        g.lazy.insert(c);
                    }
                }
            }
        }
        g
    }

    /// The features `columns` reads into `x`, in order: the logged layout when it holds every
    /// gathered feature (read by position once its schema is verified), else the gathered
    /// features (read by name).
    pub(crate) fn read_names(&self) -> Vec<String> {
        match self.logged_layout() {
            Some(layout) => layout.into_iter().cloned().collect(),
            None => self.gathered.clone(),
        }
    }

    /// `name`'s value as `columns` reads it: `x[i]`.
    pub(crate) fn x(&self, name: &str) -> String {
        let i = self
            .read_names()
            .iter()
            .position(|n| n == name)
            .expect("gathered feature");
        format!("x[{i}]")
    }

    /// A used one-hot column over a context feature: the tree compares lazily, on its path.
    pub(crate) fn lazy(&self, c: usize) -> bool {
        self.lazy.contains(&c)
    }

    /// The logged layout (numerical then categorical features), when its names are distinct
    /// and it holds every gathered feature.
    pub(crate) fn logged_layout(&self) -> Option<Vec<&String>> {
        let model = self.plan.model;
        let layout: Vec<&String> = model
            .numerical_features
            .iter()
            .chain(&model.categorical_features)
            .collect();
        let distinct = layout
            .iter()
            .enumerate()
            .all(|(i, n)| !layout[..i].contains(n));
        let covers = self.gathered.iter().all(|n| layout.contains(&n));
        (distinct && covers && !self.gathered.is_empty()).then_some(layout)
    }

    /// The range guard's values, in `RANGES` order, by `value(name)`.
    pub(crate) fn guard_values(&self, value: &dyn Fn(&str) -> String) -> Vec<String> {
        let ranges = self.plan.guarded_ranges();
        ranges.iter().map(|r| value(&r.name)).collect()
    }

    /// The column steps after the guard ([`crate::rust_columns::columns`]).
    pub(crate) fn columns(
        &self,
        src: &dyn ValueSource,
        guard: Vec<String>,
        lazy: &dyn Fn(&str) -> Option<String>,
        op: &dyn Fn(usize) -> Option<(String, Ty)>,
    ) -> Finish {
        let kinds = ColumnKinds {
            plan: self.plan,
            used: &self.used,
            categories: &self.categories,
            lazy: &self.lazy,
        };
        crate::rust_columns::columns(&kinds, src, guard, lazy, op)
    }
}

/// The distinct distributions of `plan`'s decision leaves, and each safe leaf's table.
fn leaf_tables(plan: &Plan<'_>) -> LeafTables {
    let model = plan.model;
    let mut out = LeafTables::default();
    if model.kind != ModelKind::Decision {
        return out;
    }
    let mut seen: BTreeMap<Vec<(String, usize)>, usize> = BTreeMap::new();
    for (i, node) in model.tree.nodes.iter().enumerate() {
        if let Node::Leaf {
            value,
            unsafe_leaf: false,
            ..
        } = node
        {
            let items: Vec<(String, usize)> = leaf_best_choices(value)
                .iter()
                .map(|(p, c)| (f64_lit(*p), *c))
                .collect();
            let k = *seen.entry(items).or_insert_with_key(|items| {
                out.tables.push(Leaf {
                    index: out.tables.len(),
                    items: items.clone(),
                });
                out.tables.len() - 1
            });
            out.of_node.insert(i, k);
        }
    }
    out
}
