//! The airline read tools: record details, the airport list, flight status and the two
//! flight searches (whose one-stop date arithmetic is upstream's, quirks included).

use super::lookup;
use super::model::{Flight, FlightDate, FlightDb};
use super::pyops;
use crate::environment::ToolValue;
use crate::tooling::ToolError;
use indexmap::IndexMap;
use serde_json::{Map, Value, json};

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

impl Hit<'_> {
    /// `DirectFlight` dump with the given `date`.
    fn dump(&self, date: &Value) -> Value {
        let f = self.flight;
        let mut o = Map::new();
        o.insert("flight_number".into(), json!(f.flight_number));
        o.insert("origin".into(), json!(f.origin));
        o.insert("destination".into(), json!(f.destination));
        o.insert("status".into(), json!("available"));
        o.insert(
            "scheduled_departure_time_est".into(),
            json!(f.scheduled_departure_time_est),
        );
        o.insert(
            "scheduled_arrival_time_est".into(),
            json!(f.scheduled_arrival_time_est),
        );
        o.insert("date".into(), date.clone());
        o.insert("available_seats".into(), json!(self.seats));
        o.insert("prices".into(), json!(self.prices));
        Value::Object(o)
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
    Ok(ToolValue::Json(Value::Array(
        hits.iter().map(|h| h.dump(&Value::Null)).collect(),
    )))
}

pub fn search_onestop_flight(
    db: &FlightDb,
    origin: &Value,
    destination: &Value,
    date: &Value,
) -> Result<ToolValue, ToolError> {
    let mut results = Vec::new();
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
        let first_dump = first.dump(date);
        let leg_origin = Value::String(first.flight.destination.clone());
        for second in search(db, &date2, &leg_origin, destination, Some(arrival))? {
            results.push(Value::Array(vec![first_dump.clone(), second.dump(&date2)]));
        }
    }
    Ok(ToolValue::Json(Value::Array(results)))
}
