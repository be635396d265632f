//! The one finder of duplicate names (choices, features, operations, columns, ranges).

/// The first item equal to an earlier one: its index and the earlier one's.
pub(crate) fn first_duplicate<K: Eq + std::hash::Hash>(
    items: impl IntoIterator<Item = K>,
) -> Option<(usize, usize)> {
    let mut seen = std::collections::HashMap::new();
    for (i, item) in items.into_iter().enumerate() {
        if let Some(first) = seen.insert(item, i) {
            return Some((i, first));
        }
    }
    None
}
