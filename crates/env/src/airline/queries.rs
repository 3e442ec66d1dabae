//! The airline read tools: record details, the airport list, flight status and the two
//! flight searches (whose one-stop date arithmetic is upstream's, quirks included).

use super::lookup;
use super::model::{Flight, FlightDate, FlightDb};
use crate::environment::{ToolResult, ToolValue};
use crate::py;
use crate::tooling::ToolError;
use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Value, json};

pub(super) fn get_reservation_details(db: &FlightDb, reservation_id: &Value) -> ToolResult {
    let key = lookup::reservation(db, reservation_id)?;
    Ok(ToolValue::cached(db.reservations.dump(key)))
}

pub(super) fn get_user_details(db: &FlightDb, user_id: &Value) -> ToolResult {
    let key = lookup::user(db, user_id)?;
    Ok(ToolValue::cached(db.users.dump(key)))
}

const AIRPORTS: &[(&str, &str)] = &[
    ("SFO", "San Francisco"),
    ("JFK", "New York"),
    ("LAX", "Los Angeles"),
    ("ORD", "Chicago"),
    ("DFW", "Dallas"),
    ("DEN", "Denver"),
    ("SEA", "Seattle"),
    ("ATL", "Atlanta"),
    ("MIA", "Miami"),
    ("BOS", "Boston"),
    ("PHX", "Phoenix"),
    ("IAH", "Houston"),
    ("LAS", "Las Vegas"),
    ("MCO", "Orlando"),
    ("EWR", "Newark"),
    ("CLT", "Charlotte"),
    ("MSP", "Minneapolis"),
    ("DTW", "Detroit"),
    ("PHL", "Philadelphia"),
    ("LGA", "LaGuardia"),
];

pub(super) fn list_all_airports() -> ToolValue {
    ToolValue::Json(Value::Array(
        AIRPORTS
            .iter()
            .map(|(iata, city)| json!({"iata": iata, "city": city}))
            .collect(),
    ))
}

pub(super) fn get_flight_status(db: &FlightDb, flight_number: &Value, date: &Value) -> ToolResult {
    Ok(ToolValue::Text(
        lookup::flight_date(db, flight_number, date)?
            .status()
            .to_string(),
    ))
}

/// One available flight-date found by a search.
struct Hit<'d> {
    flight: &'d Flight,
    seats: &'d IndexMap<String, i64>,
    prices: &'d IndexMap<String, i64>,
}

/// A `DirectFlight` as upstream dumps it, fields in its order; rendered straight to text.
#[derive(Serialize)]
struct DirectFlight<'d> {
    flight_number: &'d str,
    origin: &'d str,
    destination: &'d str,
    status: &'static str,
    scheduled_departure_time_est: &'d str,
    scheduled_arrival_time_est: &'d str,
    date: &'d Value,
    available_seats: &'d IndexMap<String, i64>,
    prices: &'d IndexMap<String, i64>,
}

impl<'d> Hit<'d> {
    /// `DirectFlight` dump with the given `date`.
    fn dump(&self, date: &'d Value) -> DirectFlight<'d> {
        let f = self.flight;
        DirectFlight {
            flight_number: &f.flight_number,
            origin: &f.origin,
            destination: &f.destination,
            status: "available",
            scheduled_departure_time_est: &f.scheduled_departure_time_est,
            scheduled_arrival_time_est: &f.scheduled_arrival_time_est,
            date,
            available_seats: self.seats,
            prices: self.prices,
        }
    }
}

/// Python `==` between a stored string and a raw argument.
fn matches(stored: &str, arg: &Value) -> bool {
    arg.as_str() == Some(stored)
}

/// `_search_direct_flight`: a `None` (JSON null) origin or destination does not filter.
fn search<'d>(
    db: &'d FlightDb,
    date: &Value,
    origin: &Value,
    destination: &Value,
    leave_after: Option<&str>,
) -> Result<Vec<Hit<'d>>, ToolError> {
    // The route index yields a superset of the flights the filters below keep, in table
    // order; anything but string airports is left to the full scan.
    let indexed = match (origin, destination) {
        (Value::String(o), Value::Null) => db.routes.candidates(&db.flights, o, None),
        (Value::String(o), Value::String(d)) => db.routes.candidates(&db.flights, o, Some(d)),
        _ => None,
    };
    let candidates: Box<dyn Iterator<Item = &Flight>> = match indexed {
        Some(flights) => Box::new(flights.into_iter()),
        None => Box::new(db.flights.values()),
    };
    let mut out = Vec::new();
    for flight in candidates {
        if !origin.is_null() && !matches(&flight.origin, origin) {
            continue;
        }
        if !destination.is_null() && !matches(&flight.destination, destination) {
            continue;
        }
        let Some(d) = py::find_key(&flight.dates, date)? else {
            continue;
        };
        let FlightDate::Available {
            available_seats,
            prices,
        } = &*flight.dates[d]
        else {
            continue;
        };
        if leave_after.is_some_and(|t| flight.scheduled_departure_time_est.as_str() < t) {
            continue;
        }
        out.push(Hit {
            flight,
            seats: available_seats,
            prices,
        });
    }
    Ok(out)
}

pub(super) fn search_direct_flight(
    db: &FlightDb,
    origin: &Value,
    destination: &Value,
    date: &Value,
) -> ToolResult {
    let hits = search(db, date, origin, destination, None)?;
    Ok(ToolValue::model(
        &hits
            .iter()
            .map(|h| h.dump(&Value::Null))
            .collect::<Vec<_>>(),
    ))
}

pub(super) fn search_onestop_flight(
    db: &FlightDb,
    origin: &Value,
    destination: &Value,
    date: &Value,
) -> ToolResult {
    let mut results = Vec::new();
    let value = |d: DirectFlight<'_>| serde_json::to_value(d).expect("flight dumps are JSON");
    for first in search(db, date, origin, &Value::Null, None)? {
        let arrival = first.flight.scheduled_arrival_time_est.as_str();
        let date2 = if arrival.contains("+1") {
            // A first leg was found, so `date` is one of the flight's date keys: a string.
            let text = date.as_str().unwrap_or_default();
            let chars: Vec<char> = text.chars().collect();
            let tail: String = chars[chars.len().saturating_sub(2)..].iter().collect();
            Value::String(format!("2024-05-{}", py::parse_int(&tail)? + 1))
        } else {
            date.clone()
        };
        let first_dump = value(first.dump(date));
        let leg_origin = Value::String(first.flight.destination.clone());
        for second in search(db, &date2, &leg_origin, destination, Some(arrival))? {
            results.push(Value::Array(vec![
                first_dump.clone(),
                value(second.dump(&date2)),
            ]));
        }
    }
    Ok(ToolValue::Json(Value::Array(results)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const AIRPORTS: [&str; 5] = ["JFK", "ORD", "SFO", "LAX", "BOS"];
    const DATES: [&str; 3] = ["2024-05-01", "2024-05-02", "2024-05-03"];

    /// 40 flights over five airports, each available on some dates and cancelled on others.
    fn db() -> FlightDb {
        let flights: serde_json::Map<String, Value> = (0..40)
            .map(|i| {
                let number = format!("HAT{i:03}");
                let dates: serde_json::Map<String, Value> = DATES
                    .iter()
                    .enumerate()
                    .map(|(j, d)| {
                        let state = if (i + j) % 3 == 0 {
                            json!({"status": "cancelled"})
                        } else {
                            let cabins = json!({"basic_economy": 5, "economy": 5, "business": 5});
                            json!({"status": "available", "available_seats": cabins, "prices": cabins})
                        };
                        (d.to_string(), state)
                    })
                    .collect();
                let flight = json!({
                    "flight_number": number,
                    "origin": AIRPORTS[i % 5],
                    "destination": AIRPORTS[(i * 3 + 1) % 5],
                    "scheduled_departure_time_est": "07:00:00",
                    "scheduled_arrival_time_est": "09:00:00",
                    "dates": dates,
                });
                (number, flight)
            })
            .collect();
        FlightDb::validate(&json!({"flights": flights, "users": {}, "reservations": {}})).unwrap()
    }

    /// What `search` must return: every flight, in table order, through the filters.
    fn scan<'d>(db: &'d FlightDb, date: &str, origin: &str, dest: Option<&str>) -> Vec<&'d str> {
        db.flights
            .values()
            .filter(|f| f.origin == origin && dest.is_none_or(|d| f.destination == d))
            .filter(|f| {
                matches!(
                    f.dates.get(date).map(|d| &**d),
                    Some(FlightDate::Available { .. })
                )
            })
            .map(|f| f.flight_number.as_str())
            .collect()
    }

    fn found<'d>(db: &'d FlightDb, date: &str, origin: &str, dest: Option<&str>) -> Vec<&'d str> {
        let dest = dest.map_or(Value::Null, |d| Value::String(d.into()));
        search(
            db,
            &Value::String(date.into()),
            &Value::String(origin.into()),
            &dest,
            None,
        )
        .unwrap()
        .iter()
        .map(|h| h.flight.flight_number.as_str())
        .collect()
    }

    #[test]
    fn indexed_searches_find_what_a_full_scan_finds_after_writes() {
        let loaded = db();
        let mut db = loaded.clone();
        // Writes the index cannot know of: a flight leaves from elsewhere, one flies somewhere
        // else, one is gone, one is new, one was removed and is back, one lost a date.
        let other = db.flights.get("HAT001").unwrap().clone();
        db.flights.get_mut("HAT000").unwrap().origin = "ZZZ".into();
        db.flights.get_mut("HAT007").unwrap().destination = "JFK".into();
        db.flights.remove("HAT012");
        db.flights.insert(
            "NEW001".into(),
            Flight {
                flight_number: "NEW001".into(),
                ..other
            },
        );
        let back = db.flights.remove("HAT005").unwrap();
        db.flights.insert("HAT005".into(), back);
        db.flights
            .get_mut("HAT010")
            .unwrap()
            .dates
            .shift_remove(DATES[1]);
        let mut nonempty = 0;
        for table in [&loaded, &db] {
            for date in DATES {
                for o in AIRPORTS.iter().chain(&["ZZZ"]) {
                    for d in AIRPORTS.iter().map(|d| Some(*d)).chain([None]) {
                        let got = found(table, date, o, d);
                        assert_eq!(got, scan(table, date, o, d), "{o} → {d:?} on {date}");
                        nonempty += usize::from(!got.is_empty());
                    }
                }
            }
        }
        assert!(nonempty > 30, "only {nonempty} searches found flights");
        assert_eq!(found(&db, DATES[1], "ZZZ", None), ["HAT000"]);
        assert_eq!(found(&db, DATES[1], "ORD", None).last(), Some(&"NEW001"));
    }
}
