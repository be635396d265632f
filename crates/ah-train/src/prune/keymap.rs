//! Maps keyed by choice-name keys ([`super::data::name_key`]), which are hashes already.

/// A map keyed by [`name_key`](super::data::name_key)s, which are hashes already: hashing
/// them again with SipHash took a fifth of a tree's growth (perf on `ah-prune`), so the key is
/// its own hash.
pub type KeyMap<V> = std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<KeyHasher>>;

/// The hasher of [`KeyMap`]: a `u64` is its own hash (other input is folded in, FNV-1a).
#[derive(Debug, Default)]
pub struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}
