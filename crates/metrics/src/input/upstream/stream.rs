//! Reading a `results.json` one simulation at a time, so importing a file costs memory for its
//! `info`, its `tasks` and one simulation, never for the `simulations` array (which holds every
//! conversation and makes up nearly all of the file).
//!
//! The top-level object is visited key by key from a buffered reader: `timestamp`, `info` and
//! `tasks` are kept; `simulations` is walked as a sequence, each element deserialized, imported
//! and handed to the caller before the next is read. Every simulation's import reads all three
//! kept keys (`timestamp` is the fallback start time), so the array is streamed in the same
//! pass only when they all came before it — as upstream writes them (timestamp, info, tasks,
//! simulations) and `export-tau2` too. A file with a key after the array (or without a
//! `timestamp`) is read twice: the first pass skips the array without keeping it, the second
//! skips everything but the array. Either way the records reach the caller in file order.

use super::{Importer, Info, UpSimulation, UpTask};
use crate::error::{MetricsError, ResultsCause};
use crate::input::domains::DomainTable;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::io::{BufRead, BufReader};
use std::path::Path;
use tauguard_core::record::SimulationRecord;

/// Hands each simulation of the results file at `path`, imported as a record, to `each`, in
/// file order. A failure of `each` stops the read and is returned as it is.
pub(crate) fn for_each_record<E: From<MetricsError>>(
    path: &Path,
    domains: &DomainTable,
    mut each: impl FnMut(SimulationRecord) -> Result<(), E>,
) -> Result<(), E> {
    let mut pass = Pass {
        path,
        domains,
        timestamp: None,
        info: None,
        tasks: None,
        importer: None,
        seen_simulations: false,
        streamed: false,
        each: &mut each,
        failure: None,
    };
    read(&mut pass)?;
    if !pass.seen_simulations {
        return Err(E::from(not_results(path)));
    }
    if pass.streamed {
        return Ok(());
    }
    // The array came before a key every simulation reads: now that they are known, read the
    // file again for the array alone.
    let info = pass
        .info
        .take()
        .ok_or_else(|| E::from(missing(path, "info")))?;
    let tasks = pass
        .tasks
        .take()
        .ok_or_else(|| E::from(missing(path, "tasks")))?;
    pass.importer = Some(Importer::new(
        path,
        pass.timestamp.take().flatten(),
        info,
        tasks,
        domains,
    ));
    read(&mut pass)
}

/// One pass over the file: parses it through `pass` and returns the first failure, the
/// caller's or the import's before the parser's (which only reports that it was stopped).
fn read<E: From<MetricsError>, F: FnMut(SimulationRecord) -> Result<(), E>>(
    pass: &mut Pass<'_, '_, E, F>,
) -> Result<(), E> {
    let path = pass.path;
    let file = std::fs::File::open(path).map_err(|e| E::from(MetricsError::io(path, e)))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    if !starts_with_object(&mut reader).map_err(|e| E::from(MetricsError::io(path, e)))? {
        return Err(E::from(not_results(path)));
    }
    let mut de = serde_json::Deserializer::from_reader(reader);
    let parsed = (&mut *pass).deserialize(&mut de).and_then(|()| de.end());
    if let Some(failure) = pass.failure.take() {
        return Err(failure);
    }
    parsed.map_err(|e| {
        E::from(MetricsError::BadResults {
            path: path.to_path_buf(),
            location: format!("line {} column {}", e.line(), e.column()),
            cause: e.into(),
        })
    })
}

/// Whether the first byte after any whitespace opens an object (nothing is consumed but the
/// whitespace).
fn starts_with_object(reader: &mut impl BufRead) -> std::io::Result<bool> {
    loop {
        let buf = reader.fill_buf()?;
        let Some(i) = buf.iter().position(|b| !b.is_ascii_whitespace()) else {
            if buf.is_empty() {
                return Ok(false);
            }
            let n = buf.len();
            reader.consume(n);
            continue;
        };
        let open = buf[i] == b'{';
        reader.consume(i);
        return Ok(open);
    }
}

fn not_results(path: &Path) -> MetricsError {
    MetricsError::BadResults {
        path: path.to_path_buf(),
        location: "line 1 column 1".into(),
        cause: ResultsCause::NotAnObject,
    }
}

fn missing(path: &Path, key: &'static str) -> MetricsError {
    MetricsError::BadResults {
        path: path.to_path_buf(),
        location: "top level".into(),
        cause: ResultsCause::MissingField(key),
    }
}

/// The state of reading one file: the keys kept so far and, once they are all known, the
/// importer the simulations go through.
struct Pass<'p, 'd, E, F> {
    path: &'p Path,
    domains: &'d DomainTable,
    /// `Some(value)` once the key was read (`Some(None)`: `null`).
    timestamp: Option<Option<String>>,
    info: Option<Info>,
    tasks: Option<Vec<UpTask>>,
    /// Set before the second pass, or in the first when the array comes after the kept keys.
    importer: Option<Importer<'d>>,
    seen_simulations: bool,
    streamed: bool,
    each: &'p mut F,
    /// The failure that stopped the parser, returned instead of the parser's error.
    failure: Option<E>,
}

impl<'de, E, F> DeserializeSeed<'de> for &mut Pass<'_, '_, E, F>
where
    E: From<MetricsError>,
    F: FnMut(SimulationRecord) -> Result<(), E>,
{
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, E, F> Visitor<'de> for &mut Pass<'_, '_, E, F>
where
    E: From<MetricsError>,
    F: FnMut(SimulationRecord) -> Result<(), E>,
{
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object with `info`, `tasks` and `simulations`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let second = self.importer.is_some();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "simulations" if second || self.header_done() => {
                    if self.seen_simulations && !second {
                        return Err(de::Error::duplicate_field("simulations"));
                    }
                    self.seen_simulations = true;
                    if self.importer.is_none() {
                        let (timestamp, info, tasks) = (
                            self.timestamp.take().flatten(),
                            self.info.take().expect("header_done"),
                            self.tasks.take().expect("header_done"),
                        );
                        self.importer = Some(Importer::new(
                            self.path,
                            timestamp,
                            info,
                            tasks,
                            self.domains,
                        ));
                    }
                    map.next_value_seed(Simulations { pass: &mut *self })?;
                    self.streamed = true;
                }
                _ if second => {
                    map.next_value::<IgnoredAny>()?;
                }
                "simulations" => {
                    if self.seen_simulations {
                        return Err(de::Error::duplicate_field("simulations"));
                    }
                    self.seen_simulations = true;
                    map.next_value::<IgnoredAny>()?;
                }
                "timestamp" => keep(&mut self.timestamp, "timestamp", &mut map)?,
                "info" => keep(&mut self.info, "info", &mut map)?,
                "tasks" => keep(&mut self.tasks, "tasks", &mut map)?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        // Without `simulations` it is not a results file at all, which the caller says.
        if !second && self.seen_simulations && self.importer.is_none() {
            if self.info.is_none() {
                return Err(de::Error::missing_field("info"));
            }
            if self.tasks.is_none() {
                return Err(de::Error::missing_field("tasks"));
            }
        }
        Ok(())
    }
}

impl<E, F> Pass<'_, '_, E, F> {
    /// Every key a simulation's import reads has been read.
    fn header_done(&self) -> bool {
        self.timestamp.is_some() && self.info.is_some() && self.tasks.is_some()
    }
}

/// Reads the value of a kept key into `slot`; a key given twice is an error, as for a derived
/// `Deserialize`.
fn keep<'de, T: de::Deserialize<'de>, A: MapAccess<'de>>(
    slot: &mut Option<T>,
    key: &'static str,
    map: &mut A,
) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(de::Error::duplicate_field(key));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

/// The `simulations` array, imported and handed on one element at a time.
struct Simulations<'a, 'p, 'd, E, F> {
    pass: &'a mut Pass<'p, 'd, E, F>,
}

impl<'de, E, F> DeserializeSeed<'de> for Simulations<'_, '_, '_, E, F>
where
    E: From<MetricsError>,
    F: FnMut(SimulationRecord) -> Result<(), E>,
{
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, E, F> Visitor<'de> for Simulations<'_, '_, '_, E, F>
where
    E: From<MetricsError>,
    F: FnMut(SimulationRecord) -> Result<(), E>,
{
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array of simulations")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let pass = self.pass;
        let importer = pass.importer.as_ref().expect("set before the array");
        let mut i = 0;
        while let Some(sim) = seq.next_element::<UpSimulation>()? {
            let handed = importer
                .record(i, sim)
                .map_err(E::from)
                .and_then(|rec| (pass.each)(rec));
            if let Err(e) = handed {
                pass.failure = Some(e);
                return Err(de::Error::custom("stopped by an earlier error"));
            }
            i += 1;
        }
        Ok(())
    }
}
