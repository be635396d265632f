//! Tests of what a writer appends to: the head check ([`check_head`], [`LogWriter::append`]),
//! the lock by file identity ([`lock_log`]), the bound on a line's length and the line of each
//! row.

use std::path::Path;

use super::limit::MAX_LINE_BYTES;
use super::*;
use ah_core::metadata::{DeviceIdentity, Metadata};

fn md() -> Metadata {
    Metadata::new(
        DeviceIdentity::NONE,
        "t",
        vec!["m".into(), "n".into()],
        vec!["d".into()],
    )
}

fn features() -> Vec<String> {
    ["m", "n", "d"].map(String::from).to_vec()
}

const ROWS: &str = "1,2,x,a,1.5\n1,2,x,b,2.5\n";

#[test]
fn a_permuted_header_is_refused_naming_line_2_and_the_file_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.txt");
    let text = format!("{}\nn,m,d,choice,feedback\n{ROWS}", md().to_json_line());
    std::fs::write(&path, &text).unwrap();
    let e = LogWriter::append(&path, &md(), &features())
        .unwrap_err()
        .to_string();
    assert!(e.contains("log.txt:2: the header does not match"), "{e}");
    assert!(
        e.contains("the same columns in another order: column 1 is `n` where this writer logs `m`"),
        "{e}"
    );
    assert!(e.contains("\nhint: write to another file"), "{e}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    // Other names, fewer columns: refused too.
    for header in [
        "m,n,e,choice,feedback",
        "m,n,choice,feedback",
        "m,n,d,choice",
    ] {
        let text = format!("{}\n{header}\n{ROWS}", md().to_json_line());
        std::fs::write(&path, &text).unwrap();
        let e = check_head(&path, &md(), &features()).unwrap_err();
        assert!(e.to_string().contains("log.txt:2: "), "{header}: {e}");
    }
}

#[test]
fn every_cut_of_the_head_is_completed_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.txt");
    let head = head_text(&md(), &features());
    for cut in 0..=head.len() {
        std::fs::write(&path, &head[..cut]).unwrap();
        let mut w = LogWriter::append(&path, &md(), &features()).unwrap();
        w.write_line("1,2,x,a,1.5").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, format!("{head}1,2,x,a,1.5\n"), "cut at {cut}");
    }
    // A head cut short and followed by anything else is not a head: refused.
    let md_line = md().to_json_line();
    std::fs::write(&path, format!("{md_line}\nm,n\n1,2,a,1.0\n")).unwrap();
    assert!(check_head(&path, &md(), &features()).is_err());
}

#[test]
fn other_metadata_and_gzip_are_refused_with_bounded_messages() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.txt");
    let mut wide = md();
    wide.numerical_features = (0..300_000).map(|i| format!("feature_{i}")).collect();
    std::fs::write(
        &path,
        format!("{}\nm,choice,feedback\n", wide.to_json_line()),
    )
    .unwrap();
    let e = LogWriter::append(&path, &md(), &features())
        .unwrap_err()
        .to_string();
    assert!(e.contains("InconsistentMetadata"), "{e}");
    assert!(e.len() < 2_000, "a {} byte message", e.len());
    let gz = dir.path().join("log.txt.gz");
    std::fs::write(&gz, [0x1f, 0x8b, 8, 0, 0, 0]).unwrap();
    let e = LogWriter::append(&gz, &md(), &features())
        .unwrap_err()
        .to_string();
    assert!(e.contains("log.txt.gz:1: a gzip-compressed log"), "{e}");
}

#[test]
fn two_names_of_one_file_contend_for_one_lock() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.txt");
    std::fs::write(&path, "").unwrap();
    let link = dir.path().join("link.txt");
    std::fs::hard_link(&path, &link).unwrap();
    let held = lock_log(&path, true).unwrap();
    assert!(held.covers(&link) && held.covers(&path));
    let e = lock_log(&link, true).unwrap_err().to_string();
    assert!(e.contains("link.txt: another process is collecting"), "{e}");
    assert!(e.contains("under another name of it"), "{e}");
    assert!(lock_log(&link, false).is_err(), "a reader waits too");
    drop(held);
    let shared = lock_log(&link, false).unwrap();
    assert!(lock_log(&path, false).is_ok(), "readers share");
    drop(shared);
    #[cfg(unix)]
    {
        let sym = dir.path().join("sym.txt");
        std::os::unix::fs::symlink(&link, &sym).unwrap();
        let _held = lock_log(&sym, true).unwrap();
        assert!(lock_log(&path, true).is_err());
    }
}

#[test]
fn a_lock_taken_before_the_file_exists_holds_it_once_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.txt");
    let mut lock = lock_log(&path, true).unwrap();
    assert_eq!(lock.file_id(), None);
    LogWriter::append(&path, &md(), &features()).unwrap();
    lock.hold_file(&path).unwrap();
    assert!(lock.file_id().is_some());
    let link = dir.path().join("link.txt");
    std::fs::hard_link(&path, &link).unwrap();
    assert!(lock_log(&link, true).is_err());
}

#[cfg(unix)]
#[test]
fn fifos_are_refused_before_they_are_opened() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.txt");
    if ah_test_support::skip_without_fifo(&fifo) {
        return;
    }
    for e in [
        lock_log(&fifo, true).unwrap_err(),
        LogWriter::append(&fifo, &md(), &features()).unwrap_err(),
    ] {
        let e = e.to_string();
        assert!(
            e.contains("fifo.txt: a FIFO (named pipe), not a regular file"),
            "{e}"
        );
    }
    // A FIFO where the lock sidecar goes.
    let log = dir.path().join("log.txt");
    std::fs::rename(&fifo, dir.path().join("log.txt.lock")).unwrap();
    let e = lock_log(&log, true).unwrap_err().to_string();
    assert!(e.contains("log.txt.lock: a FIFO"), "{e}");
}

#[test]
fn a_line_over_the_limit_is_an_error_naming_it_before_it_is_held() {
    let head = format!("{}\nm,n,d,choice,feedback\n", md().to_json_line());
    let long = format!("{head}{ROWS}{}\n", "9".repeat(1000));
    let read = |limit| {
        Log::from_reader_limited(
            Path::new("t.txt"),
            long.as_bytes(),
            ReadOptions::default(),
            limit,
        )
    };
    assert_eq!(read(1000).unwrap().rows.len(), 2);
    let e = read(999).unwrap_err().to_string();
    assert!(e.starts_with("t.txt:5: the line is longer than"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.txt");
    std::fs::write(&path, &long).unwrap();
    let e = read::read_bytes_limited(&path, 999)
        .unwrap_err()
        .to_string();
    assert!(e.contains("t.txt:5: the line is longer than"), "{e}");
    assert_eq!(MAX_LINE_BYTES, 64 << 20);
}

/// The case at the real limit: a small gzip file holding one line of more than
/// [`MAX_LINE_BYTES`] is refused naming line 3, through every reader.
#[test]
fn a_gzip_bomb_of_one_line_is_refused_at_the_limit() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bomb.txt.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let head = format!("{}\nm,n,d,choice,feedback\n", md().to_json_line());
    gz.write_all(head.as_bytes()).unwrap();
    let chunk = vec![b'7'; 1 << 20];
    for _ in 0..(MAX_LINE_BYTES >> 20) + 1 {
        gz.write_all(&chunk).unwrap();
    }
    std::fs::write(&path, gz.finish().unwrap()).unwrap();
    for e in [
        Log::read(&path, ReadOptions::default()).unwrap_err(),
        Log::read_parallel(&path, ReadOptions::default()).unwrap_err(),
        join_logs(std::slice::from_ref(&path)).unwrap_err(),
    ] {
        let e = e.to_string();
        assert!(
            e.contains("bomb.txt.gz:3: the line is longer than 64 MiB"),
            "{e}"
        );
    }
}

#[test]
fn rows_know_their_line_in_both_readers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.txt");
    let mut s = format!("{}\nm,n,d,choice,feedback\n", md().to_json_line());
    let mut want = Vec::new();
    let mut line = 2;
    while s.len() < (1 << 20) + 5000 {
        line += 1;
        if line % 1000 == 0 {
            s.push_str("\nbad\n");
            line += 2;
        }
        s.push_str(&format!("{line},1,x,a,1.5\n"));
        want.push(line);
    }
    std::fs::write(&path, &s).unwrap();
    for log in [
        Log::read(&path, ReadOptions::default()).unwrap(),
        Log::read_parallel(&path, ReadOptions::default()).unwrap(),
    ] {
        let lines: Vec<usize> = log.rows.iter().map(|r| r.line).collect();
        assert_eq!(lines, want);
        assert!(log
            .rows
            .iter()
            .all(|r| r.values[0] == ah_core::Value::Int(r.line as i64)));
    }
}

#[test]
fn merge_keeps_a_last_row_without_its_newline_as_the_reader_does() {
    let dir = tempfile::tempdir().unwrap();
    let head = format!("{}\nm,n,d,choice,feedback\n", md().to_json_line());
    let a = dir.path().join("a.txt");
    std::fs::write(&a, format!("{head}{ROWS}3,4,y,a,7.25")).unwrap();
    let b = dir.path().join("b.txt");
    std::fs::write(&b, format!("{head}{ROWS}3,4,y,b")).unwrap();
    let j = join_logs(&[a.clone(), b.clone()]).unwrap();
    assert_eq!((j.rows, j.torn), (5, 1));
    assert!(j.text.ends_with("1,2,x,b,2.5\n"), "{}", j.text);
    assert!(j.text.contains("3,4,y,a,7.25\n1,2,x,a,1.5\n"), "{}", j.text);
    let merged =
        Log::from_reader(Path::new("m"), j.text.as_bytes(), ReadOptions::default()).unwrap();
    let read_a = Log::read(&a, ReadOptions::default()).unwrap();
    let read_b = Log::read(&b, ReadOptions::default()).unwrap();
    assert_eq!(merged.rows.len(), read_a.rows.len() + read_b.rows.len());
    // A header without its newline and no rows: a log with no rows, for both.
    std::fs::write(&a, head.trim_end()).unwrap();
    assert_eq!(join_logs(&[a]).unwrap().rows, 0);
}

/// A torn last line longer than a line may be (a plain file ending in 65 MiB without a
/// newline) is cut by a collector's repair without being held whole: the text given back is
/// bounded, the count of bytes cut is exact.
#[test]
fn a_huge_torn_tail_is_cut_and_counted_but_not_held() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.txt");
    let head = format!("{}\nm,n,d,choice,feedback\n{ROWS}", md().to_json_line());
    let tail = MAX_LINE_BYTES + (1 << 20);
    let mut bytes = head.clone().into_bytes();
    bytes.resize(head.len() + tail, b'9');
    std::fs::write(&path, &bytes).unwrap();
    drop(bytes);
    let r = repair_inputs(&path, 1).unwrap();
    assert_eq!(r.removed_bytes, tail as u64);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), head);
    let mut bytes = head.clone().into_bytes();
    bytes.resize(head.len() + tail, b'9');
    std::fs::write(&path, &bytes).unwrap();
    let text = Log::repair_torn_tail(&path).unwrap().unwrap();
    assert_eq!(text.len(), MAX_LINE_BYTES);
}
