//! A table of native columns handed to polars whole, through the Arrow C stream interface (the PyCapsule protocol:
//! `__arrow_c_stream__`, read by `pl.DataFrame(table)`). Each column's buffer is the Vec the
//! native pass wrote, moved into an Arrow buffer without a copy; polars imports it without a copy where the types
//! allow (integers, floats, booleans, string views), so a table costs one call, not one per column.
//!
//! The native passes mark null with a sentinel (`i64::MIN`, `i32::MIN`); the validity bitmap is made from it here.
//! Strings are written row by row as string views (`StringViews`): each distinct string is copied once into the
//! column's one data buffer (or held inline in its view when 12 bytes or less), a row costs a 16-byte view, and null
//! rows are marked as written (a bitmap made once at the end). A categorical column (polars' Categorical) is an Arrow
//! dictionary array of its distinct values.

use std::ffi::CString;
use std::sync::Arc;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::types::{Float64Type, Int32Type, Int64Type, UInt32Type};
use arrow_array::{
    Array, ArrayRef, BooleanArray, DictionaryArray, PrimitiveArray, RecordBatch, RecordBatchIterator, StringArray,
    StringViewArray,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, Field, Schema};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// The validity of a column whose nulls are `none`: None when there is no null (no bitmap at all).
fn validity<T: PartialEq + Copy>(values: &[T], none: T) -> Option<NullBuffer> {
    if !values.contains(&none) {
        return None;
    }
    Some(NullBuffer::new(bits_of(values, |v| v != none)))
}

/// A bitmap of one bit per value, `keep(value)`, in Arrow's order (LSB first, 64 values a word). Written from the
/// values' slice a word at a time: `BooleanBuffer::collect_bool` takes an index closure, whose bounds check per value
/// kept the compiler from comparing several values at once (a twentieth of the instructions of a read went to it).
fn bits_of<T: Copy>(values: &[T], keep: impl Fn(T) -> bool) -> BooleanBuffer {
    let word = |c: &[T]| c.iter().enumerate().fold(0u64, |w, (j, &v)| w | (keep(v) as u64) << j);
    let mut chunks = values.chunks_exact(64);
    let mut words: Vec<u64> = (&mut chunks).map(word).collect();
    if !chunks.remainder().is_empty() {
        words.push(word(chunks.remainder()));
    }
    BooleanBuffer::new(Buffer::from_vec(words), 0, values.len())
}

/// A String column written row by row as Arrow string views: a value of up to 12 bytes lives in its view, a longer
/// one in the column's data buffer, copied there once by `view` (the caller keeps the view of a value it meets again,
/// so a row costs a 16-byte view, and the column needs no second pass but for its nulls).
pub struct StringViews {
    views: Vec<u128>,
    data: Vec<u8>,
}

/// A value no view takes (a length of 2^32 - 1 in buffer 2^32 - 1): a null row while the column is written.
pub const NULL_VIEW: u128 = u128::MAX;
/// Another value no view takes: a cache's mark for "not yet looked up".
pub const UNSET_VIEW: u128 = u128::MAX - 1;

impl StringViews {
    pub fn with_capacity(n: usize) -> Self {
        StringViews { views: Vec::with_capacity(n), data: Vec::new() }
    }

    /// The view of `s` in this column (Arrow's layout: the length, then the bytes inline when they fit in 12, else
    /// the first 4, the buffer's index (0) and the offset in it), its bytes copied to the column's data if longer.
    pub fn view(&mut self, s: &str) -> u128 {
        let b = s.as_bytes();
        let len = u32::try_from(b.len()).expect("a string under 4 GiB");
        let mut v = [0u8; 16];
        v[..4].copy_from_slice(&len.to_le_bytes());
        if b.len() <= 12 {
            v[4..4 + b.len()].copy_from_slice(b);
        } else {
            let offset = u32::try_from(self.data.len()).expect("a column's distinct strings under 4 GiB");
            self.data.extend_from_slice(b);
            v[4..8].copy_from_slice(&b[..4]);
            v[12..].copy_from_slice(&offset.to_le_bytes());
        }
        u128::from_le_bytes(v)
    }

    /// A row: the view of its value (from `view` of this column), or NULL_VIEW.
    #[inline(always)]
    pub fn push(&mut self, view: u128) {
        self.views.push(view);
    }

    fn array(mut self) -> StringViewArray {
        let nulls = self.views.contains(&NULL_VIEW).then(|| {
            let valid = bits_of(&self.views, |v| v != NULL_VIEW);
            self.views.iter_mut().filter(|v| **v == NULL_VIEW).for_each(|v| *v = 0);
            NullBuffer::new(valid)
        });
        let buffers: Arc<[Buffer]> = if self.data.is_empty() { Arc::new([]) } else { Arc::new([Buffer::from_vec(self.data)]) };
        // SAFETY: every view was made by `view` of this column: a length and inline bytes of a &str, or the length,
        // prefix and offset of a &str copied whole into the one data buffer (valid UTF-8, in bounds); null rows are
        // the zero view; the validity has one bit per view.
        unsafe { StringViewArray::new_unchecked(ScalarBuffer::from(self.views), buffers, nulls) }
    }
}

/// Columns of one length, named, in the table's order; `finish` makes the table.
#[derive(Default)]
pub struct TableBuilder {
    fields: Vec<Field>,
    columns: Vec<ArrayRef>,
}

impl TableBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// A column's Vec as a buffer, its spare capacity given back first (the table lives as long as the trace; the
    /// shrink is in place, no copy).
    fn buffer<T: arrow_buffer::ArrowNativeType>(mut values: Vec<T>) -> ScalarBuffer<T> {
        values.shrink_to_fit();
        ScalarBuffer::from(values)
    }

    fn push(&mut self, name: &str, array: ArrayRef) -> &mut Self {
        self.fields.push(Field::new(name, array.data_type().clone(), true));
        self.columns.push(array);
        self
    }

    /// An Int64 column, `i64::MIN` as null (the Vec becomes the column's buffer).
    pub fn int64(&mut self, name: &str, values: Vec<i64>) -> &mut Self {
        let nulls = validity(&values, i64::MIN);
        self.push(name, Arc::new(PrimitiveArray::<Int64Type>::new(Self::buffer(values), nulls)))
    }

    /// An Int64 column of values that are never null (`i64::MIN` a value too), moved in as it is.
    pub fn int64_values(&mut self, name: &str, values: Vec<i64>) -> &mut Self {
        self.push(name, Arc::new(PrimitiveArray::<Int64Type>::new(Self::buffer(values), None)))
    }

    /// A String column written as views (`StringViews`).
    pub fn views(&mut self, name: &str, column: StringViews) -> &mut Self {
        self.push(name, Arc::new(column.array()))
    }

    /// A Boolean column of n rows, row i `value(i)` (None: null).
    pub fn opt_bools(&mut self, name: &str, n: usize, value: impl Fn(usize) -> Option<bool>) -> &mut Self {
        let values = BooleanBuffer::collect_bool(n, |i| value(i) == Some(true));
        let nulls = (0..n).any(|i| value(i).is_none()).then(|| NullBuffer::new(BooleanBuffer::collect_bool(n, |i| value(i).is_some())));
        self.push(name, Arc::new(BooleanArray::new(values, nulls)))
    }

    /// A Boolean column of no nulls from bools.
    pub fn bool_values(&mut self, name: &str, values: &[bool]) -> &mut Self {
        self.push(name, Arc::new(BooleanArray::new(bits_of(values, |v| v), None)))
    }

    /// An Int32 column, `i32::MIN` as null.
    pub fn int32(&mut self, name: &str, values: Vec<i32>) -> &mut Self {
        let nulls = validity(&values, i32::MIN);
        self.push(name, Arc::new(PrimitiveArray::<Int32Type>::new(Self::buffer(values), nulls)))
    }

    /// A Float64 column (no nulls).
    pub fn float64(&mut self, name: &str, values: Vec<f64>) -> &mut Self {
        self.push(name, Arc::new(PrimitiveArray::<Float64Type>::new(Self::buffer(values), None)))
    }

    /// A column of n nulls of this type (no values written: a validity of zeros).
    pub fn nulls(&mut self, name: &str, data_type: &arrow_schema::DataType, n: usize) -> &mut Self {
        self.push(name, arrow_array::new_null_array(data_type, n))
    }

    /// A Categorical column: row i is `values[codes[i]]`. An error for a code outside the values.
    pub fn categorical(&mut self, name: &str, values: &[&str], codes: Vec<u32>) -> Result<&mut Self, ArrowError> {
        let keys = PrimitiveArray::<UInt32Type>::new(ScalarBuffer::from(codes), None);
        let dict = DictionaryArray::<UInt32Type>::try_new(keys, Arc::new(StringArray::from_iter_values(values)))?;
        Ok(self.push(name, Arc::new(dict)))
    }

    pub fn finish(self) -> Result<Table, ArrowError> {
        let schema = Arc::new(Schema::new(self.fields));
        Ok(Table { batch: RecordBatch::try_new(schema, self.columns)? })
    }
}

/// An error building a table as a Python ValueError.
pub fn py_err(e: ArrowError) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(format!("native table: {e}"))
}

/// A table of native columns: `pl.DataFrame(table)` imports it through the Arrow C stream interface.
#[pyclass(module = "droidlag._native", frozen)]
pub struct Table {
    batch: RecordBatch,
}

#[cfg(test)]
impl Table {
    /// The table's one batch (for tests).
    pub fn batch(&self) -> &RecordBatch {
        &self.batch
    }
}

#[pymethods]
impl Table {
    /// Rows.
    fn __len__(&self) -> usize {
        self.batch.num_rows()
    }

    /// The column names, in order.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.batch.schema().fields().iter().map(|f| f.name().clone()).collect()
    }

    /// The table as an Arrow C stream of one batch in a PyCapsule named "arrow_array_stream" (the Arrow PyCapsule
    /// interface). The buffers are shared, not copied: the table can be exported again. requested_schema is ignored
    /// (the interface allows it: the consumer casts if it must).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(&self, py: Python<'py>, requested_schema: Option<Bound<'py, PyAny>>)
                               -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let reader = RecordBatchIterator::new([Ok(self.batch.clone())], self.batch.schema());
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        // the capsule owns the stream; a consumer moves it out (its release then null), else dropping it releases it
        PyCapsule::new(py, stream, Some(CString::from(c"arrow_array_stream")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nulls_from_sentinels_and_strings_by_code() {
        let mut b = TableBuilder::new();
        b.int64("a", vec![1, i64::MIN, 3]);
        b.int32("b", vec![i32::MIN, 2, 3]);
        let mut s = StringViews::with_capacity(3);
        let (x, long) = (s.view("x"), s.view("a string longer than twelve bytes"));
        for v in [long, NULL_VIEW, x] {
            s.push(v);
        }
        b.views("s", s);
        b.categorical("c", &["Running", "R"], vec![1, 0, 1]).unwrap();
        let o = [Some(true), None, Some(false)];
        b.opt_bools("o", 3, |i| o[i]);
        let t = b.finish().unwrap();
        let cols = t.batch.columns();
        assert_eq!(cols[0].null_count(), 1);
        assert!(cols[0].is_null(1));
        assert!(cols[1].is_null(0));
        let s = cols[2].as_any().downcast_ref::<StringViewArray>().unwrap();
        assert_eq!(s.value(0), "a string longer than twelve bytes");
        assert!(s.is_null(1));
        assert_eq!(s.value(2), "x");
        assert!(cols[4].is_null(1));
    }

    #[test]
    fn string_views_hold_short_values_inline_and_long_ones_once() {
        // lengths 0, 12 (the most a view holds), 13 and longer (in the data buffer), a null, and a repeat
        let values = ["", "twelve bytes", "thirteen byte", "a string of thirty-three bytes..", "ü and more than 12 bytes"];
        let mut col = StringViews::with_capacity(8);
        let views: Vec<u128> = values.iter().map(|v| col.view(v)).collect();
        // the data holds each long value once, in order: 13 + 32 + 25 bytes ("ü" is two)
        assert_eq!(col.data.len(), 13 + 32 + 25);
        for v in &views {
            col.push(*v);
        }
        col.push(NULL_VIEW);
        col.push(views[3]);
        let a = col.array();
        assert_eq!(a.len(), 7);
        for (i, v) in values.iter().enumerate() {
            assert_eq!(a.value(i), *v);
        }
        assert!(a.is_null(5) && a.null_count() == 1);
        assert_eq!(a.value(6), values[3]);
        // the views are Arrow's own (what StringViewArray makes of the same values)
        let arrow = StringViewArray::from_iter_values(values);
        assert_eq!(&a.views()[..2], &arrow.views()[..2]); // inline views are the same bits
        assert_eq!(a.views()[2] as u64, arrow.views()[2] as u64); // a long one: same length and prefix
    }

    /// The word-at-a-time bitmap is collect_bool's, bit for bit, at lengths around the 64-value words (the last
    /// word partial or not) and for nulls at the words' edges.
    #[test]
    fn bits_of_is_collect_bool() {
        let mut x: u64 = 11;
        for n in [0usize, 1, 63, 64, 65, 127, 128, 129, 1000] {
            let v: Vec<i64> = (0..n).map(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                if i % 64 == 0 || i % 64 == 63 || (x >> 60) == 0 { i64::MIN } else { (x >> 1) as i64 }
            }).collect();
            let ours = bits_of(&v, |a| a != i64::MIN);
            let theirs = BooleanBuffer::collect_bool(n, |i| v[i] != i64::MIN);
            assert_eq!(ours, theirs, "n = {n}");
            assert_eq!(ours.count_set_bits(), v.iter().filter(|&&a| a != i64::MIN).count());
        }
    }
}
