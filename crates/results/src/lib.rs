//! A run's result files, written by the core: `scalars.csv`, `timeseries.parquet`,
//! `events.parquet` and, when the run kept the SCTP packet log, `packets.parquet`.
//!
//! The files are the run directory's contract with its readers (`sctpsim show`, `compare`,
//! sweeps, pandas, anything that reads CSV or Parquet), and were first written from Python
//! with pandas and pyarrow; writing them here lets a run finish without either. Their
//! contents are exactly what the Python writer produced:
//!
//! - `scalars.csv` is byte for byte what `pandas.DataFrame.to_csv(index=False,
//!   lineterminator="\n", na_rep="NaN")` writes: the header `kind,entity,metric,value,unit`,
//!   text quoted only when it must be (as Python's `csv.QUOTE_MINIMAL`), and each value as
//!   Python's `repr` of the float ([`python_float`]), `NaN` for not-a-number.
//! - The Parquet tables have the columns, Arrow types (kept in the `ARROW:schema` metadata
//!   that Arrow readers use) and values that pyarrow wrote from the DataFrames of
//!   `sctpsim.RunResult`; every column nullable, null only where a time-series value is NaN
//!   (pyarrow turned pandas' NaN into null); Zstandard compression,
//!   dictionary encoding. Their bytes differ from pyarrow's (another writer, other page
//!   layout and metadata), their contents do not. The columns are documented on
//!   [`write_timeseries`], [`write_events`] and [`write_packets`].
//!
//! Every file depends only on the data: the same tables always give the same bytes.
//!
//! Inputs may come from outside the core (the Python API hands over tables it read or
//! built), so every column length and index is checked and a mismatch is an
//! [`Error::Invalid`], never a panic.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use netsim::packetlog::PacketLog;
use netsim::recorder::{EventTable, Scalars, SeriesName, TimeSeries};
use netsim::world::RunResult;

mod csv;
mod tables;

pub use csv::{python_float, write_scalars};
pub use tables::{write_events, write_packets, write_timeseries};

/// `scalars.csv`: kind, entity, metric, value, unit.
pub const SCALARS_FILE: &str = "scalars.csv";
/// `timeseries.parquet`: time_s, kind, entity, metric, unit, value.
pub const TIMESERIES_FILE: &str = "timeseries.parquet";
/// `events.parquet`: time_s, kind, entity, detail.
pub const EVENTS_FILE: &str = "events.parquet";
/// `packets.parquet`: the SCTP packet log, only when the run kept it.
pub const PACKETS_FILE: &str = "packets.parquet";

/// A failure to write the result files.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The tables are inconsistent (columns of different lengths, an index out of range).
    #[error("{0}")]
    Invalid(String),
    /// Creating or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The Parquet writer failed.
    #[error("{path}: {message}")]
    Parquet {
        /// The file.
        path: PathBuf,
        /// The writer's message.
        message: String,
    },
}

/// The time series in long form, borrowed: sample `i` is `(time_ns[i], names[series[i]],
/// value[i])`.
#[derive(Clone, Copy, Debug)]
pub struct SeriesColumns<'a> {
    /// Series identities; `series` indexes this list.
    pub names: &'a [SeriesName],
    /// Sample times in nanoseconds.
    pub time_ns: &'a [u64],
    /// Series index of each sample.
    pub series: &'a [u32],
    /// Sample values.
    pub value: &'a [f64],
}

impl<'a> From<&'a TimeSeries> for SeriesColumns<'a> {
    fn from(t: &'a TimeSeries) -> Self {
        SeriesColumns { names: &t.names, time_ns: &t.time_ns, series: &t.series, value: &t.value }
    }
}

/// Everything a run directory's result files hold, borrowed.
#[derive(Clone, Copy, Debug)]
pub struct RunTables<'a> {
    /// End-of-run scalars.
    pub scalars: &'a Scalars,
    /// Sampled time series.
    pub timeseries: SeriesColumns<'a>,
    /// Logged events.
    pub events: &'a EventTable,
    /// The SCTP packet log, if the run kept it.
    pub packets: Option<&'a PacketLog>,
}

impl<'a> From<&'a RunResult> for RunTables<'a> {
    fn from(r: &'a RunResult) -> Self {
        RunTables {
            scalars: &r.scalars,
            timeseries: (&r.timeseries).into(),
            events: &r.events,
            packets: r.packets.as_ref(),
        }
    }
}

/// Write `scalars.csv`, `timeseries.parquet`, `events.parquet` and, with a packet log,
/// `packets.parquet` into the existing directory `dir` (files there are replaced). Returns
/// the paths written, in that order.
///
/// # Errors
///
/// [`Error::Invalid`] if the tables are inconsistent (checked before any file is written),
/// [`Error::Io`] or [`Error::Parquet`] if writing fails.
pub fn write_run_files(dir: &Path, tables: &RunTables<'_>) -> Result<Vec<PathBuf>, Error> {
    tables::check_timeseries(&tables.timeseries)?;
    tables::check_events(tables.events)?;
    if let Some(p) = tables.packets {
        tables::check_packets(p)?;
    }
    let mut written = Vec::with_capacity(4);
    let path = dir.join(SCALARS_FILE);
    write_scalars(&path, tables.scalars)?;
    written.push(path);
    let path = dir.join(TIMESERIES_FILE);
    write_timeseries(&path, &tables.timeseries)?;
    written.push(path);
    let path = dir.join(EVENTS_FILE);
    write_events(&path, tables.events)?;
    written.push(path);
    if let Some(p) = tables.packets {
        let path = dir.join(PACKETS_FILE);
        write_packets(&path, p)?;
        written.push(path);
    }
    Ok(written)
}

/// Create `path` and hand a buffered writer to `write`, then flush it.
fn with_file(path: &Path, write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>) -> Result<(), Error> {
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let mut out = BufWriter::new(File::create(path).map_err(io)?);
    write(&mut out).map_err(io)?;
    out.flush().map_err(io)
}
