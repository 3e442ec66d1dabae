//! `book_reservation`: the one tool that creates records, with upstream's exact check order
//! and its partially applied failure (a certificate listed twice).

use super::lookup::{self, Listed};
use super::model::{
    self, FlightDate, FlightDb, Passenger, Payment, PaymentMethod, Reservation, ReservationFlight,
};
use super::validate::{self as v, Ctx};
use crate::environment::{ToolResult, ToolValue};
use crate::py::{self, Num};
use crate::tooling::ToolError;
use serde_json::Value;

/// Arguments in signature order.
pub(super) struct BookArgs<'a> {
    pub user_id: &'a Value,
    pub origin: &'a Value,
    pub destination: &'a Value,
    pub flight_type: &'a Value,
    pub cabin: &'a Value,
    pub flights: &'a Value,
    pub passengers: &'a Value,
    pub payment_methods: &'a Value,
    pub total_baggages: &'a Value,
    pub nonfree_baggages: &'a Value,
    pub insurance: &'a Value,
}

/// What the `Reservation(...)` constructor validated.
struct Validated {
    origin: String,
    destination: String,
    flight_type: String,
    cabin: String,
    passengers: Vec<Passenger>,
    payments: Vec<Payment>,
    total_baggages: i64,
    nonfree_baggages: i64,
    insurance: String,
}

fn validate_reservation(
    a: &BookArgs<'_>,
    passengers: &Listed<Passenger>,
    payments: &Listed<Payment>,
) -> Result<Validated, ToolError> {
    let mut cx = Ctx::new();
    let origin = cx.at("origin", |cx| v::string(a.origin, cx));
    let destination = cx.at("destination", |cx| v::string(a.destination, cx));
    let flight_type = cx.at("flight_type", |cx| {
        v::literal(a.flight_type, model::FLIGHT_TYPES, cx)
    });
    let cabin = cx.at("cabin", |cx| v::literal(a.cabin, model::CABINS, cx));
    let passengers = match passengers {
        Listed::Models(list) => Some(list.clone()),
        Listed::Raw(raw) => cx.at("passengers", |cx| v::list(raw, cx, model::passenger)),
    };
    let payments = match payments {
        Listed::Models(list) => Some(list.clone()),
        Listed::Raw(raw) => cx.at("payment_history", |cx| v::list(raw, cx, model::payment)),
    };
    let total_baggages = cx.at("total_baggages", |cx| v::int(a.total_baggages, cx));
    let nonfree_baggages = cx.at("nonfree_baggages", |cx| v::int(a.nonfree_baggages, cx));
    let insurance = cx.at("insurance", |cx| {
        v::literal(a.insurance, model::INSURANCE, cx)
    });
    let built = (|| {
        Some(Validated {
            origin: origin?,
            destination: destination?,
            flight_type: flight_type?,
            cabin: cabin?,
            passengers: passengers?,
            payments: payments?,
            total_baggages: total_baggages?,
            nonfree_baggages: nonfree_baggages?,
            insurance: insurance?,
        })
    })();
    cx.finish("Reservation", built)
        .map_err(ToolError::validation)
}

pub(super) fn book_reservation(db: &mut FlightDb, a: &BookArgs<'_>) -> ToolResult {
    let flights = lookup::convert(a.flights, "FlightInfo", model::flight_info)?;
    let passengers = lookup::convert(a.passengers, "Passenger", model::passenger)?;
    let payments = lookup::convert(a.payment_methods, "Payment", model::payment)?;
    let user_key = lookup::user(db, a.user_id)?.to_string();
    let reservation_id = lookup::new_reservation_id(db)?;
    let r = validate_reservation(a, &passengers, &payments)?;
    let n = r.passengers.len() as i128;

    let flight_infos = match flights {
        Listed::Models(list) => list,
        Listed::Raw(raw) => return Err(lookup::first_item_error(&raw, "flight_number")),
    };
    let (segments, mut total) = price_flights(db, &flight_infos, &r.cabin, n)?;
    if r.insurance == "yes" {
        total += 30 * n;
    }
    // The fee uses the raw argument: a string repeats itself and the addition fails.
    let total = match Num::of(a.nonfree_baggages) {
        Some(bags) => Num::Int(total).add(Num::Int(50).mul(bags)),
        None => {
            return Err(ToolError::type_error(format!(
                "unsupported operand type(s) for +=: 'int' and '{}'",
                py::type_name(a.nonfree_baggages)
            )));
        }
    };

    check_payments(db, &user_key, &r.payments, total)?;
    charge_payments(db, &user_key, &r.payments)?;
    take_seats(db, &segments, &r.cabin, n);
    let reservation = Reservation {
        reservation_id: reservation_id.clone(),
        user_id: user_key.clone(),
        origin: r.origin,
        destination: r.destination,
        flight_type: r.flight_type,
        cabin: Value::String(r.cabin),
        flights: std::sync::Arc::new(segments),
        passengers: std::sync::Arc::new(model::passengers_value(&r.passengers)),
        payment_history: r.payments,
        created_at: lookup::NOW.to_string(),
        total_baggages: Value::from(r.total_baggages),
        nonfree_baggages: Value::from(r.nonfree_baggages),
        insurance: r.insurance,
        status: None,
    };
    let out = ToolValue::model(&reservation);
    db.reservations.insert(reservation_id.clone(), reservation);
    if let Some(u) = db.users.get_mut(&user_key) {
        u.reservations.push(reservation_id);
    }
    Ok(out)
}

/// Each flight's segment at the cabin's price on its date, checking the date is available
/// with enough seats; and the fare total for `n` passengers.
fn price_flights(
    db: &FlightDb,
    flight_infos: &[model::FlightInfo],
    cabin: &str,
    n: i128,
) -> Result<(Vec<ReservationFlight>, i128), ToolError> {
    let mut segments = Vec::new();
    let mut total: i128 = 0;
    let cabin = Value::String(cabin.to_string());
    for fi in flight_infos {
        let segment = price_segment(db, fi, &cabin, n)?;
        total += i128::from(segment.price) * n;
        segments.push(segment);
    }
    Ok((segments, total))
}

/// One flight of a booking or of a flight update as a segment at `cabin`'s price on its
/// date, checking that the date is available with seats for `n` passengers.
pub(super) fn price_segment(
    db: &FlightDb,
    fi: &model::FlightInfo,
    cabin: &Value,
    n: i128,
) -> Result<ReservationFlight, ToolError> {
    let number = Value::String(fi.flight_number.clone());
    let key = lookup::flight(db, &number)?;
    let flight = db.flights.get(key).expect("flight key was just found");
    let date = lookup::flight_date(db, &number, &Value::String(fi.date.clone()))?;
    let FlightDate::Available {
        available_seats,
        prices,
    } = date
    else {
        return Err(ToolError::value(format!(
            "Flight {} not available on date {}",
            fi.flight_number, fi.date
        )));
    };
    if i128::from(*py::index(available_seats, cabin)?) < n {
        return Err(ToolError::value(format!(
            "Not enough seats on flight {}",
            fi.flight_number
        )));
    }
    Ok(ReservationFlight {
        flight_number: fi.flight_number.clone(),
        origin: flight.origin.clone(),
        destination: flight.destination.clone(),
        date: fi.date.clone(),
        price: *py::index(prices, cabin)?,
    })
}

/// Every payment method exists and covers its amount, and the amounts add up to `total`.
fn check_payments(
    db: &FlightDb,
    user_key: &str,
    payments: &[Payment],
    total: Num,
) -> Result<(), ToolError> {
    let user = db.users.get(user_key).expect("user key was just found");
    for p in payments {
        let method = user.payment_methods.get(&p.payment_id).ok_or_else(|| {
            ToolError::value(format!("Payment method {} not found", p.payment_id))
        })?;
        if let Some(balance) = method.balance()
            && Num::Float(balance).cmp(Num::Int(i128::from(p.amount)))
                == Some(std::cmp::Ordering::Less)
        {
            return Err(ToolError::value(format!(
                "Not enough balance in payment method {}",
                p.payment_id
            )));
        }
    }
    let paid: i128 = payments.iter().map(|p| i128::from(p.amount)).sum();
    if Num::Int(paid).cmp(total) != Some(std::cmp::Ordering::Equal) {
        return Err(ToolError::value(format!(
            "Payment amount does not add up, total price is {}, but paid {paid}",
            total.py_str()
        )));
    }

    Ok(())
}

/// Takes the payments: gift cards are debited, certificates used up. Upstream's order: a
/// certificate listed twice fails after the first is removed.
fn charge_payments(
    db: &mut FlightDb,
    user_key: &str,
    payments: &[Payment],
) -> Result<(), ToolError> {
    let user = db.users.get_mut(user_key).expect("user key was just found");
    for p in payments {
        match user.payment_methods.get_mut(&p.payment_id) {
            None => return Err(ToolError::key(&Value::String(p.payment_id.clone()))),
            Some(PaymentMethod::GiftCard { amount, .. }) => amount.0 -= p.amount as f64,
            Some(PaymentMethod::Certificate { .. }) => {
                user.payment_methods.shift_remove(&p.payment_id);
            }
            Some(PaymentMethod::CreditCard { .. }) => {}
        }
    }
    Ok(())
}

/// The booked seats leave each flight's availability.
fn take_seats(db: &mut FlightDb, segments: &[ReservationFlight], cabin: &str, n: i128) {
    let taken = i64::try_from(n).unwrap_or(i64::MAX);
    for seg in segments {
        if let Some(f) = db.flights.get_mut(&seg.flight_number)
            && let Some(FlightDate::Available {
                available_seats, ..
            }) = f
                .dates
                .get_mut(seg.date.as_str())
                .map(std::sync::Arc::make_mut)
            && let Some(seats) = available_seats.get_mut(cabin)
        {
            *seats = seats.saturating_sub(taken);
        }
    }
}
