//! The Parquet tables: time series, events and the SCTP packet log.
//!
//! Each table has the Arrow schema that pyarrow wrote from the DataFrames of
//! `sctpsim.RunResult` (every field nullable; nulls only where a time-series value is
//! undefined), and is written in batches of
//! [`BATCH_ROWS`] rows so that the text columns of a long time series (one string per
//! sample in the long form) never exist whole in memory.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::types::{Int16Type, Int32Type, Int8Type};
use arrow_array::{
    ArrayRef, BooleanArray, DictionaryArray, Float64Array, Int16Array, Int32Array, Int8Array, RecordBatch, StringArray,
    UInt32Array,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use netsim::packetlog::{PacketKind, PacketLog, NO_PATH};
use netsim::recorder::EventTable;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::{Error, SeriesColumns};

/// Rows per record batch handed to the Parquet writer (one row group holds many batches).
const BATCH_ROWS: usize = 1 << 16;

/// Nanoseconds per second: times are written as float seconds, `time_ns as f64 / 1e9`.
const NS_PER_S: f64 = 1e9;

/// Names of the packet log's kinds, by their [`PacketKind`] code.
const PACKET_KINDS: [&str; 2] = ["data", "sack"];

/// Write the time series as `timeseries.parquet`, one row per sample in order: `time_s`
/// (float64 seconds), `kind`, `entity`, `metric`, `unit` (string: the sample's series) and
/// `value` (float64; null where the sample is undefined, NaN in the core: pyarrow made a
/// null of each NaN of the DataFrame, and pandas reads it back as NaN).
///
/// # Errors
///
/// [`Error::Invalid`] if the columns disagree in length or a series index is out of range;
/// [`Error::Io`] or [`Error::Parquet`] if writing fails.
pub fn write_timeseries(path: &Path, t: &SeriesColumns<'_>) -> Result<(), Error> {
    check_timeseries(t)?;
    let schema = schema(&[
        ("time_s", DataType::Float64),
        ("kind", DataType::Utf8),
        ("entity", DataType::Utf8),
        ("metric", DataType::Utf8),
        ("unit", DataType::Utf8),
        ("value", DataType::Float64),
    ]);
    write_table(path, &schema, t.time_ns.len(), |rows| {
        let series = &t.series[rows.clone()];
        let names = |part: fn(&netsim::recorder::SeriesName) -> &str| -> ArrayRef {
            Arc::new(StringArray::from_iter_values(series.iter().map(|&s| part(&t.names[s as usize]))))
        };
        vec![
            seconds(&t.time_ns[rows.clone()]),
            names(|n| &n.kind),
            names(|n| &n.entity),
            names(|n| &n.metric),
            names(|n| &n.unit),
            // NaN (undefined) as null, as pyarrow stored pandas' NaN.
            Arc::new(Float64Array::from_iter(t.value[rows].iter().map(|&v| (!v.is_nan()).then_some(v)))),
        ]
    })
}

/// Write the event log as `events.parquet`, one row per event in order: `time_s` (float64
/// seconds), `kind`, `entity`, `detail` (string).
///
/// # Errors
///
/// [`Error::Invalid`] if the columns disagree in length; [`Error::Io`] or
/// [`Error::Parquet`] if writing fails.
pub fn write_events(path: &Path, e: &EventTable) -> Result<(), Error> {
    check_events(e)?;
    let schema = schema(&[
        ("time_s", DataType::Float64),
        ("kind", DataType::Utf8),
        ("entity", DataType::Utf8),
        ("detail", DataType::Utf8),
    ]);
    write_table(path, &schema, e.time_ns.len(), |rows| {
        let text = |column: &[String]| -> ArrayRef { Arc::new(StringArray::from_iter_values(&column[rows.clone()])) };
        vec![seconds(&e.time_ns[rows.clone()]), text(&e.kind), text(&e.entity), text(&e.detail)]
    })
}

/// Write the SCTP packet log as `packets.parquet`, one row per row of the log:
/// `time_s` (float64 seconds); `association` (dictionary of strings: the association's
/// name; its index type is int8 below 127 names, int16 below 32,767, else int32, as pandas
/// sizes a categorical's codes); `path` (int32, -1 when unknown); `kind` (dictionary of
/// strings with int8 indices: `data` or `sack`); `tsn` (uint32); `retransmission` (bool);
/// `length`, `a_rwnd`, `highest_tsn` (uint32).
///
/// The Parquet dictionaries hold the names that occur, in order of first appearance: the
/// association names as the log registers them, and `data` before `sack` (a log's first
/// row is a DATA chunk sent). A log without SACK rows therefore reads back with a `kind`
/// dictionary of `data` alone.
///
/// # Errors
///
/// [`Error::Invalid`] if the columns disagree in length or an association index or kind
/// code is out of range; [`Error::Io`] or [`Error::Parquet`] if writing fails.
pub fn write_packets(path: &Path, p: &PacketLog) -> Result<(), Error> {
    check_packets(p)?;
    let names = Arc::new(StringArray::from_iter_values(&p.assoc_names)) as ArrayRef;
    let kinds = Arc::new(StringArray::from_iter_values(PACKET_KINDS)) as ArrayRef;
    let assoc_index = codes_type(p.assoc_names.len());
    let dictionary = |index: &DataType| DataType::Dictionary(Box::new(index.clone()), Box::new(DataType::Utf8));
    let schema = schema(&[
        ("time_s", DataType::Float64),
        ("association", dictionary(&assoc_index)),
        ("path", DataType::Int32),
        ("kind", dictionary(&DataType::Int8)),
        ("tsn", DataType::UInt32),
        ("retransmission", DataType::Boolean),
        ("length", DataType::UInt32),
        ("a_rwnd", DataType::UInt32),
        ("highest_tsn", DataType::UInt32),
    ]);
    write_table(path, &schema, p.time_ns.len(), |rows| {
        let u32s = |column: &[u32]| -> ArrayRef { Arc::new(UInt32Array::from(column[rows.clone()].to_vec())) };
        // Checked: every association index is below the number of names, which fits the
        // index type, and every kind code is below 2.
        let assoc = &p.assoc[rows.clone()];
        let association: ArrayRef = match assoc_index {
            DataType::Int8 => Arc::new(DictionaryArray::<Int8Type>::new(
                Int8Array::from_iter_values(assoc.iter().map(|&a| a as i8)),
                names.clone(),
            )),
            DataType::Int16 => Arc::new(DictionaryArray::<Int16Type>::new(
                Int16Array::from_iter_values(assoc.iter().map(|&a| a as i16)),
                names.clone(),
            )),
            _ => Arc::new(DictionaryArray::<Int32Type>::new(
                Int32Array::from_iter_values(assoc.iter().map(|&a| a as i32)),
                names.clone(),
            )),
        };
        let kind = Arc::new(DictionaryArray::<Int8Type>::new(
            Int8Array::from_iter_values(p.kind[rows.clone()].iter().map(|&k| k as i8)),
            kinds.clone(),
        ));
        // The path number as int32, the unknown path as -1 (other numbers keep their low
        // 32 bits, as a cast from int64 to int32 does).
        let path =
            Int32Array::from_iter_values(
                p.path[rows.clone()].iter().map(|&n| if n == NO_PATH { -1 } else { n as i32 }),
            );
        vec![
            seconds(&p.time_ns[rows.clone()]),
            association,
            Arc::new(path),
            kind,
            u32s(&p.tsn),
            Arc::new(BooleanArray::from(p.retransmission[rows.clone()].to_vec())),
            u32s(&p.length),
            u32s(&p.a_rwnd),
            u32s(&p.highest_tsn),
        ]
    })
}

/// The index type pandas gives a categorical of `n` categories.
fn codes_type(n: usize) -> DataType {
    if n < i8::MAX as usize {
        DataType::Int8
    } else if n < i16::MAX as usize {
        DataType::Int16
    } else {
        DataType::Int32
    }
}

pub(crate) fn check_timeseries(t: &SeriesColumns<'_>) -> Result<(), Error> {
    same_lengths("timeseries", &[("time_ns", t.time_ns.len()), ("series", t.series.len()), ("value", t.value.len())])?;
    match t.series.iter().max() {
        Some(&s) if s as usize >= t.names.len() => {
            Err(Error::Invalid(format!("timeseries.series: index {s} out of range ({} series names)", t.names.len())))
        }
        _ => Ok(()),
    }
}

pub(crate) fn check_events(e: &EventTable) -> Result<(), Error> {
    same_lengths(
        "events",
        &[("time_ns", e.time_ns.len()), ("kind", e.kind.len()), ("entity", e.entity.len()), ("detail", e.detail.len())],
    )
}

pub(crate) fn check_packets(p: &PacketLog) -> Result<(), Error> {
    same_lengths(
        "packets",
        &[
            ("time_ns", p.time_ns.len()),
            ("assoc", p.assoc.len()),
            ("path", p.path.len()),
            ("kind", p.kind.len()),
            ("tsn", p.tsn.len()),
            ("retransmission", p.retransmission.len()),
            ("length", p.length.len()),
            ("a_rwnd", p.a_rwnd.len()),
            ("highest_tsn", p.highest_tsn.len()),
        ],
    )?;
    if p.assoc_names.len() >= i32::MAX as usize {
        return Err(Error::Invalid(format!("packets: {} association names", p.assoc_names.len())));
    }
    if let Some(&a) = p.assoc.iter().max().filter(|&&a| a as usize >= p.assoc_names.len()) {
        return Err(Error::Invalid(format!(
            "packets.assoc: index {a} out of range ({} association names)",
            p.assoc_names.len()
        )));
    }
    if let Some(&k) = p.kind.iter().max().filter(|&&k| k > PacketKind::Sack as u8) {
        return Err(Error::Invalid(format!("packets.kind: unknown kind code {k}")));
    }
    Ok(())
}

fn same_lengths(what: &str, columns: &[(&str, usize)]) -> Result<(), Error> {
    if columns.windows(2).all(|w| w[0].1 == w[1].1) {
        return Ok(());
    }
    let detail: Vec<String> = columns.iter().map(|(name, n)| format!("{name}={n}")).collect();
    Err(Error::Invalid(format!("{what}: columns have different lengths ({})", detail.join(", "))))
}

/// A schema of nullable fields, as pyarrow makes from a DataFrame.
fn schema(fields: &[(&str, DataType)]) -> SchemaRef {
    Arc::new(Schema::new(fields.iter().map(|(name, ty)| Field::new(*name, ty.clone(), true)).collect::<Vec<_>>()))
}

/// Times in nanoseconds as float seconds.
fn seconds(time_ns: &[u64]) -> ArrayRef {
    Arc::new(Float64Array::from_iter_values(time_ns.iter().map(|&t| t as f64 / NS_PER_S)))
}

/// Write a table of `rows` rows, built batch by batch by `batch` (the columns of a range of
/// rows, in the schema's order). An empty table is written with its schema and no rows.
fn write_table(
    path: &Path,
    schema: &SchemaRef,
    rows: usize,
    mut batch: impl FnMut(std::ops::Range<usize>) -> Vec<ArrayRef>,
) -> Result<(), Error> {
    let parquet = |e: &dyn std::fmt::Display| Error::Parquet { path: path.to_path_buf(), message: e.to_string() };
    let file = File::create(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_dictionary_enabled(true)
        .build();
    let mut writer = ArrowWriter::try_new(file, schema.clone(), Some(props)).map_err(|e| parquet(&e))?;
    let mut start = 0;
    while start < rows {
        let end = rows.min(start + BATCH_ROWS);
        let columns = batch(start..end);
        let records = RecordBatch::try_new(schema.clone(), columns).map_err(|e| parquet(&e))?;
        writer.write(&records).map_err(|e| parquet(&e))?;
        start = end;
    }
    writer.close().map_err(|e| parquet(&e))?;
    Ok(())
}
