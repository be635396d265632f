//! [`Fitted`]: a fitted tree with its class names, as the evaluation layer reads it
//! ([`LeafModel`]).

use crate::cart::CartTree;
use ah_eval::metrics::LeafModel;
use ah_eval::table::Table;

/// A fitted tree with its class names.
#[derive(Debug, Clone)]
pub struct Fitted {
    /// The tree.
    pub tree: CartTree,
    /// Class names.
    pub classes: Vec<String>,
}

impl LeafModel for Fitted {
    fn leaf(&self, row: &[f64]) -> usize {
        self.tree.apply(row)
    }
    fn leaf_value(&self, leaf: usize) -> &[f64] {
        &self.tree.nodes[leaf].value
    }
    fn classes(&self) -> &[String] {
        &self.classes
    }
    fn leaves(&self, table: &Table) -> Vec<usize> {
        let router = self.tree.router();
        (0..table.len())
            .map(|i| router.apply(table.row(i)))
            .collect()
    }
}
