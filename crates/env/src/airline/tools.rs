//! Dispatch of the airline toolkit: finds a declared tool, binds its keyword arguments
//! Python-style and runs its body (`booking`, `updates`, `queries`).

use super::booking::{self, BookArgs};
use super::defs::{OWNER, TOOLS};
use super::model::FlightDb;
use super::{queries, updates};
use crate::environment::{ToolResult, ToolValue};
use crate::tooling::bind_filled;
use serde_json::{Map, Value};

/// Calls a toolkit method by name with raw keyword arguments.
pub fn call(db: &mut FlightDb, name: &str, args: &Map<String, Value>) -> ToolResult {
    let a = bind_filled(OWNER, TOOLS, name, args)?;
    match name {
        "book_reservation" => booking::book_reservation(
            db,
            &BookArgs {
                user_id: a[0],
                origin: a[1],
                destination: a[2],
                flight_type: a[3],
                cabin: a[4],
                flights: a[5],
                passengers: a[6],
                payment_methods: a[7],
                total_baggages: a[8],
                nonfree_baggages: a[9],
                insurance: a[10],
            },
        ),
        "calculate" => crate::calculate::calculate_arg(a[0]).map(ToolValue::Text),
        "cancel_reservation" => updates::cancel_reservation(db, a[0]),
        "get_reservation_details" => queries::get_reservation_details(db, a[0]),
        "get_user_details" => queries::get_user_details(db, a[0]),
        "list_all_airports" => Ok(queries::list_all_airports()),
        "search_direct_flight" => queries::search_direct_flight(db, a[0], a[1], a[2]),
        "search_onestop_flight" => queries::search_onestop_flight(db, a[0], a[1], a[2]),
        "send_certificate" => updates::send_certificate(db, a[0], a[1]),
        "transfer_to_human_agents" => Ok(ToolValue::Text("Transfer successful".into())),
        "update_reservation_baggages" => {
            updates::update_reservation_baggages(db, a[0], a[1], a[2], a[3])
        }
        "update_reservation_flights" => {
            updates::update_reservation_flights(db, a[0], a[1], a[2], a[3])
        }
        "update_reservation_passengers" => updates::update_reservation_passengers(db, a[0], a[1]),
        "get_flight_status" => queries::get_flight_status(db, a[0], a[1]),
        other => unreachable!("tool `{other}` is declared but not dispatched"),
    }
}
