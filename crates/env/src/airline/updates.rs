//! The airline write tools other than booking: cancellation, the three reservation updates
//! with their shared payment routine, and certificates. Upstream's quirks are reproduced on
//! purpose: repeated cancellation refunds again, raw arguments are stored unvalidated, and
//! the payment routine runs (and can fail) even for a zero-cost change.

use super::lookup::{self, Listed};
use super::model::{self, FlightDb, Float, Payment, PaymentMethod, Reservation, ReservationFlight};
use super::validate::{self as v, Ctx};
use crate::environment::{ToolResult, ToolValue};
use crate::py::arg_str;
use crate::py::{self, Num};
use crate::tooling::ToolError;
use serde_json::Value;
use std::cmp::Ordering;
use tauguard_core::pyjson::py_eq;

fn reservation_dump(db: &FlightDb, key: &str) -> ToolValue {
    ToolValue::cached(db.reservations.dump(key))
}

pub(super) fn cancel_reservation(db: &mut FlightDb, reservation_id: &Value) -> ToolResult {
    let key = lookup::reservation(db, reservation_id)?.to_string();
    let r = db
        .reservations
        .get_mut(&key)
        .expect("reservation key was just found");
    let mut refunds = Vec::with_capacity(r.payment_history.len());
    for p in &r.payment_history {
        let amount = p
            .amount
            .checked_neg()
            .ok_or_else(|| too_big_int(p.amount))?;
        refunds.push(Payment {
            payment_id: p.payment_id.clone(),
            amount,
        });
    }
    r.payment_history.extend(refunds);
    r.status = Some("cancelled".to_string());
    Ok(reservation_dump(db, &key))
}

fn too_big_int(v: i64) -> ToolError {
    ToolError {
        class: "OverflowError",
        message: format!("integer {v} cannot be negated within 64 bits"),
    }
}

/// `_payment_for_update`: checks the method, moves a gift card's balance by `amount` (a
/// negative amount credits it), and yields the payment record for a non-zero amount.
fn payment_for_update(
    db: &mut FlightDb,
    user_key: &str,
    payment_id: &Value,
    amount: Num,
) -> Result<Option<Payment>, ToolError> {
    let user = db.users.get(user_key).expect("user key was just found");
    let Some(pid) = py::find_key(&user.payment_methods, payment_id)? else {
        return Err(ToolError::value("Payment method not found"));
    };
    match &user.payment_methods[pid] {
        PaymentMethod::Certificate { .. } => {
            return Err(ToolError::value(
                "Certificate cannot be used to update reservation",
            ));
        }
        PaymentMethod::GiftCard {
            amount: balance, ..
        } if Num::Float(balance.0).cmp(amount) == Some(Ordering::Less) => {
            return Err(ToolError::value("Gift card balance is not enough"));
        }
        _ => {}
    }
    let user = db.users.get_mut(user_key).expect("user key was just found");
    if let Some(PaymentMethod::GiftCard {
        amount: balance, ..
    }) = user.payment_methods.get_mut(pid)
    {
        balance.0 -= amount.as_f64();
    }
    if amount.is_zero() {
        return Ok(None);
    }
    let mut cx = Ctx::new();
    let value = amount.to_value().unwrap_or(Value::Null);
    let int = cx.at("amount", |cx| match amount {
        Num::Int(i) => i64::try_from(i).ok().or_else(|| {
            cx.fail(
                "int_parsing_size",
                "Unable to parse input string as an integer, exceeded maximum size",
                &value,
            );
            None
        }),
        Num::Float(f) => v::float_to_int(f, &value, cx),
    });
    let amount = cx.finish("Payment", int).map_err(ToolError::validation)?;
    Ok(Some(Payment {
        payment_id: pid.to_string(),
        amount,
    }))
}

/// What a baggage or flight update reads first: the reservation (its key and record) and
/// the key of the user who holds it.
fn reservation_and_user<'d>(
    db: &'d FlightDb,
    reservation_id: &Value,
) -> Result<(String, &'d Reservation, String), ToolError> {
    let key = lookup::reservation(db, reservation_id)?.to_string();
    let res = db
        .reservations
        .get(&key)
        .expect("reservation key was just found");
    let user_key = lookup::user_by_id(db, &res.user_id)?;
    Ok((key, res, user_key))
}

/// What a baggage or flight update does last before its own writes: the payment routine
/// for `amount`, its record (if any) appended to the reservation's history, and the
/// reservation handed back for the rest.
fn charge<'d>(
    db: &'d mut FlightDb,
    key: &str,
    user_key: &str,
    payment_id: &Value,
    amount: Num,
) -> Result<&'d mut Reservation, ToolError> {
    let payment = payment_for_update(db, user_key, payment_id, amount)?;
    let r = db
        .reservations
        .get_mut(key)
        .expect("reservation key was just found");
    r.payment_history.extend(payment);
    Ok(r)
}

pub(super) fn update_reservation_baggages(
    db: &mut FlightDb,
    reservation_id: &Value,
    total_baggages: &Value,
    nonfree_baggages: &Value,
    payment_id: &Value,
) -> ToolResult {
    let (key, res, user_key) = reservation_and_user(db, reservation_id)?;
    let extra = py::sub(nonfree_baggages, &res.nonfree_baggages)?;
    let cost = Num::Int(50).mul(Num::Int(0).max(extra));
    let r = charge(db, &key, &user_key, payment_id, cost)?;
    r.total_baggages = total_baggages.clone();
    r.nonfree_baggages = nonfree_baggages.clone();
    Ok(reservation_dump(db, &key))
}

pub(super) fn update_reservation_flights(
    db: &mut FlightDb,
    reservation_id: &Value,
    cabin: &Value,
    flights: &Value,
    payment_id: &Value,
) -> ToolResult {
    let flights = lookup::convert(flights, "FlightInfo", model::flight_info)?;
    let (key, res, user_key) = reservation_and_user(db, reservation_id)?;
    let n = py::len(&res.passengers)? as i128;
    let infos = match flights {
        Listed::Models(list) => list,
        Listed::Raw(raw) => return Err(lookup::first_item_error(&raw, "flight_number")),
    };
    let mut total: i128 = 0;
    let mut segments: Vec<ReservationFlight> = Vec::new();
    for fi in &infos {
        let kept = res.flights.iter().find(|rf| {
            rf.flight_number == fi.flight_number && rf.date == fi.date && py_eq(cabin, &res.cabin)
        });
        if let Some(rf) = kept {
            total += i128::from(rf.price) * n;
            segments.push(rf.clone());
            continue;
        }
        let segment = super::booking::price_segment(db, fi, cabin, n)?;
        total += i128::from(segment.price) * n;
        segments.push(segment);
    }
    total -= res
        .flights
        .iter()
        .map(|f| i128::from(f.price))
        .sum::<i128>()
        * n;
    let r = charge(db, &key, &user_key, payment_id, Num::Int(total))?;
    r.flights = std::sync::Arc::new(segments);
    r.cabin = cabin.clone();
    Ok(reservation_dump(db, &key))
}

pub(super) fn update_reservation_passengers(
    db: &mut FlightDb,
    reservation_id: &Value,
    passengers: &Value,
) -> ToolResult {
    let passengers = lookup::convert(passengers, "Passenger", model::passenger)?;
    let key = lookup::reservation(db, reservation_id)?.to_string();
    let r = db
        .reservations
        .get_mut(&key)
        .expect("reservation key was just found");
    let (count, stored) = match passengers {
        Listed::Models(list) => (list.len(), model::passengers_value(&list)),
        Listed::Raw(raw) => (py::len(&raw)?, raw),
    };
    if count != py::len(&r.passengers)? {
        return Err(ToolError::value("Number of passengers does not match"));
    }
    r.passengers = std::sync::Arc::new(stored);
    Ok(reservation_dump(db, &key))
}

pub(super) fn send_certificate(db: &mut FlightDb, user_id: &Value, amount: &Value) -> ToolResult {
    let key = lookup::user(db, user_id)?.to_string();
    let user = db.users.get_mut(&key).expect("user key was just found");
    let Some(id) = lookup::CERTIFICATE_IDS
        .into_iter()
        .find(|id| !user.payment_methods.contains_key(*id))
    else {
        return Err(ToolError::value("Too many certificates"));
    };
    let mut cx = Ctx::new();
    let value = cx.at("amount", |cx| v::float(amount, cx));
    let value = cx
        .finish("Certificate", value)
        .map_err(ToolError::validation)?;
    user.payment_methods.insert(
        id.to_string(),
        PaymentMethod::Certificate {
            id: id.to_string(),
            amount: Float(value),
        },
    );
    Ok(ToolValue::Text(format!(
        "Certificate {id} added to user {} with amount {}.",
        arg_str(user_id),
        arg_str(amount)
    )))
}
