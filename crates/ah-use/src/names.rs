//! Names the user typed that match nothing: the known ones, and the closest as a suggestion.

use std::path::Path;

/// Heuristic names of the `NAME.model.json` files in `dir`, sorted (none when it cannot be
/// read).
pub fn models_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".model.json").map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

/// Levenshtein distance, ASCII case-insensitive.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_ascii_lowercase().chars().collect();
    let b: Vec<char> = b.to_ascii_lowercase().chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The known name closest to `typed`, when it is close enough to be a typo (at most a third
/// of its letters differ).
pub fn did_you_mean<'a>(typed: &str, known: &'a [String]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (distance(typed, k), k))
        .filter(|(d, k)| *d <= k.len().max(3) / 3)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k.as_str())
}

/// `; did you mean `X`?` and the known names, for an error
/// message about `typed` (`place` says where the known names are).
pub fn unknown_hint(typed: &str, known: &[String], place: &str) -> String {
    let mut out = String::new();
    if let Some(k) = did_you_mean(typed, known) {
        out.push_str(&format!("; did you mean `{k}`?"));
    }
    if known.is_empty() {
        out.push_str(&format!("\nnone are {place}"));
    } else {
        out.push_str(&format!("\nknown ({place}): {}", known.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_finds_its_name() {
        let known = vec!["PadMMA100".to_string(), "PadMMH100".to_string()];
        assert_eq!(did_you_mean("PadMMH1OO", &known), Some("PadMMH100"));
        assert_eq!(did_you_mean("padmmh100", &known), Some("PadMMH100"));
        assert_eq!(did_you_mean("Reduction", &known), None);
    }
}
