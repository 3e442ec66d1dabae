//! Where flights go: an index of the loaded flight table by origin, and by origin and
//! destination, so a search reads the few flights it can find instead of every flight.
//!
//! The index holds positions in the table's base (the loaded records). Records written since
//! load come through [`Table::among`] too, and the search re-checks origin and destination
//! on everything it gets, so the result is the full scan's, in the same order.

use super::model::Flight;
use crate::table::Table;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// Airport codes are the project's data, never attacker-chosen: a fast hasher is safe here.
type Map<V> = HashMap<String, V, foldhash::fast::FixedState>;

/// Built on first use and shared by every environment cloned from the database that made it.
#[derive(Debug, Clone, Default)]
pub struct Routes(Arc<OnceLock<Index>>);

#[derive(Debug)]
struct Index {
    /// The table whose base the positions refer to.
    flights: Table<Flight>,
    /// Origin → (positions of its flights, destination → positions).
    by_origin: Map<(Vec<usize>, Map<Vec<usize>>)>,
}

impl Index {
    fn build(flights: &Table<Flight>) -> Index {
        let mut by_origin: Map<(Vec<usize>, Map<Vec<usize>>)> = Map::default();
        for (i, f) in flights.base_values().enumerate() {
            let (all, by_dest) = by_origin.entry(f.origin.clone()).or_default();
            all.push(i);
            by_dest.entry(f.destination.clone()).or_default().push(i);
        }
        Index {
            flights: flights.clone(),
            by_origin,
        }
    }
}

impl Routes {
    /// The flights of `flights` that may leave `origin` (for `destination`, when given), in
    /// table order: a superset of those that do, to be filtered by the caller. `None` when
    /// `flights` does not stand on the base this index was built for; the caller scans.
    pub fn candidates<'t>(
        &self,
        flights: &'t Table<Flight>,
        origin: &str,
        destination: Option<&str>,
    ) -> Option<Vec<&'t Flight>> {
        let index = self.0.get_or_init(|| Index::build(flights));
        if !index.flights.same_base(flights) {
            return None;
        }
        let positions = index
            .by_origin
            .get(origin)
            .and_then(|(all, by_dest)| match destination {
                None => Some(all),
                Some(d) => by_dest.get(d),
            });
        Some(flights.among(positions.map_or(&[], Vec::as_slice)))
    }
}
