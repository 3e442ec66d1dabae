//! The agent's toolkit (`TelecomTools`): customer, line, bill and plan lookups, line
//! suspension and resumption, payment requests, roaming, data refuelling, plus the
//! non-tool helpers initialization actions use (`set_data_usage`,
//! `suspend_line_for_overdue_bill`, `get_available_plan_ids`).
//!
//! Bill-writing tools live in [`super::billing`], lookups in [`super::lookup`].

use super::dates::{Date, TODAY};
use super::lookup::{Key, dump};
use super::model::{Bill, BillStatus, Customer, LineStatus, PyNum};
use super::{Args, TelecomEnv, text};
use crate::environment::{ToolResult, ToolValue};
use crate::py::arg_str;
use crate::py::{float_str, no_attribute, type_name};
use crate::tooling::ToolError;
use serde_json::{Map, Value, json};
use std::sync::Arc;

impl TelecomEnv {
    pub(crate) fn call_agent(&mut self, name: &str, a: &Args) -> ToolResult {
        match name {
            "get_customer_by_phone" => {
                let c = self.customer_idx_by_phone(a.req(0))?;
                Ok(ToolValue::model(&self.db.customers[c]))
            }
            "get_customer_by_id" => {
                let c = self.customer_idx(a.req(0))?;
                Ok(ToolValue::model(&self.db.customers[c]))
            }
            "get_customer_by_name" => self.get_customer_by_name(a.req(0), a.req(1)),
            "get_available_plan_ids" => Ok(ToolValue::Json(
                self.db
                    .plans
                    .iter()
                    .map(|p| Value::String(p.plan_id.clone()))
                    .collect(),
            )),
            "get_details_by_id" => self.get_details_by_id(a.req(0)),
            "suspend_line" => self.suspend_line(a.req(0), a.req(1)),
            "resume_line" => self.resume_line(a.req(0), a.req(1)),
            "get_bills_for_customer" => self.get_bills_for_customer(a.req(0), a.opt(1)),
            "send_payment_request" => self.send_payment_request(a.req(0), a.req(1)),
            "get_data_usage" => self.get_data_usage(a.req(0), a.req(1)),
            "set_data_usage" => self.set_data_usage(a.req(0), a.req(1), a.req(2)),
            "enable_roaming" => self.set_roaming(a.req(0), a.req(1), true),
            "disable_roaming" => self.set_roaming(a.req(0), a.req(1), false),
            "transfer_to_human_agents" => Ok(text("Transfer successful")),
            "refuel_data" => self.refuel_data(a.req(0), a.req(1), a.req(2)),
            "suspend_line_for_overdue_bill" => {
                self.suspend_line_for_overdue_bill(a.req(0), a.req(1), a.req(2), a.req(3))
            }
            other => self.agent_assertion(other, a),
        }
    }

    fn get_customer_by_name(&self, full_name: &Value, dob: &Value) -> ToolResult {
        let mut found: Vec<&Customer> = Vec::new();
        for customer in self.db.customers.iter() {
            let wanted = full_name
                .as_str()
                .ok_or_else(|| no_attribute(type_name(full_name), "lower"))?;
            if customer.full_name.to_lowercase() == wanted.to_lowercase()
                && dob.matches(&customer.date_of_birth)
            {
                found.push(customer);
            }
        }
        Ok(ToolValue::Json(found.into_iter().map(dump).collect()))
    }

    fn get_details_by_id(&self, id: &Value) -> ToolResult {
        let s = id
            .as_str()
            .ok_or_else(|| no_attribute(type_name(id), "startswith"))?;
        let record = if s.starts_with('L') {
            dump(&self.db.lines[self.line_idx(s)?])
        } else if s.starts_with('D') {
            dump(&self.db.devices[self.device_idx(s)?])
        } else if s.starts_with('B') {
            dump(&self.db.bills[self.bill_idx(s)?])
        } else if s.starts_with('C') {
            dump(&self.db.customers[self.customer_idx(s)?])
        } else if s.starts_with('P') {
            dump(&self.db.plans[self.plan_idx(s)?])
        } else {
            return Err(ToolError::value(format!("Unknown ID format or type: {s}")));
        };
        Ok(ToolValue::Json(record))
    }

    fn line_message(&self, message: &str, line: usize) -> ToolValue {
        let mut out = Map::new();
        out.insert("message".into(), json!(message));
        out.insert("line".into(), dump(&self.db.lines[line]));
        ToolValue::Json(Value::Object(out))
    }

    fn suspend_line(&mut self, customer_id: &Value, line_id: &Value) -> ToolResult {
        let l = self.target_line(customer_id, line_id)?;
        if self.db.lines[l].status != LineStatus::Active {
            return Err(ToolError::value("Line must be active to suspend"));
        }
        let line = &mut Arc::make_mut(&mut self.db.lines)[l];
        line.status = LineStatus::Suspended;
        line.suspension_start_date = Some(TODAY);
        Ok(self.line_message(
            "Line suspended successfully. $5/month holding fee will apply.",
            l,
        ))
    }

    fn resume_line(&mut self, customer_id: &Value, line_id: &Value) -> ToolResult {
        let l = self.target_line(customer_id, line_id)?;
        if !matches!(
            self.db.lines[l].status,
            LineStatus::Suspended | LineStatus::PendingActivation
        ) {
            return Err(ToolError::value("Line must be suspended to resume"));
        }
        let line = &mut Arc::make_mut(&mut self.db.lines)[l];
        line.status = LineStatus::Active;
        line.suspension_start_date = None;
        Ok(self.line_message("Line resumed successfully", l))
    }

    fn get_bills_for_customer(&self, customer_id: &Value, limit: Option<&Value>) -> ToolResult {
        let c = self.customer_idx(customer_id)?;
        let mut bills: Vec<&Bill> = Vec::new();
        for bill_id in &self.db.customers[c].bill_ids {
            bills.push(&self.db.bills[self.bill_idx(bill_id.as_str())?]);
        }
        // `sorted(..., reverse=True)` keeps equal keys in their original order, as a stable
        // sort on the reversed key does.
        bills.sort_by_key(|b| std::cmp::Reverse(b.issue_date));
        let len = bills.len() as i128;
        let stop: i128 = match limit {
            None => 12,
            Some(Value::Null) => len,
            Some(Value::Bool(b)) => i128::from(*b),
            Some(Value::Number(n)) if !n.is_f64() => n
                .as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from))
                .unwrap_or(len),
            Some(_) => {
                return Err(ToolError::type_error(
                    "slice indices must be integers or None or have an __index__ method",
                ));
            }
        };
        let end = if stop < 0 {
            (len + stop).max(0)
        } else {
            stop.min(len)
        } as usize;
        Ok(ToolValue::Json(
            bills[..end].iter().map(|b| dump(*b)).collect(),
        ))
    }

    fn send_payment_request(&mut self, customer_id: &Value, bill_id: &Value) -> ToolResult {
        let c = self.customer_idx(customer_id)?;
        if !self.bills_awaiting_payment(c)?.is_empty() {
            return Err(ToolError::value(
                "A bill is already awaiting payment for this customer",
            ));
        }
        self.require_owned(c, customer_id, |c| &c.bill_ids, "Bill", bill_id)?;
        let b = self.bill_idx(bill_id)?;
        let bill = &mut Arc::make_mut(&mut self.db.bills)[b];
        bill.status = BillStatus::AwaitingPayment;
        Ok(text(format!(
            "Payment request sent to the customer for bill {}",
            bill.bill_id
        )))
    }

    fn get_data_usage(&self, customer_id: &Value, line_id: &Value) -> ToolResult {
        let l = self.target_line(customer_id, line_id)?;
        let line = &self.db.lines[l];
        let plan = &self.db.plans[self.plan_idx(line.plan_id.as_str())?];
        let next_month = if TODAY.month < 12 {
            Date {
                year: TODAY.year,
                month: TODAY.month + 1,
                day: 1,
            }
        } else {
            Date {
                year: TODAY.year,
                month: 1,
                day: 1,
            }
        };
        let mut out = Map::new();
        out.insert("line_id".into(), Value::String(line.line_id.clone()));
        out.insert(
            "data_used_gb".into(),
            Value::String(line.data_used_gb.py_str()),
        );
        out.insert(
            "data_limit_gb".into(),
            Value::String(float_str(plan.data_limit_gb)),
        );
        out.insert(
            "data_refueling_gb".into(),
            Value::String(float_str(line.data_refueling_gb)),
        );
        out.insert(
            "cycle_end_date".into(),
            Value::String(next_month.add_days(-1).to_string()),
        );
        Ok(ToolValue::Json(Value::Object(out)))
    }

    fn set_data_usage(&mut self, customer_id: &Value, line_id: &Value, used: &Value) -> ToolResult {
        let l = self.target_line(customer_id, line_id)?;
        let value = match used {
            Value::Number(n) if n.is_f64() => PyNum::Float(n.as_f64().unwrap_or_default()),
            Value::Number(n) => match n.as_i64() {
                Some(i) => PyNum::Int(i),
                None => PyNum::Float(n.as_f64().unwrap_or_default()),
            },
            other => {
                return Err(ToolError::type_error(format!(
                    "set_data_usage() expects a number for 'data_used_gb', got {}",
                    type_name(other)
                )));
            }
        };
        Arc::make_mut(&mut self.db.lines)[l].data_used_gb = value;
        Ok(text(format!(
            "Data usage set to {} GB for line {}",
            arg_str(used),
            line_id.show()
        )))
    }

    fn set_roaming(&mut self, customer_id: &Value, line_id: &Value, enable: bool) -> ToolResult {
        let l = self.target_line(customer_id, line_id)?;
        let (already, done) = if enable {
            (
                "Roaming was already enabled",
                "Roaming enabled successfully",
            )
        } else {
            (
                "Roaming was already disabled",
                "Roaming disabled successfully",
            )
        };
        if self.db.lines[l].roaming_enabled == enable {
            return Ok(text(already));
        }
        Arc::make_mut(&mut self.db.lines)[l].roaming_enabled = enable;
        Ok(text(done))
    }
}
