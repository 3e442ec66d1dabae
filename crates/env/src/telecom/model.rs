//! The agent-side database (`TelecomDB`): plans, customers, lines, bills and devices as
//! typed records. Field order is upstream's declaration order, which is the order of every
//! dump (tool outputs and hash input); unknown keys are rejected as upstream's
//! `extra="forbid"` models reject them.
//!
//! Each collection is an `Arc`'d list shared with the loaded base until an environment
//! first writes to it.

use super::dates::{Date, DateTime};
use crate::py::py_enum;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Address {
    pub street: String,
    pub city: String,
    pub state: String,
    pub zip_code: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Plan {
    pub plan_id: String,
    pub name: String,
    pub data_limit_gb: f64,
    pub price_per_month: f64,
    pub data_refueling_price_per_gb: f64,
}

py_enum!(DeviceType = "DeviceType" {
    Phone = "PHONE": "phone",
    Router = "ROUTER": "router",
    Tablet = "TABLET": "tablet",
    Watch = "WATCH": "watch",
    Other = "OTHER": "other",
});

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Device {
    pub device_id: String,
    pub device_type: DeviceType,
    pub model: String,
    #[serde(default)]
    pub imei: Option<String>,
    pub is_esim_capable: bool,
    #[serde(default)]
    pub activated: bool,
    #[serde(default)]
    pub activation_date: Option<DateTime>,
    #[serde(default)]
    pub last_esim_transfer_date: Option<DateTime>,
}

py_enum!(LineStatus = "LineStatus" {
    Active = "ACTIVE": "Active",
    Suspended = "SUSPENDED": "Suspended",
    PendingActivation = "PENDING_ACTIVATION": "Pending Activation",
    Closed = "CLOSED": "Closed",
});

/// A float field that a helper may have overwritten with a Python `int` without validation
/// (`set_data_usage` assigns its argument as is); validated loads always yield `Float`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum PyNum {
    Int(i64),
    Float(f64),
}

impl PyNum {
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            PyNum::Int(i) => i as f64,
            PyNum::Float(x) => x,
        }
    }

    /// Python `str()` of the value.
    pub(crate) fn py_str(self) -> String {
        match self {
            PyNum::Int(i) => i.to_string(),
            PyNum::Float(x) => crate::py::float_str(x),
        }
    }
}

impl Serialize for PyNum {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PyNum::Int(i) => s.serialize_i64(*i),
            PyNum::Float(x) => s.serialize_f64(*x),
        }
    }
}

impl<'de> Deserialize<'de> for PyNum {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        f64::deserialize(d).map(PyNum::Float)
    }
}

fn zero() -> PyNum {
    PyNum::Float(0.0)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Line {
    pub line_id: String,
    pub phone_number: String,
    #[serde(default = "pending_activation")]
    pub status: LineStatus,
    pub plan_id: String,
    #[serde(default)]
    pub device_id: Option<String>,
    #[serde(default = "zero")]
    pub data_used_gb: PyNum,
    #[serde(default)]
    pub data_refueling_gb: f64,
    #[serde(default)]
    pub roaming_enabled: bool,
    #[serde(default)]
    pub contract_end_date: Option<Date>,
    #[serde(default)]
    pub last_plan_change_date: Option<Date>,
    #[serde(default)]
    pub last_sim_replacement_date: Option<Date>,
    #[serde(default)]
    pub suspension_start_date: Option<Date>,
}

fn pending_activation() -> LineStatus {
    LineStatus::PendingActivation
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LineItem {
    pub description: String,
    pub amount: f64,
    pub date: Date,
    pub item_type: String,
}

py_enum!(BillStatus = "BillStatus" {
    Draft = "DRAFT": "Draft",
    Issued = "ISSUED": "Issued",
    AwaitingPayment = "AWAITING_PAYMENT": "Awaiting Payment",
    Paid = "PAID": "Paid",
    Overdue = "OVERDUE": "Overdue",
    Disputed = "DISPUTED": "Disputed",
});

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Bill {
    pub bill_id: String,
    pub customer_id: String,
    pub period_start: Date,
    pub period_end: Date,
    pub issue_date: Date,
    pub total_due: f64,
    pub due_date: Date,
    #[serde(default)]
    pub line_items: Vec<LineItem>,
    #[serde(default = "draft")]
    pub status: BillStatus,
}

fn draft() -> BillStatus {
    BillStatus::Draft
}

py_enum!(AccountStatus = "AccountStatus" {
    Active = "ACTIVE": "Active",
    Suspended = "SUSPENDED": "Suspended",
    PendingVerification = "PENDING_VERIFICATION": "Pending Verification",
    Closed = "CLOSED": "Closed",
});

py_enum!(PaymentMethodType = "PaymentMethodType" {
    CreditCard = "CREDIT_CARD": "Credit Card",
    DebitCard = "DEBIT_CARD": "Debit Card",
    PayPal = "PAYPAL": "PayPal",
});

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PaymentMethod {
    pub method_type: PaymentMethodType,
    pub account_number_last_4: String,
    pub expiration_date: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Customer {
    pub customer_id: String,
    pub full_name: String,
    pub date_of_birth: String,
    pub email: String,
    pub phone_number: String,
    pub address: Address,
    #[serde(default = "pending_verification")]
    pub account_status: AccountStatus,
    #[serde(default)]
    pub payment_methods: Vec<PaymentMethod>,
    #[serde(default)]
    pub line_ids: Vec<String>,
    #[serde(default)]
    pub bill_ids: Vec<String>,
    /// Upstream's default is the bare date 2025-01-01 (an unvalidated default).
    #[serde(default = "default_created_at")]
    pub created_at: DateTime,
    #[serde(default)]
    pub last_extension_date: Option<Date>,
    #[serde(default)]
    pub goodwill_credit_used_this_year: f64,
}

fn pending_verification() -> AccountStatus {
    AccountStatus::PendingVerification
}

fn default_created_at() -> DateTime {
    DateTime {
        date: Date {
            year: 2025,
            month: 1,
            day: 1,
        },
        time: None,
    }
}

/// The agent database. Collections are copied on first write.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct TelecomDb {
    pub plans: Arc<Vec<Plan>>,
    pub customers: Arc<Vec<Customer>>,
    pub lines: Arc<Vec<Line>>,
    pub bills: Arc<Vec<Bill>>,
    pub devices: Arc<Vec<Device>>,
}

crate::collection::table_db!(TelecomDb {
    plans,
    customers,
    lines,
    bills,
    devices
});

impl TelecomDb {
    /// Plain-data dump, every field present.
    pub(crate) fn dump(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}
