//! The time order of an event stream: indices sorted by timestamp, ties in insertion order, by a stable LSD radix
//! sort of the timestamps' offsets from their minimum (at most 12 bits a pass, as few passes as the span needs: a
//! trace of a minute, 36 bits of nanoseconds, costs three; a pass whose digit is the same for every event is skipped). A trace's streams come in runs
//! sorted per CPU, which a comparison sort merges at log(runs) per event; the radix sort costs the same few passes
//! whatever the order.

const MAX_BITS: u32 = 12;
/// Below this many events a comparison sort is as cheap as the radix passes' fixed cost.
const SMALL: usize = 256;

/// Indices 0..n of `ts` in time order, equal timestamps in index order.
pub fn by_time(ts: &[i64]) -> Vec<u32> {
    by_time_then(ts, |_| ())
}

/// Indices 0..n of `ts` in time order, equal timestamps in order of `second`, then of index (a stable sort by
/// (ts, second)). Equal timestamps are rare: their runs are sorted by `second` after the radix passes.
pub fn by_time_then<K: Ord>(ts: &[i64], second: impl Fn(usize) -> K) -> Vec<u32> {
    let n = ts.len();
    assert!(n <= u32::MAX as usize, "more events than 32-bit indices");
    let mut order: Vec<u32> = (0..n as u32).collect();
    if n <= SMALL || ts.windows(2).all(|w| w[0] <= w[1]) {
        order.sort_by_key(|&i| (ts[i as usize], second(i as usize)));   // (a sorted run is one pass)
        return order;
    }
    let lo = *ts.iter().min().unwrap_or(&0);
    let hi = *ts.iter().max().unwrap_or(&0);
    let span = hi.wrapping_sub(lo) as u64;
    let span_bits = 64 - span.leading_zeros();
    let passes = span_bits.div_ceil(MAX_BITS);
    let bits = span_bits.div_ceil(passes.max(1));
    let buckets = 1usize << bits;
    let index_bits = 64 - (n as u64).leading_zeros();
    if span_bits + index_bits <= 64 {
        if n <= BUCKETED_MAX {
            if let Some(order) = bucketed(ts, lo, span_bits, index_bits, &second) {
                return order;
            }
        }
        return packed(ts, lo, index_bits, passes, bits, second);
    }
    let mut key: Vec<u64> = ts.iter().map(|&t| t.wrapping_sub(lo) as u64).collect();
    let mut key_tmp: Vec<u64> = vec![0; n];
    let mut order_tmp: Vec<u32> = vec![0; n];
    let mut count = vec![0usize; buckets];
    for pass in 0..passes {
        let shift = pass * bits;
        let digit = |k: u64| ((k >> shift) as usize) & (buckets - 1);
        count.iter_mut().for_each(|c| *c = 0);
        for &k in &key {
            count[digit(k)] += 1;
        }
        if count.contains(&n) {
            continue; // every key has this digit: the pass would move nothing
        }
        let mut at = 0;
        for c in count.iter_mut() {
            let here = *c;
            *c = at;
            at += here;
        }
        for (&k, &i) in key.iter().zip(&order) {
            let d = digit(k);
            let slot = count[d];
            count[d] += 1;
            key_tmp[slot] = k;
            order_tmp[slot] = i;
        }
        std::mem::swap(&mut key, &mut key_tmp);
        std::mem::swap(&mut order, &mut order_tmp);
    }
    drop((key_tmp, order_tmp));
    equal_runs(&mut order, |x, y| key[x] == key[y], second);
    order
}

/// Up to this many events, one counting pass by the timestamps' top bits into about n buckets and an insertion sort
/// of what is left (`bucketed`) beats the radix passes: its count table and its target stay in cache.
const BUCKETED_MAX: usize = 1 << 16;

/// The stable time order by one counting pass into about n buckets by the offset's top bits (keys packed as in
/// `packed`: offset above, index below, so that plain u64 order is the stable order), then an insertion sort, which
/// only has to order each bucket's few keys. A trace's events spread over its span, a few per bucket; where they
/// crowd (bursts, equal timestamps) the insertion sort would cost the square of a bucket's size: None when the
/// buckets' squared sizes pass a few per event (the radix sort then takes over).
fn bucketed<K: Ord>(ts: &[i64], lo: i64, span_bits: u32, index_bits: u32, second: &impl Fn(usize) -> K) -> Option<Vec<u32>> {
    let n = ts.len();
    let bucket_bits = index_bits.min(span_bits);
    let shift = span_bits - bucket_bits;
    let mut count = vec![0u32; 1usize << bucket_bits];
    for &t in ts {
        count[(t.wrapping_sub(lo) as u64 >> shift) as usize] += 1;
    }
    let mut at = 0u32;
    let mut crowding = 0u64;
    for c in count.iter_mut() {
        let here = *c;
        crowding += here as u64 * here as u64;
        *c = at;
        at += here;
    }
    if crowding > 8 * n as u64 {
        return None;
    }
    let mut v = vec![0u64; n];
    for (i, &t) in ts.iter().enumerate() {
        let off = t.wrapping_sub(lo) as u64;
        let slot = &mut count[(off >> shift) as usize];
        v[*slot as usize] = off << index_bits | i as u64;
        *slot += 1;
    }
    drop(count);
    // keys of different buckets are in order already: each key moves back only past its own bucket's
    for k in 1..n {
        let key = v[k];
        let mut j = k;
        while j > 0 && v[j - 1] > key {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = key;
    }
    let mask = (1u64 << index_bits) - 1;
    let mut order: Vec<u32> = v.iter().map(|&k| (k & mask) as u32).collect();
    equal_runs(&mut order, |x, y| v[x] >> index_bits == v[y] >> index_bits, second);
    Some(order)
}

/// The radix sort when a timestamp's offset and its index fit one 64-bit word together (offset above, index below;
/// a trace of hours and millions of events): one array moved by each pass, not a key's and an index's, and the
/// counts 32-bit.
fn packed<K: Ord>(ts: &[i64], lo: i64, index_bits: u32, passes: u32, bits: u32, second: impl Fn(usize) -> K) -> Vec<u32> {
    let n = ts.len();
    let buckets = 1usize << bits;
    let mut v: Vec<u64> = ts.iter().enumerate().map(|(i, &t)| (t.wrapping_sub(lo) as u64) << index_bits | i as u64).collect();
    let mut tmp: Vec<u64> = vec![0; n];
    let mut count = vec![0u32; buckets];
    for pass in 0..passes {
        let shift = index_bits + pass * bits;
        let digit = |k: u64| ((k >> shift) as usize) & (buckets - 1);
        count.iter_mut().for_each(|c| *c = 0);
        for &k in &v {
            count[digit(k)] += 1;
        }
        if count.contains(&(n as u32)) {
            continue; // every key has this digit: the pass would move nothing
        }
        let mut at = 0;
        for c in count.iter_mut() {
            let here = *c;
            *c = at;
            at += here;
        }
        for &k in &v {
            let d = digit(k);
            tmp[count[d] as usize] = k;
            count[d] += 1;
        }
        std::mem::swap(&mut v, &mut tmp);
    }
    drop(tmp);
    let mask = (1u64 << index_bits) - 1;
    let mut order: Vec<u32> = v.iter().map(|&k| (k & mask) as u32).collect();
    equal_runs(&mut order, |x, y| v[x] >> index_bits == v[y] >> index_bits, second);
    order
}

/// Runs of equal timestamps (same(x, y): positions x and y of the sorted order hold one) put in order of `second`,
/// stably.
fn equal_runs<K: Ord>(order: &mut [u32], same: impl Fn(usize, usize) -> bool, second: impl Fn(usize) -> K) {
    let n = order.len();
    let mut start = 0;
    while start < n {
        let mut end = start + 1;
        while end < n && same(start, end) {
            end += 1;
        }
        if end - start > 1 {
            order[start..end].sort_by_key(|&i| second(i as usize));
        }
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_order_is_the_stable_sort_order() {
        let mut x: u64 = 12345;
        let mut ts: Vec<i64> = (0..5000).map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 20) % 100_000_000_000) as i64 - 7
        }).collect();
        ts[10] = i64::MIN;
        ts[11] = i64::MAX;
        ts[12] = ts[13];
        let mut want: Vec<u32> = (0..ts.len() as u32).collect();
        want.sort_by_key(|&i| ts[i as usize]);
        assert_eq!(by_time(&ts), want);
        let second = |i: usize| (i % 3) as u8;
        want.sort_by_key(|&i| (ts[i as usize], second(i as usize)));
        assert_eq!(by_time_then(&ts, second), want);
        // a span of 37 bits (the packed path: offset and index in one word), with equal timestamps
        let mut ts2: Vec<i64> = ts.iter().map(|&t| t.rem_euclid(100_000_000_000) + 5).collect();
        ts2[20] = ts2[21];
        ts2[22] = ts2[21];
        let mut want2: Vec<u32> = (0..ts2.len() as u32).collect();
        want2.sort_by_key(|&i| (ts2[i as usize], second(i as usize)));
        assert_eq!(by_time_then(&ts2, second), want2);
        // the bucketed path (n under BUCKETED_MAX, packed): nearly sorted, bursts, and all but a few equal
        let nearly: Vec<i64> = (0..4000i64).map(|i| i * 1000 + ((i * 7919) % 13) * 900).collect();
        let burst: Vec<i64> = (0..4000i64).map(|i| if i % 2 == 0 { 5_000_000 + i % 17 } else { i * 3 }).collect();
        let flat: Vec<i64> = (0..4000i64).map(|i| if i % 1000 == 3 { 9 } else { 4 }).collect();
        for ts in [nearly, burst, flat] {
            let mut want: Vec<u32> = (0..ts.len() as u32).collect();
            want.sort_by_key(|&i| (ts[i as usize], second(i as usize)));
            assert_eq!(by_time_then(&ts, second), want);
        }
    }

    #[test]
    fn bucketed_gives_way_to_the_radix_sort_when_crowded() {
        // 4000 events, 3000 of them within one bucket's width: the insertion sort would cost 3000^2 / 4
        let ts: Vec<i64> = (0..4000i64).map(|i| if i < 3000 { 1_000_000 + (3000 - i) } else { i * 1_000_000 }).collect();
        let lo = *ts.iter().min().unwrap();
        let span_bits = 64 - ((ts.iter().max().unwrap() - lo) as u64).leading_zeros();
        assert!(bucketed(&ts, lo, span_bits, 12, &|_| ()).is_none());
        let spread: Vec<i64> = (0..4000i64).map(|i| (i * 7919) % 4000 * 1000).collect();
        let order = bucketed(&spread, 0, 22, 12, &|_| ()).expect("spread events are bucketed");
        assert!(order.windows(2).all(|w| spread[w[0] as usize] < spread[w[1] as usize]));
    }
}
