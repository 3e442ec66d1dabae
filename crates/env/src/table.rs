//! Copy-on-write record maps: the structural sharing behind cheap fresh environments.
//!
//! A [`Table`] is an insertion-ordered map of reference-counted records behind a shared
//! pointer. Cloning it copies one pointer; the first write copies the index (pointers only)
//! and the written record. Diffing two tables that share ancestry skips every record they
//! still share by pointer.

use indexmap::IndexMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::sync::Arc;

#[derive(Debug)]
pub struct Table<T>(Arc<IndexMap<String, Arc<T>>>);

impl<T> Clone for Table<T> {
    fn clone(&self) -> Self {
        Table(Arc::clone(&self.0))
    }
}

impl<T> Default for Table<T> {
    fn default() -> Self {
        Table(Arc::new(IndexMap::new()))
    }
}

impl<T: Clone + PartialEq> Table<T> {
    pub fn get(&self, key: &str) -> Option<&T> {
        self.0.get(key).map(|r| &**r)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// Mutable access to one record, copying the index and that record if shared.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut T> {
        if !self.0.contains_key(key) {
            return None;
        }
        Arc::make_mut(&mut self.0).get_mut(key).map(Arc::make_mut)
    }

    /// Inserts or replaces a record; a new key goes to the end, as in a Python dict.
    pub fn insert(&mut self, key: String, record: T) {
        Arc::make_mut(&mut self.0).insert(key, Arc::new(record));
    }

    /// Removes a record, keeping the order of the others (Python `del d[k]`).
    pub fn remove(&mut self, key: &str) -> Option<T> {
        if !self.0.contains_key(key) {
            return None;
        }
        Arc::make_mut(&mut self.0)
            .shift_remove(key)
            .map(|r| Arc::unwrap_or_clone(r))
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &T)> {
        self.0.iter().map(|(k, v)| (k, &**v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.keys()
    }

    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.0.values().map(|v| &**v)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Keys whose record differs from `earlier` (added or changed: `Some`, removed: `None`),
    /// in this table's order followed by removed keys in `earlier`'s order.
    pub fn changed<'a>(&'a self, earlier: &'a Table<T>) -> Vec<(&'a str, Option<&'a T>)> {
        if Arc::ptr_eq(&self.0, &earlier.0) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (k, v) in self.0.iter() {
            match earlier.0.get(k) {
                Some(old) if Arc::ptr_eq(old, v) || **old == **v => {}
                _ => out.push((k.as_str(), Some(&**v))),
            }
        }
        for k in earlier.0.keys() {
            if !self.0.contains_key(k) {
                out.push((k.as_str(), None));
            }
        }
        out
    }

    /// Adds `collection/key` → final record dump (`null` when removed) for every record that
    /// differs from `earlier`: the shape of gold reports' `changed_records`.
    pub fn record_changes(
        &self,
        earlier: &Table<T>,
        collection: &str,
        out: &mut serde_json::Map<String, serde_json::Value>,
    ) where
        T: Serialize,
    {
        for (key, record) in self.changed(earlier) {
            let value = record.map_or(serde_json::Value::Null, |r| {
                serde_json::to_value(r).expect("records serialise to JSON")
            });
            out.insert(format!("{collection}/{key}"), value);
        }
    }

    /// Whether both tables hold equal records under equal keys (order ignored, as the
    /// sorted-key hash ignores it).
    pub fn same_records(&self, other: &Table<T>) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || (self.0.len() == other.0.len()
                && self.0.iter().all(|(k, v)| {
                    other
                        .0
                        .get(k)
                        .is_some_and(|o| Arc::ptr_eq(o, v) || **o == **v)
                }))
    }
}

impl<T: Serialize> Serialize for Table<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, &**v)))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Table<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map: IndexMap<String, T> = IndexMap::deserialize(d)?;
        Ok(Table(Arc::new(
            map.into_iter().map(|(k, v)| (k, Arc::new(v))).collect(),
        )))
    }
}

impl<T> FromIterator<(String, T)> for Table<T> {
    fn from_iter<I: IntoIterator<Item = (String, T)>>(iter: I) -> Self {
        Table(Arc::new(
            iter.into_iter().map(|(k, v)| (k, Arc::new(v))).collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_on_write_and_diff() {
        let base: Table<i32> = [("a".to_string(), 1), ("b".to_string(), 2)]
            .into_iter()
            .collect();
        let mut env = base.clone();
        assert!(env.changed(&base).is_empty());
        *env.get_mut("b").unwrap() = 3;
        env.insert("c".into(), 4);
        assert_eq!(base.get("b"), Some(&2), "base is untouched");
        assert_eq!(env.changed(&base), vec![("b", Some(&3)), ("c", Some(&4))]);
        env.remove("a");
        assert_eq!(env.changed(&base).last(), Some(&("a", None)));
        assert!(!env.same_records(&base));
        let mut again = base.clone();
        *again.get_mut("b").unwrap() = 2;
        assert!(again.same_records(&base), "equal content counts as same");
    }
}
