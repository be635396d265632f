//! [`json_line`]: the line of a JSON value given its path (`tree.nodes[3].value[1]`), so that
//! the model validator's problems name the line of the model file.
//!
//! serde_json's own positions do the work: a visitor walks down the path, skipping other
//! values, and fails on reaching the target; serde_json stamps that error with the line.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The message of the error raised on reaching the target.
const FOUND: &str = "ah-core: found the JSON path";

enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// `a.b[2].c` as segments; `None` for a malformed path.
fn segments(path: &str) -> Option<Vec<Seg<'_>>> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (key, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        if !key.is_empty() {
            out.push(Seg::Key(key));
        }
        while let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            out.push(Seg::Index(r[..end].parse().ok()?));
            rest = &r[end + 1..];
        }
        if !rest.is_empty() {
            return None;
        }
    }
    Some(out)
}

/// Walks down the remaining path.
struct Seek<'p, 'a>(&'p [Seg<'a>]);

impl<'de> DeserializeSeed<'de> for Seek<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seek<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (want, rest) = match self.0.split_first() {
            None => return Err(de::Error::custom(FOUND)),
            Some((Seg::Key(want), rest)) => (want, rest),
            Some((Seg::Index(_), _)) => return skip_map(map),
        };
        while let Some(key) = map.next_key::<String>()? {
            if key == *want {
                // The key's line: found here, before its value is read.
                if rest.is_empty() {
                    return Err(de::Error::custom(FOUND));
                }
                return map.next_value_seed(Seek(rest));
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let (want, rest) = match self.0.split_first() {
            None => return Err(de::Error::custom(FOUND)),
            Some((Seg::Index(want), rest)) => (want, rest),
            Some((Seg::Key(_), _)) => return skip_seq(seq),
        };
        for _ in 0..*want {
            if seq.next_element::<IgnoredAny>()?.is_none() {
                return Ok(());
            }
        }
        seq.next_element_seed(Seek(rest)).map(|_| ())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.scalar()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.scalar()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.scalar()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.scalar()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.scalar()
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.scalar()
    }
}

/// Reads the rest of a map that does not hold the path.
fn skip_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Reads the rest of a sequence that does not hold the path.
fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

impl Seek<'_, '_> {
    /// A scalar is the target when the path ends here.
    fn scalar<E: de::Error>(&self) -> Result<(), E> {
        if self.0.is_empty() {
            Err(E::custom(FOUND))
        } else {
            Ok(())
        }
    }
}

/// The 1-based line where the value at `path` (`choices[2]`, `tree.nodes[3].value`) is in
/// the JSON `text` (for an object's key, the key's line); `None` when the path is empty,
/// malformed or not in the text.
pub(crate) fn json_line(text: &str, path: &str) -> Option<usize> {
    let segs = segments(path)?;
    if segs.is_empty() {
        return None;
    }
    let mut d = serde_json::Deserializer::from_str(text);
    match Seek(&segs).deserialize(&mut d) {
        Err(e) if e.to_string().starts_with(FOUND) => Some(e.line()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::json_line;

    #[test]
    fn finds_the_line_of_keys_and_elements() {
        let text = "{\n  \"a\": 1,\n  \"choices\": [\n    \"x\",\n    \"y\"\n  ],\n  \"tree\": {\"nodes\": [\n    {\"value\": [0.5,\n      2.0]}\n  ]}\n}\n";
        assert_eq!(json_line(text, "a"), Some(2));
        assert_eq!(json_line(text, "choices"), Some(3));
        assert_eq!(json_line(text, "choices[1]"), Some(5));
        assert_eq!(json_line(text, "tree.nodes[0].value"), Some(8));
        assert_eq!(json_line(text, "tree.nodes[0].value[1]"), Some(9));
        assert_eq!(json_line(text, "choices[7]"), None);
        assert_eq!(json_line(text, "nope"), None);
        assert_eq!(json_line(text, ""), None);
        assert_eq!(json_line(text, "a[x]"), None);
        assert_eq!(json_line("[", "a"), None);
    }
}
