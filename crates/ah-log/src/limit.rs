//! The longest line a log may hold, [`MAX_LINE_BYTES`], enforced while the bytes are read: a
//! hostile file (a few MB of gzip holding one line of a GiB) costs at most about that much
//! memory before a clear error, instead of the whole line.

use std::io::Read;

/// The most bytes one line of a log may hold (its `\n` not counted): 64 MiB. The widest log
/// measured (a million features) has lines of 8 MB; a longer line is not a log's.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// A line passed the limit: the error a [`LineLimit`] fails with (inside an
/// [`std::io::Error`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineTooLong {
    /// The 1-based line.
    pub(crate) line: usize,
    /// The limit it passed, in bytes.
    pub(crate) limit: usize,
}

impl std::fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let limit = if self.limit >= 1 << 20 {
            format!("{} MiB", self.limit >> 20)
        } else {
            format!("{} bytes", self.limit)
        };
        write!(
            f,
            "the line is longer than {limit}, the most a log's line may hold \
             (docs/log-format.md); is this an AutoHeuristic log?"
        )
    }
}

impl std::error::Error for LineTooLong {}

impl LineTooLong {
    /// The [`LineTooLong`] an I/O error carries, if it is one.
    pub(crate) fn of(e: &std::io::Error) -> Option<LineTooLong> {
        e.get_ref()?.downcast_ref::<LineTooLong>().copied()
    }
}

/// Reads through `inner`, failing with [`LineTooLong`] as soon as the bytes since the last
/// `\n` pass `limit`; counts the newlines it handed on.
pub(crate) struct LineLimit<R> {
    inner: R,
    limit: usize,
    /// Bytes of the current line handed on so far.
    run: usize,
    /// Newlines handed on so far.
    newlines: usize,
}

impl<R> LineLimit<R> {
    pub(crate) fn new(inner: R, limit: usize) -> Self {
        LineLimit {
            inner,
            limit,
            run: 0,
            newlines: 0,
        }
    }

    /// The 1-based line the next byte belongs to (the line a failing read was in); not
    /// counted under the limit `usize::MAX` (bytes checked already).
    pub(crate) fn line(&self) -> usize {
        self.newlines + 1
    }
}

impl<R: Read> Read for LineLimit<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if self.limit == usize::MAX {
            // No line is that long: bytes whose lines were checked already pass uncounted.
            return Ok(n);
        }
        let got = &buf[..n];
        if self.run + n > self.limit {
            return self.check(got).map(|()| n);
        }
        // No line of these bytes can pass the limit: they are counted only.
        self.newlines += newlines(got);
        match memchr::memrchr(b'\n', got) {
            Some(last) => self.run = n - last - 1,
            None => self.run += n,
        }
        Ok(n)
    }
}

/// The number of `\n`s in `bytes` (SIMD: the reader counts a whole log's before parsing it).
pub(crate) fn newlines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

impl<R> LineLimit<R> {
    /// Counts the bytes `got` handed on, failing on the first line that passes the limit.
    fn check(&mut self, got: &[u8]) -> std::io::Result<()> {
        let n = got.len();
        let run = match got.iter().rposition(|&b| b == b'\n') {
            Some(last) => {
                // Every line this read ends must fit too.
                let mut start = 0;
                let mut run = self.run;
                for p in got
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| **b == b'\n')
                    .map(|(i, _)| i)
                {
                    if run + (p - start) > self.limit {
                        return Err(self.too_long());
                    }
                    self.newlines += 1;
                    run = 0;
                    start = p + 1;
                }
                n - last - 1
            }
            None => self.run + n,
        };
        if run > self.limit {
            return Err(self.too_long());
        }
        self.run = run;
        Ok(())
    }
}

impl<R> LineLimit<R> {
    fn too_long(&self) -> std::io::Error {
        std::io::Error::other(LineTooLong {
            line: self.line(),
            limit: self.limit,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(bytes: &[u8], limit: usize, chunk: usize) -> Result<Vec<u8>, LineTooLong> {
        struct Chunks<'a>(&'a [u8], usize);
        impl Read for Chunks<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.len().min(self.1).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut out = Vec::new();
        LineLimit::new(Chunks(bytes, chunk), limit)
            .read_to_end(&mut out)
            .map(|_| out)
            .map_err(|e| LineTooLong::of(&e).expect("a line error"))
    }

    #[test]
    fn lines_up_to_the_limit_pass_and_the_first_longer_one_is_named() {
        let ok = b"abcd\nefgh\n\nijkl";
        for chunk in [1, 3, 64] {
            assert_eq!(read_all(ok, 4, chunk).unwrap(), ok);
            let e = read_all(b"abcd\nefghi\nx", 4, chunk).unwrap_err();
            assert_eq!(e.line, 2, "chunk {chunk}");
            let e = read_all(b"a\nb\nccccc", 4, chunk).unwrap_err();
            assert_eq!(e.line, 3, "chunk {chunk}");
        }
    }
}
