//! [`row_spans`]: the data rows of a log's text where they stand, for tools that edit a log in
//! place (a collector's resume cuts an incomplete input, a sidecar keeps only some inputs).

use csv::ByteRecord;

use super::read::csv_reader;

/// A data row of a log's text: a line after the header with at least a choice and a feedback
/// field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowSpan<'t> {
    /// The feature values as logged (the line up to the comma before its choice).
    pub key: &'t str,
    /// The choice.
    pub choice: &'t str,
    /// The whole line, without its `\n`.
    pub line: &'t str,
    /// Byte offset of the line in the text.
    pub start: usize,
    /// Byte offset after the line's `\n` (the end of the text for a last line without one).
    pub end: usize,
}

/// The data rows of a log's text (lines 3 on), in order. Lines that are not rows (empty lines,
/// lines with fewer than three fields) are left out.
pub fn row_spans(text: &str) -> Vec<RowSpan<'_>> {
    let bytes = text.as_bytes();
    let mut csv = csv_reader(bytes);
    let mut record = ByteRecord::new();
    let mut spans = Vec::new();
    // A read from memory cannot fail, and the CSV parser accepts any bytes.
    while let Ok(true) = csv.read_byte_record(&mut record) {
        let pos = csv.position();
        let end = pos.byte() as usize;
        let closed = bytes[..end].last() == Some(&b'\n');
        let line = pos.line() as usize - usize::from(closed);
        let n = record.len();
        if line < 3 || n < 3 {
            continue;
        }
        let len = record.as_slice().len() + n - 1;
        let start = end - len - usize::from(closed);
        let key_len: usize = record.iter().take(n - 2).map(<[u8]>::len).sum::<usize>() + n - 3;
        let choice_start = start + key_len + 1;
        spans.push(RowSpan {
            key: &text[start..start + key_len],
            choice: &text[choice_start..choice_start + record[n - 2].len()],
            line: &text[start..start + len],
            start,
            end,
        });
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_name_rows_where_they_stand() {
        let text = "{\"a\": 1}\nm,choice,feedback\n1,a,1.0\n\n\r\n2,x,b,2.0\r\nbad\n3,c,3";
        let spans = row_spans(text);
        let keys: Vec<(&str, &str, &str)> =
            spans.iter().map(|s| (s.key, s.choice, s.line)).collect();
        assert_eq!(
            keys,
            [
                ("1", "a", "1,a,1.0"),
                ("2,x", "b", "2,x,b,2.0\r"),
                ("3", "c", "3,c,3")
            ]
        );
        for s in &spans {
            assert_eq!(&text[s.start..s.start + s.line.len()], s.line);
        }
        assert_eq!(&text[spans[0].start..spans[0].end], "1,a,1.0\n");
        assert_eq!(&text[spans[1].start..spans[1].end], "2,x,b,2.0\r\n");
        assert_eq!(spans[2].end, text.len());
    }
}
