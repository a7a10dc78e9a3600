//! Hash tables for the decoder (thread ids, sequence ids, interned strings) with rustc-hash's Fx hash: the standard
//! library's SipHash guards against crafted keys at a cost per lookup that dominated the per-event work of a trace
//! read (comm tables, string interning, slice nesting); these tables need none of that (no output depends on their
//! iteration order). Thread-id sets asked per sched event are a bitmap (TidSet).

use std::collections::{HashMap, HashSet};

pub type FastMap<K, V> = HashMap<K, V, rustc_hash::FxBuildHasher>;
pub type FastSet<K> = HashSet<K, rustc_hash::FxBuildHasher>;

/// A set of thread ids: a bitmap for ids below 2^22 (Linux's largest pid_max; 512 KB at most, grown as ids come),
/// a hash set for any other value a damaged trace may hold. Asked once or twice per sched event, where a hash set's
/// lookup cost more than the rest of the event.
#[derive(Default)]
pub struct TidSet {
    bits: Vec<u64>,
    other: FastSet<i64>,
}

const TID_BITS: i64 = 1 << 22;

impl TidSet {
    /// Adds tid; true if it was not there.
    #[inline]
    pub fn insert(&mut self, tid: i64) -> bool {
        if !(0..TID_BITS).contains(&tid) {
            return self.other.insert(tid);
        }
        let (w, m) = ((tid >> 6) as usize, 1u64 << (tid & 63));
        if w >= self.bits.len() {
            self.bits.resize((w + 1).next_power_of_two(), 0);
        }
        let was = self.bits[w] & m != 0;
        self.bits[w] |= m;
        !was
    }

    #[inline]
    pub fn contains(&self, tid: i64) -> bool {
        if !(0..TID_BITS).contains(&tid) {
            return self.other.contains(&tid);
        }
        self.bits.get((tid >> 6) as usize).is_some_and(|w| w & (1u64 << (tid & 63)) != 0)
    }

    pub fn remove(&mut self, tid: i64) {
        if !(0..TID_BITS).contains(&tid) {
            self.other.remove(&tid);
        } else if let Some(w) = self.bits.get_mut((tid >> 6) as usize) {
            *w &= !(1u64 << (tid & 63));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TidSet;

    #[test]
    fn tid_set_holds_what_was_inserted_and_not_what_was_removed() {
        let mut s = TidSet::default();
        let tids = [0i64, 1, 63, 64, 65, 4_194_303, 4_194_304, -1, i64::MIN, i64::MAX, 12_345];
        for &t in &tids {
            assert!(!s.contains(t));
            assert!(s.insert(t), "{t} new");
            assert!(!s.insert(t), "{t} again");
            assert!(s.contains(t));
        }
        for &t in &tids[..5] {
            s.remove(t);
            assert!(!s.contains(t));
        }
        for &t in &tids[5..] {
            assert!(s.contains(t), "{t} kept");
        }
        assert!(!s.contains(2) && !s.contains(1 << 40));
    }
}
