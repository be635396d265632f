//! [`Halves`]: where [`crate::Log::read_parallel`] cuts a large plain log in two, found from its
//! head and one block at its middle, so that each half is parsed straight from the file.
//!
//! Reading the whole file into memory first (as a gzip log still is) held a buffer of its
//! size: 6.8 MB of fresh pages for pad_mm_a100, read and scanned on one thread before either
//! half was parsed.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use ah_core::error::{Error, Result};

/// Bytes read at the head and at the middle: a header or a line across the middle longer
/// than this sends the file to the reader of whole files.
const BLOCK: usize = 1 << 16;

/// A plain log cut in two after a line near its middle.
#[derive(Debug)]
pub(crate) struct Halves {
    /// The file, positioned at its start.
    pub(crate) file: File,
    /// The metadata line and the header, with their newlines.
    pub(crate) head: Vec<u8>,
    /// Where the second half starts (after a `\n`).
    pub(crate) cut: u64,
    /// About how many rows the file holds (from the lines of the head block).
    pub(crate) rows: usize,
}

impl Halves {
    /// The halves of the plain log at `path` when it is larger than `min_size`; `None` for a
    /// gzip log, a smaller one, or one whose header or middle line does not fit a block.
    pub(crate) fn of(path: &Path, min_size: u64) -> Result<Option<Halves>> {
        let io = |e| Error::io(path, e);
        let mut file = File::open(path).map_err(io)?;
        let size = file.metadata().map_err(io)?.len();
        if size <= min_size {
            return Ok(None);
        }
        let block = read_block(&mut file, 0).map_err(io)?;
        if block.starts_with(&[0x1f, 0x8b]) {
            return Ok(None);
        }
        let mut ends = memchr::memchr_iter(b'\n', &block);
        let Some(header_end) = ends.nth(1).map(|p| p + 1) else {
            return Ok(None);
        };
        let mid = header_end as u64 + (size - header_end as u64) / 2;
        let Some(p) = memchr::memchr(b'\n', &read_block(&mut file, mid).map_err(io)?) else {
            return Ok(None);
        };
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        let rows = rows_estimate(&block[header_end..], size - header_end as u64);
        Ok(Some(Halves {
            file,
            head: block[..header_end].to_vec(),
            cut: mid + p as u64 + 1,
            rows,
        }))
    }
}

/// Up to [`BLOCK`] bytes of `file` from `offset`.
fn read_block(file: &mut File, offset: u64) -> std::io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(offset))?;
    let mut block = Vec::with_capacity(BLOCK);
    file.by_ref().take(BLOCK as u64).read_to_end(&mut block)?;
    Ok(block)
}

/// About how many lines `size` bytes of rows hold, by the whole lines of `sample` (their start),
/// rounded up by 1/16 so that the rows' vector seldom grows.
fn rows_estimate(sample: &[u8], size: u64) -> usize {
    let Some(last) = memchr::memrchr(b'\n', sample) else {
        return 0;
    };
    let lines = crate::limit::newlines(&sample[..=last]) as u64;
    let per_line = (last as u64 + 1).div_ceil(lines);
    let rows = size / per_line;
    usize::try_from(rows + rows / 16).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_plain_log_is_cut_after_a_line_near_its_middle() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.txt");
        let mut text = String::from("{\"a\": 1}\nm,choice,feedback\n");
        let rows = 100_000;
        for i in 0..rows {
            text.push_str(&format!("{i},a,1.5\n"));
        }
        std::fs::write(&path, &text).unwrap();
        let h = Halves::of(&path, 1 << 20).unwrap().unwrap();
        assert_eq!(h.head, b"{\"a\": 1}\nm,choice,feedback\n");
        let cut = h.cut as usize;
        assert_eq!(&text.as_bytes()[cut - 1..cut], b"\n");
        assert!(cut.abs_diff(text.len() / 2) < 20, "{cut}");
        // The first lines are the shortest here: the estimate is high, by less than a quarter.
        assert!((rows..rows + rows / 4).contains(&h.rows), "{}", h.rows);
        assert!(Halves::of(&path, text.len() as u64).unwrap().is_none());
        // A gzip log is not cut.
        use std::io::Write as _;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text.as_bytes()).unwrap();
        let gz = gz.finish().unwrap();
        std::fs::write(&path, &gz).unwrap();
        assert!(Halves::of(&path, 0).unwrap().is_none());
    }
}
