//! Choice families: choices that a heuristic keeps together, under one name.
//!
//! Inductor offers its `decompose_k` decomposition as one choice per split of `k`
//! (`subgraph_decompose_k_ksplit=S`), and which splits it offers depends on the divisors of
//! `k`: the tokens log's 62 GEMMs that offer it do so under 1-10 splits each, and its 14 wins
//! there are under 14 different splits, with winning chunks (`k / S`) from 320 to 192512 and
//! neighbouring splits unordered (`scripts/decompose_k_wins.py`, docs/results.md). A name per
//! split is therefore one no second GEMM offers, and no leaf ever kept one. Read as a family,
//! `subgraph_decompose_k` means every split the GEMM at hand offers: keeping it compiles and
//! benchmarks all of them (their prices add up, they precompile in parallel), and Inductor
//! picks the fastest. `config_name` in `python/ah_inductor/naming.py` reads names the same way
//! for the handler, which then keeps every split whose name maps to a kept family.

use super::data::Choice;
use super::pricing::bench_s;

/// (prefix of the members' names, the family's name).
const FAMILIES: &[(&str, &str)] = &[("subgraph_decompose_k_", "subgraph_decompose_k")];

/// The family a logged choice `name` belongs to, if any.
pub fn family_of(name: &str) -> Option<&'static str> {
    FAMILIES
        .iter()
        .find(|(prefix, _)| name.starts_with(prefix))
        .map(|&(_, family)| family)
}

/// `choices` (read by `config_name`, so a family's members share its name) with each family's
/// members merged into one choice where its first member was: the fastest member's benchmark
/// time, the members' prices and code generation summed, the slowest member's precompile, and
/// the benchmark seconds of the others ([`Choice::members_bench_s`]).
pub fn merge(choices: Vec<Choice>) -> Vec<Choice> {
    let mut out: Vec<Choice> = Vec::with_capacity(choices.len());
    // (where the family's choice is in `out`, its members)
    let mut families: Vec<(usize, Vec<Choice>)> = Vec::new();
    for c in choices {
        if !FAMILIES.iter().any(|&(_, family)| c.name == family) {
            out.push(c);
            continue;
        }
        match families.iter_mut().find(|(i, _)| out[*i].name == c.name) {
            Some((_, members)) => members.push(c),
            None => {
                families.push((out.len(), vec![c.clone()]));
                out.push(c);
            }
        }
    }
    for (i, members) in families {
        out[i] = merged(&members);
    }
    out
}

/// One choice standing for all of `members` (at least one, all of one family).
fn merged(members: &[Choice]) -> Choice {
    let fastest = members
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.bench_ms.total_cmp(&b.1.bench_ms))
        .map_or(0, |(i, _)| i);
    let others_bench_s = members
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != fastest)
        .map(|(_, c)| bench_s(c.bench_ms))
        .sum();
    let price_s = members.iter().map(|c| c.price_s).sum();
    let gen_s = members.iter().map(Choice::gen_s).sum();
    let precompile_s = members.iter().map(Choice::precompile_s).fold(0.0, f64::max);
    Choice::new(members[0].name.clone(), members[fastest].bench_ms, price_s)
        .with_parts(gen_s, precompile_s)
        .with_members_bench_s(others_bench_s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prune::data::config_name;

    fn choice(name: &str, bench_ms: f64, price_s: f64, parts: (f64, f64)) -> Choice {
        Choice::new(config_name(name), bench_ms, price_s).with_parts(parts.0, parts.1)
    }

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
        assert_eq!(
            config_name("subgraph_decompose_k_ksplit=16"),
            "subgraph_decompose_k"
        );
    }

    #[test]
    fn a_family_becomes_one_choice_priced_as_all_its_members() {
        let choices = vec![
            choice("extern_mm", 1.0, 0.1, (0.0, 0.0)),
            choice("subgraph_decompose_k_ksplit=2", 0.9, 0.5, (0.2, 1.0)),
            choice("triton_mm_BLOCK-M=64", 1.1, 0.3, (0.1, 0.4)),
            choice("subgraph_decompose_k_ksplit=8", 0.7, 0.6, (0.3, 2.0)),
            choice(
                "subgraph_decompose_k_ksplit=4",
                f64::INFINITY,
                0.2,
                (0.1, 0.5),
            ),
        ];
        let out = merge(choices);
        let names: Vec<&str> = out.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["extern_mm", "subgraph_decompose_k", "triton_mm_BLOCK-M=64"]
        );
        let dk = &out[1];
        assert_eq!(dk.bench_ms, 0.7, "Inductor picks the fastest split");
        assert!((dk.price_s - 1.3).abs() < 1e-12, "every split is paid for");
        assert!((dk.gen_s() - 0.6).abs() < 1e-12);
        assert_eq!(dk.precompile_s(), 2.0, "the splits precompile in parallel");
        let others = bench_s(0.9) + bench_s(f64::INFINITY);
        assert!((dk.members_bench_s() - others).abs() < 1e-12);
    }

    #[test]
    fn choices_without_a_family_are_left_as_they_are() {
        let choices = vec![
            choice("extern_mm", 1.0, 0.1, (0.0, 0.0)),
            choice("triton_mm_BLOCK-M=64", 1.1, 0.3, (0.1, 0.4)),
        ];
        assert_eq!(merge(choices.clone()), choices);
    }
}
