//! The Trace model's thread and process records (`models.trace.Thread` and `Process`), made natively.
//!
//! A trace holds thousands of them (3,400 threads and 660 processes in a 2 MB startup trace). As named tuples each
//! cost a tuple made from a row tuple (the decoder's) plus a second made by `tuple.__new__`, and, being tuples of a
//! subclass, CPython's cyclic garbage collector examined every one of them at each collection of its generation
//! (it untracks only exact tuples). These records are immutable native objects holding no reference that could
//! make a cycle (ints and `str`s), so they are not tracked by the collector at all, and the decoder makes them, and
//! the dicts keyed by id, directly from its rows.
//!
//! They behave as the named tuples did where the code and users look: attributes, positional construction,
//! equality and hash by value (a record equals a record of its own type with the same fields), `repr`, iteration
//! and unpacking (`tid, pid, name = t`; `tuple(t)`), indexing by an int, `len`, pickling. Not kept: ordering
//! (`sorted` needs a key), slicing, equality with a plain tuple, and the named-tuple helpers (`_replace`, `_asdict`).

use pyo3::basic::CompareOp;
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::pyclass::boolean_struct::True;
use pyo3::PyClass;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};

/// A name as the record holds it: the Python string itself (made once, shared by every access).
type Name = Option<Py<PyString>>;

fn name_of(py: Python<'_>, name: Option<&str>) -> Name {
    name.map(|s| PyString::new(py, s).unbind())
}

fn name_repr(py: Python<'_>, name: &Name) -> PyResult<String> {
    Ok(match name {
        None => "None".to_string(),
        Some(n) => n.bind(py).repr()?.to_string(),
    })
}

fn opt_repr(v: Option<i64>) -> String {
    v.map_or("None".to_string(), |v| v.to_string())
}

/// A record as the tuple of its fields, which its equality, hash, indexing, iteration and pickling go through.
trait Record: PyClass<Frozen = True> + Sync {
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>>;
}

/// == and != between two records of one type, by their fields; anything else is NotImplemented.
fn compare<T: Record>(rec: &T, py: Python<'_>, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
    let Ok(o) = other.cast::<T>() else {
        return Ok(py.NotImplemented());
    };
    let same = rec.fields(py)?.eq(o.get().fields(py)?)?;
    match op {
        CompareOp::Eq => Ok(same.into_pyobject(py)?.to_owned().into_any().unbind()),
        CompareOp::Ne => Ok((!same).into_pyobject(py)?.to_owned().into_any().unbind()),
        _ => Ok(py.NotImplemented()),
    }
}

/// The field at a tuple index (negative counts from the end), as a tuple of three would give it.
fn item<'py, T: Record>(rec: &T, py: Python<'py>, index: isize) -> PyResult<Bound<'py, PyAny>> {
    let i = if index < 0 { index + 3 } else { index };
    if !(0..3).contains(&i) {
        return Err(PyIndexError::new_err("tuple index out of range"));
    }
    rec.fields(py)?.get_item(i as usize)
}

/// (type, fields): what pickle calls the type with to make the record again.
fn reduce<'py, T: Record>(slf: &Bound<'py, T>) -> PyResult<(Bound<'py, PyType>, Bound<'py, PyTuple>)> {
    Ok((slf.as_any().get_type(), slf.get().fields(slf.py())?))
}

/// A thread and its process (pid None when the trace does not say), as the trace names it.
#[pyclass(module = "droidlag._native", frozen)]
pub struct Thread {
    #[pyo3(get)]
    tid: i64,
    #[pyo3(get)]
    pid: Option<i64>,
    name: Name,
}

impl Thread {
    pub fn new_native(py: Python<'_>, tid: i64, pid: Option<i64>, name: Option<&str>) -> Self {
        Thread { tid, pid, name: name_of(py, name) }
    }
}

impl Record for Thread {
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        (self.tid, self.pid, self.name.as_ref().map(|n| n.clone_ref(py))).into_pyobject(py)
    }
}

#[pymethods]
impl Thread {
    #[new]
    fn new(tid: i64, pid: Option<i64>, name: Option<Py<PyString>>) -> Self {
        Thread { tid, pid, name }
    }

    #[getter]
    fn name(&self, py: Python<'_>) -> Option<Py<PyString>> {
        self.name.as_ref().map(|n| n.clone_ref(py))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("Thread(tid={}, pid={}, name={})", self.tid, opt_repr(self.pid), name_repr(py, &self.name)?))
    }

    fn __richcmp__(&self, py: Python<'_>, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        compare(self, py, other, op)
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        self.fields(py)?.hash()
    }

    fn __len__(&self) -> usize {
        3
    }

    fn __getitem__<'py>(&self, py: Python<'py>, index: isize) -> PyResult<Bound<'py, PyAny>> {
        item(self, py, index)
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.fields(py)?.try_iter()?.into_any())
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyType>, Bound<'py, PyTuple>)> {
        reduce(slf)
    }
}

/// A process as the trace names it.
#[pyclass(module = "droidlag._native", frozen)]
pub struct Process {
    #[pyo3(get)]
    pid: i64,
    name: Name,
    #[pyo3(get)]
    ppid: Option<i64>,
}

impl Process {
    pub fn new_native(py: Python<'_>, pid: i64, name: Option<&str>, ppid: Option<i64>) -> Self {
        Process { pid, name: name_of(py, name), ppid }
    }
}

impl Record for Process {
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        (self.pid, self.name.as_ref().map(|n| n.clone_ref(py)), self.ppid).into_pyobject(py)
    }
}

#[pymethods]
impl Process {
    #[new]
    #[pyo3(signature = (pid, name, ppid=None))]
    fn new(pid: i64, name: Option<Py<PyString>>, ppid: Option<i64>) -> Self {
        Process { pid, name, ppid }
    }

    #[getter]
    fn name(&self, py: Python<'_>) -> Option<Py<PyString>> {
        self.name.as_ref().map(|n| n.clone_ref(py))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("Process(pid={}, name={}, ppid={})", self.pid, name_repr(py, &self.name)?, opt_repr(self.ppid)))
    }

    fn __richcmp__(&self, py: Python<'_>, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        compare(self, py, other, op)
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        self.fields(py)?.hash()
    }

    fn __len__(&self) -> usize {
        3
    }

    fn __getitem__<'py>(&self, py: Python<'py>, index: isize) -> PyResult<Bound<'py, PyAny>> {
        item(self, py, index)
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.fields(py)?.try_iter()?.into_any())
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyType>, Bound<'py, PyTuple>)> {
        reduce(slf)
    }
}

/// `{id: record}` of (id, record) pairs in their order; None when an id repeats.
fn keyed<'py, R>(py: Python<'py>, records: impl ExactSizeIterator<Item = (i64, R)>) -> PyResult<Option<Bound<'py, PyDict>>>
where
    R: IntoPyObject<'py>,
{
    let d = PyDict::new(py);
    let n = records.len();
    for (id, record) in records {
        d.set_item(id, record)?;
    }
    Ok((d.len() == n).then_some(d))
}

/// `{tid: Thread}` of rows (tid, pid, name), one per id in the rows' order; None when an id repeats (the caller
/// then applies its rules row by row).
#[pyfunction]
pub fn threads_of<'py>(py: Python<'py>, rows: Vec<(i64, Option<i64>, Option<Py<PyString>>)>)
                       -> PyResult<Option<Bound<'py, PyDict>>> {
    keyed(py, rows.into_iter().map(|(tid, pid, name)| (tid, Thread { tid, pid, name })))
}

/// `{pid: Process}` of rows (pid, name, ppid), an empty name as none; None when an id repeats.
#[pyfunction]
pub fn processes_of<'py>(py: Python<'py>, rows: Vec<(i64, Option<Py<PyString>>, Option<i64>)>)
                         -> PyResult<Option<Bound<'py, PyDict>>> {
    keyed(py, rows.into_iter().map(|(pid, name, ppid)| {
        let name = name.filter(|s| s.bind(py).len().map_or(true, |l| l > 0));
        (pid, Process { pid, name, ppid })
    }))
}

/// The decoder's threads as `{tid: Thread}` (the rows come folded, one per id).
pub fn thread_dict<'py>(py: Python<'py>, rows: Vec<crate::perfetto::ThreadRow>) -> PyResult<Bound<'py, PyDict>> {
    let records = rows.into_iter().map(|(tid, pid, name)| (tid, Thread::new_native(py, tid, pid, name.as_deref())));
    keyed(py, records)?.ok_or_else(|| PyValueError::new_err("thread rows repeat an id"))
}

/// The decoder's processes as `{pid: Process}` (folded, one per id; empty names already none).
pub fn process_dict<'py>(py: Python<'py>, rows: Vec<(i64, Option<String>, Option<i64>)>) -> PyResult<Bound<'py, PyDict>> {
    let records = rows.into_iter().map(|(pid, name, ppid)| (pid, Process::new_native(py, pid, name.as_deref(), ppid)));
    keyed(py, records)?.ok_or_else(|| PyValueError::new_err("process rows repeat an id"))
}

/// Each process's main thread (tid = pid) in `threads`: added, named as the process, when the trace declared none;
/// given the process as pid when it had none (a thread seen only as a process's pid is its main thread). Then each
/// pid a thread names without a process record of its own (ftrace text's TGID column, a process dump gone before
/// the trace ended) gets one (not pid 0, the idle task), named as its main thread where the trace names that thread
/// (the kernel's comm, as trace processor names such processes), with no name otherwise; no main-thread record is
/// made up for it, and a main thread known without its pid is given it.
#[pyfunction]
pub fn add_main_threads(py: Python<'_>, processes: &Bound<'_, PyDict>, threads: &Bound<'_, PyDict>) -> PyResult<()> {
    for (key, p) in processes.iter() {
        let p = p.cast::<Process>()?.get();
        let pid = p.pid;
        match threads.get_item(&key)? {
            None => threads.set_item(key, Thread { tid: pid, pid: Some(pid), name: p.name.as_ref().map(|n| n.clone_ref(py)) })?,
            Some(t) => {
                let t = t.cast::<Thread>()?.get();
                if t.pid.is_none() {
                    threads.set_item(key, Thread { tid: pid, pid: Some(pid), name: t.name.as_ref().map(|n| n.clone_ref(py)) })?;
                }
            }
        }
    }
    add_thread_processes(py, processes, threads)
}

/// A process record for each pid of `threads` that `processes` lacks, in the threads' order.
fn add_thread_processes(py: Python<'_>, processes: &Bound<'_, PyDict>, threads: &Bound<'_, PyDict>) -> PyResult<()> {
    let (mut missing, mut seen): (Vec<i64>, crate::hash::FastSet<i64>) = Default::default();
    for t in threads.values().iter() {
        if let Some(pid) = t.cast::<Thread>()?.get().pid {
            // (pid 0 is the kernel's idle task, not a process)
            if pid > 0 && seen.insert(pid) && !processes.contains(pid)? {
                missing.push(pid);
            }
        }
    }
    for pid in missing {
        let mut name = None;
        if let Some(t) = threads.get_item(pid)? {
            let t = t.cast::<Thread>()?.get();
            name = t.name.as_ref().map(|n| n.clone_ref(py));
            if t.pid.is_none() {
                threads.set_item(pid, Thread { tid: pid, pid: Some(pid), name: t.name.as_ref().map(|n| n.clone_ref(py)) })?;
            }
        }
        processes.set_item(pid, Process { pid, name, ppid: None })?;
    }
    Ok(())
}

/// (tid, pid) of every thread of `{tid: Thread}` whose pid is known.
pub fn known_pids(threads: &Bound<'_, PyDict>) -> PyResult<Vec<(i64, i64)>> {
    let mut out = Vec::with_capacity(threads.len());
    for v in threads.values().iter() {
        let t = v.cast::<Thread>()?.get();
        if let Some(pid) = t.pid {
            out.push((t.tid, pid));
        }
    }
    Ok(out)
}
