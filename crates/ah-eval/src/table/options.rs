//! [`BuildOptions`]: how a table is built (read by `build.rs` and `label.rs`).

/// Options of [`build_table`](super::build_table).
#[derive(Debug, Clone, Copy, Default)]
pub struct BuildOptions {
    /// Keep inputs whose every choice failed (PyTorch does; their label is arbitrary).
    pub keep_all_inf: bool,
}
