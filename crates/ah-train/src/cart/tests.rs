//! Hand-checked trees, leaf sizes, weights, regression and determinism.

use super::*;

fn data<'a>(cols: &'a [Vec<f32>], y: &'a [u32], w: &'a [f64], k: usize) -> CartData<'a> {
    CartData {
        columns: cols,
        classes: y,
        n_classes: k,
        targets: &[],
        weights: w,
    }
}

#[test]
fn hand_checked_small_tree() {
    // x0 separates perfectly at 2.5; x1 is noise.
    let cols = vec![
        vec![1.0, 2.0, 3.0, 4.0, 2.0, 3.0],
        vec![5.0, 5.0, 1.0, 1.0, 1.0, 5.0],
    ];
    let y = [0, 0, 1, 1, 0, 1];
    let w = [1.0; 6];
    let d = data(&cols, &y, &w, 2);
    let t = fit(&d, &Presorted::new(&cols), CartParams::default());
    assert_eq!(t.nodes.len(), 3);
    assert_eq!(t.nodes[0].feature, Some(0));
    assert_eq!(t.nodes[0].threshold, 2.5);
    assert_eq!(t.nodes[1].value, vec![1.0, 0.0]);
    assert_eq!(t.nodes[2].value, vec![0.0, 1.0]);
    assert_eq!(t.apply(&[2.5, 0.0]), 1);
    assert_eq!(t.apply(&[2.50001, 0.0]), 2);
}

#[test]
fn min_samples_leaf_and_fractions() {
    let cols = vec![vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]];
    let y = [0, 1, 0, 0, 1, 1, 1, 1];
    let w = [1.0; 8];
    let d = data(&cols, &y, &w, 2);
    let p = CartParams {
        min_samples_leaf: MinSamplesLeaf::Count(3),
        ..Default::default()
    };
    let t = fit(&d, &Presorted::new(&cols), p);
    for n in &t.nodes {
        assert!(n.n_samples >= 3, "{n:?}");
    }
    assert_eq!(MinSamplesLeaf::Fraction(0.01).resolve(6789), 68);
    assert_eq!(
        MinSamplesLeaf::parse("0.05"),
        Some(MinSamplesLeaf::Fraction(0.05))
    );
    assert_eq!(MinSamplesLeaf::parse("10"), Some(MinSamplesLeaf::Count(10)));
    assert_eq!(MinSamplesLeaf::parse("0"), None);
}

#[test]
fn weights_move_the_leaf_distribution() {
    let cols = vec![vec![1.0, 1.0, 1.0]];
    let y = [0, 1, 1];
    let w = [2.0, 1.0, 1.0];
    let d = data(&cols, &y, &w, 2);
    let t = fit(&d, &Presorted::new(&cols), CartParams::default());
    assert_eq!(t.nodes.len(), 1);
    assert_eq!(t.nodes[0].value, vec![0.5, 0.5]);
}

#[test]
fn regression_tree_means() {
    let cols = vec![vec![1.0, 2.0, 3.0, 4.0]];
    let d = CartData {
        columns: &cols,
        classes: &[],
        n_classes: 0,
        targets: &[1.0, 1.0, 5.0, 5.0],
        weights: &[1.0; 4],
    };
    let p = CartParams {
        criterion: Criterion::SquaredError,
        ..Default::default()
    };
    let t = fit(&d, &Presorted::new(&cols), p);
    assert_eq!(t.nodes[0].threshold, 2.5);
    assert_eq!(t.nodes[1].value, vec![1.0]);
    assert_eq!(t.nodes[2].value, vec![5.0]);
}

#[test]
fn deterministic_bit_for_bit() {
    let n = 500;
    let mut rs = crate::split::RandomState::new(7);
    let cols: Vec<Vec<f32>> = (0..6)
        .map(|_| (0..n).map(|_| (rs.next_u32() % 50) as f32).collect())
        .collect();
    let y: Vec<u32> = (0..n)
        .map(|i| u32::from(cols[0][i] + cols[1][i] > 50.0) + u32::from(cols[2][i] > 40.0))
        .collect();
    let w = vec![1.0; n];
    let d = data(&cols, &y, &w, 3);
    let ps = Presorted::new(&cols);
    for crit in [Criterion::Gini, Criterion::Entropy] {
        let p = CartParams {
            criterion: crit,
            max_depth: Some(6),
            ..Default::default()
        };
        let a = fit(&d, &ps, p);
        let b = fit(&d, &ps, p);
        assert_eq!(a, b);
        assert!(a.n_leaves() > 4);
    }
}

#[test]
fn router_reaches_the_leaves_apply_reaches() {
    // A deeper tree: y depends on both columns; rows on and around every threshold.
    let n = 60;
    let cols = vec![
        (0..n).map(|i| (i % 7) as f32).collect::<Vec<f32>>(),
        (0..n).map(|i| (i % 5) as f32 * 0.5).collect::<Vec<f32>>(),
    ];
    let y: Vec<u32> = (0..n)
        .map(|i| u32::from((i % 7) * 2 + (i % 5) > 7))
        .collect();
    let w = vec![1.0; n];
    let d = data(&cols, &y, &w, 2);
    let t = fit(&d, &Presorted::new(&cols), CartParams::default());
    assert!(t.depth() >= 2, "{}", t.depth());
    let router = t.router();
    let mut rows = vec![[f64::NAN, 0.0], [0.0, f64::NAN]];
    for node in t.nodes.iter().filter(|n| n.feature.is_some()) {
        for v in [node.threshold - 1e-9, node.threshold, node.threshold + 1e-9] {
            for other in [-1.0, 0.75, 1.0, 3.0, 10.0] {
                rows.push([v, other]);
                rows.push([other, v]);
            }
        }
    }
    for row in &rows {
        assert_eq!(router.apply(row), t.apply(row), "{row:?}");
    }
    let columns: Vec<Vec<f64>> = (0..2)
        .map(|c| rows.iter().map(|r| r[c]).collect())
        .collect();
    let by_row: Vec<usize> = rows.iter().map(|r| t.apply(r)).collect();
    assert_eq!(router.leaves_of_columns(&columns, rows.len()), by_row);
}

/// Noisy data on which leaf sizes bind: numeric columns with ties, a two-valued column, and
/// labels that only partly follow them.
fn noisy(n: usize, seed: u32) -> (Vec<Vec<f32>>, Vec<u32>) {
    let mut rs = crate::split::RandomState::new(seed);
    let cols: Vec<Vec<f32>> = (0..5)
        .map(|c| {
            (0..n)
                .map(|_| match c {
                    4 => (rs.next_u32() % 2) as f32,
                    _ => (rs.next_u32() % (20 + 40 * c as u32)) as f32,
                })
                .collect()
        })
        .collect();
    let y: Vec<u32> = (0..n)
        .map(|i| {
            let signal =
                u32::from(cols[0][i] + cols[4][i] * 8.0 > 12.0) + u32::from(cols[1][i] > 45.0);
            if rs.next_u32().is_multiple_of(5) {
                rs.next_u32() % 3
            } else {
                signal
            }
        })
        .collect();
    (cols, y)
}

#[test]
fn one_group_across_leaf_sizes_fits_each_tree_as_alone() {
    let n = 700;
    let (cols, y) = noisy(n, 3);
    let ps = Presorted::new(&cols);
    let targets: Vec<f64> = y.iter().map(|&c| f64::from(c) * 1.5).collect();
    let mut rs = crate::split::RandomState::new(9);
    let fractional: Vec<f64> = (0..n)
        .map(|_| f64::from(rs.next_u32() % 4 + 1) * 0.5)
        .collect();
    let unit = vec![1.0; n];
    let leaf_sizes = [
        MinSamplesLeaf::Count(1),
        MinSamplesLeaf::Count(3),
        MinSamplesLeaf::Fraction(0.02),
        MinSamplesLeaf::Count(25),
        MinSamplesLeaf::Fraction(0.1),
    ];
    for criterion in [Criterion::Gini, Criterion::Entropy, Criterion::SquaredError] {
        for weights in [&unit, &fractional] {
            let d = CartData {
                columns: &cols,
                classes: &y,
                n_classes: 3,
                targets: &targets,
                weights,
            };
            let mut group = Vec::new();
            for &min_samples_leaf in &leaf_sizes {
                for max_depth in [None, Some(6), Some(3)] {
                    group.push(CartParams {
                        criterion,
                        max_depth,
                        min_samples_leaf,
                        seed: 42,
                    });
                }
            }
            let together = fit_group(&d, &ps, &group);
            let mut distinct = std::collections::HashSet::new();
            for (p, t) in group.iter().zip(&together) {
                assert_eq!(*t, fit(&d, &ps, *p), "{p:?}");
                distinct.insert(format!("{:?}", t.nodes));
            }
            // The leaf sizes made different trees: the sharing was put to the test.
            assert!(distinct.len() >= 8, "{criterion:?}: {}", distinct.len());
        }
    }
}
