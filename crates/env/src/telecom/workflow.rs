//! The device steps of telecom's technical-support workflow (`tech_support_workflow.md` of
//! the data directory): each fix is preceded by the check that shows it is needed and followed
//! by the check that shows it worked ("Ask the user to check ... If Airplane Mode is ON: Ask the
//! user to turn Airplane Mode OFF. Ask user to look at their status bar and check if service is
//! restored"). τ²-bench's gold actions hold the fixes only; the policy-following sim agent
//! puts these steps around them. Written from the workflow text, independently of the process
//! evaluator's spec, which no sim stand-in reads.

use crate::registry::WorkflowStep;

const NO_ARGS: &[&str] = &[];

/// Per action: checks before (Step 1.1 to 3.6 name each), checks after.
pub(super) const WORKFLOW: &[WorkflowStep] = &[
    // Step 1.1: connection status, then the status bar.
    WorkflowStep {
        action: "toggle_airplane_mode",
        diagnose: &[("check_network_status", NO_ARGS)],
        verify: &["check_status_bar"],
    },
    // Step 1.2: SIM status; "Check that the SIM card is ACTIVE", then the status bar.
    WorkflowStep {
        action: "reseat_sim_card",
        diagnose: &[("check_sim_status", NO_ARGS)],
        verify: &["check_sim_status", "check_status_bar"],
    },
    // Step 1.3 (after the restart the gold holds) and Step 3.6: the APN settings first.
    WorkflowStep {
        action: "reset_apn_settings",
        diagnose: &[("check_apn_settings", NO_ARGS)],
        verify: &["check_status_bar"],
    },
    // Step 2.1.2: whether data roaming is on, then the speed test.
    WorkflowStep {
        action: "toggle_roaming",
        diagnose: &[("check_network_status", NO_ARGS)],
        verify: &["run_speed_test"],
    },
    WorkflowStep {
        action: "enable_roaming",
        diagnose: &[],
        verify: &["run_speed_test"],
    },
    // Step 2.1.3: whether mobile data is on, then the speed test.
    WorkflowStep {
        action: "toggle_data",
        diagnose: &[("check_network_status", NO_ARGS)],
        verify: &["run_speed_test"],
    },
    // Step 2.1.4: after a refuel, the speed test (the usage read is an agent prerequisite).
    WorkflowStep {
        action: "refuel_data",
        diagnose: &[],
        verify: &["run_speed_test"],
    },
    // Step 2.2.1 to 2.2.3: the setting first, then the speed test.
    WorkflowStep {
        action: "toggle_data_saver_mode",
        diagnose: &[("check_data_restriction_status", NO_ARGS)],
        verify: &["run_speed_test"],
    },
    WorkflowStep {
        action: "set_network_mode_preference",
        diagnose: &[("check_network_mode_preference", NO_ARGS)],
        verify: &["run_speed_test"],
    },
    WorkflowStep {
        action: "disconnect_vpn",
        diagnose: &[("check_vpn_status", NO_ARGS)],
        verify: &["run_speed_test"],
    },
    // Step 3.4 to 3.6: the setting first, then an MMS.
    WorkflowStep {
        action: "toggle_wifi_calling",
        diagnose: &[("check_wifi_calling_status", NO_ARGS)],
        verify: &["can_send_mms"],
    },
    WorkflowStep {
        action: "grant_app_permission",
        diagnose: &[("check_app_permissions", &["app_name"])],
        verify: &["can_send_mms"],
    },
    WorkflowStep {
        action: "set_apn_settings",
        diagnose: &[("check_apn_settings", NO_ARGS)],
        verify: &["can_send_mms"],
    },
];
