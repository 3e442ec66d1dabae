//! Declarations of the banking toolkits: names, kinds and parameters in upstream order
//! (`KnowledgeTools`, its retrieval mixins, `KnowledgeUserTools`, and the discoverable
//! tools of both).
//!
//! Descriptions are left empty: the model-facing schemas of this domain depend on the
//! retrieval variant and always come from the data directory (`tools.<variant>.json`), and
//! the discoverable tools' texts from `discoverable_tools.json`; see [`super::variant`].
//!
//! Kinds: upstream marks `give_discoverable_user_tool` and `unlock_discoverable_agent_tool`
//! `GENERIC` with `mutates_state=True`. tauguard's one notion of "mutating" is
//! [`ToolKind::Write`] (replayed in evaluation, guarded), so both are declared `Write`.

use crate::tooling::{Param, ToolDef, helper, tool};
use tauguard_core::ToolKind::{self, Generic, Read, Write};

const ANY: &str = "{}";

const fn req(name: &'static str) -> Param {
    Param {
        name,
        required: true,
        schema: ANY,
        description: "",
    }
}

const fn opt(name: &'static str) -> Param {
    Param {
        required: false,
        ..req(name)
    }
}

const fn t(name: &'static str, kind: ToolKind, params: &'static [Param]) -> ToolDef {
    tool(name, kind, "", params)
}

const KB_SEARCH: ToolDef = t("KB_search", Read, &[req("query")]);
const GREP: ToolDef = t("grep", Read, &[req("pattern")]);

macro_rules! agent_tools {
    ($($retrieval:expr),*) => {
        &[
            $($retrieval,)*
            t("transfer_to_human_agents", Generic, &[req("summary"), opt("reason")]),
            t("get_current_time", Read, &[]),
            t("get_user_information_by_id", Read, &[req("user_id")]),
            t("get_user_information_by_name", Read, &[req("customer_name")]),
            t("get_user_information_by_email", Read, &[req("email")]),
            t("change_user_email", Write, &[req("user_id"), req("new_email")]),
            t("get_referrals_by_user", Read, &[req("user_id")]),
            t("get_credit_card_transactions_by_user", Read, &[req("user_id")]),
            t("get_credit_card_accounts_by_user", Read, &[req("user_id")]),
            t(
                "log_verification",
                Write,
                &[
                    req("name"),
                    req("user_id"),
                    req("address"),
                    req("email"),
                    req("phone_number"),
                    req("date_of_birth"),
                    req("time_verified"),
                ],
            ),
            t("give_discoverable_user_tool", Write, &[req("discoverable_tool_name"), opt("arguments")]),
            t("unlock_discoverable_agent_tool", Write, &[req("agent_tool_name")]),
            t("call_discoverable_agent_tool", Write, &[req("agent_tool_name"), opt("arguments")]),
            t("list_discoverable_agent_tools", Read, &[]),
        ]
    };
}

/// The agent toolkit without retrieval tools (`no_knowledge`, `full_kb`, `golden_retrieval`).
pub const PLAIN: &[ToolDef] = agent_tools!();
/// With `KB_search` (`bm25`).
pub const WITH_KB_SEARCH: &[ToolDef] = agent_tools!(KB_SEARCH);
/// With `KB_search` and `grep` (`bm25_grep`); also the registry's view of the domain.
pub const WITH_KB_SEARCH_GREP: &[ToolDef] = agent_tools!(KB_SEARCH, GREP);
/// With `grep` (`grep_only`).
pub const WITH_GREP: &[ToolDef] = agent_tools!(GREP);

/// `KnowledgeUserTools`' tools, then its helper `query_database`.
pub const USER: &[ToolDef] = &[
    t(
        "apply_for_credit_card",
        Write,
        &[
            req("card_type"),
            req("customer_name"),
            req("annual_income"),
            opt("rho_bank_subscription"),
        ],
    ),
    t(
        "submit_referral",
        Write,
        &[req("user_id"), req("account_type")],
    ),
    t(
        "call_discoverable_user_tool",
        Write,
        &[req("discoverable_tool_name"), opt("arguments")],
    ),
    t("list_discoverable_user_tools", Read, &[]),
    t("request_human_agent_transfer", Write, &[]),
    t(
        "submit_transaction",
        Write,
        &[
            req("user_id"),
            req("credit_card_type"),
            req("merchant_name"),
            req("amount"),
            req("category"),
        ],
    ),
    helper(
        "query_database",
        Read,
        "",
        &[req("database_name"), opt("constraints")],
    ),
];

/// The agent's discoverable tools (`@is_discoverable_tool` on `KnowledgeTools`) in
/// definition order. A `Write` one mutates state (upstream's default for `WRITE`), so its
/// calls are always logged; the others only when the task's gold actions call them.
pub const AGENT_DISCOVERABLE: &[ToolDef] = &[
    t("example_agent_tool_0000", Write, &[]),
    t(
        "update_transaction_rewards_3847",
        Write,
        &[req("transaction_id"), req("new_rewards_earned")],
    ),
    t("initial_transfer_to_human_agent_0218", Generic, &[]),
    t("initial_transfer_to_human_agent_1822", Generic, &[]),
    t(
        "emergency_credit_bureau_incident_transfer_1114",
        Generic,
        &[],
    ),
    t(
        "file_credit_card_transaction_dispute_4829",
        Write,
        &[
            req("transaction_id"),
            req("card_action"),
            req("card_last_4_digits"),
            req("full_name"),
            req("user_id"),
            req("phone"),
            req("email"),
            req("address"),
            req("contacted_merchant"),
            req("purchase_date"),
            req("issue_noticed_date"),
            req("dispute_reason"),
            req("resolution_requested"),
            req("eligible_for_provisional_credit"),
            opt("partial_refund_amount"),
        ],
    ),
    t(
        "file_debit_card_transaction_dispute_6281",
        Write,
        &[
            req("transaction_id"),
            req("account_id"),
            req("card_id"),
            req("user_id"),
            req("dispute_category"),
            req("transaction_date"),
            req("discovery_date"),
            req("disputed_amount"),
            req("transaction_type"),
            req("card_in_possession"),
            req("pin_compromised"),
            req("contacted_merchant"),
            req("police_report_filed"),
            req("written_statement_provided"),
            req("provisional_credit_eligible"),
            req("customer_max_liability_amount"),
            req("card_action"),
        ],
    ),
    t(
        "set_debit_card_recurring_block_7382",
        Write,
        &[req("card_id"), req("block_recurring")],
    ),
    t("get_debit_dispute_status_7483", Read, &[req("user_id")]),
    t(
        "get_atm_deposit_images_8473",
        Read,
        &[req("transaction_id")],
    ),
    t(
        "order_replacement_credit_card_7291",
        Write,
        &[
            req("credit_card_account_id"),
            req("user_id"),
            req("shipping_address"),
            req("reason"),
            opt("expedited_shipping"),
        ],
    ),
    t("get_user_dispute_history_7291", Read, &[req("user_id")]),
    t(
        "get_pending_replacement_orders_5765",
        Read,
        &[req("credit_card_account_id")],
    ),
    t(
        "log_credit_card_closure_reason_4521",
        Write,
        &[
            req("credit_card_account_id"),
            req("user_id"),
            req("closure_reason"),
        ],
    ),
    t(
        "get_closure_reason_history_8293",
        Read,
        &[req("credit_card_account_id")],
    ),
    t(
        "apply_statement_credit_8472",
        Write,
        &[
            req("user_id"),
            req("credit_card_account_id"),
            req("amount"),
            req("reason"),
        ],
    ),
    t(
        "apply_credit_card_account_flag_6147",
        Write,
        &[
            req("credit_card_account_id"),
            req("user_id"),
            req("flag_type"),
            req("expiration_date"),
            req("reason"),
        ],
    ),
    t(
        "close_credit_card_account_7834",
        Write,
        &[req("credit_card_account_id"), req("user_id")],
    ),
    t(
        "pay_credit_card_from_checking_9182",
        Write,
        &[
            req("user_id"),
            req("checking_account_id"),
            req("credit_card_account_id"),
            req("amount"),
        ],
    ),
    t(
        "submit_credit_limit_increase_request_7392",
        Write,
        &[
            req("credit_card_account_id"),
            req("user_id"),
            req("requested_increase_amount"),
        ],
    ),
    t(
        "get_credit_limit_increase_history_4829",
        Read,
        &[req("credit_card_account_id")],
    ),
    t(
        "get_payment_history_6183",
        Read,
        &[req("credit_card_account_id"), req("months")],
    ),
    t(
        "approve_credit_limit_increase_5847",
        Write,
        &[
            req("credit_card_account_id"),
            req("user_id"),
            req("new_credit_limit"),
        ],
    ),
    t(
        "deny_credit_limit_increase_5848",
        Write,
        &[
            req("credit_card_account_id"),
            req("user_id"),
            req("denial_reason"),
        ],
    ),
    t(
        "open_bank_account_4821",
        Write,
        &[req("user_id"), req("account_type"), req("account_class")],
    ),
    t(
        "close_bank_account_7392",
        Write,
        &[
            req("account_id"),
            opt("reason"),
            opt("waive_early_closure_fee"),
        ],
    ),
    t(
        "get_all_user_accounts_by_user_id_3847",
        Read,
        &[req("user_id")],
    ),
    t(
        "transfer_funds_between_bank_accounts_7291",
        Write,
        &[
            req("source_account_id"),
            req("destination_account_id"),
            req("amount"),
        ],
    ),
    t(
        "apply_checking_account_credit_5829",
        Write,
        &[req("account_id"), req("amount"), req("credit_type")],
    ),
    t(
        "apply_savings_account_credit_6831",
        Write,
        &[req("account_id"), req("amount"), req("credit_type")],
    ),
    t(
        "submit_interest_discrepancy_report_7294",
        Write,
        &[
            req("account_id"),
            req("user_id"),
            req("expected_apy"),
            req("actual_apy"),
            req("amount_difference"),
        ],
    ),
    t(
        "get_bank_account_transactions_9173",
        Read,
        &[req("account_id")],
    ),
    t(
        "order_debit_card_5739",
        Write,
        &[
            req("account_id"),
            req("user_id"),
            req("delivery_option"),
            req("delivery_fee"),
            req("card_design"),
            req("design_fee"),
            req("shipping_address"),
            opt("excess_replacement_fee"),
        ],
    ),
    t("activate_debit_card_8291", Write, ACTIVATE),
    t("activate_debit_card_8292", Write, ACTIVATE),
    t("activate_debit_card_8293", Write, ACTIVATE),
    t(
        "close_debit_card_4721",
        Write,
        &[req("card_id"), req("reason")],
    ),
    t("freeze_debit_card_3892", Write, &[req("card_id")]),
    t("unfreeze_debit_card_3893", Write, &[req("card_id")]),
    t(
        "clear_debit_card_fraud_alert_4892",
        Write,
        &[req("card_id"), req("reason")],
    ),
    t(
        "reset_debit_card_pin_6284",
        Write,
        &[req("card_id"), req("last_4_digits"), req("new_pin")],
    ),
    t(
        "change_debit_card_pin_6285",
        Write,
        &[req("card_id"), req("current_pin"), req("new_pin")],
    ),
    t(
        "get_debit_cards_by_account_id_7823",
        Read,
        &[req("account_id")],
    ),
    t(
        "request_temporary_debit_card_limit_increase_8374",
        Write,
        &[req("card_id"), req("limit_type"), req("new_limit")],
    ),
];

const ACTIVATE: &[Param] = &[
    req("card_id"),
    req("last_4_digits"),
    req("expiration_date"),
    req("cvv"),
    req("pin"),
];

/// The user's discoverable tools (`@is_discoverable_tool` on `KnowledgeUserTools`).
pub const USER_DISCOVERABLE: &[ToolDef] = &[
    t(
        "submit_cash_back_dispute_0589",
        Write,
        &[req("user_id"), req("transaction_id")],
    ),
    t(
        "get_referral_link",
        Write,
        &[req("user_id"), req("card_name")],
    ),
    t(
        "get_card_last_4_digits",
        Read,
        &[req("credit_card_account_id")],
    ),
    t(
        "deposit_check_3847",
        Write,
        &[req("account_id"), req("check_amount")],
    ),
];

pub fn agent_discoverable(name: &str) -> Option<&'static ToolDef> {
    AGENT_DISCOVERABLE.iter().find(|d| d.name == name)
}

pub fn user_discoverable(name: &str) -> Option<&'static ToolDef> {
    USER_DISCOVERABLE.iter().find(|d| d.name == name)
}
