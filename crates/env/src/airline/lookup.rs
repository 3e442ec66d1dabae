//! Record lookups and argument conversions shared by the airline tools, with upstream's
//! error texts (`User <id> not found`, ...) and Python's behaviour on odd argument types.

use super::model::{FlightDate, FlightDb};
use super::validate::Ctx;
use crate::py;
use crate::py::arg_str;
use crate::table::Table;
use crate::tooling::ToolError;
use serde_json::Value;

/// `key in table` with Python semantics: the key as `&str` when present.
fn table_key<'a, T: Clone + PartialEq>(
    table: &Table<T>,
    key: &'a Value,
) -> Result<Option<&'a str>, ToolError> {
    Ok(py::dict_key(key)?.filter(|k| table.contains_key(k)))
}

/// `_get_user`.
pub(super) fn user<'a>(db: &FlightDb, user_id: &'a Value) -> Result<&'a str, ToolError> {
    table_key(&db.users, user_id)?
        .ok_or_else(|| ToolError::value(format!("User {} not found", arg_str(user_id))))
}

/// `_get_user` with a stored (string) id.
pub(super) fn user_by_id(db: &FlightDb, user_id: &str) -> Result<String, ToolError> {
    if db.users.contains_key(user_id) {
        Ok(user_id.to_string())
    } else {
        Err(ToolError::value(format!("User {user_id} not found")))
    }
}

/// `_get_reservation`.
pub(super) fn reservation<'a>(
    db: &FlightDb,
    reservation_id: &'a Value,
) -> Result<&'a str, ToolError> {
    table_key(&db.reservations, reservation_id)?.ok_or_else(|| {
        ToolError::value(format!("Reservation {} not found", arg_str(reservation_id)))
    })
}

/// `_get_flight`.
pub(super) fn flight<'a>(db: &FlightDb, flight_number: &'a Value) -> Result<&'a str, ToolError> {
    table_key(&db.flights, flight_number)?
        .ok_or_else(|| ToolError::value(format!("Flight {} not found", arg_str(flight_number))))
}

/// `_get_flight_instance`: flight lookup, then the date.
pub(super) fn flight_date<'d>(
    db: &'d FlightDb,
    flight_number: &Value,
    date: &Value,
) -> Result<&'d FlightDate, ToolError> {
    let key = flight(db, flight_number)?;
    let f = db.flights.get(key).expect("flight key was just found");
    match py::find_key(&f.dates, date)? {
        Some(d) => Ok(&*f.dates[d]),
        None => Err(ToolError::value(format!(
            "Flight {} not found on date {}",
            arg_str(flight_number),
            arg_str(date)
        ))),
    }
}

/// A list argument after upstream's conversion rule: validated models when every element
/// is an object (an empty iterable counts), otherwise the raw value untouched.
#[derive(Debug, Clone)]
pub(super) enum Listed<T> {
    Models(Vec<T>),
    Raw(Value),
}

/// `if all(isinstance(x, dict) for x in v): v = [Model(**x) for x in v]`.
pub(super) fn convert<T>(
    v: &Value,
    model: &str,
    f: fn(&Value, &mut Ctx) -> Option<T>,
) -> Result<Listed<T>, ToolError> {
    if !py::all_dicts(v)? {
        return Ok(Listed::Raw(v.clone()));
    }
    let mut out = Vec::new();
    for item in py::iterate(v)?.iter() {
        let mut cx = Ctx::new();
        let r = f(item, &mut cx);
        out.push(cx.finish(model, r).map_err(ToolError::validation)?);
    }
    Ok(Listed::Models(out))
}

/// The `AttributeError` a loop over unconverted items raises on its first item.
pub(super) fn first_item_error(raw: &Value, attr: &str) -> ToolError {
    match py::iterate(raw) {
        Ok(items) => match items.first() {
            Some(first) => py::no_attribute(py::type_name(first), attr),
            None => py::no_attribute(py::type_name(raw), attr),
        },
        Err(e) => e,
    }
}

/// `_get_new_reservation_id`.
pub(super) fn new_reservation_id(db: &FlightDb) -> Result<String, ToolError> {
    ["HATHAT", "HATHAU", "HATHAV"]
        .into_iter()
        .find(|id| !db.reservations.contains_key(id))
        .map(str::to_string)
        .ok_or_else(|| ToolError::value("Too many reservations"))
}

/// Certificate ids `send_certificate` tries, in order.
pub(super) const CERTIFICATE_IDS: [&str; 3] = [
    "certificate_3221322",
    "certificate_3221323",
    "certificate_3221324",
];

/// The fixed clock of the airline tools.
pub(super) const NOW: &str = "2024-05-15T15:00:00";
