//! Choice families: choices that a heuristic keeps together, under one name.
//!
//! Inductor offers its `decompose_k` decomposition as one choice per split of `k`
//! (`subgraph_decompose_k_ksplit=S`), and which splits it offers depends on the divisors of
//! `k`: the tokens log's 62 GEMMs that offer it do so under 1-10 splits each and 118 names in
//! all, and its 14 wins there are under 12 different splits, with winning chunks (`k / S`)
//! from 320 to 192512 and neighbouring splits unordered (`scripts/decompose_k_wins.py`,
//! docs/results.md). A leaf's GEMMs seldom share a split's name, and no leaf ever kept one.
//! Read as a family,
//! `subgraph_decompose_k` means every split the GEMM at hand offers: keeping it compiles and
//! benchmarks all of them (their prices add up, they precompile in parallel), and Inductor
//! picks the fastest. `config_name` in `python/ah_inductor/naming.py` reads names the same way
//! for the handler, which then keeps every split whose name maps to a kept family.
//!
//! This module owns the names and the grouping; how a family's choices combine is
//! `Choice::family` (`super::data`), and what its other members' benchmarks cost is
//! `super::pricing::bench_s_of`.

/// (prefix of the members' names, the family's name).
const FAMILIES: &[(&str, &str)] = &[("subgraph_decompose_k_", "subgraph_decompose_k")];

/// The family a logged choice `name` belongs to, if any.
pub fn family_of(name: &str) -> Option<&'static str> {
    FAMILIES
        .iter()
        .find(|(prefix, _)| name.starts_with(prefix))
        .map(|&(_, family)| family)
}

/// `items` with the members of each family (the items whose `name` is a family's name, as
/// `config_name` reads them) replaced by one item, `combine(members)`, where the first member
/// was; every other item as it was, in order.
pub fn merge<T: Clone>(
    items: Vec<T>,
    name: impl Fn(&T) -> &str,
    combine: impl Fn(&[T]) -> T,
) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(items.len());
    // (where the family's item is in `out`, its members)
    let mut families: Vec<(usize, Vec<T>)> = Vec::new();
    for item in items {
        if !FAMILIES.iter().any(|&(_, family)| name(&item) == family) {
            out.push(item);
            continue;
        }
        match families
            .iter_mut()
            .find(|(i, _)| name(&out[*i]) == name(&item))
        {
            Some((_, members)) => members.push(item),
            None => {
                families.push((out.len(), vec![item.clone()]));
                out.push(item);
            }
        }
    }
    for (i, members) in families {
        out[i] = combine(&members);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decompose_k_splits_are_one_family_and_nothing_else_is() {
        assert_eq!(
            family_of("subgraph_decompose_k_ksplit=16"),
            Some("subgraph_decompose_k")
        );
        for name in [
            "extern_mm",
            "triton_mm_BLOCK-M=64",
            "subgraph_other_ksplit=2",
        ] {
            assert_eq!(family_of(name), None);
        }
    }

    #[test]
    fn a_familys_members_become_one_item_where_the_first_was() {
        let dk = "subgraph_decompose_k";
        let items = vec![
            ("extern_mm", 1),
            (dk, 2),
            ("triton_mm_x", 3),
            (dk, 4),
            (dk, 5),
        ];
        let out = merge(items, |i| i.0, |m| (m[0].0, m.iter().map(|i| i.1).sum()));
        assert_eq!(out, [("extern_mm", 1), (dk, 11), ("triton_mm_x", 3)]);
        let plain = vec![("extern_mm", 1), ("triton_mm_x", 3)];
        assert_eq!(merge(plain.clone(), |i| i.0, |m| m[0]), plain);
    }
}
