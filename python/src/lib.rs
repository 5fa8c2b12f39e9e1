//! `rebalance_sim._native`: the Python extension module. Thin pyo3 wrappers around
//! [`outputs`]: each releases the GIL for the simulator's work (`Python::detach`), then hands
//! the CSV files back as `bytes` keyed by file name; `rebalance_sim/__init__.py` loads them
//! into pandas. Bad input raises `ScenarioError` (a `ValueError`) whose message is the CLI's
//! stderr text for the same input.
#![forbid(unsafe_code)]

mod outputs;

use outputs::{Failure, Source};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::path::PathBuf;

pyo3::create_exception!(
    rebalance_sim,
    ScenarioError,
    PyValueError,
    "A scenario, sweep or argument the CLI would reject with exit 2; the message is its stderr."
);

/// The Python exception of a [`Failure`]: bad input is a `ScenarioError` whose message is the
/// CLI's lines joined by newlines.
fn to_py_err(failure: Failure) -> PyErr {
    match failure {
        Failure::BadInput(lines) => ScenarioError::new_err(lines.join("\n")),
        Failure::Io(message) => PyOSError::new_err(message),
        Failure::Run(message) => PyRuntimeError::new_err(message),
    }
}

fn source_of(path: Option<PathBuf>, text: Option<String>) -> PyResult<Source> {
    match (path, text) {
        (Some(path), None) => Ok(Source::File(path)),
        (None, Some(text)) => Ok(Source::Text(text)),
        _ => Err(PyValueError::new_err("give exactly one of `path` and `text`")),
    }
}

fn files_dict<'py>(
    py: Python<'py>,
    files: &[(&'static str, Vec<u8>)],
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (name, bytes) in files {
        dict.set_item(*name, PyBytes::new(py, bytes))?;
    }
    Ok(dict)
}

/// Runs a scenario (a file `path` or TOML `text`) once per protocol, up to `jobs` protocol
/// runs at once; returns `({file name: CSV bytes}, [warning lines])`.
#[pyfunction]
#[pyo3(signature = (*, path=None, text=None, seed=None, protocols=Vec::new(), jobs=None))]
fn run<'py>(
    py: Python<'py>,
    path: Option<PathBuf>,
    text: Option<String>,
    seed: Option<u64>,
    protocols: Vec<String>,
    jobs: Option<usize>,
) -> PyResult<(Bound<'py, PyDict>, Vec<String>)> {
    let source = source_of(path, text)?;
    let output = py.detach(|| outputs::run(&source, seed, &protocols, jobs)).map_err(to_py_err)?;
    Ok((files_dict(py, &output.files)?, output.warnings))
}

/// Validates a scenario; returns `(name, [protocols], events, [warning lines])`.
#[pyfunction]
#[pyo3(signature = (*, path=None, text=None))]
fn validate(
    py: Python<'_>,
    path: Option<PathBuf>,
    text: Option<String>,
) -> PyResult<(String, Vec<String>, usize, Vec<String>)> {
    let source = source_of(path, text)?;
    let found = py.detach(|| outputs::validate(&source)).map_err(to_py_err)?;
    Ok((found.name, found.protocols, found.events, found.warnings))
}

/// Runs a sweep file; returns `({file name: bytes}, runs, resumed)`.
#[pyfunction]
#[pyo3(signature = (path, *, seeds=None, jobs=None, out=None))]
fn sweep<'py>(
    py: Python<'py>,
    path: PathBuf,
    seeds: Option<u32>,
    jobs: Option<usize>,
    out: Option<PathBuf>,
) -> PyResult<(Bound<'py, PyDict>, usize, usize)> {
    let output =
        py.detach(|| outputs::sweep(&path, seeds, jobs, out.as_deref())).map_err(to_py_err)?;
    Ok((files_dict(py, &output.files)?, output.runs, output.resumed))
}

/// The module: the three functions, `ScenarioError` and the version with its commit.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("VERSION", lab::sweep_manifest::VERSION_AND_COMMIT)?;
    m.add("TEXT_SOURCE_NAME", outputs::TEXT_SOURCE_NAME)?;
    Ok(())
}
