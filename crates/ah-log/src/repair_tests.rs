//! Tests of repairing logs whose inputs have a varying number of repetitions
//! ([`Repetitions`] with `long < max`); the fixed-count cases are in ah-collect's tests.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::{keep_inputs, repair_inputs, InputRepair, Repetitions};

const HEAD: &str = "{\"name\": \"x\"}\nm,choice,feedback\n";
/// `--num-reps 2 --long-reps 1`.
const ADAPTIVE: Repetitions = Repetitions { max: 2, long: 1 };

/// The rows of input `key` measured `reps` times (choices `orig`, `pad`).
fn input(key: &str, reps: usize) -> String {
    "orig,pad"
        .split(',')
        .cycle()
        .take(2 * reps)
        .map(|c| format!("{key},{c},1.5\n"))
        .collect()
}

/// Writes `text` to a fresh log, repairs it with `reps`; returns what repair says and the
/// text left.
fn repaired(text: &str, reps: Repetitions) -> (InputRepair, String) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.txt");
    std::fs::write(&p, text).unwrap();
    let r = repair_inputs(&p, reps).unwrap();
    (r, std::fs::read_to_string(&p).unwrap())
}

fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, n)| (k.to_string(), *n)).collect()
}

#[test]
fn a_mixed_log_repairs_to_the_same_bytes() {
    let text = format!(
        "{HEAD}{}{}{}{}",
        input("1", 2),
        input("2", 1),
        input("3", 1),
        input("4", 2)
    );
    let (r, left) = repaired(&text, ADAPTIVE);
    assert_eq!(left, text);
    assert_eq!(r.removed_bytes, 0);
    assert_eq!(
        r.complete,
        counts(&[("1", 1), ("2", 1), ("3", 1), ("4", 1)])
    );
    // A last input of one repetition is complete too.
    let text = format!("{HEAD}{}{}", input("1", 2), input("2", 1));
    assert_eq!(repaired(&text, ADAPTIVE).1, text);
}

#[test]
fn a_torn_last_input_is_cut() {
    let before = format!("{HEAD}{}{}", input("1", 1), input("2", 2));
    // orig, pad, orig of a 2-rep input: unequal counts; its torn repetition is cut, its whole
    // one kept (module docs).
    let torn = format!("{before}3,orig,1.5\n3,pad,1.5\n3,orig,1.5\n");
    let (r, left) = repaired(&torn, ADAPTIVE);
    assert_eq!(left, format!("{before}{}", input("3", 1)));
    assert_eq!(r.complete, counts(&[("1", 1), ("2", 1), ("3", 1)]));
    assert_eq!(r.removed_bytes, "3,orig,1.5\n".len() as u64);
    // Its first row only (a choice that every other input has is missing), and a torn line.
    for tail in ["3,orig,1.5\n", "3,orig,1.5\n3,pa"] {
        let (r, left) = repaired(&format!("{before}{tail}"), ADAPTIVE);
        assert_eq!(
            (left.as_str(), r.complete.len()),
            (before.as_str(), 2),
            "{tail:?}"
        );
    }
    // At a fixed count the same log is repaired as before: only the last input is cut, and
    // input 1 (one repetition) is not counted as complete.
    let (r, left) = repaired(&torn, Repetitions::fixed(2));
    assert_eq!((left, r.complete), (before, counts(&[("2", 1)])));
}

#[test]
fn a_kill_between_two_repetitions_keeps_a_one_rep_input() {
    // Every choice measured once: a whole measurement, as a long input has (module docs).
    let text = format!("{HEAD}{}{}", input("1", 2), input("2", 1));
    let (r, left) = repaired(&text, ADAPTIVE);
    assert_eq!((left, r.complete.get("2")), (text, Some(&1)));
}

#[test]
fn equal_inputs_in_a_row_count_the_fewest_that_fit() {
    // 3 rows per choice of one key: 2 + 1 or 1 + 1 + 1 repetitions; counted as 2.
    let text = format!("{HEAD}{}{}", input("1", 2), input("1", 1));
    let (r, left) = repaired(&text, ADAPTIVE);
    assert_eq!((left, r.complete), (text.clone(), counts(&[("1", 2)])));
    // A torn third input after them (4 rows of orig, 3 of pad) is cut back to whole
    // repetitions: 3 rows per choice, counted as 2 inputs (the third is measured again).
    let torn = format!("{text}1,orig,1.5\n");
    let (r, left) = repaired(&torn, ADAPTIVE);
    assert_eq!((left, r.complete), (text, counts(&[("1", 2)])));
}

#[test]
fn keep_inputs_trims_a_mixed_sidecar_to_its_main_log() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.medians.txt");
    let main = format!("{HEAD}{}{}{}", input("1", 1), input("2", 2), input("3", 1));
    // The sidecar was written first: one more input, and that one torn.
    std::fs::write(&p, format!("{main}{}4,orig,1.5\n", input("4", 1))).unwrap();
    let logged = counts(&[("1", 1), ("2", 1), ("3", 1)]);
    keep_inputs(&p, ADAPTIVE, &logged).unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), main);
    // Nothing more to drop: unchanged.
    keep_inputs(&p, ADAPTIVE, &logged).unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), main);
}

proptest! {
    /// At a fixed count the rule is the old one: a multiple of the count.
    #[test]
    fn a_fixed_count_fits_its_multiples(reps in 1usize..6, count in 0usize..40) {
        let old = (count > 0 && count % reps == 0).then_some(count / reps);
        prop_assert_eq!(Repetitions::fixed(reps).inputs(count).filter(|&m| m > 0), old);
    }

    /// A log of distinct inputs of 1 or 2 repetitions, cut at any byte after its first input
    /// (which tells the choices; see the module docs): repair keeps every whole input before
    /// the cut one, and of the cut one its whole repetitions, if any.
    #[test]
    fn a_mixed_log_cut_anywhere_keeps_its_whole_inputs(
        reps in proptest::collection::vec(1usize..=2, 1..8),
        cut in 0.0f64..1.0,
    ) {
        let rows: Vec<String> = reps.iter().enumerate().map(|(i, &r)| input(&i.to_string(), r)).collect();
        let first = input("first", 2);
        let full = format!("{HEAD}{first}{}", rows.concat());
        let head = HEAD.len() + first.len();
        let at = head + ((full.len() - head) as f64 * cut) as usize;
        let (r, left) = repaired(&full[..at], ADAPTIVE);
        // After the torn line is cut.
        let written = full[..at].rfind('\n').map_or(0, |i| i + 1);
        // Expected: whole inputs, then of the cut one its whole repetitions if any.
        let mut expect = format!("{HEAD}{first}");
        let mut n = 1;
        for (i, text) in rows.iter().enumerate() {
            let start = head + rows[..i].concat().len();
            if written >= start + text.len() {
                expect.push_str(text);
                n += 1;
                continue;
            }
            let whole_reps = full[start..written].matches('\n').count() / 2;
            if whole_reps > 0 {
                expect.push_str(&input(&i.to_string(), whole_reps));
                n += 1;
            }
            break;
        }
        prop_assert_eq!(&left, &expect);
        prop_assert_eq!(r.complete.values().sum::<u64>(), n);
    }
}
