//! The `Measure` registry: a measure is one type implementing [`Measure`] — the numbers it
//! derives per simulation from the lean record (kept in the summary and, column by column, in
//! the sidecar's `simulations` table), an accumulator over a group's summaries, the value it
//! puts in the group's report, its columns of the flat per-group CSV and its tables — and one
//! entry of [`super::MEASURES`]. Everything here drives the registered measures through that
//! list: nothing names one.
//!
//! Every column a measure prints is a [`Column`]: the header its tables show, the snake_case
//! name of its CSV (and sidecar) column, its unit and its meaning. The CSV schema reads the
//! declaration (`render/csv_tidy.rs`), never the header text.

use crate::input::lean::Lean;
use crate::render::table::{Cell, Table};
use crate::render::tables::key_cells;
use crate::report::{GroupReport, Report, ReportOptions};
use crate::summary::SimSummary;
use serde::Deserialize as _;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::marker::PhantomData;
use std::ops::Range;

/// One column a measure declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// What Markdown and LaTeX print above it.
    pub header: &'static str,
    /// Its snake_case CSV name (and the sidecar's column name for a per-simulation column).
    pub name: &'static str,
    /// One of [`UNITS`]; `text` for a column of words (an empty unit in `schema.json`).
    pub unit: &'static str,
    /// What it holds, with where the metric is defined.
    pub meaning: &'static str,
}

/// The units a column may declare (`schema.json`'s, with `text` for words).
pub(crate) const UNITS: &[&str] = &[
    "fraction",
    "count",
    "usd",
    "turns",
    "seconds",
    "tokens",
    "ratio",
    "probability",
    "statistic",
    "k",
    "text",
];

/// A column as a table holds it: a [`Column`]'s name, unit and meaning, or those of a
/// repeated column made for one value (a role), which the schema reads alike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    pub name: String,
    pub unit: &'static str,
    pub meaning: String,
}

impl From<Column> for Declared {
    fn from(c: Column) -> Declared {
        Declared {
            name: c.name.to_string(),
            unit: c.unit,
            meaning: c.meaning.to_string(),
        }
    }
}

impl Declared {
    /// The unit `schema.json` prints: none for text.
    pub fn schema_unit(&self) -> &'static str {
        if self.unit == "text" { "" } else { self.unit }
    }
}

impl Column {
    /// A column of the flat per-group CSV or of the sidecar, whose header is its name: those
    /// outputs print one name per column, so a declaration states it once.
    pub(crate) const fn csv(
        name: &'static str,
        unit: &'static str,
        meaning: &'static str,
    ) -> Column {
        Column {
            header: name,
            name,
            unit,
            meaning,
        }
    }

    /// The unit `schema.json` prints: none for text.
    pub fn schema_unit(&self) -> &'static str {
        if self.unit == "text" { "" } else { self.unit }
    }

    /// This column made for `value` (a repeated column, [`TableDecl::repeated`]): each `{}`
    /// of its header, name and meaning replaced by the value.
    pub fn repeated(&self, value: &str) -> (String, Declared) {
        let header = self.header.replace("{}", value);
        let declared = Declared {
            name: self.name.replace("{}", value),
            unit: self.unit,
            meaning: self.meaning.replace("{}", value),
        };
        (header, declared)
    }

    /// What is wrong with the declaration, if anything: an empty header, name or meaning, a
    /// name that is not snake_case, or a unit outside [`UNITS`].
    pub fn problem(&self) -> Option<String> {
        // A repeated column's `{}` stands for a snake_case value (a role).
        let name = self.name.replace("{}", "role");
        let snake = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if self.header.is_empty() {
            Some(format!("column `{}` has no header", self.name))
        } else if !snake {
            Some(format!("column `{}` has no snake_case name", self.header))
        } else if !UNITS.contains(&self.unit) {
            Some(format!(
                "column `{}` declares unit `{}`, not one of {UNITS:?}",
                self.name, self.unit
            ))
        } else if self.meaning.trim().is_empty() {
            Some(format!("column `{}` has no meaning", self.name))
        } else {
            None
        }
    }
}

/// The group's domain: the first key column.
pub(crate) const DOMAIN: Column = Column {
    header: "Domain",
    name: "domain",
    unit: "text",
    meaning: "τ²-bench domain (or the mean row's description)",
};

/// The group's agent model: the second key column.
pub(crate) const AGENT: Column = Column {
    header: "Agent",
    name: "agent_model",
    unit: "text",
    meaning: "agent model",
};

/// The group's guard configuration: the third key column.
pub(crate) const GUARD: Column = Column {
    header: "Guard",
    name: "guard",
    unit: "text",
    meaning: "guard configuration, with the settings that tell apart cells sharing the name",
};

/// The columns every measure table starts with: the group's cell.
pub(crate) const KEY_COLUMNS: [Column; 3] = [DOMAIN, AGENT, GUARD];

/// A table a measure prints: its id (the CSV's file stem) and its columns after
/// [`KEY_COLUMNS`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct TableDecl {
    pub id: &'static str,
    pub columns: &'static [Column],
    /// Columns repeated once per value the report holds (a role), after `columns`; `{}` in
    /// a header, name or meaning stands for the value.
    pub repeated: &'static [Column],
}

impl TableDecl {
    /// An empty table with the key columns and this declaration's, each declared.
    pub(crate) fn table(&self, title: impl Into<String>) -> Table {
        self.table_for(title, &[])
    }

    /// [`TableDecl::table`] with the repeated columns made for each of `values`, value by
    /// value.
    pub(crate) fn table_for(&self, title: impl Into<String>, values: &[&str]) -> Table {
        let mut t = Table::declared(self.id, title, &KEY_COLUMNS);
        for c in self.columns {
            t.push_column(*c);
        }
        for v in values {
            for c in self.repeated {
                t.push_column_for(*c, v);
            }
        }
        t
    }
}

/// `t` (made by a measure's [`TableDecl`]) with a row for each group of `r` that `value`
/// gives a value — the group's key cells, then `cells` of the value — and `notes` under it:
/// the filling every per-group measure table shares, so a measure states only its cells.
pub(crate) fn fill<V, C: IntoIterator<Item = Cell>>(
    mut t: Table,
    r: &Report,
    value: impl Fn(&GroupReport) -> Option<V>,
    cells: impl Fn(&GroupReport, V) -> C,
    notes: &[&str],
) -> Table {
    for g in &r.groups {
        let Some(v) = value(g) else { continue };
        let mut row = key_cells(g);
        row.extend(cells(g, v));
        t.rows.push(row);
    }
    t.notes.extend(notes.iter().map(|n| n.to_string()));
    t
}

/// [`fill`] for a measure `M` whose value is `None` for a group without data: a row per group
/// with a value; no table when no group has one, so a report without the data prints none.
pub(crate) fn fill_some<M, V, C>(
    t: Table,
    r: &Report,
    cells: impl Fn(&GroupReport, V) -> C,
    notes: &[&str],
) -> Vec<Table>
where
    M: Measure<Value = Option<V>>,
    C: IntoIterator<Item = Cell>,
{
    let value = |g: &GroupReport| g.measures.get::<M>().flatten();
    if r.groups.iter().all(|g| value(g).is_none()) {
        return Vec::new();
    }
    vec![fill(t, r, value, cells, notes)]
}

/// Where a measure's output goes among the report's fixed parts and the measures listed
/// before it, so moving a metric onto the registry changes no output; empty or `None` puts it
/// after them (a new measure).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Place {
    /// The keys of a group's JSON object its value follows: the first one the object holds
    /// (a key some groups leave out first, then one every group has).
    pub json_after: &'static [&'static str],
    /// Leaves its key out of a group's JSON object when its value is `null`.
    pub json_skip_null: bool,
    /// The columns of the flat per-group CSV its columns follow: the first one the table
    /// holds (a column some reports leave out first); none found, before `simulated`.
    pub groups_after: &'static [&'static str],
    /// The id of the table its tables follow: a fixed table's (whether or not the report
    /// prints it) or the first declared table of a measure listed before it.
    pub tables_after: Option<&'static str>,
}

impl Place {
    /// After the JSON keys `json`, the flat CSV's columns `groups` and the table `tables`
    /// (each as [`Place`]'s fields say), a `null` value kept.
    pub(crate) const fn after(
        json: &'static [&'static str],
        groups: &'static [&'static str],
        tables: Option<&'static str>,
    ) -> Place {
        Place {
            json_after: json,
            json_skip_null: false,
            groups_after: groups,
            tables_after: tables,
        }
    }

    /// This place with a `null` value left out of the group's JSON object.
    pub(crate) const fn skipping_null(self) -> Place {
        Place {
            json_skip_null: true,
            ..self
        }
    }
}

/// What a measure's group value may depend on besides the group's simulations: the report's
/// options (the violation labels, a threshold that flags a value).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context<'a> {
    pub(crate) options: &'a ReportOptions,
}

/// One measure. Implement it in one file and add the type to [`super::MEASURES`].
pub(crate) trait Measure: 'static {
    /// Its key in a group's JSON object.
    const KEY: &'static str;
    /// Counts it derives per simulation, each a `UInt64` column of the sidecar's
    /// `simulations` table named by its declaration.
    const SIM_COLUMNS: &'static [Column] = &[];
    /// Its columns of the flat per-group CSV (`groups.csv`, `report --format csv`).
    const GROUP_COLUMNS: &'static [Column];
    /// Its tables.
    const TABLES: &'static [TableDecl] = &[];
    const PLACE: Place = Place::after(&[], &[], None);
    type Acc: Default + Send;
    type Value: Serialize + DeserializeOwned;

    /// Fills `out` (one slot per [`Measure::SIM_COLUMNS`]) from the record.
    fn derive(_rec: &Lean<'_>, _out: &mut [u64]) {}
    /// Adds one simulation of the group; `own` holds its [`Measure::SIM_COLUMNS`] values.
    fn add(acc: &mut Self::Acc, sim: &SimSummary, own: &[u64], cx: &Context<'_>);
    fn finish(acc: Self::Acc, cx: &Context<'_>) -> Self::Value;
    /// What a reader of the report should know about a group's value, `label` naming the
    /// group; the report's warnings, group by group, measure by measure.
    fn warnings(_v: &Self::Value, _label: &str, _cx: &Context<'_>) -> Vec<String> {
        Vec::new()
    }
    /// Relates a group's value to its baseline's (same agent, domain and non-guard
    /// settings); groups without a baseline keep theirs.
    fn relate(_own: &mut Self::Value, _baseline: &Self::Value) {}
    /// Whether the flat CSV holds its columns, given every group's value: a measure whose
    /// columns mean nothing without data leaves them out of a report where no group has any.
    fn shows_group_columns(_values: &[Self::Value]) -> bool {
        true
    }
    /// Its cells of a group's row of the flat CSV, one per [`Measure::GROUP_COLUMNS`].
    fn group_cells(v: &Self::Value) -> Vec<Cell>;
    /// Its tables of the report, each made by one of [`Measure::TABLES`]; empty to print none.
    fn tables(_r: &Report) -> Vec<Table> {
        Vec::new()
    }
}

/// A registered measure, typed away.
pub(crate) trait Registered: Sync {
    fn key(&self) -> &'static str;
    fn sim_columns(&self) -> &'static [Column];
    fn group_columns(&self) -> &'static [Column];
    fn table_decls(&self) -> &'static [TableDecl];
    fn place(&self) -> Place;
    fn derive(&self, rec: &Lean<'_>, out: &mut [u64]);
    fn accumulator(&self) -> Box<dyn Accumulate>;
    fn warnings(&self, v: &Value, label: &str, cx: &Context<'_>) -> Vec<String>;
    fn relate(&self, own: &mut Value, baseline: &Value);
    fn shows_group_columns(&self, values: &[&Value]) -> bool;
    fn group_cells(&self, v: &Value) -> Vec<Cell>;
    fn tables(&self, r: &Report) -> Vec<Table>;
}

/// A group's running accumulator of one measure.
pub(crate) trait Accumulate: Send {
    fn add(&mut self, sim: &SimSummary, own: &[u64], cx: &Context<'_>);
    fn finish(self: Box<Self>, cx: &Context<'_>) -> Value;
}

/// The registry entry of measure `M`.
pub(crate) struct Reg<M>(pub PhantomData<fn() -> M>);

struct Acc<M: Measure>(M::Acc);

impl<M: Measure> Accumulate for Acc<M> {
    fn add(&mut self, sim: &SimSummary, own: &[u64], cx: &Context<'_>) {
        M::add(&mut self.0, sim, own, cx);
    }
    fn finish(self: Box<Self>, cx: &Context<'_>) -> Value {
        serde_json::to_value(M::finish(self.0, cx)).expect("measure values serialise")
    }
}

fn typed<M: Measure>(v: &Value) -> M::Value {
    M::Value::deserialize(v).expect("a measure reads back its own value")
}

impl<M: Measure> Registered for Reg<M> {
    fn key(&self) -> &'static str {
        M::KEY
    }
    fn sim_columns(&self) -> &'static [Column] {
        M::SIM_COLUMNS
    }
    fn group_columns(&self) -> &'static [Column] {
        M::GROUP_COLUMNS
    }
    fn table_decls(&self) -> &'static [TableDecl] {
        M::TABLES
    }
    fn place(&self) -> Place {
        M::PLACE
    }
    fn derive(&self, rec: &Lean<'_>, out: &mut [u64]) {
        M::derive(rec, out);
    }
    fn accumulator(&self) -> Box<dyn Accumulate> {
        Box::new(Acc::<M>(M::Acc::default()))
    }
    fn warnings(&self, v: &Value, label: &str, cx: &Context<'_>) -> Vec<String> {
        M::warnings(&typed::<M>(v), label, cx)
    }
    fn shows_group_columns(&self, values: &[&Value]) -> bool {
        M::shows_group_columns(&values.iter().map(|v| typed::<M>(v)).collect::<Vec<_>>())
    }
    fn relate(&self, own: &mut Value, baseline: &Value) {
        let mut v = typed::<M>(own);
        M::relate(&mut v, &typed::<M>(baseline));
        *own = serde_json::to_value(v).expect("measure values serialise");
    }
    fn group_cells(&self, v: &Value) -> Vec<Cell> {
        M::group_cells(&typed::<M>(v))
    }
    fn tables(&self, r: &Report) -> Vec<Table> {
        M::tables(r)
    }
}

/// The registered measures with the range of each one's slots in [`SimSummary::measured`].
pub(crate) fn slots() -> impl Iterator<Item = (&'static dyn Registered, Range<usize>)> {
    let mut at = 0;
    super::MEASURES.iter().map(move |m| {
        let n = m.sim_columns().len();
        at += n;
        (*m, at - n..at)
    })
}

/// Every registered measure's per-simulation columns, in slot order.
pub(crate) fn sim_columns() -> impl Iterator<Item = &'static Column> {
    super::MEASURES.iter().flat_map(|m| m.sim_columns())
}

/// The per-simulation values of every registered measure, in slot order.
pub(crate) fn derive_all(rec: &Lean<'_>) -> Box<[u64]> {
    let mut out = vec![0; slots().last().map_or(0, |(_, r)| r.end)];
    for (m, r) in slots() {
        m.derive(rec, &mut out[r]);
    }
    out.into()
}

/// The registered measures' values of one group, in registry order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Measured(pub Vec<(&'static str, Value)>);

impl Measured {
    /// Every registered measure accumulated over `sims`.
    pub(crate) fn of<'a>(sims: impl Iterator<Item = &'a SimSummary>, cx: &Context<'_>) -> Measured {
        let mut accs: Vec<(Box<dyn Accumulate>, Range<usize>)> =
            slots().map(|(m, r)| (m.accumulator(), r)).collect();
        for sim in sims {
            for (acc, r) in &mut accs {
                acc.add(sim, &sim.measured[r.clone()], cx);
            }
        }
        Measured(
            super::MEASURES
                .iter()
                .zip(accs)
                .map(|(m, (acc, _))| (m.key(), acc.finish(cx)))
                .collect(),
        )
    }

    /// The value of the measure with key `key` as a `T` (its value type, such as
    /// `turns::TurnStats`); `None` when the group has none or it is no `T`.
    pub fn value<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        let (_, v) = self.0.iter().find(|(k, _)| *k == key)?;
        T::deserialize(v).ok()
    }

    /// The value of measure `M`; `None` when the group has none.
    pub(crate) fn get<M: Measure>(&self) -> Option<M::Value> {
        self.0
            .iter()
            .find(|(k, _)| *k == M::KEY)
            .map(|(_, v)| typed::<M>(v))
    }
}

/// Relates each registered measure of `group` to the baseline group's.
pub(crate) fn relate(group: &mut Measured, baseline: &Measured) {
    for (m, ((_, own), (_, base))) in super::MEASURES
        .iter()
        .zip(group.0.iter_mut().zip(&baseline.0))
    {
        m.relate(own, base);
    }
}

/// Every registered measure's warnings about `group`, measure by measure.
pub(crate) fn warnings(group: &GroupReport, cx: &Context<'_>) -> Vec<String> {
    let label = group.label();
    (super::MEASURES.iter().zip(&group.measures.0))
        .flat_map(|(m, (_, v))| m.warnings(v, &label, cx))
        .collect()
}

/// Puts each measure's value into a group's JSON object at its [`Place`].
pub(crate) fn splice_json(obj: &mut Map<String, Value>, g: &GroupReport) {
    for (m, (key, v)) in super::MEASURES.iter().zip(&g.measures.0) {
        let place = m.place();
        if place.json_skip_null && v.is_null() {
            continue;
        }
        let at = (place.json_after.iter())
            .find_map(|after| obj.keys().position(|k| k == after))
            .map_or(obj.len(), |i| i + 1);
        obj.shift_insert(at, key.to_string(), v.clone());
    }
}

/// Puts each measure's columns into the flat per-group table at its [`Place`] (else before
/// the last column, `simulated`), each declared.
pub(crate) fn splice_group_columns(t: &mut Table, r: &Report) {
    for m in super::MEASURES {
        let values: Vec<Option<&Value>> = (r.groups.iter())
            .map(|g| {
                g.measures
                    .0
                    .iter()
                    .find(|(k, _)| *k == m.key())
                    .map(|(_, v)| v)
            })
            .collect();
        if !m.shows_group_columns(&values.iter().flatten().copied().collect::<Vec<_>>()) {
            continue;
        }
        let at = (m.place().groups_after.iter())
            .find_map(|after| t.headers.iter().position(|h| h == after))
            .map_or(t.headers.len().saturating_sub(1), |i| i + 1);
        t.declared.resize(t.headers.len(), None);
        for (j, c) in m.group_columns().iter().enumerate() {
            t.headers.insert(at + j, c.name.to_string());
            t.declared.insert(at + j, Some(Declared::from(*c)));
        }
        for (row, v) in t.rows.iter_mut().zip(values) {
            let cells = v.map_or_else(
                || vec![Cell::Missing; m.group_columns().len()],
                |v| m.group_cells(v),
            );
            for (j, c) in cells.into_iter().enumerate() {
                row.insert(at + j, c);
            }
        }
    }
}

/// Puts each measure's tables among the report's fixed ones at its [`Place`]. `slots` holds
/// each fixed table under its id, printed or not (an empty slot keeps its place for the
/// measures that follow it); a measure's tables take a slot named by its first declared
/// table.
pub(crate) fn splice_tables(slots: &mut Vec<(&'static str, Vec<Table>)>, r: &Report) {
    for m in super::MEASURES {
        let at = (m.place().tables_after)
            .and_then(|after| slots.iter().position(|(id, _)| *id == after))
            .map_or(slots.len(), |i| i + 1);
        let id = m.table_decls().first().map_or(m.key(), |t| t.id);
        slots.insert(at, (id, m.tables(r)));
    }
}

/// Every column the registered measures declare, with where: their sidecar columns, their
/// per-group CSV columns and their tables' columns (the key columns included).
#[cfg(test)]
pub(crate) fn declared_columns() -> Vec<(String, Column)> {
    let mut out = Vec::new();
    for m in super::MEASURES {
        let key = m.key();
        out.extend((m.sim_columns().iter()).map(|c| (format!("{key}: simulations.parquet"), *c)));
        out.extend((m.group_columns().iter()).map(|c| (format!("{key}: groups.csv"), *c)));
        for t in m.table_decls() {
            let columns = KEY_COLUMNS.iter().chain(t.columns).chain(t.repeated);
            out.extend(columns.map(|c| (format!("{key}: {}.csv", t.id), *c)));
        }
    }
    out
}

/// The ids of the registered measures' tables placed after the fixed ones, in print order.
pub fn trailing_table_ids() -> Vec<&'static str> {
    (super::MEASURES.iter())
        .filter(|m| m.place().tables_after.is_none())
        .flat_map(|m| m.table_decls().iter().map(|t| t.id))
        .collect()
}

/// The registered measures' per-group CSV columns placed last, before `simulated`.
pub fn trailing_group_columns() -> Vec<&'static str> {
    (super::MEASURES.iter())
        .filter(|m| m.place().groups_after.is_empty())
        .flat_map(|m| m.group_columns().iter().map(|c| c.name))
        .collect()
}

/// The names of the registered measures' columns of the sidecar's `simulations` table, after
/// its fixed ones.
pub fn sidecar_column_names() -> Vec<&'static str> {
    sim_columns().map(|c| c.name).collect()
}
