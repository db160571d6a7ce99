//! `sctpsim._core`: the Python face of the Rust core. Glue only — conversions and error
//! mapping; all behaviour lives in the `scenario` and `netsim` crates.
//!
//! Errors map in one place ([`scenario_error`], [`sim_error`]): invalid scenarios raise
//! `ScenarioError` (a `ValueError`) whose message is one line with the key path; failures while
//! simulating raise `SimulationError` (a `RuntimeError`). The GIL is released while simulating.
//! Real mode (`real_send`, `real_sink`: the engine on UDP sockets, crate `sctp_udp`) returns
//! the same dictionary as `run`; socket failures raise `SimulationError` too.

mod real;

use std::path::PathBuf;

use netsim::packetlog::PacketLog;
use netsim::recorder::{EventTable, Scalars, TimeSeries};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "An invalid scenario, sweep or override; the message names the key path."
);
create_exception!(_core, SimulationError, PyRuntimeError, "A failure while simulating or writing results.");

/// `ScenarioError(message)` with two attributes: `key` (the key path, empty for whole-file
/// problems such as TOML syntax) and `reason` (the message without the key path).
fn scenario_error(py: Python<'_>, e: scenario::ScenarioError) -> PyErr {
    let err = ScenarioError::new_err(e.to_string());
    let value = err.value(py);
    if let Err(attr_err) = value.setattr("key", &e.path).and_then(|()| value.setattr("reason", &e.message)) {
        return attr_err;
    }
    err
}

fn sim_error(e: impl std::fmt::Display) -> PyErr {
    SimulationError::new_err(e.to_string())
}

/// Every scenario key: key, type, default (None when required), unit, doc.
#[pyfunction]
fn params(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    scenario::schema::reference()
        .into_iter()
        .map(|p| {
            let d = PyDict::new(py);
            d.set_item("key", p.key)?;
            d.set_item("type", p.ty)?;
            d.set_item("default", p.default)?;
            d.set_item("unit", p.unit)?;
            d.set_item("doc", p.doc)?;
            Ok(d)
        })
        .collect()
}

/// Validate scenario text with overrides; return the resolved scenario as TOML.
#[pyfunction]
fn check(py: Python<'_>, text: &str, overrides: Vec<String>) -> PyResult<String> {
    let s = scenario::parse(text, &overrides).map_err(|e| scenario_error(py, e))?;
    Ok(s.resolved_toml(s.seed))
}

/// Validate, build and run a scenario; return its results as plain Python data.
#[pyfunction]
#[pyo3(signature = (text, overrides, seed=None, capture_dir=None))]
fn run<'py>(
    py: Python<'py>,
    text: &str,
    overrides: Vec<String>,
    seed: Option<u64>,
    capture_dir: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let s = scenario::parse(text, &overrides).map_err(|e| scenario_error(py, e))?;
    let seed = seed.unwrap_or(s.seed);
    let (result, captures) = py
        .detach(|| {
            let built = s.build(seed, capture_dir.as_deref()).map_err(|e| format!("creating capture files: {e}"))?;
            let result = built.world.run().map_err(|e| e.to_string())?;
            Ok::<_, String>((result, built.captures))
        })
        .map_err(sim_error)?;
    let out = PyDict::new(py);
    out.set_item("name", &s.name)?;
    out.set_item("seed", seed)?;
    out.set_item("scenario", s.resolved_toml(seed))?;
    out.set_item("scalars", scalars(py, &result.scalars)?)?;
    out.set_item("timeseries", timeseries(py, &result.timeseries)?)?;
    out.set_item("events", events(py, &result.events)?)?;
    match &result.packets {
        Some(p) => out.set_item("packets", packets(py, p)?)?,
        None => out.set_item("packets", py.None())?,
    }
    out.set_item("captures", captures)?;
    Ok(out)
}

fn le_bytes<'py, T: Copy, const N: usize>(py: Python<'py>, values: &[T], to: fn(T) -> [u8; N]) -> Bound<'py, PyBytes> {
    let bytes: Vec<u8> = values.iter().flat_map(|&v| to(v)).collect();
    PyBytes::new(py, &bytes)
}

fn scalars<'py>(py: Python<'py>, s: &Scalars) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("kind", s.rows.iter().map(|r| r.kind.as_str()).collect::<Vec<_>>())?;
    d.set_item("entity", s.rows.iter().map(|r| r.entity.as_str()).collect::<Vec<_>>())?;
    d.set_item("metric", s.rows.iter().map(|r| r.metric.as_str()).collect::<Vec<_>>())?;
    d.set_item("value", s.rows.iter().map(|r| r.value).collect::<Vec<_>>())?;
    d.set_item("unit", s.rows.iter().map(|r| r.unit.as_str()).collect::<Vec<_>>())?;
    Ok(d)
}

fn timeseries<'py>(py: Python<'py>, t: &TimeSeries) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time_ns", le_bytes(py, &t.time_ns, u64::to_le_bytes))?;
    d.set_item("series", le_bytes(py, &t.series, u32::to_le_bytes))?;
    d.set_item("value", le_bytes(py, &t.value, f64::to_le_bytes))?;
    let names = PyDict::new(py);
    names.set_item("kind", t.names.iter().map(|n| n.kind.as_str()).collect::<Vec<_>>())?;
    names.set_item("entity", t.names.iter().map(|n| n.entity.as_str()).collect::<Vec<_>>())?;
    names.set_item("metric", t.names.iter().map(|n| n.metric.as_str()).collect::<Vec<_>>())?;
    names.set_item("unit", t.names.iter().map(|n| n.unit.as_str()).collect::<Vec<_>>())?;
    d.set_item("names", names)?;
    Ok(d)
}

fn events<'py>(py: Python<'py>, e: &EventTable) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time_ns", le_bytes(py, &e.time_ns, u64::to_le_bytes))?;
    d.set_item("kind", &e.kind)?;
    d.set_item("entity", &e.entity)?;
    d.set_item("detail", &e.detail)?;
    Ok(d)
}

/// The SCTP packet log: association names, and one little-endian buffer per column.
fn packets<'py>(py: Python<'py>, p: &PacketLog) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("assoc_names", &p.assoc_names)?;
    d.set_item("time_ns", le_bytes(py, &p.time_ns, u64::to_le_bytes))?;
    d.set_item("assoc", le_bytes(py, &p.assoc, u32::to_le_bytes))?;
    d.set_item("path", le_bytes(py, &p.path, u32::to_le_bytes))?;
    d.set_item("kind", PyBytes::new(py, &p.kind))?;
    d.set_item("tsn", le_bytes(py, &p.tsn, u32::to_le_bytes))?;
    d.set_item("retransmission", le_bytes(py, &p.retransmission, |b| [u8::from(b)]))?;
    d.set_item("length", le_bytes(py, &p.length, u32::to_le_bytes))?;
    d.set_item("a_rwnd", le_bytes(py, &p.a_rwnd, u32::to_le_bytes))?;
    d.set_item("highest_tsn", le_bytes(py, &p.highest_tsn, u32::to_le_bytes))?;
    Ok(d)
}

/// The extension module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // A hash of the sources this module was built from (build.rs): a sweep's run identity.
    m.add("__build_id__", env!("SCTPSIM_BUILD_ID"))?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add_function(wrap_pyfunction!(params, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(real::real_send, m)?)?;
    m.add_function(wrap_pyfunction!(real::real_sink, m)?)?;
    Ok(())
}
