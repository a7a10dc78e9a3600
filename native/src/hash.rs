//! A multiplicative hash for the decoder's tables (thread ids, sequence ids, interned strings): the standard
//! library's SipHash guards against crafted keys at a cost per lookup that dominated the per-event work of a trace
//! read (comm tables, string interning, slice nesting); these tables need none of that.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

impl FastHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 59));
        }
    }
    #[inline]
    fn write_u8(&mut self, v: u8) {
        self.add(v as u64)
    }
    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.add(v as u64)
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.add(v)
    }
    #[inline]
    fn write_i64(&mut self, v: i64) {
        self.add(v as u64)
    }
    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.add(v as u64)
    }
    #[inline]
    fn write_isize(&mut self, v: isize) {
        self.add(v as u64)
    }
}

pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;
pub type FastSet<K> = HashSet<K, BuildHasherDefault<FastHasher>>;
