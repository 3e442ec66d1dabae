//! Discoverable agent tools on debit card disputes (Regulation E): filing one, a user's
//! dispute history, and the ATM deposit images an ATM dispute is checked against.

use super::args::{Args, cmp_num, field_is, fmt2, key, number, record};
use super::credit::history;
use super::db::Db;
use super::pyfmt::{display, f2};
use super::{TODAY, ids};
use crate::tooling::ToolError;
use serde_json::Value;
use tauguard_core::pyjson;

pub(super) fn call(db: &mut Db, name: &str, a: Args) -> Result<Option<String>, ToolError> {
    Ok(Some(match name {
        "file_debit_card_transaction_dispute_6281" => file(db, a)?,
        "get_debit_dispute_status_7483" => history(
            db,
            a,
            "user_id",
            ("Debit card dispute history retrieved successfully.", name),
            (
                "Debit card dispute history for user",
                "debit_card_disputes",
                "user_id",
            ),
            "\nNo debit card disputes found for this user.",
        ),
        "get_atm_deposit_images_8473" => atm_images(db, a)?,
        _ => return Ok(None),
    }))
}

const CATEGORIES: &[&str] = &[
    "unauthorized_transaction",
    "atm_cash_discrepancy",
    "atm_deposit_not_credited",
    "duplicate_charge",
    "incorrect_amount",
    "goods_services_not_received",
    "recurring_charge_after_cancellation",
    "card_present_fraud",
    "card_not_present_fraud",
];
const TYPES: &[&str] = &[
    "pin_purchase",
    "signature_purchase",
    "online_purchase",
    "atm_withdrawal",
    "atm_deposit",
    "recurring_payment",
    "person_to_person",
];
const PIN: &[&str] = &["yes_shared", "yes_observed", "no", "unknown"];
const ACTIONS: &[&str] = &[
    "keep_active",
    "freeze_pending_investigation",
    "close_and_reissue",
];

/// What a filed dispute records and reports beyond its arguments.
struct Filed {
    id: String,
    category: String,
    is_fraud: bool,
    pin_shared: bool,
    eligible: bool,
}

fn file(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if let Some(error) = dispute_request_error(a)? {
        return Ok(error);
    }
    let category = a.s("dispute_category");
    let filed = Filed {
        id: ids::dispute(&a.s("user_id"), &a.s("transaction_id")),
        is_fraud: [
            "unauthorized_transaction",
            "card_present_fraud",
            "card_not_present_fraud",
        ]
        .contains(&category.as_str()),
        category,
        pin_shared: a.v("pin_compromised") == "yes_shared",
        eligible: a.truthy("provisional_credit_eligible"),
    };
    if !db.add("debit_card_disputes", &filed.id, dispute_record(a, &filed)) {
        return Ok("Error: Dispute may have already been filed for this transaction.".into());
    }
    dispute_confirmation(a, &filed)
}

/// The transaction's facts: required, and the head of the dispute record, in upstream's
/// order in both.
const TRANSACTION_KEYS: [&str; 9] = [
    "transaction_id",
    "account_id",
    "card_id",
    "user_id",
    "dispute_category",
    "transaction_date",
    "discovery_date",
    "disputed_amount",
    "transaction_type",
];

/// The error text for arguments upstream refuses, in upstream's order of checks.
fn dispute_request_error(a: Args) -> Result<Option<String>, ToolError> {
    if a.missing(&TRANSACTION_KEYS) || a.missing(&["pin_compromised", "card_action"]) {
        return Ok(Some("Error: Missing required parameters.".into()));
    }
    if a.is_none("customer_max_liability_amount") {
        return Ok(Some(
            "Error: customer_max_liability_amount is required.".into(),
        ));
    }
    let flags = [
        "card_in_possession",
        "contacted_merchant",
        "police_report_filed",
        "written_statement_provided",
    ];
    if flags.iter().any(|k| a.is_none(k)) {
        return Ok(Some("Error: card_in_possession, contacted_merchant, police_report_filed, and written_statement_provided are required boolean fields.".into()));
    }
    for (arg, options) in [
        ("dispute_category", CATEGORIES),
        ("transaction_type", TYPES),
        ("pin_compromised", PIN),
        ("card_action", ACTIONS),
    ] {
        if let Some(refusal) = a.not_one_of(arg, options) {
            return Ok(Some(refusal));
        }
    }
    if cmp_num(a.v("disputed_amount"), "<=", 0.0)? {
        return Ok(Some(
            "Error: disputed_amount must be a positive number.".into(),
        ));
    }
    Ok(None)
}

/// The `debit_card_disputes` record, its keys in upstream's order.
fn dispute_record(a: Args, filed: &Filed) -> serde_json::Map<String, Value> {
    let copied = TRANSACTION_KEYS.into_iter().chain([
        "card_in_possession",
        "pin_compromised",
        "contacted_merchant",
        "police_report_filed",
        "written_statement_provided",
        "provisional_credit_eligible",
    ]);
    let mut fields = vec![("dispute_id", Value::String(filed.id.clone()))];
    fields.extend(copied.map(|k| (k, a.v(k).clone())));
    fields.push((
        "provisional_credit_issued",
        a.v("provisional_credit_eligible").clone(),
    ));
    fields.push((
        "provisional_credit_amount",
        if filed.eligible {
            a.v("disputed_amount").clone()
        } else {
            Value::Null
        },
    ));
    fields.push((
        "customer_max_liability_amount",
        a.v("customer_max_liability_amount").clone(),
    ));
    fields.push(("card_action", a.v("card_action").clone()));
    fields.push(("is_fraud_category", Value::Bool(filed.is_fraud)));
    fields.push(("pin_shared_voluntarily", Value::Bool(filed.pin_shared)));
    fields.push(("submitted_at", Value::from(TODAY)));
    fields.push(("status", Value::from("OPEN")));
    record(fields)
}

/// The text a filed dispute returns: its summary, then warnings and recommendations.
fn dispute_confirmation(a: Args, filed: &Filed) -> Result<String, ToolError> {
    let amount = a.v("disputed_amount");
    let shown = fmt2(amount)?;
    let id = &filed.id;
    let mut parts = vec![
        format!("Dispute ID: {id}"),
        format!("Transaction: {}", a.s("transaction_id")),
        format!("Account: {}", a.s("account_id")),
        format!("Category: {}", display(&filed.category)),
        format!("Disputed Amount: ${shown}"),
        format!("Card Action: {}", display(&a.s("card_action"))),
    ];
    parts.push(if filed.eligible {
        format!("Provisional Credit: ISSUED - ${shown} credited within 10 business days per Regulation E.")
    } else {
        "Provisional Credit: Not eligible - see Debit Card Provisional Credit Guidelines for details.".into()
    });
    if filed.pin_shared {
        parts.push("WARNING: Customer indicated PIN was shared voluntarily. This may affect liability determination.".into());
    }
    if filed.is_fraud
        && !a.truthy("police_report_filed")
        && number(amount).is_some_and(|x| x > 500.0)
    {
        parts.push(
            "RECOMMENDATION: For fraud disputes over $500, filing a police report is recommended."
                .into(),
        );
    }
    Ok(parts.join("\n"))
}

/// The envelope scan of the two discrepancy test deposits: one $875 check and $260 cash,
/// recorded by the ATM as $385.
fn discrepancy_scan(
    envelope: &str,
    time: &str,
    location: &str,
    check: &str,
    bank: &str,
    payee: &str,
    dated: &str,
) -> String {
    format!(
        "\n=== ATM DEPOSIT ENVELOPE SCAN ===\nEnvelope ID: {envelope}\nDeposit Time: {time}\nATM Location: {location}\n\n\
--- ENVELOPE CONTENTS ---\nItem 1: Personal Check\n  - Check Number: {check}\n  - Drawn On: {bank}\n  - Payee: {payee}\n  - Amount: $875.00\n  - Memo: \"October rent refund\"\n  - Signature: Present and legible\n  - Date on Check: {dated}\n\n\
Item 2: Cash\n  - Denomination breakdown:\n    * 2 x $100 bills = $200.00\n    * 3 x $20 bills = $60.00\n  - Total Cash: $260.00\n\n\
--- DEPOSIT SUMMARY ---\nCheck Total: $875.00\nCash Total: $260.00\nGRAND TOTAL: $1,135.00\n\n\
--- MACHINE RECORD ---\nAmount Recorded by ATM: $385.00\nDISCREPANCY DETECTED: $750.00 difference\n\n\
--- IMAGE QUALITY ---\nEnvelope scan: CLEAR\nCheck front: CLEAR\nCheck back (endorsement): CLEAR - endorsed \"For Deposit Only - {payee}\"\nCash image: CLEAR - bills visible and countable\n"
    )
}

const DISCREPANCY_NOTES: &str = "Images clearly show deposit contents totaling $1,135.00. ATM machine recorded only $385.00. Discrepancy of $750.00 confirmed via image review.";

/// The scanned deposits upstream hard-codes, by transaction id: ATM, envelope, notes.
fn scan(id: &str) -> Option<(&'static str, String, &'static str)> {
    Some(match id {
        "btxn_834027370c20" => (
            "ATM #3921",
            discrepancy_scan(
                "ENV-2025-3921-00923",
                "3:47 PM CST",
                "Rho-Bank ATM #3921, Cedar Lane Branch, Austin, TX",
                "7284",
                "First Texas Bank",
                "Derek Yamamoto",
                "11/03/2025",
            ),
            DISCREPANCY_NOTES,
        ),
        "btxn_test_deposit_001" => (
            "ATM #3921",
            discrepancy_scan(
                "ENV-2025-3921-00847",
                "2:34 PM EST",
                "Rho-Bank ATM #3921, 742 Oak Avenue, Portland, OR",
                "4821",
                "First National Bank",
                "Linda Patterson",
                "11/05/2025",
            ),
            DISCREPANCY_NOTES,
        ),
        "btxn_test_atm_dep_partial" => (
            "ATM #5847",
            "\n=== ATM DEPOSIT ENVELOPE SCAN ===\nEnvelope ID: ENV-2025-5847-00293\nDeposit Time: 10:15 AM EST\n\n\
--- ENVELOPE CONTENTS ---\nItem 1: Personal Check\n  - Check Number: 7392\n  - Amount: $500.00\n\n\
--- DEPOSIT SUMMARY ---\nCheck Total: $500.00\nCash Total: $0.00\nGRAND TOTAL: $500.00\n\n\
--- MACHINE RECORD ---\nAmount Recorded by ATM: $500.00\nNo discrepancy detected.\n"
                .to_string(),
            "Images confirm deposit matches recorded amount. No discrepancy found.",
        ),
        _ => return None,
    })
}

fn atm_images(db: &Db, a: Args) -> Result<String, ToolError> {
    if !a.truthy("transaction_id") {
        return Ok("Error: Missing required parameter: transaction_id".into());
    }
    let id = key(a.v("transaction_id"))?;
    let Some(txn) = db.get("bank_account_transaction_history", &id) else {
        return Ok(format!(
            "Error: Transaction '{}' not found.",
            a.s("transaction_id")
        ));
    };
    if !field_is(txn, "type", "atm_deposit") {
        return Ok(format!(
            "Error: Transaction '{id}' is not an ATM deposit. This tool only works for ATM deposit transactions."
        ));
    }
    let description = match txn.get("description") {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(crate::py::no_attribute(pyjson::type_name(other), "upper")),
    };
    let upper = description.to_uppercase();
    if !upper.contains("RHO-BANK") && !upper.contains("RHOBANK") {
        return Ok(format!(
            "Error: Transaction '{id}' is from a third-party ATM. Deposit images are only available for Rho-Bank ATM deposits. For third-party ATM disputes, a chargeback request must be submitted to the ATM network."
        ));
    }
    let date = txn
        .get("date")
        .map_or_else(|| "Unknown".to_string(), pyjson::py_str);
    let header = format!(
        "ATM Deposit Image Retrieval Results\n=====================================\nTransaction ID: {id}\n"
    );
    if let Some((atm, envelope, notes)) = scan(&id) {
        return Ok(format!(
            "{header}ATM: {atm}\nDeposit Date: {date}\n\n{envelope}\n\n--- VERIFICATION NOTES ---\n{notes}\n"
        ));
    }
    let amount = txn.get("amount").cloned().unwrap_or(Value::from(0));
    let recorded = number(&amount).map(f64::abs).map(f2).ok_or_else(|| {
        ToolError::type_error(format!(
            "bad operand type for abs(): '{}'",
            pyjson::type_name(&amount)
        ))
    })?;
    Ok(format!(
        "{header}ATM: {description}\nDeposit Date: {date}\nAmount Recorded: ${recorded}\n\n--- IMAGE STATUS ---\nStatus: IMAGES NOT AVAILABLE\nReason: Deposit images for this transaction have either expired (older than 90 days) or were not captured by the ATM system.\n\nFor deposits without available images, the dispute will proceed based on customer statement and ATM journal records only. Investigation timeline may be extended.\n"
    ))
}
