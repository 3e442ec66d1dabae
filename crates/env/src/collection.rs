//! What a domain database declares once: its collections, in dump order, and for each how
//! what changed in it is reported and whether two states of it are equal ([`table_db!`]).

use crate::table::Table;
use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Map, Value};
use std::sync::Arc;

/// A collection of a database [`table_db!`] declares.
pub(crate) trait Collection {
    /// Writes what differs from `earlier` into `out`, keyed by `collection`.
    fn record_changes(&self, earlier: &Self, collection: &str, out: &mut Map<String, Value>);

    /// Whether both states hold equal records.
    fn same_records(&self, other: &Self) -> bool;
}

/// A copy-on-write map collection: `collection/key` → final record dump (`null` when
/// removed) for every record that differs, the shape of gold reports' `changed_records`.
impl<T: Serialize + Clone + PartialEq> Collection for Table<T> {
    fn record_changes(&self, earlier: &Self, collection: &str, out: &mut Map<String, Value>) {
        for (key, record) in self.changed(earlier) {
            let value = record.map_or(Value::Null, |r| {
                serde_json::to_value(r).expect("records serialise to JSON")
            });
            out.insert(format!("{collection}/{key}"), value);
        }
    }

    fn same_records(&self, other: &Self) -> bool {
        Table::same_records(self, other)
    }
}

/// A map collection copied whole (the toy domain's): changed records in this state's order,
/// then removed ones (`null`) in `earlier`'s, keyed `collection/key`.
impl<T: Serialize + PartialEq> Collection for IndexMap<String, T> {
    fn record_changes(&self, earlier: &Self, collection: &str, out: &mut Map<String, Value>) {
        for (id, record) in self {
            if earlier.get(id) != Some(record) {
                let value = serde_json::to_value(record).unwrap_or(Value::Null);
                out.insert(format!("{collection}/{id}"), value);
            }
        }
        for id in earlier.keys().filter(|id| !self.contains_key(*id)) {
            out.insert(format!("{collection}/{id}"), Value::Null);
        }
    }

    fn same_records(&self, other: &Self) -> bool {
        self == other
    }
}

/// A list collection shared until first written (telecom's): a changed list is reported
/// whole, under `collection/`.
impl<T: Serialize + PartialEq> Collection for Arc<Vec<T>> {
    fn record_changes(&self, earlier: &Self, collection: &str, out: &mut Map<String, Value>) {
        if !self.same_records(earlier) {
            let list = serde_json::to_value(&**self).unwrap_or_default();
            out.insert(format!("{collection}/"), list);
        }
    }

    fn same_records(&self, other: &Self) -> bool {
        Arc::ptr_eq(self, other) || self == other
    }
}

/// What [`table_db!`] gives a database, so code over any such database (the environments of
/// [`crate::agent_only`]) can ask it what changed and whether two states are equal.
pub trait Database {
    /// Every record that differs from `earlier`, keyed as each collection reports it.
    fn changes(&self, earlier: &Self) -> Map<String, Value>;

    /// Whether both hold equal records in every collection.
    fn same(&self, other: &Self) -> bool;
}

/// Declares a database made of [`Collection`]s, each field named as its collection: the
/// collection names in dump order (`COLLECTIONS`, what [`crate::Domain::collections`]
/// returns), the changed records since an earlier state and state equality ([`Database`]),
/// so the list of collections is written once.
macro_rules! table_db {
    ($db:ty { $($table:ident),+ $(,)? }) => {
        impl $db {
            pub(crate) const COLLECTIONS: &'static [&'static str] = &[$(stringify!($table)),+];
        }

        impl $crate::collection::Database for $db {
            fn changes(&self, earlier: &Self) -> serde_json::Map<String, serde_json::Value> {
                let mut out = serde_json::Map::new();
                $($crate::collection::Collection::record_changes(
                    &self.$table, &earlier.$table, stringify!($table), &mut out,
                );)+
                out
            }

            fn same(&self, other: &Self) -> bool {
                $($crate::collection::Collection::same_records(&self.$table, &other.$table))&&+
            }
        }
    };
}
pub(crate) use table_db;
