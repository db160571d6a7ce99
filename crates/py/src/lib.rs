//! `sctpsim._core`: the Python face of the Rust core. Glue only — conversions and error
//! mapping; all behaviour lives in the `scenario` and `netsim` crates.
//!
//! Errors map in one place (`scenario_error`, `sim_error`, `write_error`): invalid
//! scenarios raise `ScenarioError` (a `ValueError`) whose message is one line with the key
//! path; failures while simulating raise `SimulationError` (a `RuntimeError`); failures to
//! write result files raise `OSError` (with the errno and file name when the system gave
//! one). The GIL is released while simulating and while writing result files.
//! Real mode (`real_send`, `real_sink`: the engine on UDP sockets, crate `sctp_udp`) returns
//! the same dictionary as `run`; socket failures raise `SimulationError` too.

mod real;

use std::path::{Path, PathBuf};

use netsim::packetlog::PacketLog;
use netsim::recorder::{EventTable, Scalars, SeriesName, TimeSeries};
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use results::{RunTables, SeriesColumns};

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

/// A failure to write result files: `OSError(errno, message, file)` for the system's errors
/// (Python picks the subclass, e.g. `PermissionError`), `ValueError` for inconsistent tables,
/// a plain `OSError` for the Parquet writer's other failures.
fn write_error(e: results::Error) -> PyErr {
    match e {
        results::Error::Io { path, source } => match source.raw_os_error() {
            Some(errno) => PyOSError::new_err((errno, source.to_string(), path.display().to_string())),
            None => PyOSError::new_err(format!("{}: {source}", path.display())),
        },
        results::Error::Invalid(message) => PyValueError::new_err(message),
        e @ results::Error::Parquet { .. } => PyOSError::new_err(e.to_string()),
    }
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

/// Validate, build and run a scenario; return its results as plain Python data. With
/// `out_dir`, the result files (scalars.csv and the Parquet tables) are written there first.
#[pyfunction]
#[pyo3(signature = (text, overrides, seed=None, capture_dir=None, out_dir=None))]
fn run<'py>(
    py: Python<'py>,
    text: &str,
    overrides: Vec<String>,
    seed: Option<u64>,
    capture_dir: Option<PathBuf>,
    out_dir: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let s = scenario::parse(text, &overrides).map_err(|e| scenario_error(py, e))?;
    let seed = seed.unwrap_or(s.seed);
    // Pending signals are handled between batches of events: Ctrl-C stops the run within a
    // moment, and raises KeyboardInterrupt (or whatever the signal's handler raised).
    let mut signal: Option<PyErr> = None;
    let ran = py
        .detach(|| {
            let built = s.build(seed, capture_dir.as_deref()).map_err(|e| format!("creating capture files: {e}"))?;
            let go_on = || Python::attach(|py| py.check_signals()).map_err(|e| signal = Some(e)).is_ok();
            let result = built.world.run_interruptible(go_on).map_err(|e| e.to_string())?;
            Ok::<_, String>(result.map(|r| (r, built.captures)))
        })
        .map_err(sim_error)?;
    let Some((result, captures)) = ran else {
        return Err(signal.unwrap_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted")));
    };
    if let Some(dir) = &out_dir {
        py.detach(|| results::write_run_files(dir, &RunTables::from(&result))).map_err(write_error)?;
    }
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

/// Write scalars.csv, timeseries.parquet, events.parquet and (with a packet log)
/// packets.parquet into the existing directory `directory`, from tables in the form `run`
/// returns them; return the paths written.
#[pyfunction]
fn write_results(py: Python<'_>, directory: PathBuf, tables: &Bound<'_, PyDict>) -> PyResult<Vec<PathBuf>> {
    let scalars = scalars_from(&item(tables, "scalars")?)?;
    let (names, time_ns, series, value) = timeseries_from(&item(tables, "timeseries")?)?;
    let events = events_from(&item(tables, "events")?)?;
    let packets = match tables.get_item("packets")? {
        Some(p) if !p.is_none() => Some(packets_from(p.cast::<PyDict>()?)?),
        _ => None,
    };
    let run = RunTables {
        scalars: &scalars,
        timeseries: SeriesColumns { names: &names, time_ns: &time_ns, series: &series, value: &value },
        events: &events,
        packets: packets.as_ref(),
    };
    py.detach(|| results::write_run_files(Path::new(&directory), &run)).map_err(write_error)
}

/// `d[key]`, `KeyError` naming the key when it is missing.
fn get<'py>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Bound<'py, PyAny>> {
    d.get_item(key)?.ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(key.to_string()))
}

/// `d[key]` as a dict.
fn item<'py>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Bound<'py, PyDict>> {
    Ok(get(d, key)?.cast_into::<PyDict>()?)
}

/// A list of strings, `d[key]`.
fn strings(d: &Bound<'_, PyDict>, key: &str) -> PyResult<Vec<String>> {
    get(d, key)?.extract()
}

/// A little-endian buffer as values of `N` bytes each; `ValueError` unless it holds whole values.
fn from_le<T, const N: usize>(
    d: &Bound<'_, PyDict>,
    key: &str,
    what: &str,
    from: fn([u8; N]) -> T,
) -> PyResult<Vec<T>> {
    let value = get(d, key)?;
    let bytes = value.cast::<PyBytes>()?.as_bytes();
    let chunks = bytes.chunks_exact(N);
    if !chunks.remainder().is_empty() {
        return Err(PyValueError::new_err(format!(
            "{what}.{key}: buffer of {} bytes is not a whole number of {N}-byte elements",
            bytes.len()
        )));
    }
    Ok(chunks.map(|c| from(c.try_into().unwrap_or([0; N]))).collect())
}

fn scalars_from(d: &Bound<'_, PyDict>) -> PyResult<Scalars> {
    let kind = strings(d, "kind")?;
    let entity = strings(d, "entity")?;
    let metric = strings(d, "metric")?;
    let value: Vec<Option<f64>> = get(d, "value")?.extract()?;
    let unit = strings(d, "unit")?;
    let n = kind.len();
    if [entity.len(), metric.len(), value.len(), unit.len()].iter().any(|&m| m != n) {
        return Err(PyValueError::new_err("scalars: columns have different lengths"));
    }
    let mut scalars = Scalars::default();
    for i in 0..n {
        scalars.push(&kind[i], &entity[i], &metric[i], value[i].unwrap_or(f64::NAN), &unit[i]);
    }
    Ok(scalars)
}

type SeriesTables = (Vec<SeriesName>, Vec<u64>, Vec<u32>, Vec<f64>);

fn timeseries_from(d: &Bound<'_, PyDict>) -> PyResult<SeriesTables> {
    let names = item(d, "names")?;
    let kind = strings(&names, "kind")?;
    let entity = strings(&names, "entity")?;
    let metric = strings(&names, "metric")?;
    let unit = strings(&names, "unit")?;
    let n = kind.len();
    if [entity.len(), metric.len(), unit.len()].iter().any(|&m| m != n) {
        return Err(PyValueError::new_err("timeseries.names: columns have different lengths"));
    }
    let names = kind
        .into_iter()
        .zip(entity)
        .zip(metric)
        .zip(unit)
        .map(|(((kind, entity), metric), unit)| SeriesName { kind, entity, metric, unit })
        .collect();
    Ok((
        names,
        from_le(d, "time_ns", "timeseries", u64::from_le_bytes)?,
        from_le(d, "series", "timeseries", u32::from_le_bytes)?,
        from_le(d, "value", "timeseries", f64::from_le_bytes)?,
    ))
}

fn events_from(d: &Bound<'_, PyDict>) -> PyResult<EventTable> {
    Ok(EventTable {
        time_ns: from_le(d, "time_ns", "events", u64::from_le_bytes)?,
        kind: strings(d, "kind")?,
        entity: strings(d, "entity")?,
        detail: strings(d, "detail")?,
    })
}

fn packets_from(d: &Bound<'_, PyDict>) -> PyResult<PacketLog> {
    let u32s = |key| from_le(d, key, "packets", u32::from_le_bytes);
    Ok(PacketLog {
        assoc_names: strings(d, "assoc_names")?,
        time_ns: from_le(d, "time_ns", "packets", u64::from_le_bytes)?,
        assoc: u32s("assoc")?,
        path: u32s("path")?,
        kind: from_le(d, "kind", "packets", |[b]: [u8; 1]| b)?,
        tsn: u32s("tsn")?,
        retransmission: from_le(d, "retransmission", "packets", |[b]: [u8; 1]| b != 0)?,
        length: u32s("length")?,
        a_rwnd: u32s("a_rwnd")?,
        highest_tsn: u32s("highest_tsn")?,
    })
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
    m.add_function(wrap_pyfunction!(write_results, m)?)?;
    m.add_function(wrap_pyfunction!(real::real_send, m)?)?;
    m.add_function(wrap_pyfunction!(real::real_sink, m)?)?;
    Ok(())
}
