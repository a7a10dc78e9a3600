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
    if n <= SMALL || ts.windows(2).all(|w| w[0] <= w[1]) {
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by_key(|&i| (ts[i as usize], second(i as usize)));   // (a sorted run is one pass)
        return order;
    }
    let (lo, hi) = min_max(ts);
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
    let mut order: Vec<u32> = (0..n as u32).collect();
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

/// The least and the greatest of ts (not empty), in one pass of eight lanes (two compares an event, independent
/// from lane to lane: the plain min() and max() were a chain of dependent compares each, a tenth of a sort's cost).
fn min_max(ts: &[i64]) -> (i64, i64) {
    let (mut lo, mut hi) = ([i64::MAX; 8], [i64::MIN; 8]);
    let mut chunks = ts.chunks_exact(8);
    for c in &mut chunks {
        for k in 0..8 {
            lo[k] = lo[k].min(c[k]);
            hi[k] = hi[k].max(c[k]);
        }
    }
    for &t in chunks.remainder() {
        lo[0] = lo[0].min(t);
        hi[0] = hi[0].max(t);
    }
    (*lo.iter().min().unwrap(), *hi.iter().max().unwrap())
}

/// Up to this many events, one counting pass by the timestamps' top bits into about n buckets and an insertion sort
/// of what is left (`bucketed`) beats the radix passes. Past it, in a hot loop (`corpus_timing`) it still wins by a
/// fifth, but in a read, where the count table and the target start out of cache, the sched stream of 19,196 events
/// took a quarter longer than by the radix passes (A/B of the two in one process).
const BUCKETED_MAX: usize = 1 << 13;
/// The insertion sort's moves allowed per event before `bucketed` gives way (about what the radix passes cost).
const MOVES_PER_EVENT: usize = 8;

/// The stable time order by one counting pass into about n buckets by the offset's top bits (keys packed as in
/// `packed`: offset above, index below, so that plain u64 order is the stable order), then an insertion sort, which
/// only has to order each bucket's few keys. A trace's events spread over its span, a few per bucket; where they
/// crowd (bursts, equal timestamps) the insertion sort would cost the square of a bucket's size: None when its
/// moves pass a few per event (the radix sort then takes over).
fn bucketed<K: Ord>(ts: &[i64], lo: i64, span_bits: u32, index_bits: u32, second: &impl Fn(usize) -> K) -> Option<Vec<u32>> {
    let n = ts.len();
    let bucket_bits = index_bits.min(span_bits);
    let shift = span_bits - bucket_bits;
    let mut count = vec![0u32; 1usize << bucket_bits];
    for &t in ts {
        count[(t.wrapping_sub(lo) as u64 >> shift) as usize] += 1;
    }
    let mut at = 0u32;
    for c in count.iter_mut() {
        let here = *c;
        *c = at;
        at += here;
    }
    let mut v = vec![0u64; n];
    for (i, &t) in ts.iter().enumerate() {
        let off = t.wrapping_sub(lo) as u64;
        let slot = &mut count[(off >> shift) as usize];
        v[*slot as usize] = off << index_bits | i as u64;
        *slot += 1;
    }
    drop(count);
    // keys of different buckets are in order already: each key moves back only past keys of its own bucket, a
    // few in a stream whose events spread over time; where they crowd (bursts) the moves would grow as the square of
    // a bucket's size, and past a budget of a few per event the radix sort takes over
    let mut budget = MOVES_PER_EVENT * n;
    for k in 1..n {
        let key = v[k];
        let mut j = k;
        while j > 0 && v[j - 1] > key {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = key;
        budget = budget.checked_sub(k - j)?;
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
        assert_eq!(min_max(&ts), (i64::MIN, i64::MAX));
        assert_eq!(min_max(&ts[..5]), (*ts[..5].iter().min().unwrap(), *ts[..5].iter().max().unwrap()));
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

#[cfg(test)]
mod corpus_timing {
    /// Times the native table passes on two corpus traces' streams (best of 200, wall time in a hot loop): the sort
    /// paths, the slice nesting and its table, the FrameTimeline table, the counters table, the thread-state actions
    /// and intervals. Not a check (no timed assertion): `cargo test --release corpus_timing -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn passes_on_corpus_streams() {
        fn best(f: &mut dyn FnMut()) -> u128 {
            (0..200).map(|_| { let t = std::time::Instant::now(); f(); t.elapsed().as_nanos() }).min().unwrap()
        }
        for name in ["nowinandroid_pixel7pro_a13_atrace_frametimeline.perfetto-trace",
                     "perfetto_pixel6a_a13_warm_startup_sched_binder_freq_frametimeline.perfetto-trace"] {
            let Ok(bytes) = std::fs::read(format!("../../shared/corpus/traces/{name}")) else { continue };
            let mut d = crate::perfetto::Decoder::new();
            d.feed(&bytes);
            d.finish_input();
            d.finish();
            let mut o = std::mem::take(&mut d.out);
            let st = crate::perfetto::sched_stream(o.sw, o.wk, o.wakeup, o.blocked_ts, o.blocked_tid, o.blocked);
            let ft: Vec<i64> = o.ft_start.iter().map(|e| e.ts).collect();
            let name = &name[..12];
            for (what, ts) in [("slices", &o.atrace.ts), ("counters", &o.atrace.c_ts), ("sched", &st.ts), ("ft", &ft)] {
                if ts.len() <= super::SMALL {
                    continue;
                }
                let by_time = best(&mut || { std::hint::black_box(super::by_time(ts)); });
                let lo = *ts.iter().min().unwrap();
                let span_bits = 64 - (ts.iter().max().unwrap().wrapping_sub(lo) as u64).leading_zeros();
                let index_bits = 64 - (ts.len() as u64).leading_zeros();
                let passes = span_bits.div_ceil(super::MAX_BITS);
                let bits = span_bits.div_ceil(passes.max(1));
                let radix = best(&mut || { std::hint::black_box(super::packed(ts, lo, index_bits, passes, bits, |_| ())); });
                let bucketed = best(&mut || { std::hint::black_box(super::bucketed(ts, lo, span_bits, index_bits, &|_| ())); });
                let fits = super::bucketed(ts, lo, span_bits, index_bits, &|_| ()).is_some();
                eprintln!("{name} sort {what:8} n={:6}: by_time {by_time:7} ns, radix {radix:7} ns, bucketed {bucketed:7} ns (within budget: {fits})", ts.len());
            }
            let tp: std::collections::HashMap<i64, i64, rustc_hash::FxBuildHasher> = Default::default();
            let ev = &o.atrace;
            let nest = best(&mut || { std::hint::black_box(crate::atrace::nest(ev, &tp, i64::MAX / 2)); });
            let both = best(&mut || { std::hint::black_box(crate::atrace::nest(ev, &tp, i64::MAX / 2).table(&ev.strings).unwrap()); });
            eprintln!("{name} nest {nest} ns, nest + table {both} ns ({} events)", ev.ts.len());
            let shape = crate::frametimeline::Shape::Final { trace_end: i64::MAX / 2 };
            let ft = best(&mut || { std::hint::black_box(crate::frametimeline::table(&o.ft_start, &[], &[], shape).unwrap()); });
            eprintln!("{name} FrameTimeline table {ft} ns ({} starts)", o.ft_start.len());
            let mut atr = std::mem::take(&mut o.atrace);
            let c = (atr.c_ts.clone(), atr.c_name.clone(), atr.c_value.clone(), atr.c_pid.clone(), atr.c_cpu.clone());
            let mut counters = u128::MAX;
            for _ in 0..200 {
                (atr.c_ts, atr.c_name, atr.c_value, atr.c_pid, atr.c_cpu) = c.clone();
                let t = std::time::Instant::now();
                std::hint::black_box(atr.take_counters().unwrap());
                counters = counters.min(t.elapsed().as_nanos());
            }
            eprintln!("{name} counters table {counters} ns ({} samples)", c.0.len());
            // state codes: running 0, runnable 1, the switches' prev_state made codes 2..9 (as a trace's names would be)
            let aux: Vec<i32> = st.switch_state.iter().map(|&s| (s & 7) as i32 + 2).chain(std::iter::repeat(0)).take(st.ts.len()).collect();
            let inp = crate::states::Input { ts: &st.ts, kind: &st.kind, cpu: &st.cpu, a: &st.a, b: &st.b, aux: &aux };
            let acts = best(&mut || { std::hint::black_box(crate::states::actions(&inp, 0, 1)); });
            let a = crate::states::actions(&inp, 0, 1);
            let cat = [0u8, 0, 2, 2, 1, 2, 2, 2, 2, 2];
            let derive = best(&mut || { std::hint::black_box(crate::states::derive(&a, &cat, i64::MAX / 2)); });
            let names = ["Running", "R", "S", "D", "D|K", "x", "y", "z", "w", "v"];
            let both = best(&mut || {
                let r = crate::states::derive(&a, &cat, i64::MAX / 2);
                let payloads = vec![(None, None); r.blocked_payload.len()];
                std::hint::black_box(r.table(&names, &payloads).unwrap());
            });
            eprintln!("{name} thread states: actions {acts} ns, derive {derive} ns, derive + table {both} ns ({} events)", st.ts.len());
        }
    }
}
