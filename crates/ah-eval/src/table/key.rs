//! [`Key`]: an input's logged feature text, its cells in one string.
//!
//! A table keeps every input's key (split files, reports, a replay's decisions) and the sets
//! taken from it share them. As a slice of `String`s, pad_mm_a100's 9,699 keys of 17 cells
//! were 175,000 allocations and 5.5 MB; here a key is one shared allocation of its text and
//! the end of each cell.

use std::fmt;
use std::sync::Arc;

/// An input's logged feature text, metadata order, as pandas prints it; cheap to clone (the
/// sets taken from a table share their keys).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Key(Arc<Cells>);

#[derive(PartialEq, Eq, Hash)]
struct Cells {
    /// The cells' text, one after the other.
    text: Box<str>,
    /// The end of each cell in `text`.
    ends: Box<[u32]>,
}

impl Key {
    /// A key of these cells.
    ///
    /// # Panics
    ///
    /// When the cells hold 4 GiB of text or more (a log's line holds at most 64 MiB,
    /// [`ah_log::MAX_LINE_BYTES`]).
    pub fn new<S: AsRef<str>>(cells: impl IntoIterator<Item = S>) -> Key {
        let cells: Vec<S> = cells.into_iter().collect();
        Key::write(cells.len(), |j, text| text.push_str(cells[j].as_ref()))
    }

    /// A key of `n` cells, `write(j, text)` appending cell `j` to the text of the cells before
    /// it (no string per cell). Panics as [`Key::new`].
    pub fn write(n: usize, mut write: impl FnMut(usize, &mut String)) -> Key {
        let mut text = String::with_capacity(8 * n);
        let mut ends = Vec::with_capacity(n);
        for j in 0..n {
            write(j, &mut text);
            ends.push(u32::try_from(text.len()).expect("a key holds less than 4 GiB of text"));
        }
        Key(Arc::new(Cells {
            text: text.into_boxed_str(),
            ends: ends.into_boxed_slice(),
        }))
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.0.ends.len()
    }

    /// True for a key without cells (a log without features).
    pub fn is_empty(&self) -> bool {
        self.0.ends.is_empty()
    }

    /// Cell `j`, if there is one.
    pub fn get(&self, j: usize) -> Option<&str> {
        let end = *self.0.ends.get(j)? as usize;
        let start = j.checked_sub(1).map_or(0, |p| self.0.ends[p] as usize);
        Some(&self.0.text[start..end])
    }

    /// The cells, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + Clone + '_ {
        (0..self.len()).map(|j| self.get(j).expect("a cell of the key"))
    }

    /// The cells as strings.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_string).collect()
    }
}

impl From<Vec<String>> for Key {
    fn from(cells: Vec<String>) -> Key {
        Key::new(cells)
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_come_back_as_given() {
        let k = Key::new(["2", "", "torch.float16", "1,5"]);
        assert_eq!(k.len(), 4);
        assert_eq!(k.to_vec(), ["2", "", "torch.float16", "1,5"]);
        assert_eq!(k.get(2), Some("torch.float16"));
        assert_eq!(k.get(4), None);
        assert_eq!(format!("{k:?}"), r#"["2", "", "torch.float16", "1,5"]"#);
        let empty = Key::new(Vec::<String>::new());
        assert!(empty.is_empty());
        assert_eq!(empty.iter().count(), 0);
    }

    #[test]
    fn keys_are_equal_by_their_cells() {
        let a = Key::new(["1", "23"]);
        assert_eq!(a, Key::from(vec!["1".to_string(), "23".to_string()]));
        assert_ne!(a, Key::new(["12", "3"]));
        assert_ne!(a, Key::new(["123"]));
    }
}
