//! Glue for real mode (`sctpsim.real`): arguments into `sctp_udp` options, its results into
//! the same dictionary shape as a simulated run, Ctrl-C and progress through the
//! interpreter every 100 ms while the loop runs without the GIL.

use std::net::Ipv4Addr;
use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use sctp_udp::{CheckMode, Control, Fault, LocalOptions, Progress, RealResult, SendOptions, SinkOptions};
use simtime::Duration;

use crate::{events, scalars, scenario_error, sim_error, timeseries};

/// Calls back into Python about every 100 ms: pending signals (Ctrl-C ends the run
/// gracefully) and, once a second, the progress callable.
struct PyControl {
    progress: Option<Py<PyAny>>,
    next_report: f64,
    /// A Python exception other than KeyboardInterrupt raised by the callable.
    error: Option<PyErr>,
}

impl Control for PyControl {
    fn check_in(&mut self, p: &Progress) -> bool {
        Python::attach(|py| {
            if let Err(e) = py.check_signals() {
                if !e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
                    self.error = Some(e);
                }
                return true;
            }
            if p.elapsed >= self.next_report {
                self.next_report = p.elapsed.floor() + 1.0;
                if let Some(cb) = &self.progress {
                    if let Err(e) = cb.call1(py, (p.elapsed, p.bytes, p.associations, p.ending)) {
                        self.error = Some(e);
                        return true;
                    }
                }
            }
            false
        })
    }
}

fn addrs(list: &[String], what: &str) -> PyResult<Vec<Ipv4Addr>> {
    if list.is_empty() {
        return Err(PyValueError::new_err(format!("{what}: at least one IPv4 address is needed")));
    }
    list.iter()
        .map(|a| a.trim().parse().map_err(|_| PyValueError::new_err(format!("{what}: {a:?} is not an IPv4 address"))))
        .collect()
}

fn faults(list: &[String]) -> PyResult<Vec<Fault>> {
    list.iter().map(|f| Fault::parse(f).map_err(|e| PyValueError::new_err(format!("--fault: {e}")))).collect()
}

fn duration(secs: Option<f64>, what: &str) -> PyResult<Option<Duration>> {
    match secs {
        Some(s) if !(s.is_finite() && s > 0.0) => {
            Err(PyValueError::new_err(format!("{what}: {s} is not a positive time")))
        }
        Some(s) => Ok(Some(Duration::from_secs_f64(s))),
        None => Ok(None),
    }
}

/// CRC32c computed and checked (RFC 9260 §6.8), or skipped (loopback measurements only).
fn checksum(crc32c: bool) -> sctp_udp::Checksum {
    if crc32c {
        sctp_udp::Checksum::Compute
    } else {
        sctp_udp::Checksum::Skip
    }
}

fn check_mode(text: &str) -> PyResult<CheckMode> {
    match text {
        "none" => Ok(CheckMode::None),
        "pattern" => Ok(CheckMode::Pattern),
        _ => match text.strip_prefix("fill:").and_then(|b| b.parse::<u8>().ok()) {
            Some(b) => Ok(CheckMode::Fill(b)),
            None => Err(PyValueError::new_err(format!("check: {text:?} is not none, pattern or fill:BYTE"))),
        },
    }
}

/// The result dictionary, as `run` returns it for a simulation.
fn result_dict<'py>(py: Python<'py>, r: &RealResult) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("name", &r.name)?;
    out.set_item("seed", 0)?;
    out.set_item("scenario", &r.description)?;
    out.set_item("scalars", scalars(py, &r.scalars)?)?;
    out.set_item("timeseries", timeseries(py, &r.timeseries)?)?;
    out.set_item("events", events(py, &r.events)?)?;
    out.set_item("packets", py.None())?;
    // File names, as a simulated run reports its captures.
    let captures: Vec<String> =
        r.captures.iter().filter_map(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned()).collect();
    out.set_item("captures", captures)?;
    out.set_item("interrupted", r.interrupted)?;
    Ok(out)
}

fn run_with<'py>(
    py: Python<'py>,
    progress: Option<Py<PyAny>>,
    f: impl FnOnce(&mut PyControl) -> Result<RealResult, sctp_udp::DriverError> + Send,
) -> PyResult<Bound<'py, PyDict>> {
    // The first report comes at once: the sockets are bound and the run has started.
    let mut control = PyControl { progress, next_report: 0.0, error: None };
    let result = py.detach(|| f(&mut control)).map_err(|e| match e {
        // Arguments that name no local address: invalid input, not a failed run.
        sctp_udp::DriverError::NoAddress | sctp_udp::DriverError::FaultAddress(_) => {
            PyValueError::new_err(e.to_string())
        }
        e => sim_error(e),
    })?;
    if let Some(e) = control.error.take() {
        return Err(e);
    }
    result_dict(py, &result)
}

/// Runs a sink; see `sctpsim.real.sink`.
#[pyfunction]
#[pyo3(signature = (bind, port=5001, udp_port=9899, preset="rfc9260", sets=Vec::new(), time=None, once=false,
                    check="none", max_associations=256, faults=Vec::new(), pcap=None, progress=None,
                    crc32c=true))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn real_sink<'py>(
    py: Python<'py>,
    bind: Vec<String>,
    port: u16,
    udp_port: u16,
    preset: &str,
    sets: Vec<String>,
    time: Option<f64>,
    once: bool,
    check: &str,
    max_associations: usize,
    faults: Vec<String>,
    pcap: Option<PathBuf>,
    progress: Option<Py<PyAny>>,
    crc32c: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let config = scenario::real::sctp_config(preset, &sets).map_err(|e| scenario_error(py, e))?;
    let opts = SinkOptions {
        local: LocalOptions {
            addrs: addrs(&bind, "bind")?,
            udp_port,
            sctp_port: port,
            listening: true,
            max_associations: max_associations.max(1),
            faults: self::faults(&faults)?,
            pcap,
            checksum: checksum(crc32c),
            ..LocalOptions::default()
        },
        config,
        time: duration(time, "time")?,
        once,
        check: check_mode(check)?,
        name: "sink".into(),
    };
    run_with(py, progress, move |c| sctp_udp::run_sink(&opts, c))
}

/// Runs a bulk sender; see `sctpsim.real.send`.
#[pyfunction]
#[pyo3(signature = (bind, peer, peer_port=5001, peer_udp_port=9899, port=0, udp_port=9899, bytes=None, time=None,
                    message_size=1024, streams=1, unordered=false, preset="rfc9260", sets=Vec::new(),
                    faults=Vec::new(), pcap=None, progress=None, crc32c=true))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn real_send<'py>(
    py: Python<'py>,
    bind: Vec<String>,
    peer: Vec<String>,
    peer_port: u16,
    peer_udp_port: u16,
    port: u16,
    udp_port: u16,
    bytes: Option<u64>,
    time: Option<f64>,
    message_size: usize,
    streams: u16,
    unordered: bool,
    preset: &str,
    sets: Vec<String>,
    faults: Vec<String>,
    pcap: Option<PathBuf>,
    progress: Option<Py<PyAny>>,
    crc32c: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let config = scenario::real::sctp_config(preset, &sets).map_err(|e| scenario_error(py, e))?;
    if bytes.is_some() == time.is_some() {
        return Err(PyValueError::new_err("give exactly one of bytes and time"));
    }
    if bytes == Some(0) {
        return Err(PyValueError::new_err("bytes: 0 is not a transfer"));
    }
    if message_size == 0 || message_size > config.send_buffer as usize {
        return Err(PyValueError::new_err(format!(
            "message_size: {message_size} is out of range (1..{} bytes, the send buffer)",
            config.send_buffer
        )));
    }
    if streams == 0 {
        return Err(PyValueError::new_err("streams: at least 1"));
    }
    let opts = SendOptions {
        local: LocalOptions {
            addrs: addrs(&bind, "bind")?,
            udp_port,
            sctp_port: port,
            remote_udp_port: peer_udp_port,
            faults: self::faults(&faults)?,
            pcap,
            checksum: checksum(crc32c),
            ..LocalOptions::default()
        },
        peers: addrs(&peer, "peer")?,
        peer_port,
        config,
        bytes,
        time: duration(time, "time")?,
        message_size,
        streams,
        unordered,
        name: "send".into(),
    };
    run_with(py, progress, move |c| sctp_udp::run_send(&opts, c))
}
