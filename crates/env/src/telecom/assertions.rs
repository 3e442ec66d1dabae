//! The `assert_*` helper methods of both toolkits, which env assertions call on the
//! predicted environment. Each returns a Python bool (a JSON `true`/`false` tool value) and
//! compares with Python `==`, so `1` equals `true` as it does upstream.

use super::model::{BillStatus, LineStatus};
use super::user_model::NetworkStatus;
use super::{Args, TelecomEnv};
use crate::environment::{ToolResult, ToolValue};
use crate::py::arg_str;
use crate::py::{Num, not_a_valid, type_name};
use crate::tooling::ToolError;
use serde_json::Value;
use tauguard_core::pyjson::py_eq;

fn boolean(b: bool) -> ToolResult {
    Ok(ToolValue::Json(Value::Bool(b)))
}

/// `actual == expected` with Python semantics.
fn equals(actual: bool, expected: &Value) -> bool {
    py_eq(&Value::Bool(actual), expected)
}

fn number(func: &str, name: &str, v: &Value) -> Result<f64, ToolError> {
    Num::of(v).map(Num::as_f64).ok_or_else(|| {
        ToolError::type_error(format!(
            "{func}() expects a number for '{name}', got {}",
            type_name(v)
        ))
    })
}

impl TelecomEnv {
    pub(crate) fn agent_assertion(&mut self, name: &str, a: &Args) -> ToolResult {
        match name {
            "assert_data_refueling_amount" => {
                let l = self.target_line(a.req(0), a.req(1))?;
                let expected = number(name, "expected_amount", a.req(2))?;
                boolean((self.db.lines[l].data_refueling_gb - expected).abs() < 1e-6)
            }
            "assert_line_status" => {
                let l = self.target_line(a.req(0), a.req(1))?;
                let status: LineStatus = self.db.lines[l].status;
                boolean(a.req(2).as_str() == Some(status.value()))
            }
            "assert_overdue_bill_exists" => {
                let (customer_id, bill_id) = (a.req(0), a.req(1));
                let c = self.customer_idx(customer_id)?;
                if !self.db.customers[c]
                    .bill_ids
                    .iter()
                    .any(|b| bill_id.as_str() == Some(b))
                {
                    return Err(ToolError::value(format!(
                        "Overdue bill {} not found",
                        arg_str(bill_id)
                    )));
                }
                let b = self.bill_idx(bill_id)?;
                if self.db.bills[b].status != BillStatus::Overdue {
                    return Err(ToolError::value(format!(
                        "Overdue bill {} is not overdue",
                        arg_str(bill_id)
                    )));
                }
                boolean(true)
            }
            "assert_no_overdue_bill" => match self.bill_idx(a.req(0)) {
                Ok(b) => boolean(self.db.bills[b].status == BillStatus::Paid),
                Err(_) => boolean(true),
            },
            other => Err(crate::py::no_attribute(super::AGENT_OWNER, other)),
        }
    }

    pub(crate) fn user_assertion(&mut self, name: &str, a: &Args) -> ToolResult {
        let d = self.phone();
        match name {
            "assert_airplane_mode_status" => boolean(equals(d.airplane_mode, a.req(0))),
            "assert_service_status" => {
                let expected = a.req(0);
                let status = expected
                    .as_str()
                    .and_then(NetworkStatus::parse)
                    .ok_or_else(|| not_a_valid(expected, "NetworkStatus"))?;
                boolean(d.network_connection_status == status)
            }
            "assert_mobile_data_status" => boolean(equals(self.mobile_data_working(), a.req(0))),
            "assert_mobile_roaming_status" => boolean(equals(d.roaming_enabled, a.req(0))),
            "assert_mobile_data_saver_mode_status" => boolean(equals(d.data_saver_mode, a.req(0))),
            "assert_internet_speed" => {
                let expected = number(name, "expected_speed", a.req(0))?;
                let (speed, label) = self.speed_test();
                let fast_enough = speed.unwrap_or(0.0) >= expected;
                match a.opt(1) {
                    None | Some(Value::Null) => boolean(fast_enough),
                    Some(Value::String(desc)) => {
                        boolean(fast_enough && label.to_lowercase() == desc.to_lowercase())
                    }
                    Some(other) => Err(crate::py::no_attribute(
                        crate::py::type_name(other),
                        "lower",
                    )),
                }
            }
            "assert_internet_not_excellent" => {
                boolean(self.speed_test().1.to_lowercase() != "excellent")
            }
            "assert_can_send_mms" => {
                let can = self.can_send_mms()?;
                boolean(equals(can, a.req(0)))
            }
            "assert_mobile_data_usage_exceeded" => boolean(equals(
                self.surroundings().mobile_data_usage_exceeded,
                a.req(0),
            )),
            other => Err(crate::py::no_attribute(super::USER_OWNER, other)),
        }
    }
}
