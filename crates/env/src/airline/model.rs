//! The airline database model (`FlightDB` upstream), its validation and its dump.
//!
//! Field order is upstream's dump order (the hash sorts keys, tool outputs do not). Nullable
//! fields are always dumped. Four reservation fields hold raw JSON because upstream assigns
//! tool arguments to them without validation (`cabin`, `passengers`, `total_baggages`,
//! `nonfree_baggages`): whatever the agent sent is what gets dumped and hashed.

use super::validate::{self as v, Ctx};
use crate::table::Table;
use indexmap::IndexMap;
use serde::{Serialize, Serializer};
use serde_json::Value;
use std::sync::Arc;

pub const CABINS: &[&str] = &["business", "economy", "basic_economy"];
pub const FLIGHT_TYPES: &[&str] = &["round_trip", "one_way"];
pub const INSURANCE: &[&str] = &["yes", "no"];
const MEMBERSHIPS: &[&str] = &["gold", "silver", "regular"];
const STATUSES: &[&str] = &[
    "available",
    "landed",
    "cancelled",
    "delayed",
    "flying",
    "on time",
];

/// A Python float. Equality is bitwise so that `0.0` and `-0.0`, which dump differently,
/// never compare equal.
#[derive(Debug, Clone, Copy)]
pub struct Float(pub f64);

impl PartialEq for Float {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Serialize for Float {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct FlightDb {
    pub flights: Table<Flight>,
    pub users: Table<User>,
    pub reservations: Table<Reservation>,
    /// Flights by origin and destination, for the searches; not part of the state.
    #[serde(skip)]
    pub routes: super::routes::Routes,
}

crate::collection::table_db!(FlightDb {
    flights,
    users,
    reservations
});

#[derive(Debug, Clone, Serialize)]
pub struct Flight {
    pub flight_number: String,
    pub origin: String,
    pub destination: String,
    pub scheduled_departure_time_est: String,
    pub scheduled_arrival_time_est: String,
    /// Shared per date, so writing one date of a flight does not copy the other dates, and
    /// keyed by shared strings, so copying a flight to write it allocates no key.
    pub dates: IndexMap<Arc<str>, Arc<FlightDate>>,
}

/// The state of one flight on one date; `status` is dumped first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status")]
pub enum FlightDate {
    #[serde(rename = "available")]
    Available {
        available_seats: IndexMap<String, i64>,
        prices: IndexMap<String, i64>,
    },
    #[serde(rename = "landed")]
    Landed {
        actual_departure_time_est: String,
        actual_arrival_time_est: String,
    },
    #[serde(rename = "cancelled")]
    Cancelled,
    #[serde(rename = "delayed")]
    Delayed {
        estimated_departure_time_est: String,
        estimated_arrival_time_est: String,
    },
    #[serde(rename = "flying")]
    Flying {
        actual_departure_time_est: String,
        estimated_arrival_time_est: String,
    },
    #[serde(rename = "on time")]
    OnTime {
        estimated_departure_time_est: String,
        estimated_arrival_time_est: String,
    },
}

impl FlightDate {
    pub fn status(&self) -> &'static str {
        match self {
            FlightDate::Available { .. } => "available",
            FlightDate::Landed { .. } => "landed",
            FlightDate::Cancelled => "cancelled",
            FlightDate::Delayed { .. } => "delayed",
            FlightDate::Flying { .. } => "flying",
            FlightDate::OnTime { .. } => "on time",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct User {
    pub user_id: String,
    /// The parts no tool writes are shared, so copying a user to write its payment methods
    /// or reservations allocates little.
    pub name: Arc<Name>,
    pub address: Arc<Address>,
    pub email: String,
    pub dob: String,
    pub payment_methods: IndexMap<String, PaymentMethod>,
    pub saved_passengers: Arc<Vec<Passenger>>,
    pub membership: String,
    pub reservations: Vec<String>,
}

/// Dict equality (order-insensitive, as the sorted-key hash is), checked first entry by entry:
/// records copied from one base keep their order, so the hashed lookup is rarely needed.
fn dict_eq<K, V>(a: &IndexMap<K, V>, b: &IndexMap<K, V>) -> bool
where
    K: std::hash::Hash + Eq,
    V: PartialEq,
{
    a.len() == b.len()
        && (a
            .iter()
            .zip(b)
            .all(|((ka, va), (kb, vb))| ka == kb && va == vb)
            || a == b)
}

impl PartialEq for Flight {
    fn eq(&self, o: &Self) -> bool {
        self.flight_number == o.flight_number
            && self.origin == o.origin
            && self.destination == o.destination
            && self.scheduled_departure_time_est == o.scheduled_departure_time_est
            && self.scheduled_arrival_time_est == o.scheduled_arrival_time_est
            && dict_eq(&self.dates, &o.dates)
    }
}

impl PartialEq for User {
    fn eq(&self, o: &Self) -> bool {
        self.user_id == o.user_id
            && self.name == o.name
            && self.address == o.address
            && self.email == o.email
            && self.dob == o.dob
            && dict_eq(&self.payment_methods, &o.payment_methods)
            && self.saved_passengers == o.saved_passengers
            && self.membership == o.membership
            && self.reservations == o.reservations
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Name {
    pub first_name: String,
    pub last_name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Address {
    pub address1: String,
    pub address2: Option<String>,
    pub city: String,
    pub country: String,
    pub state: String,
    pub zip: String,
}

/// A saved payment method; `source` is dumped first, then `id`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum PaymentMethod {
    CreditCard {
        id: String,
        brand: String,
        last_four: String,
    },
    GiftCard {
        id: String,
        amount: Float,
    },
    Certificate {
        id: String,
        amount: Float,
    },
}

impl PaymentMethod {
    /// The balance of a gift card or certificate.
    pub fn balance(&self) -> Option<f64> {
        match self {
            PaymentMethod::CreditCard { .. } => None,
            PaymentMethod::GiftCard { amount, .. } | PaymentMethod::Certificate { amount, .. } => {
                Some(amount.0)
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Passenger {
    pub first_name: String,
    pub last_name: String,
    pub dob: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Payment {
    pub payment_id: String,
    pub amount: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReservationFlight {
    pub flight_number: String,
    pub origin: String,
    pub destination: String,
    pub date: String,
    pub price: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reservation {
    pub reservation_id: String,
    pub user_id: String,
    pub origin: String,
    pub destination: String,
    pub flight_type: String,
    /// Raw: `update_reservation_flights` assigns its argument unvalidated.
    pub cabin: Value,
    /// Shared, like `passengers`: tools replace them whole, so copying a reservation to
    /// write another field allocates neither.
    pub flights: Arc<Vec<ReservationFlight>>,
    /// Raw: `update_reservation_passengers` may assign a non-list argument.
    pub passengers: Arc<Value>,
    pub payment_history: Vec<Payment>,
    pub created_at: String,
    /// Raw: `update_reservation_baggages` assigns its arguments unvalidated.
    pub total_baggages: Value,
    pub nonfree_baggages: Value,
    pub insurance: String,
    pub status: Option<String>,
}

/// `FlightInfo` of tool arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct FlightInfo {
    pub flight_number: String,
    pub date: String,
}

/// Plain-data dump of any model.
pub fn dump<T: Serialize>(model: &T) -> Value {
    serde_json::to_value(model).expect("airline models always serialise")
}

impl FlightDb {
    /// `FlightDB.model_validate(value)`: extra top-level keys are refused, nested unknown keys
    /// are dropped. The error is pydantic's multi-line text.
    pub fn validate(value: &Value) -> Result<FlightDb, String> {
        let mut cx = Ctx::new();
        let db = validate_db(value, &mut cx);
        cx.finish("FlightDB", db)
    }
}

fn validate_db(value: &Value, cx: &mut Ctx) -> Option<FlightDb> {
    let obj = v::object(value, "FlightDB", cx)?;
    for key in obj.keys() {
        if !["flights", "users", "reservations"].contains(&key.as_str()) {
            cx.at(key, |cx| {
                cx.fail(
                    "extra_forbidden",
                    "Extra inputs are not permitted",
                    &obj[key],
                )
            });
        }
    }
    let flights = v::field(obj, "flights", cx, |x, cx| {
        v::dict(x, cx, None, |_, f, cx| flight(f, cx))
    });
    let users = v::field(obj, "users", cx, |x, cx| {
        v::dict(x, cx, None, |_, u, cx| user(u, cx))
    });
    let reservations = v::field(obj, "reservations", cx, |x, cx| {
        v::dict(x, cx, None, |_, r, cx| reservation(r, cx))
    });
    Some(FlightDb {
        flights: flights?.into_iter().collect(),
        users: users?.into_iter().collect(),
        reservations: reservations?.into_iter().collect(),
        routes: Default::default(),
    })
}

fn cabin_map(x: &Value, cx: &mut Ctx) -> Option<IndexMap<String, i64>> {
    v::dict(x, cx, Some(CABINS), |_, n, cx| v::int(n, cx))
}

fn flight(x: &Value, cx: &mut Ctx) -> Option<Flight> {
    let o = v::object(x, "Flight", cx)?;
    let flight_number = v::field(o, "flight_number", cx, v::string);
    let origin = v::field(o, "origin", cx, v::string);
    let destination = v::field(o, "destination", cx, v::string);
    let dep = v::field(o, "scheduled_departure_time_est", cx, v::string);
    let arr = v::field(o, "scheduled_arrival_time_est", cx, v::string);
    let dates = v::field(o, "dates", cx, |d, cx| {
        v::dict(d, cx, None, |_, s, cx| flight_date(s, cx).map(Arc::new))
    });
    Some(Flight {
        flight_number: flight_number?,
        origin: origin?,
        destination: destination?,
        scheduled_departure_time_est: dep?,
        scheduled_arrival_time_est: arr?,
        dates: dates?.into_iter().map(|(k, v)| (Arc::from(k), v)).collect(),
    })
}

fn flight_date(x: &Value, cx: &mut Ctx) -> Option<FlightDate> {
    let o = v::object(x, "FlightDateStatus", cx)?;
    let status = v::field(o, "status", cx, |s, cx| v::literal(s, STATUSES, cx))?;
    let s = |name: &str, cx: &mut Ctx| v::field(o, name, cx, v::string);
    Some(match status.as_str() {
        "available" => {
            let seats = v::field(o, "available_seats", cx, cabin_map);
            let prices = v::field(o, "prices", cx, cabin_map);
            FlightDate::Available {
                available_seats: seats?,
                prices: prices?,
            }
        }
        "landed" => {
            let dep = s("actual_departure_time_est", cx);
            let arr = s("actual_arrival_time_est", cx);
            FlightDate::Landed {
                actual_departure_time_est: dep?,
                actual_arrival_time_est: arr?,
            }
        }
        "cancelled" => FlightDate::Cancelled,
        "delayed" => {
            let dep = s("estimated_departure_time_est", cx);
            let arr = s("estimated_arrival_time_est", cx);
            FlightDate::Delayed {
                estimated_departure_time_est: dep?,
                estimated_arrival_time_est: arr?,
            }
        }
        "flying" => {
            let dep = s("actual_departure_time_est", cx);
            let arr = s("estimated_arrival_time_est", cx);
            FlightDate::Flying {
                actual_departure_time_est: dep?,
                estimated_arrival_time_est: arr?,
            }
        }
        _ => {
            let dep = s("estimated_departure_time_est", cx);
            let arr = s("estimated_arrival_time_est", cx);
            FlightDate::OnTime {
                estimated_departure_time_est: dep?,
                estimated_arrival_time_est: arr?,
            }
        }
    })
}

fn user(x: &Value, cx: &mut Ctx) -> Option<User> {
    let o = v::object(x, "User", cx)?;
    let user_id = v::field(o, "user_id", cx, v::string);
    let name = v::field(o, "name", cx, |n, cx| {
        let n = v::object(n, "Name", cx)?;
        let first = v::field(n, "first_name", cx, v::string);
        let last = v::field(n, "last_name", cx, v::string);
        Some(Name {
            first_name: first?,
            last_name: last?,
        })
    });
    let address = v::field(o, "address", cx, address);
    let email = v::field(o, "email", cx, v::string);
    let dob = v::field(o, "dob", cx, v::string);
    let methods = v::field(o, "payment_methods", cx, |m, cx| {
        v::dict(m, cx, None, |_, pm, cx| payment_method(pm, cx))
    });
    let saved = v::field(o, "saved_passengers", cx, |l, cx| v::list(l, cx, passenger));
    let membership = v::field(o, "membership", cx, |m, cx| v::literal(m, MEMBERSHIPS, cx));
    let reservations = v::field(o, "reservations", cx, |l, cx| v::list(l, cx, v::string));
    Some(User {
        user_id: user_id?,
        name: Arc::new(name?),
        address: Arc::new(address?),
        email: email?,
        dob: dob?,
        payment_methods: methods?,
        saved_passengers: Arc::new(saved?),
        membership: membership?,
        reservations: reservations?,
    })
}

fn address(x: &Value, cx: &mut Ctx) -> Option<Address> {
    let o = v::object(x, "Address", cx)?;
    let address1 = v::field(o, "address1", cx, v::string);
    let address2 = v::opt_field(o, "address2", cx, v::opt_string);
    let city = v::field(o, "city", cx, v::string);
    let country = v::field(o, "country", cx, v::string);
    let state = v::field(o, "state", cx, v::string);
    let zip = v::field(o, "zip", cx, v::string);
    Some(Address {
        address1: address1?,
        address2: address2?,
        city: city?,
        country: country?,
        state: state?,
        zip: zip?,
    })
}

fn payment_method(x: &Value, cx: &mut Ctx) -> Option<PaymentMethod> {
    let o = v::object(x, "PaymentMethod", cx)?;
    let source = v::field(o, "source", cx, |s, cx| {
        v::literal(s, &["credit_card", "gift_card", "certificate"], cx)
    })?;
    let id = v::field(o, "id", cx, v::string);
    Some(match source.as_str() {
        "credit_card" => {
            let brand = v::field(o, "brand", cx, v::string);
            let last_four = v::field(o, "last_four", cx, v::string);
            PaymentMethod::CreditCard {
                id: id?,
                brand: brand?,
                last_four: last_four?,
            }
        }
        "gift_card" => {
            let amount = v::field(o, "amount", cx, v::float);
            PaymentMethod::GiftCard {
                id: id?,
                amount: Float(amount?),
            }
        }
        _ => {
            let amount = v::field(o, "amount", cx, v::float);
            PaymentMethod::Certificate {
                id: id?,
                amount: Float(amount?),
            }
        }
    })
}

/// `Passenger` from a JSON object (the `**dict` of a tool argument, or a nested field).
pub fn passenger(x: &Value, cx: &mut Ctx) -> Option<Passenger> {
    let o = v::object(x, "Passenger", cx)?;
    let first = v::field(o, "first_name", cx, v::string);
    let last = v::field(o, "last_name", cx, v::string);
    let dob = v::field(o, "dob", cx, v::string);
    Some(Passenger {
        first_name: first?,
        last_name: last?,
        dob: dob?,
    })
}

/// `Payment` from a JSON object.
pub fn payment(x: &Value, cx: &mut Ctx) -> Option<Payment> {
    let o = v::object(x, "Payment", cx)?;
    let id = v::field(o, "payment_id", cx, v::string);
    let amount = v::field(o, "amount", cx, v::int);
    Some(Payment {
        payment_id: id?,
        amount: amount?,
    })
}

/// `FlightInfo` from a JSON object.
pub fn flight_info(x: &Value, cx: &mut Ctx) -> Option<FlightInfo> {
    let o = v::object(x, "FlightInfo", cx)?;
    let number = v::field(o, "flight_number", cx, v::string);
    let date = v::field(o, "date", cx, v::string);
    Some(FlightInfo {
        flight_number: number?,
        date: date?,
    })
}

fn reservation_flight(x: &Value, cx: &mut Ctx) -> Option<ReservationFlight> {
    let o = v::object(x, "ReservationFlight", cx)?;
    let number = v::field(o, "flight_number", cx, v::string);
    let origin = v::field(o, "origin", cx, v::string);
    let destination = v::field(o, "destination", cx, v::string);
    let date = v::field(o, "date", cx, v::string);
    let price = v::field(o, "price", cx, v::int);
    Some(ReservationFlight {
        flight_number: number?,
        origin: origin?,
        destination: destination?,
        date: date?,
        price: price?,
    })
}

/// Validated passengers, stored as their dump.
pub fn passengers_value(list: &[Passenger]) -> Value {
    Value::Array(list.iter().map(dump).collect())
}

fn reservation(x: &Value, cx: &mut Ctx) -> Option<Reservation> {
    let o = v::object(x, "Reservation", cx)?;
    let s = |name: &str, cx: &mut Ctx| v::field(o, name, cx, v::string);
    let reservation_id = s("reservation_id", cx);
    let user_id = s("user_id", cx);
    let origin = s("origin", cx);
    let destination = s("destination", cx);
    let flight_type = v::field(o, "flight_type", cx, |t, cx| {
        v::literal(t, FLIGHT_TYPES, cx)
    });
    let cabin = v::field(o, "cabin", cx, |c, cx| v::literal(c, CABINS, cx));
    let flights = v::field(o, "flights", cx, |l, cx| v::list(l, cx, reservation_flight));
    let passengers = v::field(o, "passengers", cx, |l, cx| v::list(l, cx, passenger));
    let history = v::field(o, "payment_history", cx, |l, cx| v::list(l, cx, payment));
    let created_at = s("created_at", cx);
    let total = v::field(o, "total_baggages", cx, v::int);
    let nonfree = v::field(o, "nonfree_baggages", cx, v::int);
    let insurance = v::field(o, "insurance", cx, |i, cx| v::literal(i, INSURANCE, cx));
    let status = v::opt_field(o, "status", cx, |st, cx| match st {
        Value::Null => Some(None),
        other => v::literal(other, &["cancelled"], cx).map(Some),
    });
    Some(Reservation {
        reservation_id: reservation_id?,
        user_id: user_id?,
        origin: origin?,
        destination: destination?,
        flight_type: flight_type?,
        cabin: Value::String(cabin?),
        flights: Arc::new(flights?),
        passengers: Arc::new(passengers_value(&passengers?)),
        payment_history: history?,
        created_at: created_at?,
        total_baggages: Value::from(total?),
        nonfree_baggages: Value::from(nonfree?),
        insurance: insurance?,
        status: status?,
    })
}

/// Keyword-argument objects (`Model(**d)`) validate like nested objects; this names the
/// model in the error title.
pub fn validate_kwargs<T>(
    title: &str,
    obj: &Value,
    f: impl FnOnce(&Value, &mut Ctx) -> Option<T>,
) -> Result<T, String> {
    let mut cx = Ctx::new();
    let r = f(obj, &mut cx);
    cx.finish(title, r)
}

#[cfg(test)]
mod tests {
    use super::dict_eq;
    use indexmap::IndexMap;

    #[test]
    fn dict_equality_ignores_order_like_the_hash() {
        let a: IndexMap<String, i64> = [("x".into(), 1), ("y".into(), 2)].into_iter().collect();
        let b: IndexMap<String, i64> = [("y".into(), 2), ("x".into(), 1)].into_iter().collect();
        let c: IndexMap<String, i64> = [("x".into(), 1), ("y".into(), 3)].into_iter().collect();
        let d: IndexMap<String, i64> = [("x".into(), 1)].into_iter().collect();
        assert!(dict_eq(&a, &a) && dict_eq(&a, &b));
        assert!(!dict_eq(&a, &c) && !dict_eq(&a, &d) && !dict_eq(&d, &a));
    }
}
