//! The train/validation/test split, reproducing scikit-learn's `train_test_split` exactly.
//!
//! PyTorch splits with `train_test_split(df, test_size=T, random_state=42)` and then
//! `train_test_split(rest, test_size=V/(1-T), random_state=42)`. scikit-learn's `ShuffleSplit`
//! draws `RandomState(seed).permutation(n)`, takes the first `ceil(test_size * n)` positions as
//! the test part and the rest as the train part, both in permutation order. [`RandomState`]
//! reimplements numpy's legacy MT19937 generator and its `permutation`, so the row assignment
//! (and the row order inside each set) is the reference's, bit for bit.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::error::{Result, TrainError};

/// numpy's legacy `RandomState` (MT19937), the parts scikit-learn's tree and split code use.
#[derive(Clone)]
pub struct RandomState {
    mt: [u32; 624],
    pos: usize,
}

impl std::fmt::Debug for RandomState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RandomState")
            .field("pos", &self.pos)
            .finish_non_exhaustive()
    }
}

impl RandomState {
    /// `numpy.random.RandomState(seed)` for an integer seed below 2^32.
    pub fn new(seed: u32) -> Self {
        let mut mt = [0u32; 624];
        mt[0] = seed;
        for i in 1..624 {
            mt[i] = 1_812_433_253u32
                .wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 30))
                .wrapping_add(i as u32);
        }
        Self { mt, pos: 624 }
    }

    fn generate(&mut self) {
        const UPPER: u32 = 0x8000_0000;
        const LOWER: u32 = 0x7fff_ffff;
        const MATRIX_A: u32 = 0x9908_b0df;
        for i in 0..624 {
            let y = (self.mt[i] & UPPER) | (self.mt[(i + 1) % 624] & LOWER);
            let mut v = self.mt[(i + 397) % 624] ^ (y >> 1);
            if y & 1 == 1 {
                v ^= MATRIX_A;
            }
            self.mt[i] = v;
        }
        self.pos = 0;
    }

    /// The next 32-bit output (`genrand_int32`).
    pub fn next_u32(&mut self) -> u32 {
        if self.pos >= 624 {
            self.generate();
        }
        let mut y = self.mt[self.pos];
        self.pos += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }

    fn next_u64(&mut self) -> u64 {
        let hi = u64::from(self.next_u32());
        let lo = u64::from(self.next_u32());
        (hi << 32) | lo
    }

    /// numpy's legacy `random_interval(max)`: uniform in `[0, max]` by masked rejection.
    pub fn interval(&mut self, max: u64) -> u64 {
        if max == 0 {
            return 0;
        }
        let mut mask = max;
        for s in [1, 2, 4, 8, 16, 32] {
            mask |= mask >> s;
        }
        if max <= 0xffff_ffff {
            loop {
                let v = u64::from(self.next_u32()) & mask;
                if v <= max {
                    return v;
                }
            }
        }
        loop {
            let v = self.next_u64() & mask;
            if v <= max {
                return v;
            }
        }
    }

    /// `RandomState.randint(low, high)` (int64, legacy masked rejection), for ranges below 2^32.
    pub fn randint(&mut self, low: i64, high: i64) -> i64 {
        let rng = (high - 1 - low) as u64;
        low + self.interval(rng) as i64
    }

    /// `RandomState.permutation(n)`: a Fisher-Yates shuffle of `0..n` from the back.
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = self.interval(i as u64) as usize;
            v.swap(i, j);
        }
        v
    }
}

/// scikit-learn's `train_test_split(items, test_size=test_size, random_state=seed)`:
/// returns `(train, test)`, each in permutation order.
pub fn train_test_split<T: Clone>(items: &[T], test_size: f64, seed: u32) -> (Vec<T>, Vec<T>) {
    let n = items.len();
    let n_test = ((test_size * n as f64).ceil() as usize).min(n);
    let perm = RandomState::new(seed).permutation(n);
    let test = perm[..n_test].iter().map(|&i| items[i].clone()).collect();
    let train = perm[n_test..].iter().map(|&i| items[i].clone()).collect();
    (train, test)
}

/// Row positions of the three sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// Training rows.
    pub train: Vec<usize>,
    /// Validation rows.
    pub val: Vec<usize>,
    /// Test rows.
    pub test: Vec<usize>,
}

/// PyTorch's `prepare_datasets`: test `test`, then validation `val / (1 - test)` of the rest.
pub fn upstream_split(n: usize, test: f64, val: f64, seed: u32) -> Split {
    let pos: Vec<usize> = (0..n).collect();
    let (rest, test_rows) = train_test_split(&pos, test, seed);
    let (train, val_rows) = train_test_split(&rest, val / (1.0 - test), seed);
    Split {
        train,
        val: val_rows,
        test: test_rows,
    }
}

/// The split file the Python reference writes with `--write-split` (and `ah-train` with
/// `--write-split`): features in metadata order and each set's inputs as logged text.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
pub struct SplitFile {
    /// Logged features, numerical then categorical.
    pub features: Vec<String>,
    /// Training inputs.
    pub train: Vec<Vec<String>>,
    /// Validation inputs.
    pub val: Vec<Vec<String>>,
    /// Test inputs.
    pub test: Vec<Vec<String>>,
}

impl SplitFile {
    /// Reads a split file.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| TrainError::io(path, e))?;
        serde_json::from_str(&text).map_err(|e| TrainError::Input {
            path: path.to_path_buf(),
            message: format!(
                "not a split file ({e}); expected {{\"features\": [...], \"train\": [[...]], \"val\": [...], \"test\": [...]}}"
            ),
        })
    }

    /// Assigns table rows to sets by their logged feature text. `keys[i]` is row `i`'s key in
    /// the order of [`SplitFile::features`]. Rows keep the file's order within each set.
    pub fn assign(&self, path: &Path, keys: &[ah_eval::table::Key]) -> Result<Split> {
        let mut index: BTreeMap<Vec<&str>, usize> = BTreeMap::new();
        for (i, k) in keys.iter().enumerate() {
            index.insert(k.iter().collect(), i);
        }
        let mut used = vec![false; keys.len()];
        let mut take = |set: &[Vec<String>], name: &str| -> Result<Vec<usize>> {
            let mut out = Vec::with_capacity(set.len());
            for (j, k) in set.iter().enumerate() {
                let cells: Vec<&str> = k.iter().map(String::as_str).collect();
                let Some(&i) = index.get(&cells) else {
                    return Err(TrainError::Input {
                        path: path.to_path_buf(),
                        message: format!(
                            "{name}[{j}] = {k:?} is not an input of the training log (with two or more choices); was the split written for another log?"
                        ),
                    });
                };
                if used[i] {
                    return Err(TrainError::Input {
                        path: path.to_path_buf(),
                        message: format!("{name}[{j}] = {k:?} is listed twice"),
                    });
                }
                used[i] = true;
                out.push(i);
            }
            Ok(out)
        };
        let train = take(&self.train, "train")?;
        let val = take(&self.val, "val")?;
        let test = take(&self.test, "test")?;
        let missing = used.iter().filter(|u| !**u).count();
        if missing > 0 {
            return Err(TrainError::Input {
                path: path.to_path_buf(),
                message: format!(
                    "{missing} inputs of the training log are in no set of the split file"
                ),
            });
        }
        Ok(Split { train, val, test })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_permutation_of_seed_42() {
        // numpy.random.RandomState(42).permutation(10)
        assert_eq!(
            RandomState::new(42).permutation(10),
            vec![8, 1, 5, 0, 7, 2, 9, 4, 3, 6]
        );
        // numpy.random.RandomState(42).randint(0, 2**31 - 1)
        assert_eq!(
            RandomState::new(42).randint(0, 2_147_483_647),
            1_608_637_542
        );
    }

    #[test]
    fn split_sizes_follow_sklearn() {
        let s = upstream_split(9699, 0.15, 0.15, 42);
        assert_eq!(
            (s.train.len(), s.val.len(), s.test.len()),
            (6789, 1455, 1455)
        );
        let mut all: Vec<usize> = s
            .train
            .iter()
            .chain(&s.val)
            .chain(&s.test)
            .copied()
            .collect();
        all.sort_unstable();
        assert_eq!(all, (0..9699).collect::<Vec<_>>());
    }
}
