//! The transactional database (`TransactionalDB`): 23 tables of free-form records, each a
//! `{data, notes}` pair, and the query helpers upstream's tools are written with
//! (`db_query.py`). Records are JSON objects, kept exactly as loaded (ints stay ints), in
//! copy-on-write tables so a fresh environment shares every record with the base.

use super::pyfmt;
use crate::data::{LoadError, read_text};
use crate::initial_state::deep_merge;
use crate::table::Table;
use indexmap::IndexMap;
use serde_json::{Map, Value};
use std::path::Path;
use tauguard_core::pyjson;

/// One record: a JSON object in insertion order.
pub type Record = Map<String, Value>;

/// The model's fields, in declaration order (the order `model_dump` writes them). `db.json`
/// holds 17; the other six start as pydantic's default `{"data": {}, "notes": ""}` and are
/// part of the dump, hence of the hash.
pub const TABLES: [&str; 23] = [
    "users",
    "accounts",
    "debit_cards",
    "referrals",
    "credit_card_applications",
    "user_discoverable_tools",
    "user_discoverable_tool_calls",
    "verification_history",
    "credit_card_transaction_history",
    "cash_back_disputes",
    "bank_account_transaction_history",
    "credit_card_accounts",
    "agent_discoverable_tools",
    "task_config",
    "human_transfer_requests",
    "transaction_disputes",
    "credit_card_orders",
    "debit_card_orders",
    "credit_card_closure_reasons",
    "credit_card_account_flags",
    "credit_limit_increase_requests",
    "payment_history",
    "debit_card_disputes",
];

/// The names `query_database_tool` accepts, in the order its "Available:" list prints them
/// (`_load_databases`).
const QUERYABLE: [&str; 23] = [
    "users",
    "accounts",
    "referrals",
    "credit_card_applications",
    "user_discoverable_tools",
    "user_discoverable_tool_calls",
    "agent_discoverable_tools",
    "task_config",
    "verification_history",
    "credit_card_transaction_history",
    "cash_back_disputes",
    "bank_account_transaction_history",
    "credit_card_accounts",
    "human_transfer_requests",
    "transaction_disputes",
    "credit_card_orders",
    "credit_card_closure_reasons",
    "credit_card_account_flags",
    "debit_cards",
    "debit_card_orders",
    "debit_card_disputes",
    "credit_limit_increase_requests",
    "payment_history",
];

#[derive(Debug, Clone, Default)]
struct DbTable {
    data: Table<Record>,
    notes: String,
}

/// The whole database; cloning shares every record.
#[derive(Debug, Clone)]
pub struct Db {
    tables: Vec<DbTable>,
}

fn index(table: &str) -> Option<usize> {
    TABLES.iter().position(|t| *t == table)
}

impl Db {
    /// Parses `db.json`: an object of tables, each with an object of record objects.
    pub fn load(path: &Path) -> Result<Db, LoadError> {
        let text = read_text(path)?;
        let parse = |message: String| LoadError::Parse {
            path: path.to_path_buf(),
            message,
        };
        let root: IndexMap<String, Value> =
            serde_json::from_str(&text).map_err(|e| parse(e.to_string()))?;
        let mut db = Db {
            tables: vec![DbTable::default(); TABLES.len()],
        };
        for (name, table) in root {
            let i = index(&name)
                .ok_or_else(|| parse(format!("`{name}` is not a TransactionalDB table")))?;
            db.tables[i] = parse_table(&name, &table).map_err(parse)?;
        }
        Ok(db)
    }

    fn table(&self, name: &str) -> Option<&DbTable> {
        index(name).map(|i| &self.tables[i])
    }

    pub fn get(&self, table: &str, id: &str) -> Option<&Record> {
        self.table(table)?.data.get(id)
    }

    pub fn contains(&self, table: &str, id: &str) -> bool {
        self.get(table, id).is_some()
    }

    pub fn get_mut(&mut self, table: &str, id: &str) -> Option<&mut Record> {
        let i = index(table)?;
        self.tables[i].data.get_mut(id)
    }

    /// Records of a table in dict order (empty for a name that is no table).
    pub fn records(&self, table: &str) -> Vec<(&String, &Record)> {
        self.table(table)
            .map(|t| t.data.iter().collect())
            .unwrap_or_default()
    }

    /// `add_to_db`: false when the table does not exist or the id is taken.
    pub fn add(&mut self, table: &str, id: &str, record: Record) -> bool {
        let Some(i) = index(table) else { return false };
        let t = &mut self.tables[i].data;
        if t.contains_key(id) {
            return false;
        }
        t.insert(id.to_string(), record);
        true
    }

    /// Sets a record whatever was there (`table.data[id] = record`).
    pub fn put(&mut self, table: &str, id: &str, record: Record) {
        if let Some(i) = index(table) {
            self.tables[i].data.insert(id.to_string(), record);
        }
    }

    /// `update_record_in_db`: sets fields of an existing record; false when it is missing.
    pub fn update(&mut self, table: &str, id: &str, updates: &[(&str, Value)]) -> bool {
        let Some(record) = self.get_mut(table, id) else {
            return false;
        };
        for (field, value) in updates {
            record.insert((*field).to_string(), value.clone());
        }
        true
    }

    /// `model_dump()`: every table as `{data, notes}`, in field order.
    pub fn dump(&self) -> Value {
        let mut out = Map::new();
        for (name, t) in TABLES.iter().zip(&self.tables) {
            let mut table = Map::new();
            let data = t
                .data
                .iter()
                .map(|(k, v)| (k.clone(), Value::Object(v.clone())));
            table.insert("data".into(), Value::Object(data.collect()));
            table.insert("notes".into(), Value::String(t.notes.clone()));
            out.insert((*name).to_string(), Value::Object(table));
        }
        Value::Object(out)
    }

    /// Merges a task's `initialization_data.agent_data` (addict deep merge, then model
    /// validation): records merge field by field, `notes` is replaced.
    pub fn merge(&mut self, patch: &Value) -> Result<(), String> {
        let Value::Object(patch) = patch else {
            return Err("agent_data is not an object".into());
        };
        for (name, table_patch) in patch {
            let i = index(name).ok_or_else(|| {
                format!("1 validation error for TransactionalDB\n{name}\n  Extra inputs are not permitted")
            })?;
            let Value::Object(fields) = table_patch else {
                return Err(format!("{name}: a table must be an object"));
            };
            for (field, value) in fields {
                match (field.as_str(), value) {
                    ("data", Value::Object(records)) => {
                        for (id, record_patch) in records {
                            let mut record = Value::Object(
                                self.tables[i].data.get(id).cloned().unwrap_or_default(),
                            );
                            deep_merge(&mut record, record_patch);
                            let Value::Object(record) = record else {
                                return Err(format!(
                                    "{name}.data.{id}: a record must be an object"
                                ));
                            };
                            self.tables[i].data.insert(id.clone(), record);
                        }
                    }
                    ("notes", Value::String(s)) => self.tables[i].notes = s.clone(),
                    _ => return Err(format!("{name}.{field}: not a DatabaseTable field")),
                }
            }
        }
        Ok(())
    }

    /// Changed records keyed `table/id` (`null` when removed), in table order.
    pub fn changes(&self, earlier: &Db, out: &mut Map<String, Value>) {
        for ((name, now), before) in TABLES.iter().zip(&self.tables).zip(&earlier.tables) {
            for (id, record) in now.data.changed(&before.data) {
                let value = record.map_or(Value::Null, |r| Value::Object(r.clone()));
                out.insert(format!("{name}/{id}"), value);
            }
            if now.notes != before.notes {
                out.insert(format!("{name}#notes"), Value::String(now.notes.clone()));
            }
        }
    }

    /// Whether both hash equal, comparing only what either wrote when they share a base.
    pub fn same(&self, other: &Db) -> bool {
        self.tables
            .iter()
            .zip(&other.tables)
            .all(|(a, b)| a.notes == b.notes && a.data.same_records(&b.data))
    }

    /// `query_database_tool(database_name, constraints)`: the records matching a JSON
    /// constraint object, printed field by field with `str()` values.
    pub fn query_tool(&self, database: &str, constraints: &str) -> String {
        if !QUERYABLE.contains(&database) {
            let names: Vec<Value> = QUERYABLE
                .iter()
                .map(|n| Value::String((*n).into()))
                .collect();
            return format!(
                "Error: Database '{database}' not found. Available: {}",
                pyjson::py_repr(&Value::Array(names))
            );
        }
        let constraints = if constraints.is_empty() {
            Value::Object(Map::new())
        } else {
            match pyfmt::loads(constraints, false) {
                Ok(v) => v,
                Err(e) => return format!("Error: Invalid JSON: {e}"),
            }
        };
        let Value::Object(constraints) = constraints else {
            return format!(
                "Error querying database: tau2.domains.banking_knowledge.db_query.query_db() argument after ** must be a mapping, not {}",
                pyjson::type_name(&constraints)
            );
        };
        let found: Vec<(&String, &Record)> = self
            .records(database)
            .into_iter()
            .filter(|(_, r)| matches_all(r, &constraints))
            .collect();
        format_records(database, &found)
    }
}

/// The `Found N record(s)` listing `query_database_tool` prints (also used by tools that
/// sort before printing).
pub fn format_records(database: &str, found: &[(&String, &Record)]) -> String {
    if found.is_empty() {
        return format!("No records found in '{database}'.");
    }
    let mut lines = vec![format!(
        "Found {} record(s) in '{database}':\n",
        found.len()
    )];
    for (i, (id, record)) in found.iter().enumerate() {
        lines.push(format!("{}. Record ID: {id}", i + 1));
        for (field, value) in record.iter() {
            lines.push(format!("   {field}: {}", pyjson::py_str(value)));
        }
        lines.push(String::new());
    }
    lines.join("\n")
}

fn parse_table(name: &str, table: &Value) -> Result<DbTable, String> {
    let Value::Object(fields) = table else {
        return Err(format!("`{name}`: a table must be an object"));
    };
    let mut out = DbTable::default();
    for (field, value) in fields {
        match (field.as_str(), value) {
            ("data", Value::Object(records)) => {
                let mut rows = Vec::with_capacity(records.len());
                for (id, record) in records {
                    let Value::Object(record) = record else {
                        return Err(format!("`{name}.data.{id}`: a record must be an object"));
                    };
                    rows.push((id.clone(), record.clone()));
                }
                out.data = rows.into_iter().collect();
            }
            ("notes", Value::String(s)) => out.notes = s.clone(),
            _ => return Err(format!("`{name}.{field}`: not a DatabaseTable field")),
        }
    }
    Ok(out)
}

/// `_record_matches`: every `field[__op]` constraint holds; a comparison Python would refuse
/// (a `TypeError`) counts as no match.
fn matches_all(record: &Record, constraints: &Map<String, Value>) -> bool {
    constraints.iter().all(|(key, expected)| {
        let (field, op) = match key.rsplit_once("__") {
            Some((f, op)) => (f, op),
            None => (key.as_str(), "eq"),
        };
        let actual = record.get(field).unwrap_or(&Value::Null);
        compare(actual, op, expected).unwrap_or(false)
    })
}

fn compare(a: &Value, op: &str, b: &Value) -> Option<bool> {
    use std::cmp::Ordering::*;
    let order = || -> Option<std::cmp::Ordering> {
        match (a, b) {
            (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
            (Value::Number(_) | Value::Bool(_), Value::Number(_) | Value::Bool(_)) => {
                num(a)?.partial_cmp(&num(b)?)
            }
            _ => None,
        }
    };
    let member = |item: &Value, coll: &Value| -> Option<bool> {
        match (item, coll) {
            (_, Value::Array(xs)) => Some(xs.iter().any(|x| pyjson::py_eq(x, item))),
            (Value::String(i), Value::String(c)) => Some(c.contains(i.as_str())),
            (Value::String(i), Value::Object(m)) => Some(m.contains_key(i)),
            _ => None,
        }
    };
    Some(match op {
        "ne" => !pyjson::py_eq(a, b),
        "gt" => order()? == Greater,
        "gte" => order()? != Less,
        "lt" => order()? == Less,
        "lte" => order()? != Greater,
        "contains" => !a.is_null() && member(b, a)?,
        "startswith" => !a.is_null() && pyjson::py_str(a).starts_with(&pyjson::py_str(b)),
        "endswith" => !a.is_null() && pyjson::py_str(a).ends_with(&pyjson::py_str(b)),
        "in" => member(a, b)?,
        "nin" => !member(a, b)?,
        _ => pyjson::py_eq(a, b),
    })
}

fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}
