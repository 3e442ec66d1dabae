//! `sync_tools`: after every step, the phone's surroundings are brought in line with the
//! backend line of the user's phone number (active, roaming allowed, data usage exceeded),
//! a paid payment request marks its bill Paid, and a new Awaiting Payment bill becomes the
//! user's payment request.
//!
//! Fields are only written when they change, so an environment keeps sharing its records
//! with the base until something really differs.

use super::TelecomEnv;
use super::model::{BillStatus, LineStatus};
use super::user_model::PaymentRequest;
use crate::tooling::ToolError;
use std::sync::Arc;

impl TelecomEnv {
    pub(crate) fn sync(&mut self) -> Result<(), ToolError> {
        let Some(phone) = self.surroundings().phone_number.clone() else {
            return Ok(());
        };
        let l = self.line_idx_by_phone(phone.as_str())?;
        let line = &self.db.lines[l];
        let line_active = line.status == LineStatus::Active;
        let roaming = line.roaming_enabled;
        let (used, refuel, plan_id) = (
            line.data_used_gb.as_f64(),
            line.data_refueling_gb,
            line.plan_id.clone(),
        );
        if self.surroundings().line_active != line_active {
            self.surroundings_mut().line_active = line_active;
        }
        if self.surroundings().roaming_allowed != roaming {
            self.surroundings_mut().roaming_allowed = roaming;
        }
        let plan = &self.db.plans[self.plan_idx(plan_id.as_str())?];
        let exceeded = used >= plan.data_limit_gb + refuel;
        if self.surroundings().mobile_data_usage_exceeded != exceeded {
            self.surroundings_mut().mobile_data_usage_exceeded = exceeded;
        }

        if let Some(request) = &self.surroundings().payment_request
            && request.paid
        {
            let b = self.bill_idx(request.bill_id.as_str())?;
            Arc::make_mut(&mut self.db.bills)[b].status = BillStatus::Paid;
            self.surroundings_mut().payment_request = None;
        }

        if self.surroundings().payment_request.is_none() {
            let c = self.customer_idx_by_phone(phone.as_str())?;
            if let Some(&b) = self.bills_awaiting_payment(c)?.first() {
                let bill = &self.db.bills[b];
                let request = PaymentRequest {
                    bill_id: bill.bill_id.clone(),
                    amount_due: bill.total_due,
                    paid: false,
                };
                self.surroundings_mut().payment_request = Some(request);
            }
        }
        Ok(())
    }
}
