//! The retail database as upstream's pydantic models define it (§1.5): field order is dump
//! order, optional fields dump as `null`, prices and balances are floats.
//!
//! Floats compare by bit pattern ([`Float`]) so that "equal records" means "equal in the
//! hash": `0.0` and `-0.0` hash differently. `exchange_price_difference` can hold an
//! integer `0` ([`Number`]) because upstream assigns `round(0, 2)` to it without validation.

use crate::table::Table;
use indexmap::IndexMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A float field; equality is bit equality, matching hash equality.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Float(pub f64);

impl PartialEq for Float {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

/// A float field that runtime code may set to a Python `int` (validation coerces to float).
#[derive(Debug, Clone, Copy)]
pub enum Number {
    Int(i64),
    Float(f64),
}

impl PartialEq for Number {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => a == b,
            (Number::Float(a), Number::Float(b)) => a.to_bits() == b.to_bits(),
            _ => false,
        }
    }
}

impl Serialize for Number {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Number::Int(i) => s.serialize_i64(*i),
            Number::Float(x) => s.serialize_f64(*x),
        }
    }
}

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        f64::deserialize(d).map(Number::Float)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetailDb {
    pub products: Table<Product>,
    pub users: Table<User>,
    pub orders: Table<Order>,
}

crate::collection::table_db!(RetailDb {
    products,
    users,
    orders
});

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    pub item_id: String,
    pub options: IndexMap<String, String>,
    pub available: bool,
    pub price: Float,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Product {
    pub name: String,
    pub product_id: String,
    pub variants: IndexMap<String, Variant>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserName {
    pub first_name: String,
    pub last_name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserAddress {
    pub address1: String,
    pub address2: String,
    pub city: String,
    pub country: String,
    pub state: String,
    pub zip: String,
}

/// Payment methods, discriminated by `source` (dumped first, then `id`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source")]
pub enum PaymentMethod {
    #[serde(rename = "credit_card")]
    CreditCard {
        id: String,
        brand: String,
        last_four: String,
    },
    #[serde(rename = "gift_card")]
    GiftCard { id: String, balance: Float },
    #[serde(rename = "paypal")]
    Paypal { id: String },
}

impl PaymentMethod {
    /// The balance of a gift card; `None` for other methods.
    pub fn gift_card_balance(&self) -> Option<f64> {
        match self {
            PaymentMethod::GiftCard { balance, .. } => Some(balance.0),
            _ => None,
        }
    }

    /// Mutable balance of a gift card.
    pub fn gift_card_balance_mut(&mut self) -> Option<&mut f64> {
        match self {
            PaymentMethod::GiftCard { balance, .. } => Some(&mut balance.0),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct User {
    pub user_id: String,
    pub name: UserName,
    pub address: UserAddress,
    pub email: String,
    pub payment_methods: IndexMap<String, PaymentMethod>,
    pub orders: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OrderFulfillment {
    pub tracking_id: Vec<String>,
    pub item_ids: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OrderItem {
    pub name: String,
    pub product_id: String,
    pub item_id: String,
    pub price: Float,
    pub options: IndexMap<String, String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TransactionType {
    #[serde(rename = "payment")]
    Payment,
    #[serde(rename = "refund")]
    Refund,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OrderPayment {
    pub transaction_type: TransactionType,
    pub amount: Float,
    pub payment_method_id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OrderStatus {
    #[serde(rename = "processed")]
    Processed,
    #[serde(rename = "pending")]
    Pending,
    #[serde(rename = "pending (item modified)")]
    PendingItemModified,
    #[serde(rename = "delivered")]
    Delivered,
    #[serde(rename = "cancelled")]
    Cancelled,
    #[serde(rename = "exchange requested")]
    ExchangeRequested,
    #[serde(rename = "return requested")]
    ReturnRequested,
}

impl OrderStatus {
    /// Upstream's `"pending" in order.status`.
    pub fn contains_pending(self) -> bool {
        matches!(
            self,
            OrderStatus::Pending | OrderStatus::PendingItemModified
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CancelReason {
    #[serde(rename = "no longer needed")]
    NoLongerNeeded,
    #[serde(rename = "ordered by mistake")]
    OrderedByMistake,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Order {
    pub order_id: String,
    pub user_id: String,
    pub address: UserAddress,
    pub items: Vec<OrderItem>,
    pub status: OrderStatus,
    pub fulfillments: Vec<OrderFulfillment>,
    pub payment_history: Vec<OrderPayment>,
    #[serde(default)]
    pub cancel_reason: Option<CancelReason>,
    #[serde(default)]
    pub exchange_items: Option<Vec<String>>,
    #[serde(default)]
    pub exchange_new_items: Option<Vec<String>>,
    #[serde(default)]
    pub exchange_payment_method_id: Option<String>,
    #[serde(default)]
    pub exchange_price_difference: Option<Number>,
    #[serde(default)]
    pub return_items: Option<Vec<String>>,
    #[serde(default)]
    pub return_payment_method_id: Option<String>,
}
