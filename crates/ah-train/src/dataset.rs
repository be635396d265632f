//! Reading the logs `ah-train` trains on: the parallel reader of large logs ([`read_log`]),
//! the dataset hash recorded in models and warnings about `--data` logs. The table built from
//! a log lives in the evaluation layer ([`ah_eval::table`]).

use std::collections::HashMap;
use std::path::Path;

use ah_core::Log;

use crate::error::{Result, TrainError};

/// Warnings about a `--data` log next to the training log: another runner name, or another
/// device identity (a heuristic learned on one device is matched on that device's identity, so
/// rows of another device mislabel it).
pub fn data_log_warnings(train: &Log, data: &Log) -> Vec<String> {
    let mut w = Vec::new();
    if data.metadata.name != train.metadata.name {
        w.push(format!(
            "log name `{}` differs from the training log's `{}`",
            data.metadata.name, train.metadata.name
        ));
    }
    if let Some(d) = ah_core::log::device_difference(&train.metadata, &data.metadata) {
        w.push(format!(
            "{} was collected on another device than the training log {} ({d})",
            data.path.display(),
            train.path.display()
        ));
    }
    w
}

/// sha256 of a file's uncompressed bytes, hex.
pub fn dataset_hash(path: &Path) -> Result<String> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut r = ah_core::log::open_maybe_gz(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = r.read(&mut buf).map_err(|e| TrainError::io(path, e))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Reads a log like [`Log::read`] (same result, same messages), parsing the two halves of a
/// large file in parallel with ah-core's own reader and merging them (choice indices
/// remapped, line numbers of skipped lines shifted).
pub fn read_log(path: &Path) -> Result<Log> {
    use std::io::Read;
    let options = ah_core::ReadOptions::default();
    let mut bytes = Vec::new();
    ah_core::log::open_maybe_gz(path)?
        .read_to_end(&mut bytes)
        .map_err(|e| TrainError::io(path, e))?;
    // Small files, or files without a header: the plain reader (and its messages).
    let header_end = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(1)
        .map(|(i, _)| i + 1);
    let Some(header_end) = header_end.filter(|_| bytes.len() > 1 << 20) else {
        return Ok(Log::from_reader(path, &bytes[..], options)?);
    };
    let mid = header_end + (bytes.len() - header_end) / 2;
    let cut = match bytes[mid..].iter().position(|b| *b == b'\n') {
        Some(p) => mid + p + 1,
        None => return Ok(Log::from_reader(path, &bytes[..], options)?),
    };
    let head = &bytes[..header_end];
    let second: Vec<u8> = head.iter().chain(&bytes[cut..]).copied().collect();
    let (a, b) = rayon::join(
        || Log::from_reader(path, &bytes[..cut], options),
        || Log::from_reader(path, &second[..], options),
    );
    // Lines before the second part: everything up to `cut`; its own lines 1-2 are the header.
    let lines_before = bytes[..cut].iter().filter(|c| **c == b'\n').count();
    let mut log = a?;
    let b = b.map_err(|e| match e {
        ah_core::Error::LogFormat {
            path,
            line,
            message,
        } if line > 2 => ah_core::Error::LogFormat {
            path,
            line: line + lines_before - 2,
            message,
        },
        e => e,
    })?;
    let mut known: HashMap<String, u32> = log
        .choices
        .iter()
        .enumerate()
        .map(|(i, c)| (c.clone(), i as u32))
        .collect();
    let map: Vec<u32> = b
        .choices
        .iter()
        .map(|c| {
            *known.entry(c.clone()).or_insert_with(|| {
                log.choices.push(c.clone());
                (log.choices.len() - 1) as u32
            })
        })
        .collect();
    log.rows.reserve(b.rows.len());
    log.rows.extend(b.rows.into_iter().map(|mut r| {
        r.choice = map[r.choice as usize];
        r
    }));
    log.malformed.extend(b.malformed.into_iter().map(|mut m| {
        m.line += lines_before - 2;
        m
    }));
    log.blank_lines += b.blank_lines;
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ah_core::ReadOptions;

    fn log_of(text: &str) -> Log {
        Log::from_reader(Path::new("t.txt"), text.as_bytes(), ReadOptions::default()).unwrap()
    }

    const MD: &str = r#"{"shared_memory": 0, "device_capa": [0, 0], "name": "t", "numerical_features": ["m"], "categorical_features": ["d"]}"#;

    #[test]
    fn errors_of_the_parallel_reader_name_the_line_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.txt");
        let mut bytes = format!("{MD}\nm,d,choice,feedback\n").into_bytes();
        for i in 0..120_000 {
            bytes.extend_from_slice(format!("{},x,a,1.5\n", i % 7).as_bytes());
        }
        // Line 120,003: not UTF-8, in the second half that is read in parallel.
        bytes.extend_from_slice(b"1,\xff,a,1.0\n");
        std::fs::write(&path, &bytes).unwrap();
        let e = read_log(&path).unwrap_err().to_string();
        assert!(e.contains("big.txt:120003: not UTF-8"), "{e}");
    }

    #[test]
    fn data_logs_of_another_device_are_warned() {
        let a = log_of(&format!("{MD}\nm,d,choice,feedback\n1,x,a,1.0\n"));
        let other = MD.replace(
            "\"shared_memory\": 0, \"device_capa\": [0, 0]",
            "\"shared_memory\": 232448, \"device_capa\": [9, 0]",
        );
        let b = log_of(&format!("{other}\nm,d,choice,feedback\n1,x,a,1.0\n"));
        assert!(data_log_warnings(&a, &a).is_empty());
        let w = data_log_warnings(&a, &b).join("\n");
        assert!(w.contains("another device"), "{w}");
        assert!(
            w.contains("shared_memory 0 vs 232448, device_capa (0, 0) vs (9, 0)"),
            "{w}"
        );
    }

    #[test]
    fn parallel_read_equals_the_plain_reader() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.txt");
        let mut s = format!("{MD}\nm,d,choice,feedback\n");
        let mut i = 0;
        while s.len() < (1 << 20) + 5000 {
            let c = ["a", "b", "c"][i % 3];
            s.push_str(&format!("{},x,{c},{}\n", i % 1000, i as f64 / 7.0));
            if i % 9999 == 0 {
                s.push_str("bad line\n\n");
            }
            i += 1;
        }
        std::fs::write(&path, &s).unwrap();
        let plain = Log::read(&path, ReadOptions::default()).unwrap();
        let fast = read_log(&path).unwrap();
        assert_eq!(fast.rows.len(), plain.rows.len());
        assert_eq!(fast.malformed, plain.malformed);
        assert_eq!(fast.blank_lines, plain.blank_lines);
        for (a, b) in fast.rows.iter().zip(&plain.rows) {
            assert_eq!(a.values, b.values);
            assert_eq!(
                fast.choices[a.choice as usize],
                plain.choices[b.choice as usize]
            );
            assert_eq!(a.feedback.to_bits(), b.feedback.to_bits());
        }
    }
}
