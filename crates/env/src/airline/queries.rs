//! The airline read tools: record details, the airport list, flight status and the two
//! flight searches (whose one-stop date arithmetic is upstream's, quirks included).

use super::lookup;
use super::model::{Flight, FlightDate, FlightDb};
use super::pyops;
use crate::environment::ToolValue;
use crate::tooling::ToolError;
use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Value, json};

pub fn get_reservation_details(
    db: &FlightDb,
    reservation_id: &Value,
) -> Result<ToolValue, ToolError> {
    let key = lookup::reservation(db, reservation_id)?;
    Ok(ToolValue::cached(db.reservations.dump(key)))
}

pub fn get_user_details(db: &FlightDb, user_id: &Value) -> Result<ToolValue, ToolError> {
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

pub fn list_all_airports() -> ToolValue {
    ToolValue::Json(Value::Array(
        AIRPORTS
            .iter()
            .map(|(iata, city)| json!({"iata": iata, "city": city}))
            .collect(),
    ))
}

pub fn get_flight_status(
    db: &FlightDb,
    flight_number: &Value,
    date: &Value,
) -> Result<ToolValue, ToolError> {
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
    let mut out = Vec::new();
    for flight in db.flights.values() {
        if !origin.is_null() && !matches(&flight.origin, origin) {
            continue;
        }
        if !destination.is_null() && !matches(&flight.destination, destination) {
            continue;
        }
        let Some(d) = pyops::find_key(&flight.dates, date)? else {
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

pub fn search_direct_flight(
    db: &FlightDb,
    origin: &Value,
    destination: &Value,
    date: &Value,
) -> Result<ToolValue, ToolError> {
    let hits = search(db, date, origin, destination, None)?;
    Ok(ToolValue::model(
        &hits
            .iter()
            .map(|h| h.dump(&Value::Null))
            .collect::<Vec<_>>(),
    ))
}

pub fn search_onestop_flight(
    db: &FlightDb,
    origin: &Value,
    destination: &Value,
    date: &Value,
) -> Result<ToolValue, ToolError> {
    let mut results = Vec::new();
    let value = |d: DirectFlight<'_>| serde_json::to_value(d).expect("flight dumps are JSON");
    for first in search(db, date, origin, &Value::Null, None)? {
        let arrival = first.flight.scheduled_arrival_time_est.as_str();
        let date2 = if arrival.contains("+1") {
            // A first leg was found, so `date` is one of the flight's date keys: a string.
            let text = date.as_str().unwrap_or_default();
            let chars: Vec<char> = text.chars().collect();
            let tail: String = chars[chars.len().saturating_sub(2)..].iter().collect();
            Value::String(format!("2024-05-{}", pyops::parse_int(&tail)? + 1))
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
