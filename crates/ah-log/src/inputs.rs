//! [`InputValues`]: the reader's values of a log's inputs, each parsed once.
//!
//! A collector writes every choice of an input, each several times, under the same feature
//! cells: pad_mm_a100's 58,185 rows hold 9,701 inputs. A vector of values per row was most of
//! `ah-train`'s peak memory (31 of 58 MB of heap, issue 24); rows with the same cells now share
//! one slice, parsed once. While it reads, the reader also holds each input's cells as text
//! (the key of [`InputValues`]), less than the values it saves.

use std::sync::Arc;

use csv::ByteRecord;

use ah_core::value::Value;
use rustc_hash::FxHashMap;

/// The values of the inputs read so far, by the text of their feature cells.
#[derive(Debug, Default)]
pub(crate) struct InputValues {
    /// The key of each input's cells ([`InputValues::key`]) -> their values.
    by_key: FxHashMap<Box<[u8]>, Arc<[Value]>>,
    /// The current row's key (reused from row to row); until it is filled, the last row's.
    key: Vec<u8>,
    /// The values of the last row: rows of one input are logged one after another.
    last: Option<Arc<[Value]>>,
}

impl InputValues {
    /// The values of the first `n` fields of `record` (a row of the log, its fields known to be
    /// UTF-8): those of an earlier row with the same cells, or the cells parsed.
    pub(crate) fn of(&mut self, record: &ByteRecord, text: &str, n: usize) -> Arc<[Value]> {
        let last_key_len = self.key.len();
        self.key_of(record, n);
        if let Some(last) = &self.last {
            let (last_key, key) = self.key.split_at(last_key_len);
            if key == last_key {
                self.key.truncate(last_key_len);
                return Arc::clone(last);
            }
        }
        self.key.drain(..last_key_len);
        let values = match self.by_key.get(self.key.as_slice()) {
            Some(values) => Arc::clone(values),
            None => {
                let values: Arc<[Value]> = (0..n)
                    .map(|i| Value::parse(&text[record.range(i).expect("a field of the row")]))
                    .collect();
                self.by_key
                    .insert(self.key.as_slice().into(), Arc::clone(&values));
                values
            }
        };
        self.last = Some(Arc::clone(&values));
        values
    }

    /// Appends the key of the first `n` fields of `record` to [`InputValues::key`]: their bytes
    /// one after the other, then the end of each (4 bytes), which tells `1,23` from `12,3`.
    fn key_of(&mut self, record: &ByteRecord, n: usize) {
        let Some(end) = n.checked_sub(1).and_then(|last| record.range(last)) else {
            return;
        };
        self.key.extend_from_slice(&record.as_slice()[..end.end]);
        for i in 0..n {
            let end = record.range(i).expect("a field of the row").end;
            let end = u32::try_from(end).expect("a line holds at most MAX_LINE_BYTES");
            self.key.extend_from_slice(&end.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(fields: &[&str]) -> ByteRecord {
        ByteRecord::from(fields.to_vec())
    }

    #[test]
    fn rows_with_the_same_cells_share_their_values() {
        let mut inputs = InputValues::default();
        let a = record(&["1", "torch.float16", "a", "1.0"]);
        let b = record(&["1", "torch.float16", "b", "2.0"]);
        let c = record(&["1", "torch.float32", "a", "1.0"]);
        let text = |r: &ByteRecord| String::from_utf8(r.as_slice().to_vec()).unwrap();
        let va = inputs.of(&a, &text(&a), 2);
        let vb = inputs.of(&b, &text(&b), 2);
        let vc = inputs.of(&c, &text(&c), 2);
        assert!(Arc::ptr_eq(&va, &vb));
        assert!(!Arc::ptr_eq(&va, &vc));
        assert_eq!(&va[..], [Value::Int(1), Value::from("torch.float16")]);
        assert_eq!(&vc[1], &Value::from("torch.float32"));
    }

    #[test]
    fn cells_are_told_apart_by_their_boundaries() {
        let mut inputs = InputValues::default();
        let a = record(&["1", "23", "a", "1.0"]);
        let b = record(&["12", "3", "a", "1.0"]);
        let text = |r: &ByteRecord| String::from_utf8(r.as_slice().to_vec()).unwrap();
        let va = inputs.of(&a, &text(&a), 2);
        let vb = inputs.of(&b, &text(&b), 2);
        assert_eq!(&va[..], [Value::Int(1), Value::Int(23)]);
        assert_eq!(&vb[..], [Value::Int(12), Value::Int(3)]);
    }
}
