//! The agent-side writes that touch bills: `refuel_data` (and the one-time charge it adds
//! to a Draft bill), and the `suspend_line_for_overdue_bill` helper initialization actions
//! use to create an overdue bill.

use super::dates::{Date, TODAY};
use super::lookup::Key;
use super::model::{Bill, BillStatus, LineItem, LineStatus};
use super::{TelecomEnv, text};
use crate::environment::{ToolResult, ToolValue};
use crate::py::arg_str;
use crate::py::{Num, fixed2, float_str, type_name, unorderable};
use crate::tooling::ToolError;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::sync::Arc;

impl TelecomEnv {
    pub(crate) fn refuel_data(
        &mut self,
        customer_id: &Value,
        line_id: &Value,
        gb_amount: &Value,
    ) -> ToolResult {
        let l = self.target_line(customer_id, line_id)?;
        let gb = Num::of(gb_amount)
            .map(Num::as_f64)
            .ok_or_else(|| unorderable("<=", type_name(gb_amount), "int"))?;
        if gb <= 0.0 {
            return Err(ToolError::value("Refuel amount must be positive"));
        }
        let plan = &self.db.plans[self.plan_idx(self.db.lines[l].plan_id.as_str())?];
        let price = plan.data_refueling_price_per_gb;
        let charge = gb * price;
        let line = &mut Arc::make_mut(&mut self.db.lines)[l];
        line.data_refueling_gb += gb;
        let new_total = line.data_refueling_gb;
        let description = format!(
            "Data refueling: {} GB at ${}/GB",
            arg_str(gb_amount),
            float_str(price)
        );
        self.apply_one_time_charge(customer_id, charge, description)?;
        let mut out = Map::new();
        out.insert(
            "message".into(),
            Value::String(format!(
                "Successfully added {} GB of data for line {} for ${}",
                arg_str(gb_amount),
                line_id.show(),
                fixed2(charge)
            )),
        );
        out.insert(
            "new_data_refueling_gb".into(),
            Value::String(float_str(new_total)),
        );
        out.insert("charge".into(), Value::String(float_str(charge)));
        Ok(ToolValue::Json(Value::Object(out)))
    }

    /// `_apply_one_time_charge`: adds a line item to the customer's first Draft bill,
    /// creating next month's Draft bill when there is none.
    fn apply_one_time_charge(
        &mut self,
        customer_id: &Value,
        amount: f64,
        description: String,
    ) -> Result<(), ToolError> {
        let c = self.customer_idx(customer_id)?;
        let mut draft = None;
        for bill_id in &self.db.customers[c].bill_ids {
            let b = self.bill_idx(bill_id.as_str())?;
            if self.db.bills[b].status == BillStatus::Draft {
                draft = Some(b);
                break;
            }
        }
        let b = match draft {
            Some(b) => b,
            None => {
                let start = TODAY.first_of_month().add_days(32).first_of_month();
                let end = if start.month < 12 {
                    Date {
                        month: start.month + 1,
                        ..start
                    }
                } else {
                    Date {
                        year: start.year + 1,
                        month: 1,
                        ..start
                    }
                }
                .add_days(-1);
                let bill_id = self.new_bill_id(&self.db.customers[c].customer_id);
                let bill = Bill {
                    bill_id: bill_id.clone(),
                    customer_id: self.db.customers[c].customer_id.clone(),
                    period_start: start,
                    period_end: end,
                    issue_date: start,
                    total_due: 0.0,
                    due_date: start.add_days(14),
                    line_items: Vec::new(),
                    status: BillStatus::Draft,
                };
                Arc::make_mut(&mut self.db.bills).push(bill);
                Arc::make_mut(&mut self.db.customers)[c]
                    .bill_ids
                    .push(bill_id);
                self.db.bills.len() - 1
            }
        };
        let item_type = if amount < 0.0 { "Credit" } else { "Charge" };
        let bill = &mut Arc::make_mut(&mut self.db.bills)[b];
        bill.line_items.push(LineItem {
            description,
            amount,
            date: TODAY,
            item_type: item_type.into(),
        });
        bill.total_due += amount;
        Ok(())
    }

    /// Deterministic stand-in for upstream's `B{uuid4().hex[:8]}`: the first 8 hex digits of
    /// SHA-256(`<customer_id>:<number of bills>:<attempt>`), skipping ids already taken.
    fn new_bill_id(&self, customer_id: &str) -> String {
        (0u32..)
            .map(|attempt| {
                let digest =
                    Sha256::digest(format!("{customer_id}:{}:{attempt}", self.db.bills.len()));
                let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
                format!("B{hex}")
            })
            .find(|id| !self.db.bills.iter().any(|b| &b.bill_id == id))
            .unwrap_or_default()
    }

    pub(crate) fn suspend_line_for_overdue_bill(
        &mut self,
        customer_id: &Value,
        line_id: &Value,
        new_bill_id: &Value,
        contract_ended: &Value,
    ) -> ToolResult {
        let l = self.line_idx(line_id)?;
        if self.db.lines[l].status != LineStatus::Active {
            return Err(ToolError::value(
                "Line must be active to suspend for unpaid bill",
            ));
        }
        let amount =
            self.db.plans[self.plan_idx(self.db.lines[l].plan_id.as_str())?].price_per_month;
        let description = format!("Charge for line {}", self.db.lines[l].line_id);
        if amount <= 0.0 {
            return Err(ToolError::value("Amount must be positive for overdue bill"));
        }
        let c = self.customer_idx(customer_id)?;
        for bill_id in &self.db.customers[c].bill_ids {
            if self.db.bills[self.bill_idx(bill_id.as_str())?].status == BillStatus::Overdue {
                return Err(ToolError::value("Customer already has an overdue bill"));
            }
        }
        let (Some(bill_id), Some(ended)) = (new_bill_id.as_str(), contract_ended.as_bool()) else {
            return Err(ToolError::type_error(format!(
                "suspend_line_for_overdue_bill() expects a str 'new_bill_id' and a bool 'contract_ended', got {} and {}",
                type_name(new_bill_id),
                type_name(contract_ended)
            )));
        };
        let last_of_prev = TODAY.first_of_month().add_days(-1);
        let first_of_prev = last_of_prev.first_of_month();
        let item_type = if amount > 0.0 { "Charge" } else { "Credit" };
        let bill = Bill {
            bill_id: bill_id.to_string(),
            customer_id: customer_id.show(),
            period_start: first_of_prev,
            period_end: last_of_prev,
            issue_date: first_of_prev,
            total_due: 0.0 + amount,
            due_date: first_of_prev.add_days(14),
            line_items: vec![LineItem {
                description,
                amount,
                date: TODAY,
                item_type: item_type.into(),
            }],
            status: BillStatus::Overdue,
        };
        Arc::make_mut(&mut self.db.bills).push(bill);
        Arc::make_mut(&mut self.db.customers)[c]
            .bill_ids
            .push(bill_id.to_string());
        let line = &mut Arc::make_mut(&mut self.db.lines)[l];
        line.status = LineStatus::Suspended;
        line.suspension_start_date = Some(TODAY);
        if ended {
            line.contract_end_date = Some(last_of_prev);
        }
        let ended = if ended { "True" } else { "False" };
        Ok(text(format!(
            "Line {} suspended for unpaid bill {bill_id}. Contract ended: {ended}",
            line_id.show()
        )))
    }
}
