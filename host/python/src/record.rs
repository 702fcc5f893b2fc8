//! The event record a registered function is given: a read-only mapping
//! whose values become Python data only when read, so a function that
//! looks at one field (or none) does not pay for the whole record.

use std::sync::Arc;

use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use pythonize::pythonize;
use serde_json::{Map, Value};

/// An event's record, read like a dict (`event["tool_input"]`,
/// `event.get("tool_name")`, `"cwd" in event`, `dict(event)`), never
/// changed: a hook changes a call by its answer. `to_dict()` gives a
/// plain dict (for `json.dumps`). Registered as a
/// `collections.abc.Mapping` by the package.
#[pyclass(frozen, module = "wasm_hooks", name = "EventRecord", mapping)]
pub(crate) struct EventRecord {
    record: Arc<Map<String, Value>>,
}

impl EventRecord {
    /// The record `record`, as a Python object (shared, not copied).
    pub(crate) fn new(record: &Arc<Map<String, Value>>) -> Self {
        Self {
            record: Arc::clone(record),
        }
    }

    /// The field `key`'s value as Python data, if the record has it.
    fn field(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyAny>>> {
        let Ok(key) = key.cast::<PyString>() else {
            return Ok(None);
        };
        match self.record.get(&*key.to_cow()?) {
            Some(value) => Ok(Some(pythonize(py, value)?.unbind())),
            None => Ok(None),
        }
    }
}

#[pymethods]
impl EventRecord {
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.field(py, key)?
            .ok_or_else(|| PyKeyError::new_err(key.clone().unbind()))
    }

    /// The field `key`'s value, or `default` when the record has none.
    #[pyo3(signature = (key, default = None))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        Ok(self
            .field(py, key)?
            .unwrap_or_else(|| default.unwrap_or_else(|| py.None())))
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> bool {
        key.cast::<PyString>()
            .ok()
            .and_then(|key| key.to_cow().ok().map(|key| self.record.contains_key(&*key)))
            .unwrap_or(false)
    }

    fn __len__(&self) -> usize {
        self.record.len()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.keys(py)?.try_iter().map(Bound::into_any)
    }

    /// The record's field names.
    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.record.keys())
    }

    /// The record's values, as Python data.
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let values: PyResult<Vec<_>> = self
            .record
            .values()
            .map(|v| Ok(pythonize(py, v)?))
            .collect();
        PyList::new(py, values?)
    }

    /// The record's `(name, value)` pairs, as Python data.
    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items: PyResult<Vec<_>> = self
            .record
            .iter()
            .map(|(k, v)| Ok((k, pythonize(py, v)?)))
            .collect();
        PyList::new(py, items?)
    }

    /// The whole record as a plain dict.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(pythonize(py, &*self.record)?)
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.to_dict(py)?.eq(other)
    }

    fn __repr__(&self) -> String {
        format!("EventRecord({})", Value::Object(Map::clone(&self.record)))
    }
}
