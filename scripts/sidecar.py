"""A log's medians and extras sidecars (`LOG.medians.txt`, `LOG.extras.jsonl`), plain or kept
gzip-compressed (`LOG.medians.txt.gz`, as data/ keeps finished logs' sidecars): the scripts' one
reader of them, with the rule of ah-log's `sidecar` module (crates/ah-log/src/sidecar.rs). A
sidecar is read from its plain file, else from its `.gz`; both is an error (they may differ, and
which one is the log's is unclear). Writers are ah-collect's: it refuses to append beside a `.gz`.

    import sidecar                       # scripts/ is on sys.path for a script run from there
    with sidecar.open_text("data/x.txt.extras.jsonl") as f: ...
    sidecar.find("data/inductor_mm_*h100.txt.extras.jsonl")   # plain names, plain or .gz on disk
"""

import glob
import gzip
import os


class SidecarError(Exception):
    """A sidecar that exists both plain and compressed."""


def to_read(plain):
    """The file to read the sidecar `plain` from: `plain` when it exists, else `plain.gz` when
    that exists, else None. Both: SidecarError naming both."""
    gz = plain + ".gz"
    if os.path.exists(plain) and os.path.exists(gz):
        raise SidecarError(
            f"{plain} and {gz} both exist: which one is the log's sidecar is unclear; keep one of "
            f"them and remove the other (`gzip -dc {gz} | cmp - {plain}` tells whether they differ)")
    if os.path.exists(plain):
        return plain
    return gz if os.path.exists(gz) else None


def open_text(plain):
    """The sidecar `plain` opened as text (decompressed when it is kept as `plain.gz`; a path
    ending in `.gz` given itself is read decompressed too); its `.name` is the file read.
    Neither file: FileNotFoundError naming `plain`."""
    path = to_read(plain)
    if path is None:
        raise FileNotFoundError(2, "no such file, nor a gzip-compressed one (.gz)", plain)
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def find(pattern):
    """The sidecars whose plain name matches the glob `pattern`, sorted by it, each kept plain or
    as `.gz` on disk (each name once)."""
    names = set(glob.glob(pattern))
    names.update(p[: -len(".gz")] for p in glob.glob(pattern + ".gz"))
    return sorted(names)
