//! Record lookups shared by the agent toolkit, the assertions and `sync_tools`, with
//! upstream's "not found" texts. Raw arguments compare with `==` as in Python, so a mistyped
//! id is simply not found; messages interpolate `str(argument)`.

use super::TelecomEnv;
use super::model::{BillStatus, Customer};
use crate::py::arg_str;
use crate::tooling::ToolError;
use serde::Serialize;
use serde_json::Value;

/// An id as upstream compares it: a raw JSON argument or an id read from the database.
pub(crate) trait Key {
    fn matches(&self, id: &str) -> bool;
    /// `str(key)` for messages.
    fn show(&self) -> String;
}

impl Key for Value {
    fn matches(&self, id: &str) -> bool {
        self.as_str() == Some(id)
    }
    fn show(&self) -> String {
        arg_str(self)
    }
}

impl Key for str {
    fn matches(&self, id: &str) -> bool {
        self == id
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

pub(crate) fn dump<T: Serialize>(record: &T) -> Value {
    serde_json::to_value(record).unwrap_or_default()
}

/// The position of the record whose `id_of` matches `id`, or upstream's
/// `<what> <id> not found`.
fn position<T, K: Key + ?Sized>(
    records: &[T],
    id_of: impl Fn(&T) -> &str,
    id: &K,
    what: &str,
) -> Result<usize, ToolError> {
    records
        .iter()
        .position(|r| id.matches(id_of(r)))
        .ok_or_else(|| ToolError::value(format!("{what} {} not found", id.show())))
}

impl TelecomEnv {
    pub(crate) fn customer_idx<K: Key + ?Sized>(&self, id: &K) -> Result<usize, ToolError> {
        position(
            &self.db.customers,
            |c| &c.customer_id,
            id,
            "Customer with ID",
        )
    }

    pub(crate) fn line_idx<K: Key + ?Sized>(&self, id: &K) -> Result<usize, ToolError> {
        position(&self.db.lines, |l| &l.line_id, id, "Line with ID")
    }

    pub(crate) fn line_idx_by_phone<K: Key + ?Sized>(&self, phone: &K) -> Result<usize, ToolError> {
        position(
            &self.db.lines,
            |l| &l.phone_number,
            phone,
            "Line with phone number",
        )
    }

    pub(crate) fn plan_idx<K: Key + ?Sized>(&self, id: &K) -> Result<usize, ToolError> {
        position(&self.db.plans, |p| &p.plan_id, id, "Plan with ID")
    }

    pub(crate) fn device_idx(&self, id: &str) -> Result<usize, ToolError> {
        position(&self.db.devices, |d| &d.device_id, id, "Device with ID")
    }

    pub(crate) fn bill_idx<K: Key + ?Sized>(&self, id: &K) -> Result<usize, ToolError> {
        position(&self.db.bills, |b| &b.bill_id, id, "Bill with ID")
    }

    /// `_get_target_line`: the customer must exist and own the line.
    pub(crate) fn target_line(
        &self,
        customer_id: &Value,
        line_id: &Value,
    ) -> Result<usize, ToolError> {
        let c = self.customer_idx(customer_id)?;
        self.require_owned(c, customer_id, |c| &c.line_ids, "Line", line_id)?;
        self.line_idx(line_id)
    }

    /// Upstream's ownership check: `{what} {id} not found for customer {customer_id}` unless
    /// the `owned` ids of customer `c` hold `id`.
    pub(crate) fn require_owned(
        &self,
        c: usize,
        customer_id: &Value,
        owned: fn(&Customer) -> &Vec<String>,
        what: &str,
        id: &Value,
    ) -> Result<(), ToolError> {
        if owned(&self.db.customers[c]).iter().any(|o| id.matches(o)) {
            return Ok(());
        }
        Err(ToolError::value(format!(
            "{what} {} not found for customer {}",
            id.show(),
            customer_id.show()
        )))
    }

    /// `get_customer_by_phone`: contact number first, then each of the customer's lines.
    pub(crate) fn customer_idx_by_phone<K: Key + ?Sized>(
        &self,
        phone: &K,
    ) -> Result<usize, ToolError> {
        for (i, customer) in self.db.customers.iter().enumerate() {
            if phone.matches(&customer.phone_number) {
                return Ok(i);
            }
            for line_id in &customer.line_ids {
                let l = self.line_idx(line_id.as_str())?;
                if phone.matches(&self.db.lines[l].phone_number) {
                    return Ok(i);
                }
            }
        }
        Err(ToolError::value(format!(
            "Customer with phone number {} not found",
            phone.show()
        )))
    }

    /// `_get_bills_awaiting_payment`, in the customer's bill order.
    pub(crate) fn bills_awaiting_payment(&self, customer: usize) -> Result<Vec<usize>, ToolError> {
        let mut out = Vec::new();
        for bill_id in &self.db.customers[customer].bill_ids {
            let b = self.bill_idx(bill_id.as_str())?;
            if self.db.bills[b].status == BillStatus::AwaitingPayment {
                out.push(b);
            }
        }
        Ok(out)
    }
}
