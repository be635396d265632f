//! The hyper-parameters of one tree: criterion, `min_samples_leaf` (a count or a fraction) and
//! the seed of scikit-learn's feature order.

/// Split quality measure.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Criterion {
    /// Gini impurity.
    Gini,
    /// Shannon entropy (log base 2).
    Entropy,
    /// Variance (regression).
    SquaredError,
}

impl Criterion {
    /// scikit-learn's name.
    pub fn name(self) -> &'static str {
        match self {
            Criterion::Gini => "gini",
            Criterion::Entropy => "entropy",
            Criterion::SquaredError => "squared_error",
        }
    }
}

/// `min_samples_leaf` as scikit-learn takes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MinSamplesLeaf {
    /// At least this many samples per leaf.
    Count(usize),
    /// At least `ceil(fraction * n_samples)` samples per leaf.
    Fraction(f64),
}

impl MinSamplesLeaf {
    /// The count for `n` training samples.
    pub fn resolve(self, n: usize) -> usize {
        match self {
            MinSamplesLeaf::Count(c) => c.max(1),
            MinSamplesLeaf::Fraction(f) => ((f * n as f64).ceil() as usize).max(1),
        }
    }

    /// The value as given (`10` or `0.01`).
    pub fn as_f64(self) -> f64 {
        match self {
            MinSamplesLeaf::Count(c) => c as f64,
            MinSamplesLeaf::Fraction(f) => f,
        }
    }

    /// Parses `10` (a count) or `0.01` (a fraction in (0, 1)).
    pub fn parse(text: &str) -> Option<Self> {
        if let Ok(c) = text.parse::<usize>() {
            return (c >= 1).then_some(MinSamplesLeaf::Count(c));
        }
        let f: f64 = text.parse().ok()?;
        (f > 0.0 && f < 1.0).then_some(MinSamplesLeaf::Fraction(f))
    }
}

impl std::fmt::Display for MinSamplesLeaf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MinSamplesLeaf::Count(c) => write!(f, "{c}"),
            MinSamplesLeaf::Fraction(x) => write!(f, "{x}"),
        }
    }
}

/// Hyper-parameters of one tree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CartParams {
    /// Split criterion.
    pub criterion: Criterion,
    /// Maximum depth (`None`: unlimited).
    pub max_depth: Option<usize>,
    /// Minimum samples per leaf.
    pub min_samples_leaf: MinSamplesLeaf,
    /// scikit-learn's `random_state` (feature visiting order).
    pub seed: u32,
}

impl Default for CartParams {
    fn default() -> Self {
        Self {
            criterion: Criterion::Gini,
            max_depth: None,
            min_samples_leaf: MinSamplesLeaf::Count(1),
            seed: 42,
        }
    }
}
