//! [`CartData`]: the training data of one fit.

/// The training data of one fit, column-major.
#[derive(Debug, Clone)]
pub struct CartData<'a> {
    /// `columns[f][i]`: feature `f` of sample `i`, as `f32`.
    pub columns: &'a [Vec<f32>],
    /// Class index per sample (classification) — ignored for regression.
    pub classes: &'a [u32],
    /// Number of classes.
    pub n_classes: usize,
    /// Target per sample (regression) — ignored for classification.
    pub targets: &'a [f64],
    /// Sample weights.
    pub weights: &'a [f64],
}
