//! droidlag's native trace ingest (the `droidlag._native` module): raw trace bytes into columns for the
//! TraceBuilder. The tables made here whole (slices, thread states, counters, binder) go to polars as `Table`s
//! through the Arrow C stream interface (arrow_table.rs); other integer columns come back as `Column`s, int64 buffers
//! numpy views without a copy; strings and the few nullable records as Python lists.

use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

#[allow(dead_code)] // a general table builder: some of its column kinds wait for the tables still to move to it
mod arrow_table;
mod atrace;
mod binder;
mod block;
mod dump;
mod hash;
mod frametimeline;
mod ftrace_text;
mod order;
mod perfetto;
mod records;
mod states;
mod systrace_text;
mod wire;

use perfetto::{Decl, Decoder};

/// A column of plain numbers owned by Rust and lent to Python through the buffer protocol: numpy views it
/// (`np.frombuffer`) without a copy, and the memory goes when the last view does.
enum Data {
    I64(Vec<i64>),
    I32(Vec<i32>),
    U8(Vec<u8>),
}

#[pyclass(module = "droidlag._native", frozen)]
struct Column {
    data: Data,
}

impl Column {
    fn raw(&self) -> (*const u8, usize) {
        match &self.data {
            Data::I64(v) => (v.as_ptr() as *const u8, std::mem::size_of_val(v.as_slice())),
            Data::I32(v) => (v.as_ptr() as *const u8, std::mem::size_of_val(v.as_slice())),
            Data::U8(v) => (v.as_ptr(), v.len()),
        }
    }
}

#[pymethods]
impl Column {
    /// Length in bytes (as for the `bytes` it stands in for).
    fn __len__(&self) -> usize {
        self.raw().1
    }

    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut pyo3::ffi::Py_buffer, flags: std::os::raw::c_int)
                            -> PyResult<()> {
        if flags & pyo3::ffi::PyBUF_WRITABLE == pyo3::ffi::PyBUF_WRITABLE {
            return Err(pyo3::exceptions::PyBufferError::new_err("native columns are read-only"));
        }
        let (ptr, len) = slf.get().raw();
        // SAFETY: the buffer lives as long as the Column, which the view keeps alive (view.obj holds a reference)
        let rc = unsafe {
            pyo3::ffi::PyBuffer_FillInfo(view, slf.as_ptr(), ptr as *mut std::os::raw::c_void, len as isize, 1, flags)
        };
        if rc == -1 {
            return Err(PyErr::fetch(slf.py()));
        }
        Ok(())
    }

    unsafe fn __releasebuffer__(&self, _view: *mut pyo3::ffi::Py_buffer) {}
}

/// An int64 column handed over without a copy (native little-endian; the Python side makes a numpy view of it).
fn col(py: Python<'_>, v: Vec<i64>) -> PyResult<Bound<'_, PyAny>> {
    Ok(Bound::new(py, Column { data: Data::I64(v) })?.into_any())
}

/// Each known thread's process, made once per build from the TraceBuilder's threads (`{tid: Thread}`, read
/// natively) for both the slice nesting and the binder pairing.
#[pyclass(module = "droidlag._native")]
struct ThreadPids {
    map: hash::FastMap<i64, i64>,
}

#[pymethods]
impl ThreadPids {
    #[new]
    fn new(threads: &Bound<'_, PyDict>) -> PyResult<Self> {
        let pairs = records::known_pids(threads)?;
        // sized for every thread at once (a collect from a filter knows no size: it grew by rehashing)
        let mut map = hash::FastMap::with_capacity_and_hasher(pairs.len(), Default::default());
        map.extend(pairs);
        Ok(ThreadPids { map })
    }
}

/// A sched stream (perfetto::SchedStream, the Perfetto decoder's or the ftrace text parser's) as the dict
/// TraceBuilder.sched_stream takes: its columns as buffers, with its counts and range.
fn sched_dict<'py>(py: Python<'py>, st: perfetto::SchedStream) -> PyResult<Bound<'py, PyDict>> {
    let sched = PyDict::new(py);
    sched.set_item("ts", col(py, st.ts)?)?;
    sched.set_item("kind", Column { data: Data::U8(st.kind) })?;
    sched.set_item("cpu", Column { data: Data::I32(st.cpu) })?;
    sched.set_item("a", col(py, st.a)?)?;
    sched.set_item("b", col(py, st.b)?)?;
    sched.set_item("switch_state", col(py, st.switch_state)?)?;
    sched.set_item("blocked_index", Column { data: Data::I32(st.blocked_index) })?;
    sched.set_item("bad_cpu", st.bad_cpu)?;
    sched.set_item("range", st.range)?;
    sched.set_item("counts", st.counts)?;
    Ok(sched)
}

fn cols<const N: usize>(py: Python<'_>, group: [Vec<i64>; N]) -> PyResult<Bound<'_, PyList>> {
    let items = group.into_iter().map(|c| col(py, c)).collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// Declarations folded per process and per thread with the TraceBuilder's rules, in first-seen order: a trace that
/// repeats its process tree (long captures, concatenated files) hands each process and thread over once. A process
/// takes its latest name and ppid (as trace processor's process table does: an app process is listed under its
/// zygote's name, or `<pre-initialized>`, until it takes its package name); a thread keeps its first pid and name,
/// a missing one filled by a later declaration.
fn collapse_decls(decls: Vec<Decl>) -> Vec<Decl> {
    let mut out: Vec<Decl> = Vec::new();
    let mut procs: hash::FastMap<i64, usize> = hash::FastMap::with_capacity_and_hasher(decls.len(), Default::default());
    let mut threads: hash::FastMap<i64, usize> = hash::FastMap::with_capacity_and_hasher(decls.len(), Default::default());
    let named = |n: &Option<String>| n.as_deref().is_some_and(|s| !s.is_empty());
    for d in decls {
        match d {
            Decl::Process { pid, name, ppid } => match procs.get(&pid) {
                None => {
                    procs.insert(pid, out.len());
                    out.push(Decl::Process { pid, name: name.filter(|s| !s.is_empty()), ppid });
                }
                Some(&i) => {
                    if let Decl::Process { name: old_name, ppid: old_ppid, .. } = &mut out[i] {
                        if named(&name) {
                            *old_name = name;
                        }
                        if ppid.is_some() {
                            *old_ppid = ppid;
                        }
                    }
                }
            },
            Decl::Thread { tid, pid, name } => match threads.get(&tid) {
                None => {
                    threads.insert(tid, out.len());
                    out.push(Decl::Thread { tid, pid, name });
                }
                Some(&i) => {
                    if let Decl::Thread { pid: old_pid, name: old_name, .. } = &mut out[i] {
                        if old_pid.is_none() {
                            *old_pid = pid;
                        }
                        if named(&name) && !named(old_name) {
                            *old_name = name;
                        }
                    }
                }
            },
        }
    }
    out
}

/// Reads a Perfetto trace fed in chunks (any split; a packet cut by a chunk boundary waits for the next chunk).
#[pyclass(module = "droidlag._native")]
struct PerfettoDecoder {
    inner: Decoder,
}

#[pymethods]
impl PerfettoDecoder {
    #[new]
    fn new() -> Self {
        PerfettoDecoder { inner: Decoder::new() }
    }

    /// Decodes the complete packets of the next chunk of the file.
    fn feed(&mut self, py: Python<'_>, chunk: &[u8]) {
        let inner = &mut self.inner;
        py.detach(|| inner.feed(chunk));
    }

    /// Reads and decodes a whole file in chunks of `chunk` bytes through one reused buffer (memory: one chunk,
    /// never the file), stopping early at a broken record. Returns the file's size in bytes (what was read, plus
    /// the rest of the file when reading stopped early).
    fn feed_file(&mut self, py: Python<'_>, path: std::path::PathBuf, chunk: usize) -> PyResult<u64> {
        let inner = &mut self.inner;
        let size = py.detach(|| read_file(inner, &path, chunk, None)).map_err(os_error)?;
        Ok(size.expect("read_file decodes every file when it is not asked to sniff"))
    }

    /// As feed_file, when the file opens as a plain Perfetto trace: a regular file of at most `max_size` bytes whose
    /// first three records lie within its first `head` bytes and are trace packets (`looks_like_perfetto`, within).
    /// Otherwise None, with nothing decoded (the caller's checks and the other formats' sniffing then say what the
    /// file is): one open and one first read serve the sniff and the decode.
    fn feed_file_if_perfetto(&mut self, py: Python<'_>, path: std::path::PathBuf, chunk: usize, head: usize,
                             max_size: u64) -> PyResult<Option<u64>> {
        let inner = &mut self.inner;
        py.detach(|| read_file(inner, &path, chunk, Some((head, max_size)))).map_err(os_error)
    }

    /// Byte offset of the first byte not yet decoded (the end of the last complete packet).
    #[getter]
    fn offset(&self) -> u64 {
        self.inner.offset
    }

    /// (byte offset, why) where reading stopped at a broken record, else None.
    #[getter]
    fn stopped(&self) -> Option<(u64, String)> {
        self.inner.stopped.clone()
    }

    /// Ends the input and returns every column (a dict; see droidlag.io.perfetto for the keys).
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let inner = &mut self.inner;
        py.detach(|| {
            inner.finish_input();
            inner.finish();
        });
        let o = std::mem::take(&mut self.inner.out);
        let d = PyDict::new(py);
        d.set_item("packets", o.packets)?;
        d.set_item("compressed", (o.compressed_packets, o.compressed_bytes, o.inflated_bytes))?;
        d.set_item("before_valid", o.before_valid)?;
        d.set_item("trace_configs", o.trace_configs)?;
        d.set_item("stopped", self.inner.stopped.clone())?;
        // the sched stream in the thread-state pass's narrow columns (perfetto::sched_stream)
        let st = perfetto::sched_stream(o.sw, o.wk, o.wakeup, o.blocked_ts, o.blocked_tid, o.blocked);
        d.set_item("sched", sched_dict(py, st)?)?;
        let seq = o.print_seq;
        // processes as declared; threads with every fact about them applied (perfetto::fold_threads)
        let (mut processes, mut declared) = (Vec::new(), Vec::new());
        for decl in collapse_decls(o.decls) {
            match decl {
                Decl::Process { pid, name, ppid } => processes.push((pid, name, ppid)),
                Decl::Thread { tid, pid, name } => declared.push((tid, pid, name)),
            }
        }
        let names = o.names.into_iter().map(|(ts, _c, tid, pid, n)| (ts, tid, pid, n)).collect();
        let process_pids: hash::FastSet<i64> = processes.iter().map(|p: &(i64, Option<String>, Option<i64>)| p.0).collect();
        // as records (`{tid: Thread}`, `{pid: Process}`), made here from the folded rows
        let threads = perfetto::fold_threads(declared, &o.atrace.threads, o.newtasks, &process_pids, names, o.renames, o.comms);
        d.set_item("threads", records::thread_dict(py, threads)?)?;
        d.set_item("processes", records::process_dict(py, processes)?)?;
        d.set_item("atrace", SliceEvents { ev: o.atrace, seq })?;
        d.set_item("cpu_info", o.cpu_info)?;
        d.set_item("metadata", o.metadata)?;
        d.set_item("kernel", o.kernel)?;
        d.set_item("binder_transaction", cols(py, o.binder_tx)?)?;
        d.set_item("binder_transaction_received", cols(py, o.binder_rx)?)?;
        d.set_item("blocked", o.payloads.tuples())?;
        d.set_item("block_rq_issue", o.block_issue)?;
        d.set_item("block_rq_complete", o.block_complete)?;
        // FrameTimeline events as they came; the table is made when the trace's end is known (TraceBuilder.build)
        let end_ts: Vec<i64> = o.ft_end.iter().map(|e| e.0).collect();
        let end_cookie: Vec<i64> = o.ft_end.iter().map(|e| e.2).collect();
        d.set_item("frame_timeline", FrameTimelineEvents { starts: o.ft_start, end_cookie, end_ts })?;
        d.set_item("frame_timeline_counts", (o.ft_events, o.ft_broken, o.ft_incomplete))?;
        d.set_item("track_slices", o.slices)?;
        d.set_item("track_skipped", o.track_skipped)?;
        d.set_item("foreign_clock_events", o.foreign_clock_events)?;
        d.set_item("lost_state_events", o.lost_state_events)?;
        d.set_item("clock_overflow_events", o.clock_overflow_events)?;
        d.set_item("lost_bundles", o.lost_bundles)?;
        d.set_item("unresolved_callers", o.unresolved_callers)?;
        d.set_item("saw_waking", o.saw_waking)?;
        d.set_item("unconvertible_clocks", o.unconvertible_clocks)?;
        Ok(d)
    }
}

/// An io::Error as Python's OSError, errno kept.
fn os_error(e: std::io::Error) -> PyErr {
    pyo3::exceptions::PyOSError::new_err((e.raw_os_error().unwrap_or(0), e.to_string()))
}

/// Reads and decodes the file at `path` in chunks of `chunk` bytes (see PerfettoDecoder.feed_file). sniff: (head,
/// max_size): decode only a regular file of at most max_size bytes that looks like a Perfetto trace within its first
/// `head` bytes, else return None having decoded nothing.
fn read_file(inner: &mut Decoder, path: &std::path::Path, chunk: usize, sniff: Option<(usize, u64)>)
             -> std::io::Result<Option<u64>> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let meta = f.metadata()?;
    if sniff.is_some_and(|(_, max_size)| !meta.is_file() || meta.len() > max_size) {
        return Ok(None);
    }
    let chunk = chunk.max(sniff.map_or(1, |(head, _)| head));
    // at most the file's size, and filled by read_to_end, which writes into spare capacity without zeroing it first
    // (zeroing an 8 MB buffer cost a tenth of reading a small trace)
    let expected = usize::try_from(meta.len()).unwrap_or(usize::MAX);
    let mut buf: Vec<u8> = Vec::with_capacity(chunk.min(expected.max(1)));
    let mut size = 0u64;
    loop {
        buf.clear();
        let first = size == 0;
        let mut n = 0;
        if let Some((head, _)) = sniff.filter(|_| first) {
            // the head alone first: a file that is not a Perfetto trace costs one small read, not a chunk's
            n = (&mut f).take(head as u64).read_to_end(&mut buf)?;
            if !perfetto::looks_like_perfetto(&buf[..n], true) {
                return Ok(None);
            }
        }
        n += (&mut f).take((chunk - n) as u64).read_to_end(&mut buf)?;
        if n == 0 {
            return Ok(Some(size));
        }
        size += n as u64;
        inner.feed(&buf[..n]);
        if inner.stopped.is_some() {
            return Ok(Some(f.metadata()?.len().max(size)));
        }
        if first {
            inner.reserve_ahead(size, expected as u64);
        }
    }
}

/// Whether `data` opens as a Perfetto trace (see perfetto::looks_like_perfetto): the one rule, which the content
/// sniffing (io/detect.py) calls too.
#[pyfunction]
#[pyo3(signature = (data, within=false))]
fn looks_like_perfetto(data: &[u8], within: bool) -> bool {
    perfetto::looks_like_perfetto(data, within)
}

/// A trace's FrameTimeline events (start and end events by cookie, times on the boot clock), made into the table
/// natively once the trace's end is known (frames without an end event run to it): see frametimeline.rs.
#[pyclass(module = "droidlag._native", frozen)]
struct FrameTimelineEvents {
    starts: Vec<perfetto::FtStart>,
    end_cookie: Vec<i64>,
    end_ts: Vec<i64>,
}

#[pymethods]
impl FrameTimelineEvents {
    /// Start and end events.
    fn __len__(&self) -> usize {
        self.starts.len() + self.end_ts.len()
    }

    /// (first, last) time of any of the events, or None.
    #[getter]
    fn range(&self) -> Option<(i64, i64)> {
        let times = self.starts.iter().map(|e| e.ts).chain(self.end_ts.iter().copied());
        times.fold(None, |r, t| Some(r.map_or((t, t), |(lo, hi): (i64, i64)| (lo.min(t), hi.max(t)))))
    }

    /// The FrameTimeline table (models.trace.FRAME_TIMELINE_SCHEMA) for a trace ending at trace_end, and the
    /// number of frames without an end event.
    fn table(&self, py: Python<'_>, trace_end: i64) -> PyResult<(arrow_table::Table, usize)> {
        let shape = frametimeline::Shape::Final { trace_end };
        py.detach(|| frametimeline::table(&self.starts, &self.end_cookie, &self.end_ts, shape))
            .map_err(arrow_table::py_err)
    }

    /// The start rows (models.trace.FRAME_TIMELINE_START_SCHEMA) in table order, and the end events as (ts, cookie)
    /// int64 columns: for a TraceBuilder that also holds FrameTimeline events from elsewhere.
    fn start_rows<'py>(&self, py: Python<'py>) -> PyResult<(arrow_table::Table, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let (t, _) = frametimeline::table(&self.starts, &self.end_cookie, &self.end_ts, frametimeline::Shape::Starts)
            .map_err(arrow_table::py_err)?;
        Ok((t, col(py, self.end_ts.clone())?, col(py, self.end_cookie.clone())?))
    }
}

/// A trace's slice events (atrace payloads parsed as they come, and begin/end events from other sources), each
/// numbered in arrival order, which breaks ties at equal timestamps; `nest` makes them the slice table.
#[pyclass(module = "droidlag._native")]
struct SliceEvents {
    ev: atrace::Parsed,
    seq: i64,
}

#[pymethods]
impl SliceEvents {
    #[new]
    fn new() -> Self {
        SliceEvents { ev: atrace::Parsed::default(), seq: 0 }
    }

    fn __len__(&self) -> usize {
        self.ev.ts.len()
    }

    /// One atrace payload written at ts (ns) by thread tid; line: where it came from, for warnings.
    #[pyo3(signature = (ts, tid, payload, line=None))]
    fn atrace(&mut self, ts: i64, tid: i64, payload: &str, line: Option<i64>) {
        self.seq += 1;
        self.ev.payload(ts, tid, payload, self.seq, line);
    }

    /// A counter sample (ts ns) from a source other than atrace, kept in arrival order with atrace's.
    #[pyo3(signature = (ts, name, value, cpu=None, pid=None))]
    fn counter(&mut self, ts: i64, name: &str, value: f64, cpu: Option<i64>, pid: Option<i64>) {
        self.ev.counter(ts, name, value, cpu, pid);
    }

    /// A thread slice begins (pid None: the thread's process, looked up when nesting).
    #[pyo3(signature = (ts, tid, name, pid=None))]
    fn begin(&mut self, ts: i64, tid: i64, name: String, pid: Option<i64>) {
        self.seq += 1;
        self.ev.event(ts, self.seq, tid, pid, atrace::K_BEGIN, Some(&name), None, None);
    }

    fn end(&mut self, ts: i64, tid: i64) {
        self.seq += 1;
        self.ev.event(ts, self.seq, tid, None, atrace::K_END, None, None, None);
    }

    /// An instant (a slice of duration 0) on thread tid's track (pid None: the thread's process).
    #[pyo3(signature = (ts, tid, name, pid=None))]
    fn instant(&mut self, ts: i64, tid: i64, name: String, pid: Option<i64>) {
        self.seq += 1;
        self.ev.event(ts, self.seq, tid, pid, atrace::K_INSTANT, Some(&name), None, None);
    }

    /// What the payloads read so far imply beyond slices, handed over once: (thread pids [(tid, pid)], the counter
    /// samples as a `Table` (COUNTER_SCHEMA's columns) in time order, ties in arrival order, warnings [(what, payload
    /// head, line)], (min ts, max ts), the number of samples whose CPU number did not fit 32 bits (their cpu null),
    /// each CPU's highest "cpufreq" sample [(cpu, kHz)] in CPU order).
    #[allow(clippy::type_complexity)]
    fn take_effects<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let e = &mut self.ev;
        let (counters, bad_cpus, cpufreq_max) = py.detach(|| e.take_counters()).map_err(arrow_table::py_err)?;
        let threads = std::mem::take(&mut e.threads);
        let warnings = std::mem::take(&mut e.warnings);
        let range = (e.min_ts.take(), e.max_ts.take());
        Ok((threads, counters, warnings, range, bad_cpus, cpufreq_max).into_pyobject(py)?.into_any())
    }

    /// The slice table (a `Table`, SLICE_SCHEMA's columns) under "table": events nested per thread (see
    /// atrace.rs), slices open at the end running to `end`; thread_pids: each thread's process, for begin events
    /// that name none. Also "unmatched_ends", "unclosed" and "replaced_names" (rows whose name holds U+FFFD).
    fn nest<'py>(&mut self, py: Python<'py>, thread_pids: PyRef<'_, ThreadPids>, end: i64) -> PyResult<Bound<'py, PyDict>> {
        let thread_pid = &thread_pids.map;
        let ev = &self.ev;
        let (table, unmatched, unclosed, replaced) = py.detach(|| {
            let s = atrace::nest(ev, thread_pid, end);
            let (unmatched, unclosed, replaced) = (s.unmatched_ends, s.unclosed, s.replaced_names(&ev.strings));
            s.table(&ev.strings).map(|t| (t, unmatched, unclosed, replaced))
        }).map_err(arrow_table::py_err)?;
        let d = PyDict::new(py);
        d.set_item("table", table)?;
        d.set_item("unmatched_ends", unmatched)?;
        d.set_item("unclosed", unclosed)?;
        d.set_item("replaced_names", replaced)?;
        Ok(d)
    }
}

fn slice_of<'a, T: pyo3::buffer::Element>(py: Python<'_>, buf: &'a PyBuffer<T>) -> PyResult<&'a [T]> {
    let cells = buf.as_slice(py).ok_or_else(|| pyo3::exceptions::PyValueError::new_err("need a contiguous array"))?;
    // SAFETY: ReadOnlyCell<T> has the layout of T; the arrays are not written while this runs
    Ok(unsafe { std::slice::from_raw_parts(cells.as_ptr() as *const T, cells.len()) })
}

/// A sched stream's per-thread actions (see states.rs), made from ts, kind, cpu, a, b, aux int64 arrays in
/// insertion order by `thread_state_actions`; the arrays may be let go before `derive` writes the intervals.
#[pyclass(module = "droidlag._native")]
struct StateActions {
    inner: Option<states::Actions>,
}

#[pymethods]
impl StateActions {
    /// The thread-state table (a `Table`, THREAD_STATE_SCHEMA's columns), once: cat: each state code's category (0
    /// runnable, 1 D, 2 other) as bytes; names: each state code's name; blocked: the blocked reasons' (function,
    /// io_wait) payloads, by the index the sched stream's aux gave them. Open intervals run to `end`.
    fn derive(&mut self, py: Python<'_>, cat: &[u8], end: i64, names: Vec<String>, blocked: &Bound<'_, PyList>)
              -> PyResult<arrow_table::Table> {
        let acts = self.inner.take().ok_or_else(|| pyo3::exceptions::PyValueError::new_err("already derived"))?;
        let r = py.detach(move || states::derive(&acts, cat, end));
        // only the payloads the rows name cross from Python (a few per thread at most)
        let payloads = r.blocked_payload.iter().map(|&i| {
            let item = usize::try_from(i).ok().and_then(|i| blocked.get_item(i).ok())
                .ok_or_else(|| pyo3::exceptions::PyValueError::new_err("blocked reason index out of range"))?;
            item.extract::<(Option<String>, Option<bool>)>()
        }).collect::<PyResult<Vec<_>>>()?;
        py.detach(move || {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            r.table(&names, &payloads)
        }).map_err(arrow_table::py_err)
    }
}

/// Per-thread actions of the sched stream: ts (int64), kind (uint8), cpu (int32, i32 min for none), a, b (int64),
/// aux (int32) arrays in insertion order; running /
/// runnable: the codes of "Running" and "R".
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn thread_state_actions(py: Python<'_>, ts: PyBuffer<i64>, kind: PyBuffer<u8>, cpu: PyBuffer<i32>, a: PyBuffer<i64>,
                        b: PyBuffer<i64>, aux: PyBuffer<i32>, running: i64, runnable: i64) -> PyResult<StateActions> {
    let inp = states::Input {
        ts: slice_of(py, &ts)?, kind: slice_of(py, &kind)?, cpu: slice_of(py, &cpu)?, a: slice_of(py, &a)?,
        b: slice_of(py, &b)?, aux: slice_of(py, &aux)?,
    };
    let n = inp.ts.len();
    if [inp.kind.len(), inp.cpu.len(), inp.a.len(), inp.b.len(), inp.aux.len()].iter().any(|l| *l != n) {
        return Err(pyo3::exceptions::PyValueError::new_err("sched columns of different lengths"));
    }
    let acts = py.detach(|| states::actions(&inp, running, runnable));
    Ok(StateActions { inner: Some(acts) })
}

/// Reads ftrace text (systrace/atrace captures) section by section into columns (see ftrace_text.rs).
#[pyclass(module = "droidlag._native")]
struct FtraceText {
    inner: ftrace_text::TextParser,
}

#[pymethods]
impl FtraceText {
    /// skip_wakeup: ignore sched_wakeup (the trace also has sched_waking, the earlier, better-placed event).
    #[new]
    fn new(skip_wakeup: bool) -> Self {
        FtraceText { inner: ftrace_text::TextParser::new(skip_wakeup) }
    }

    /// tid belongs to process tgid (from a process or procfs dump).
    /// (The caller tells the TraceBuilder itself.)
    fn set_tgid(&mut self, tid: i64, tgid: i64) {
        self.inner.note_tgid(tid, tgid);
    }

    /// set_tgid for each (tid, tgid) pair, in order.
    fn set_tgids(&mut self, pairs: Vec<(i64, i64)>) {
        for (tid, tgid) in pairs {
            self.inner.note_tgid(tid, tgid);
        }
    }

    /// Every line of text; first_line: the file line of its first line.
    fn parse(&mut self, py: Python<'_>, text: &str, first_line: i64) {
        let inner = &mut self.inner;
        py.detach(|| inner.parse(text, first_line));
    }

    /// What the lines parsed so far did to the thread and process tables, and the malformed lines to warn about,
    /// handed over once: ([(tid, pid, name, overwrite)], [pid], [(line, text)]).
    #[allow(clippy::type_complexity)]
    fn take_ops(&mut self) -> (Vec<ftrace_text::ThreadOp>, Vec<i64>, Vec<(i64, String)>) {
        (std::mem::take(&mut self.inner.thread_ops), std::mem::take(&mut self.inner.out.processes),
         std::mem::take(&mut self.inner.bad_lines))
    }

    /// Ends the input and returns every column (a dict; see droidlag.io.ftrace_text for the keys).
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let p = &mut self.inner;
        let o = std::mem::take(&mut p.out);
        let d = PyDict::new(py);
        // the sched stream in the thread-state pass's narrow columns (ftrace_text::sched_stream)
        let st = ftrace_text::sched_stream(o.sw, o.wk, o.blocked_ts, o.blocked_tid, o.blocked);
        d.set_item("sched", sched_dict(py, st)?)?;
        d.set_item("states", o.states)?;
        d.set_item("blocked", o.payloads.tuples())?;
        d.set_item("binder_transaction", cols(py, o.binder_tx)?)?;
        d.set_item("binder_transaction_received", cols(py, o.binder_rx)?)?;
        d.set_item("block_rq_issue", o.block_issue)?;
        d.set_item("block_rq_complete", o.block_complete)?;
        d.set_item("slice_events", SliceEvents { ev: o.events, seq: o.seq })?;
        d.set_item("metadata", o.metadata)?;
        d.set_item("events", p.events)?;
        d.set_item("unhandled", std::mem::take(&mut p.unhandled))?;
        d.set_item("malformed", p.malformed)?;
        d.set_item("lost_events", p.lost_events)?;
        d.set_item("first_bad_line", p.first_bad_line)?;
        d.set_item("run_together", (std::mem::take(&mut p.run_together), p.run_together_lines, p.run_together_events))?;
        d.set_item("time_range", (p.min_ts, p.max_ts))?;
        Ok(d)
    }
}

/// Binder calls paired with receipt and reply (see binder.rs): tx = 8 int64 columns (ts, tid, debug_id, to_proc,
/// to_thread, reply, flags, code; None as i64 min), rx = 3 (ts, tid, debug_id); thread_pids: known threads'
/// processes. Returns the binder table (a `Table`, BINDER_SCHEMA's columns) under "table", and "unmatched_replies".
#[pyfunction]
fn binder_calls<'py>(py: Python<'py>, tx: Vec<PyBuffer<i64>>, rx: Vec<PyBuffer<i64>>, thread_pids: PyRef<'_, ThreadPids>)
                     -> PyResult<Bound<'py, PyDict>> {
    let bad = || pyo3::exceptions::PyValueError::new_err("binder columns: 8 transaction and 3 receipt columns of equal lengths");
    if tx.len() != 8 || rx.len() != 3 {
        return Err(bad());
    }
    let t: Vec<&[i64]> = tx.iter().map(|b| slice_of(py, b)).collect::<PyResult<_>>()?;
    let r: Vec<&[i64]> = rx.iter().map(|b| slice_of(py, b)).collect::<PyResult<_>>()?;
    if t.iter().any(|c| c.len() != t[0].len()) || r.iter().any(|c| c.len() != r[0].len()) {
        return Err(bad());
    }
    let ev = binder::Events { tx: [t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]], rx: [r[0], r[1], r[2]] };
    let thread_pid = &thread_pids.map;
    let (table, unmatched) = py.detach(|| {
        let c = binder::pair(&ev, thread_pid);
        let unmatched = c.unmatched_replies;
        c.table().map(|t| (t, unmatched))
    }).map_err(arrow_table::py_err)?;
    let d = PyDict::new(py);
    d.set_item("table", table)?;
    d.set_item("unmatched_replies", unmatched)?;
    Ok(d)
}

/// Block requests paired with their completions (see block.rs): issues as (ts, dev, sector, nr_sectors, bytes,
/// rwbs, tid, comm) rows, completions as (ts, dev, sector, nr_sectors, rwbs, error). The block table (a `Table`,
/// BLOCK_SCHEMA's columns), one row per issue in time order.
#[pyfunction]
fn block_requests(py: Python<'_>, issues: Vec<block::Issue>, completes: Vec<block::Complete>) -> PyResult<arrow_table::Table> {
    py.detach(|| {
        let (issues, dur) = block::pair(issues, &completes);
        block::table(issues, dur)
    }).map_err(arrow_table::py_err)
}

/// JavaScript string escaping undone (the legacy systrace report's linuxPerfData string; see systrace_text.rs).
#[pyfunction]
fn unescape_js(py: Python<'_>, text: &str) -> String {
    py.detach(|| systrace_text::unescape_js(text))
}

/// The JavaScript string literal that `text` opens, unescaped up to its closing quote, and whether it was closed
/// (the legacy systrace report's linuxPerfData string; see systrace_text.rs).
#[pyfunction]
fn js_string(py: Python<'_>, text: &str) -> (String, bool) {
    py.detach(|| systrace_text::js_string(text))
}

/// js_string of raw bytes (bytes, bytearray or a view of them) that are valid UTF-8 without CR or NUL, with
/// whether the string's first line is a continuation; None for other bytes (see systrace_text::js_string_utf8).
#[pyfunction]
fn js_string_utf8(py: Python<'_>, raw: PyBuffer<u8>) -> PyResult<Option<(String, bool, bool)>> {
    let b = slice_of(py, &raw)?;
    Ok(py.detach(|| systrace_text::js_string_utf8(b)))
}

/// The first `</script>` (any case, up to 8 whitespace characters before `>`) in buf (bytes or bytearray) at or
/// after `start`: (start, end) byte offsets, or None.
#[pyfunction]
fn find_script_end(py: Python<'_>, buf: PyBuffer<u8>, start: usize) -> PyResult<Option<(usize, usize)>> {
    let b = slice_of(py, &buf)?;
    Ok(py.detach(|| systrace_text::find_script_end(b, start.min(b.len()))))
}

/// Whether `needle` is in `text` (a marker looked for in megabytes of trace text, usually in vain; see
/// systrace_text::find_literal).
#[pyfunction]
fn text_holds(py: Python<'_>, text: &str, needle: &str) -> bool {
    py.detach(|| systrace_text::find_literal(text.as_bytes(), needle.as_bytes()).is_some())
}

/// The number of LF bytes in buf[start:end] (bytes or bytearray).
#[pyfunction]
fn count_newlines(py: Python<'_>, buf: PyBuffer<u8>, start: usize, end: usize) -> PyResult<usize> {
    let b = slice_of(py, &buf)?;
    let end = end.min(b.len());
    Ok(py.detach(|| systrace_text::count_newlines(&b[start.min(end)..end])))
}

/// The rows of a systrace PROCESS DUMP in file order (see systrace_text.rs): (kind, pid, second, name) with kind 0
/// for a `ps -T` thread row (second: tid) and 1 for a `ps` process row (second: ppid).
#[pyfunction]
fn process_dump(py: Python<'_>, text: &str) -> Vec<(u8, i64, i64, Option<String>)> {
    let rows = py.detach(|| systrace_text::process_dump(text));
    rows.into_iter()
        .map(|row| match row {
            systrace_text::DumpRow::Thread { pid, tid, name } => (0, pid, tid, name),
            systrace_text::DumpRow::Process { pid, ppid, name } => (1, pid, ppid, name),
        })
        .collect()
}

/// A thread dump's text as its top-level lines `(line, text)` (thread headers: `(line, text, header_tuple)`) and runs of indented lines `(first line, frames
/// joined by newlines, number of frames, attribute lines, lock lines as (text, frames of the run before it, line), unrecognised count, first
/// unrecognised line or None, start byte, end byte)`, in order (see dump.rs).
#[pyfunction]
fn dump_scan<'py>(py: Python<'py>, text: &str, line_offset: i64) -> PyResult<Bound<'py, PyList>> {
    let items = dump::scan(text, line_offset);
    let out = PyList::empty(py);
    for it in items {
        match it {
            dump::Item::Top(no, line) => out.append((no, line))?,
            dump::Item::Thread(no, line, h) => out.append((no, line, header_tuple(py, h)?))?,
            dump::Item::Run(r) => {
                let locks: Vec<(&str, usize, i64)> = r.locks.iter().map(|l| (l.text, l.frames_before, l.line)).collect();
                out.append((r.first_line, r.frames.join("\n"), r.frames.len(), PyList::new(py, r.attrs)?, locks,
                            r.unknown, r.first_unknown, r.start, r.end))?
            }
        }
    }
    Ok(out)
}

fn num_obj<'py>(py: Python<'py>, n: Option<dump::Num<'_>>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match n {
        None => py.None().into_bound(py),
        Some(dump::Num::Int(v)) => v.into_pyobject(py)?.into_any(),
        Some(dump::Num::Text(s)) => s.into_pyobject(py)?.into_any(),
    })
}

/// (name, daemon, prio, tid, sysTid, state) of a thread header, numbers as int or (not plain digits) str; None for
/// a line that is no header.
fn header_tuple<'py>(py: Python<'py>, h: Option<dump::Header<'_>>) -> PyResult<Bound<'py, PyAny>> {
    let Some(h) = h else { return Ok(py.None().into_bound(py)) };
    Ok((h.name, h.daemon, num_obj(py, h.prio)?, num_obj(py, h.tid)?, num_obj(py, h.sys_tid)?, h.state)
        .into_pyobject(py)?.into_any())
}

/// One thread header line as dump_scan reads it: (name, daemon, prio, tid, sysTid, state) or None.
#[pyfunction]
fn dump_thread_header<'py>(py: Python<'py>, line: &str) -> PyResult<Bound<'py, PyAny>> {
    header_tuple(py, dump::thread_header(line))
}

/// The non-empty raw lines of a run (`text[start:end]` in UTF-8 bytes), as dump_scan gave its range.
#[pyfunction]
fn dump_run_lines(text: &str, start: usize, end: usize) -> Vec<&str> {
    dump::lines(text, start, end)
}

/// How FrameTimeline start rows (cookie, ts: int64) become the table's rows, given the end events (end_cookie,
/// end_ts) and the trace's end: (indices of the start rows to take in table order, or None when that is every row
/// in order; each row's duration as int64; whether it has an end event, as bytes 0/1). See frametimeline::pair.
#[pyfunction]
fn frame_timeline_pairing<'py>(py: Python<'py>, cookie: PyBuffer<i64>, ts: PyBuffer<i64>, end_cookie: PyBuffer<i64>,
                               end_ts: PyBuffer<i64>, trace_end: i64) -> PyResult<Bound<'py, PyAny>> {
    let (c, t, ec, et) = (slice_of(py, &cookie)?, slice_of(py, &ts)?, slice_of(py, &end_cookie)?, slice_of(py, &end_ts)?);
    if c.len() != t.len() || ec.len() != et.len() {
        return Err(pyo3::exceptions::PyValueError::new_err("FrameTimeline columns of different lengths"));
    }
    let (p, dur) = py.detach(|| {
        let p = frametimeline::pair(c, t, ec, et);
        let dur = p.durations(t, trace_end);
        (p, dur)
    });
    let take = p.take.map(|v| col(py, v)).transpose()?;
    let found: Vec<u8> = p.found.into_iter().map(u8::from).collect();
    Ok((take, col(py, dur)?, pyo3::types::PyBytes::new(py, &found)).into_pyobject(py)?.into_any())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PerfettoDecoder>()?;
    m.add_class::<FtraceText>()?;
    m.add_class::<Column>()?;
    m.add_class::<arrow_table::Table>()?;
    m.add_class::<SliceEvents>()?;
    m.add_class::<FrameTimelineEvents>()?;
    m.add_function(wrap_pyfunction!(thread_state_actions, m)?)?;
    m.add_function(wrap_pyfunction!(looks_like_perfetto, m)?)?;
    m.add_class::<StateActions>()?;
    m.add_function(wrap_pyfunction!(binder_calls, m)?)?;
    m.add_function(wrap_pyfunction!(block_requests, m)?)?;
    m.add_class::<ThreadPids>()?;
    m.add_class::<records::Thread>()?;
    m.add_class::<records::Process>()?;
    m.add_function(wrap_pyfunction!(records::threads_of, m)?)?;
    m.add_function(wrap_pyfunction!(records::processes_of, m)?)?;
    m.add_function(wrap_pyfunction!(records::add_main_threads, m)?)?;
    m.add_function(wrap_pyfunction!(frame_timeline_pairing, m)?)?;
    m.add_function(wrap_pyfunction!(unescape_js, m)?)?;
    m.add_function(wrap_pyfunction!(js_string, m)?)?;
    m.add_function(wrap_pyfunction!(js_string_utf8, m)?)?;
    m.add_function(wrap_pyfunction!(find_script_end, m)?)?;
    m.add_function(wrap_pyfunction!(count_newlines, m)?)?;
    m.add_function(wrap_pyfunction!(text_holds, m)?)?;
    m.add_function(wrap_pyfunction!(process_dump, m)?)?;
    m.add_function(wrap_pyfunction!(dump_scan, m)?)?;
    m.add_function(wrap_pyfunction!(dump_run_lines, m)?)?;
    m.add_function(wrap_pyfunction!(dump_thread_header, m)?)?;
    Ok(())
}
