//! The result files read back: columns, Arrow types and values, batches, determinism, and
//! inconsistent tables refused before anything is written.

#![allow(clippy::unwrap_used)]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int16Type, Int32Type, Int8Type, UInt32Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, Schema};
use netsim::packetlog::{PacketLog, NO_PATH};
use netsim::recorder::{EventTable, Scalars, SeriesName};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use results::{write_run_files, Error, RunTables, SeriesColumns};

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("results-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn read(path: &Path) -> (Arc<Schema>, RecordBatch) {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let schema = reader.schema().clone();
    let batches: Vec<RecordBatch> = reader.build().unwrap().map(Result::unwrap).collect();
    let batch = arrow_select::concat::concat_batches(&schema, &batches).unwrap();
    (schema, batch)
}

fn name(kind: &str, entity: &str, metric: &str, unit: &str) -> SeriesName {
    SeriesName { kind: kind.into(), entity: entity.into(), metric: metric.into(), unit: unit.into() }
}

fn names() -> Vec<SeriesName> {
    vec![name("iface", "R1/eth0", "queue_packets", ""), name("flow", "video", "rx_rate", "bit/s")]
}

fn fields(schema: &Schema) -> Vec<(String, DataType, bool)> {
    schema.fields().iter().map(|f| (f.name().clone(), f.data_type().clone(), f.is_nullable())).collect()
}

#[test]
fn long_time_series_is_written_in_batches_and_reads_back_exactly() {
    let dir = TempDir::new("ts");
    let names = names();
    // More rows than one batch (65,536), so the table is built from several.
    let n = 150_001;
    let time_ns: Vec<u64> = (0..n as u64).map(|i| i * 100_000_000 + 1).collect();
    let series: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
    let value: Vec<f64> = (0..n).map(|i| if i == 7 { f64::NAN } else { i as f64 * 0.5 }).collect();
    let scalars = Scalars::default();
    let events = EventTable::default();
    let tables = RunTables {
        scalars: &scalars,
        timeseries: SeriesColumns { names: &names, time_ns: &time_ns, series: &series, value: &value },
        events: &events,
        packets: None,
    };
    let written = write_run_files(&dir.0, &tables).unwrap();
    let written: Vec<_> = written.iter().map(|p| p.file_name().unwrap().to_str().unwrap().to_owned()).collect();
    assert_eq!(written, ["scalars.csv", "timeseries.parquet", "events.parquet"]);

    let (schema, batch) = read(&dir.0.join("timeseries.parquet"));
    let utf8 = DataType::Utf8;
    assert_eq!(
        fields(&schema),
        [
            ("time_s".into(), DataType::Float64, true),
            ("kind".into(), utf8.clone(), true),
            ("entity".into(), utf8.clone(), true),
            ("metric".into(), utf8.clone(), true),
            ("unit".into(), utf8, true),
            ("value".into(), DataType::Float64, true),
        ]
    );
    assert_eq!(batch.num_rows(), n);
    let time = batch.column(0).as_primitive::<Float64Type>();
    assert_eq!(time.value(0), 1e-9);
    assert_eq!(time.value(n - 1), time_ns[n - 1] as f64 / 1e9);
    let entity = batch.column(2).as_string::<i32>();
    assert_eq!(entity.value(0), "R1/eth0");
    assert_eq!(entity.value(100_001), "video");
    assert_eq!(batch.column(4).as_string::<i32>().value(100_001), "bit/s");
    // An undefined value (NaN) is null, as pyarrow wrote pandas' NaN; nothing else is.
    let v = batch.column(5).as_primitive::<Float64Type>();
    assert!(v.is_null(7));
    assert_eq!(v.value(100_000), 50_000.0);
    assert_eq!(batch.columns().iter().map(|c| c.null_count()).sum::<usize>(), 1);

    let (schema, batch) = read(&dir.0.join("events.parquet"));
    assert_eq!(schema.fields().len(), 4);
    assert_eq!(batch.num_rows(), 0);
    assert_eq!(std::fs::read_to_string(dir.0.join("scalars.csv")).unwrap(), "kind,entity,metric,value,unit\n");
}

fn packet_log(associations: usize) -> PacketLog {
    let mut log = PacketLog {
        assoc_names: (0..associations)
            .map(|i| if i == 0 { "upload".into() } else { format!("upload/assoc{i}") })
            .collect(),
        ..PacketLog::default()
    };
    for i in 0..associations as u32 {
        for (t, kind) in [(10u64, 0u8), (20, 1)] {
            log.time_ns.push(t * 1_000_000 + u64::from(i));
            log.assoc.push(i);
            log.path.push(if kind == 1 { NO_PATH } else { 1 });
            log.kind.push(kind);
            log.tsn.push(u32::MAX - i);
            log.retransmission.push(i % 2 == 1 && kind == 0);
            log.length.push(if kind == 0 { 1452 } else { 0 });
            log.a_rwnd.push(if kind == 1 { 262_144 } else { 0 });
            log.highest_tsn.push(u32::MAX - i);
        }
    }
    log
}

fn write_packets(dir: &Path, log: &PacketLog) -> (Arc<Schema>, RecordBatch) {
    let path = dir.join("packets.parquet");
    results::write_packets(&path, log).unwrap();
    read(&path)
}

fn dictionary(index: DataType) -> DataType {
    DataType::Dictionary(Box::new(index), Box::new(DataType::Utf8))
}

#[test]
fn packet_log_has_categorical_columns_and_signed_paths() {
    let dir = TempDir::new("packets");
    let (schema, batch) = write_packets(&dir.0, &packet_log(3));
    assert_eq!(
        fields(&schema),
        [
            ("time_s".into(), DataType::Float64, true),
            ("association".into(), dictionary(DataType::Int8), true),
            ("path".into(), DataType::Int32, true),
            ("kind".into(), dictionary(DataType::Int8), true),
            ("tsn".into(), DataType::UInt32, true),
            ("retransmission".into(), DataType::Boolean, true),
            ("length".into(), DataType::UInt32, true),
            ("a_rwnd".into(), DataType::UInt32, true),
            ("highest_tsn".into(), DataType::UInt32, true),
        ]
    );
    let assoc = batch.column(1).as_dictionary::<Int8Type>();
    let values = assoc.values().as_string::<i32>();
    let names: Vec<&str> = assoc.keys().values().iter().map(|&k| values.value(k as usize)).collect();
    assert_eq!(names, ["upload", "upload", "upload/assoc1", "upload/assoc1", "upload/assoc2", "upload/assoc2"]);
    let kind = batch.column(3).as_dictionary::<Int8Type>();
    let kinds = kind.values().as_string::<i32>();
    assert_eq!(kinds.value(kind.keys().value(0) as usize), "data");
    assert_eq!(kinds.value(kind.keys().value(1) as usize), "sack");
    assert_eq!(batch.column(2).as_primitive::<Int32Type>().values().to_vec(), [1, -1, 1, -1, 1, -1]);
    assert_eq!(batch.column(4).as_primitive::<UInt32Type>().value(0), u32::MAX);
    let rtx = batch.column(5).as_boolean();
    assert_eq!((0..6).map(|i| rtx.value(i)).collect::<Vec<_>>(), [false, false, true, false, false, false]);
}

#[test]
fn association_index_widens_as_pandas_codes_do() {
    let dir = TempDir::new("wide");
    for (n, index) in [(126, DataType::Int8), (127, DataType::Int16), (200, DataType::Int16)] {
        let (schema, batch) = write_packets(&dir.0, &packet_log(n));
        assert_eq!(schema.field(1).data_type(), &dictionary(index.clone()), "{n} associations");
        if index == DataType::Int16 {
            let assoc = batch.column(1).as_dictionary::<Int16Type>();
            let last = assoc.keys().value(2 * n - 1);
            assert_eq!(assoc.values().as_string::<i32>().value(last as usize), format!("upload/assoc{}", n - 1));
        }
    }
}

#[test]
fn same_tables_give_the_same_bytes() {
    let (a, b) = (TempDir::new("det-a"), TempDir::new("det-b"));
    let log = packet_log(2);
    let names = names();
    let mut scalars = Scalars::default();
    scalars.push("flow", "video", "goodput", 9.98e6, "bit/s");
    let events = EventTable {
        time_ns: vec![0, 1_500_000_000],
        kind: vec!["fault".into(), "drop".into()],
        entity: vec!["L1".into(), "R1/eth0".into()],
        detail: vec!["link-down".into(), "queue_full".into()],
    };
    let tables = RunTables {
        scalars: &scalars,
        timeseries: SeriesColumns { names: &names, time_ns: &[5, 6], series: &[1, 0], value: &[1.0, 2.0] },
        events: &events,
        packets: Some(&log),
    };
    write_run_files(&a.0, &tables).unwrap();
    write_run_files(&b.0, &tables).unwrap();
    for file in ["scalars.csv", "timeseries.parquet", "events.parquet", "packets.parquet"] {
        assert_eq!(std::fs::read(a.0.join(file)).unwrap(), std::fs::read(b.0.join(file)).unwrap(), "{file}");
    }
}

#[test]
fn inconsistent_tables_are_refused_before_any_file_is_written() {
    let dir = TempDir::new("bad");
    let names = names();
    let scalars = Scalars::default();
    let events = EventTable::default();
    let bad_index = RunTables {
        scalars: &scalars,
        timeseries: SeriesColumns { names: &names, time_ns: &[1], series: &[2], value: &[0.0] },
        events: &events,
        packets: None,
    };
    let err = write_run_files(&dir.0, &bad_index).unwrap_err();
    assert!(matches!(&err, Error::Invalid(m) if m.contains("index 2 out of range")), "{err}");
    let short = RunTables {
        timeseries: SeriesColumns { names: &names, time_ns: &[1, 2], series: &[0], value: &[0.0] },
        ..bad_index
    };
    assert!(matches!(write_run_files(&dir.0, &short), Err(Error::Invalid(m)) if m.contains("different lengths")));
    let mut log = packet_log(1);
    log.kind[0] = 9;
    let bad_kind = RunTables {
        timeseries: SeriesColumns { names: &names, time_ns: &[], series: &[], value: &[] },
        packets: Some(&log),
        ..bad_index
    };
    assert!(matches!(write_run_files(&dir.0, &bad_kind), Err(Error::Invalid(m)) if m.contains("kind code 9")));
    assert_eq!(std::fs::read_dir(&dir.0).unwrap().count(), 0);

    let missing = dir.0.join("no-such-dir");
    let ok = RunTables { packets: None, ..bad_kind };
    assert!(matches!(write_run_files(&missing, &ok), Err(Error::Io { path, .. }) if path.ends_with("scalars.csv")));
}
