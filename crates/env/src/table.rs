//! Copy-on-write record maps: the structural sharing behind cheap fresh environments.
//!
//! A [`Table`] is an insertion-ordered map of reference-counted records. It is a shared,
//! never-modified base (the loaded database) plus a small overlay of the records written
//! since. Cloning copies two pointers; a write touches only the overlay, so its cost does not
//! grow with the table (thousands of reservations); and two tables over the same base are
//! compared by their overlays alone — the evaluator compares a replayed state with the gold
//! state after every simulation.
//!
//! Order follows Python dicts: a replaced record keeps its place, a new key goes to the end,
//! and a removed key that comes back goes to the end.

use indexmap::IndexMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

/// Keys are the project's own record ids, never attacker-chosen: a fast hasher is safe here.
type Hasher = foldhash::fast::FixedState;
type Map<V> = IndexMap<String, V, Hasher>;

/// A record and its rendering as a tool result, made on first request. Records are
/// immutable while shared, so a base record is rendered once for every environment that
/// reads it; a record being written gets a fresh, empty cache.
#[derive(Debug)]
struct Record<T> {
    value: T,
    dump: OnceLock<Arc<str>>,
}

impl<T> Record<T> {
    fn new(value: T) -> Arc<Record<T>> {
        Arc::new(Record {
            value,
            dump: OnceLock::new(),
        })
    }
}

impl<T: Clone> Clone for Record<T> {
    fn clone(&self) -> Self {
        Record {
            value: self.value.clone(),
            dump: OnceLock::new(),
        }
    }
}

type Rec<T> = Arc<Record<T>>;

/// One overlay entry.
#[derive(Debug)]
enum Slot<T> {
    /// Replaces the base record of this key, in the base record's place.
    Replaced(Rec<T>),
    /// A record after every base record: a new key, or a removed base key that came back.
    Appended(Rec<T>),
    /// The base record of this key is gone.
    Removed,
}

impl<T> Clone for Slot<T> {
    fn clone(&self) -> Self {
        match self {
            Slot::Replaced(r) => Slot::Replaced(Arc::clone(r)),
            Slot::Appended(r) => Slot::Appended(Arc::clone(r)),
            Slot::Removed => Slot::Removed,
        }
    }
}

#[derive(Debug)]
pub struct Table<T> {
    base: Arc<Map<Rec<T>>>,
    overlay: Arc<Map<Slot<T>>>,
}

impl<T> Clone for Table<T> {
    fn clone(&self) -> Self {
        Table {
            base: Arc::clone(&self.base),
            overlay: Arc::clone(&self.overlay),
        }
    }
}

impl<T> Default for Table<T> {
    fn default() -> Self {
        Table {
            base: Arc::new(Map::default()),
            overlay: Arc::new(Map::default()),
        }
    }
}

impl<T: Clone + PartialEq> Table<T> {
    fn record(&self, key: &str) -> Option<&Rec<T>> {
        match self.overlay.get(key) {
            Some(Slot::Replaced(r) | Slot::Appended(r)) => Some(r),
            Some(Slot::Removed) => None,
            None => self.base.get(key),
        }
    }

    pub fn get(&self, key: &str) -> Option<&T> {
        self.record(key).map(|r| &r.value)
    }

    /// The record rendered with Python `json.dumps` defaults (a model dump as a tool
    /// result), cached with the record.
    pub fn dump(&self, key: &str) -> Option<Arc<str>>
    where
        T: Serialize,
    {
        let r = self.record(key)?;
        Some(
            r.dump
                .get_or_init(|| {
                    tauguard_core::pyjson::dumps_model(&r.value)
                        .expect("records render as JSON")
                        .into()
                })
                .clone(),
        )
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.record(key).is_some()
    }

    /// Mutable access to one record, copying that record (only) if shared.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut T> {
        if !self.contains_key(key) {
            return None;
        }
        if !self.overlay.contains_key(key) {
            let base = self.base.get(key)?.clone();
            Arc::make_mut(&mut self.overlay).insert(key.to_string(), Slot::Replaced(base));
        }
        match Arc::make_mut(&mut self.overlay).get_mut(key)? {
            Slot::Replaced(r) | Slot::Appended(r) => {
                let r = Arc::make_mut(r);
                // About to change: a rendering made earlier would be stale.
                r.dump.take();
                Some(&mut r.value)
            }
            Slot::Removed => None,
        }
    }

    /// Inserts or replaces a record; a new key goes to the end, as in a Python dict.
    pub fn insert(&mut self, key: String, record: T) {
        let record = Record::new(record);
        let overlay = Arc::make_mut(&mut self.overlay);
        match overlay.get_mut(&key) {
            Some(Slot::Replaced(r) | Slot::Appended(r)) => *r = record,
            Some(Slot::Removed) => {
                // Back after a removal: the end of the dict, behind earlier appends.
                overlay.shift_remove(&key);
                overlay.insert(key, Slot::Appended(record));
            }
            None if self.base.contains_key(&key) => {
                overlay.insert(key, Slot::Replaced(record));
            }
            None => {
                overlay.insert(key, Slot::Appended(record));
            }
        }
    }

    /// Removes a record, keeping the order of the others (Python `del d[k]`).
    pub fn remove(&mut self, key: &str) -> Option<T> {
        let current = self.record(key)?.clone();
        let overlay = Arc::make_mut(&mut self.overlay);
        overlay.shift_remove(key);
        if self.base.contains_key(key) {
            overlay.insert(key.to_string(), Slot::Removed);
        }
        Some(Arc::unwrap_or_clone(current).value)
    }

    /// Records in dict order: base records (replaced ones in place, removed ones skipped),
    /// then appended ones.
    fn entries(&self) -> impl Iterator<Item = (&String, &Rec<T>)> {
        let overlay = &self.overlay;
        let base = self.base.iter().filter_map(move |(k, v)| {
            if overlay.is_empty() {
                return Some((k, v));
            }
            match overlay.get(k.as_str()) {
                None => Some((k, v)),
                Some(Slot::Replaced(r)) => Some((k, r)),
                Some(Slot::Appended(_) | Slot::Removed) => None,
            }
        });
        let appended = overlay.iter().filter_map(|(k, s)| match s {
            Slot::Appended(r) => Some((k, r)),
            _ => None,
        });
        base.chain(appended)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &T)> {
        self.entries().map(|(k, v)| (k, &v.value))
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.entries().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.entries().map(|(_, v)| &v.value)
    }

    /// The base records in base order, as loaded: what a secondary index over the base (see
    /// [`Table::among`]) is built from.
    pub fn base_values(&self) -> impl Iterator<Item = &T> {
        self.base.values().map(|r| &r.value)
    }

    /// Whether both tables stand on the same base, so positions in one's base are positions
    /// in the other's.
    pub fn same_base(&self, other: &Table<T>) -> bool {
        Arc::ptr_eq(&self.base, &other.base)
    }

    /// The records at `positions` of the base (ascending) as they are now, with every record
    /// written since, in dict order. With positions selected by a property of the base
    /// records, this is a superset of the records that have the property now: a caller
    /// re-checks it, since a written record may have lost or gained it. It costs the
    /// positions and the overlay, not the table.
    pub fn among(&self, positions: &[usize]) -> Vec<&T> {
        let at = |i: usize| self.base.get_index(i);
        if self.overlay.is_empty() {
            return positions
                .iter()
                .filter_map(|&i| at(i))
                .map(|(_, r)| &r.value)
                .collect();
        }
        let mut replaced: Vec<(usize, &Rec<T>)> = self
            .overlay
            .iter()
            .filter_map(|(k, s)| match s {
                Slot::Replaced(r) => Some((self.base.get_index_of(k.as_str())?, r)),
                _ => None,
            })
            .collect();
        replaced.sort_unstable_by_key(|(i, _)| *i);
        let mut replaced = replaced.into_iter().peekable();
        let mut out = Vec::with_capacity(positions.len() + self.overlay.len());
        for &i in positions {
            let Some((k, r)) = at(i) else { continue };
            while let Some((_, w)) = replaced.next_if(|(j, _)| *j < i) {
                out.push(&w.value);
            }
            if !self.overlay.contains_key(k.as_str()) {
                out.push(&r.value);
            }
        }
        out.extend(replaced.map(|(_, w)| &w.value));
        out.extend(self.overlay.values().filter_map(|s| match s {
            Slot::Appended(r) => Some(&r.value),
            _ => None,
        }));
        out
    }

    pub fn len(&self) -> usize {
        let mut n = self.base.len();
        for (k, s) in self.overlay.iter() {
            match s {
                Slot::Replaced(_) => {}
                Slot::Removed => n -= 1,
                Slot::Appended(_) => n += usize::from(!self.base.contains_key(k.as_str())),
            }
        }
        n
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keys that may differ between two tables: every key when their bases differ, else the
    /// keys either has written.
    fn touched<'a>(&'a self, other: &'a Table<T>) -> Option<HashSet<&'a str>> {
        Arc::ptr_eq(&self.base, &other.base).then(|| {
            self.overlay
                .keys()
                .chain(other.overlay.keys())
                .map(String::as_str)
                .collect()
        })
    }

    fn same(a: Option<&Rec<T>>, b: Option<&Rec<T>>) -> bool {
        match (a, b) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a.value == b.value,
            (None, None) => true,
            _ => false,
        }
    }

    /// Keys whose record differs from `earlier` (added or changed: `Some`, removed: `None`),
    /// in this table's order followed by removed keys in `earlier`'s order.
    pub fn changed<'a>(&'a self, earlier: &'a Table<T>) -> Vec<(&'a str, Option<&'a T>)> {
        let touched = self.touched(earlier);
        let unchanged = Arc::ptr_eq(&self.overlay, &earlier.overlay)
            || touched.as_ref().is_some_and(HashSet::is_empty);
        if unchanged && Arc::ptr_eq(&self.base, &earlier.base) {
            return Vec::new();
        }
        let may_differ = |k: &str| touched.as_ref().is_none_or(|t| t.contains(k));
        let mut out = Vec::new();
        for (k, v) in self.entries() {
            if may_differ(k) && !Self::same(Some(v), earlier.record(k)) {
                out.push((k.as_str(), Some(&v.value)));
            }
        }
        for k in earlier.keys() {
            if may_differ(k) && !self.contains_key(k) {
                out.push((k.as_str(), None));
            }
        }
        out
    }

    /// Whether both tables hold equal records under equal keys (order ignored, as the
    /// sorted-key hash ignores it).
    pub fn same_records(&self, other: &Table<T>) -> bool {
        if Arc::ptr_eq(&self.base, &other.base) {
            // Only written keys can differ. A key both tables wrote is compared twice, which
            // costs less than collecting the keys into a set first.
            return self
                .overlay
                .keys()
                .chain(other.overlay.keys())
                .all(|k| Self::same(self.record(k), other.record(k)));
        }
        self.len() == other.len()
            && self
                .entries()
                .all(|(k, v)| Self::same(Some(v), other.record(k)))
    }
}

impl<T: Serialize + Clone + PartialEq> Serialize for Table<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.entries().map(|(k, v)| (k, &v.value)))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Table<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map: IndexMap<String, T> = IndexMap::deserialize(d)?;
        Ok(map.into_iter().collect())
    }
}

impl<T> FromIterator<(String, T)> for Table<T> {
    fn from_iter<I: IntoIterator<Item = (String, T)>>(iter: I) -> Self {
        Table {
            base: Arc::new(iter.into_iter().map(|(k, v)| (k, Record::new(v))).collect()),
            overlay: Arc::new(Map::default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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

    #[test]
    fn removed_keys_come_back_at_the_end() {
        let base: Table<i32> = [("a", 1), ("b", 2), ("c", 3)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let mut t = base.clone();
        t.insert("d".into(), 4);
        t.remove("a");
        t.insert("a".into(), 5);
        *t.get_mut("b").unwrap() = 6;
        let got: Vec<(&str, i32)> = t.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(got, vec![("b", 6), ("c", 3), ("d", 4), ("a", 5)]);
        assert_eq!(t.len(), 4);
        assert_eq!(
            t.changed(&base),
            vec![("b", Some(&6)), ("d", Some(&4)), ("a", Some(&5))]
        );
    }

    #[test]
    fn cached_dumps_follow_writes() {
        let base: Table<Vec<i32>> = [("a".to_string(), vec![1])].into_iter().collect();
        assert_eq!(base.dump("a").as_deref(), Some("[1]"));
        let mut t = base.clone();
        t.get_mut("a").unwrap().push(2);
        assert_eq!(t.dump("a").as_deref(), Some("[1, 2]"));
        // The record is now this table's own; a second write must not keep the old text.
        t.get_mut("a").unwrap().push(3);
        assert_eq!(t.dump("a").as_deref(), Some("[1, 2, 3]"));
        assert_eq!(
            base.dump("a").as_deref(),
            Some("[1]"),
            "the base keeps its own"
        );
        assert_eq!(t.dump("b"), None);
    }

    /// One edit of a table, applied both to a [`Table`] and to a plain ordered map.
    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8, i32),
        Remove(u8),
        Bump(u8),
        Snapshot,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..12, any::<i32>()).prop_map(|(k, v)| Op::Insert(k, v)),
            (0u8..12).prop_map(Op::Remove),
            (0u8..12).prop_map(Op::Bump),
            Just(Op::Snapshot),
        ]
    }

    proptest! {
        /// The overlay behaves exactly like a Python dict (an `IndexMap` with shift removal),
        /// and diffs against its base agree with a full comparison.
        #[test]
        fn behaves_like_an_ordered_map(start in prop::collection::vec(any::<i32>(), 0..8),
                                       ops in prop::collection::vec(op(), 0..40)) {
            let mut model: IndexMap<String, i32> =
                start.iter().enumerate().map(|(i, v)| (i.to_string(), *v)).collect();
            let base: Table<i32> = model.clone().into_iter().collect();
            let mut t = base.clone();
            let mut snapshots = Vec::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => {
                        model.insert(k.to_string(), v);
                        t.insert(k.to_string(), v);
                    }
                    Op::Remove(k) => {
                        prop_assert_eq!(model.shift_remove(&k.to_string()), t.remove(&k.to_string()));
                    }
                    Op::Bump(k) => {
                        if let Some(v) = model.get_mut(&k.to_string()) {
                            *v = v.wrapping_add(1);
                        }
                        if let Some(v) = t.get_mut(&k.to_string()) {
                            *v = v.wrapping_add(1);
                        }
                    }
                    Op::Snapshot => snapshots.push(t.clone()),
                }
                let got: Vec<(String, i32)> = t.iter().map(|(k, v)| (k.clone(), *v)).collect();
                let want: Vec<(String, i32)> = model.iter().map(|(k, v)| (k.clone(), *v)).collect();
                prop_assert_eq!(got, want);
                prop_assert_eq!(t.len(), model.len());
            }
            // Diffs over a shared base match diffs of independent copies.
            let flat = |x: &Table<i32>| -> Table<i32> {
                x.iter().map(|(k, v)| (k.clone(), *v)).collect()
            };
            let owned = |v: Vec<(&str, Option<&i32>)>| -> Vec<(String, Option<i32>)> {
                v.into_iter().map(|(k, v)| (k.to_string(), v.copied())).collect()
            };
            // A base index of even values, read through `among`, finds exactly the even
            // records a full scan finds, in the same order.
            let even = |v: &i32| v % 2 == 0;
            let positions: Vec<usize> = t
                .base_values()
                .enumerate()
                .filter_map(|(i, v)| even(v).then_some(i))
                .collect();
            let indexed: Vec<i32> = t.among(&positions).into_iter().copied().filter(even).collect();
            let scanned: Vec<i32> = t.values().copied().filter(even).collect();
            prop_assert_eq!(indexed, scanned);
            for s in snapshots.iter().chain(std::iter::once(&base)) {
                let (ft, fs) = (flat(&t), flat(s));
                prop_assert_eq!(owned(t.changed(s)), owned(ft.changed(&fs)));
                prop_assert_eq!(t.same_records(s), flat(&t).same_records(&flat(s)));
            }
        }
    }
}
