//! Declarations of both telecom toolkits in upstream definition order: the agent's
//! `TelecomTools` and the user's `TelecomUserTools`. Tools carry the descriptions and
//! parameter schemas upstream publishes (`tools.json`); non-tool helper methods, which only
//! initialization actions and env assertions call, are listed with `is_tool: false`.

use crate::tooling::{
    Param, SchemaDef, TRANSFER_TO_HUMAN_AGENTS, ToolDef, helper, param as p, tool,
};
use tauguard_core::ToolKind;

/// Python class names, as `TypeError` and `AttributeError` texts show them.
pub const AGENT_OWNER: &str = "TelecomTools";
pub const USER_OWNER: &str = "TelecomUserTools";

const STR: &str = r#"{"type":"string"}"#;
const NUM: &str = r#"{"type":"number"}"#;
const BOOL: &str = r#"{"type":"boolean"}"#;

pub static AGENT_TOOLKIT: &[ToolDef] = &[
    tool(
        "get_customer_by_phone",
        ToolKind::Read,
        "Finds a customer by their primary contact or line phone number.",
        &[p("phone_number", STR, "The phone number to search for.")],
    ),
    tool(
        "get_customer_by_id",
        ToolKind::Read,
        "Retrieves a customer directly by their unique ID.",
        &[p(
            "customer_id",
            STR,
            "The unique identifier of the customer.",
        )],
    ),
    tool(
        "get_customer_by_name",
        ToolKind::Read,
        "Searches for customers by name and DOB. May return multiple matches if names are similar,\n\nDOB helps disambiguate.",
        &[
            p("full_name", STR, "The full name of the customer."),
            p(
                "dob",
                STR,
                "Date of birth for verification, in the format YYYY-MM-DD.",
            ),
        ],
    ),
    helper(
        "get_available_plan_ids",
        ToolKind::Read,
        "Returns all the plans that are available to the user.",
        &[],
    ),
    tool(
        "get_details_by_id",
        ToolKind::Read,
        "Retrieves the details for a given ID.\n\nThe ID must be a valid ID for a Customer, Line, Device, Bill, or Plan.",
        &[p("id", STR, "The ID of the object to retrieve.")],
    ),
    tool(
        "suspend_line",
        ToolKind::Write,
        "Suspends a specific line (max 6 months).\n\nChecks: Line status must be Active.\nLogic: Sets line status to Suspended, records suspension_start_date.",
        &[
            p("customer_id", STR, "ID of the customer who owns the line."),
            p("line_id", STR, "ID of the line to suspend."),
            p("reason", STR, "Reason for suspension."),
        ],
    ),
    tool(
        "resume_line",
        ToolKind::Write,
        "Resumes a suspended line.\n\nChecks: Line status must be Suspended or Pending Activation.\nLogic: Sets line status to Active, clears suspension_start_date.",
        &[
            p("customer_id", STR, "ID of the customer who owns the line."),
            p("line_id", STR, "ID of the line to resume."),
        ],
    ),
    tool(
        "get_bills_for_customer",
        ToolKind::Read,
        "Retrieves a list of the customer's bills, most recent first.",
        &[
            p("customer_id", STR, "ID of the customer."),
            Param {
                name: "limit",
                required: false,
                schema: r#"{"default":12,"type":"integer"}"#,
                description: "Maximum number of bills to return.",
            },
        ],
    ),
    tool(
        "send_payment_request",
        ToolKind::Write,
        "Sends a payment request to the customer for a specific bill.\n\nChecks:\n    - Customer exists\n    - Bill exists and belongs to the customer\n    - No other bills are already awaiting payment for this customer\nLogic: Sets bill status to AWAITING_PAYMENT and notifies customer.\nWarning: This method does not check if the bill is already PAID.\nAlways check the bill status before calling this method.",
        &[
            p("customer_id", STR, "ID of the customer who owns the bill."),
            p(
                "bill_id",
                STR,
                "ID of the bill to send payment request for.",
            ),
        ],
    ),
    tool(
        "get_data_usage",
        ToolKind::Read,
        "Retrieves current billing cycle data usage for a line, including data\n\nrefueling amount, data limit, and cycle end date.",
        &[
            p("customer_id", STR, "ID of the customer who owns the line."),
            p("line_id", STR, "ID of the line to check usage for."),
        ],
    ),
    helper(
        "set_data_usage",
        ToolKind::Write,
        "Sets the data usage for a line.",
        &[
            p("customer_id", STR, "ID of the customer."),
            p("line_id", STR, "ID of the line."),
            p("data_used_gb", NUM, "Amount of data used in GB."),
        ],
    ),
    tool(
        "enable_roaming",
        ToolKind::Write,
        "Enables international roaming on a line.",
        &[
            p("customer_id", STR, "ID of the customer who owns the line."),
            p("line_id", STR, "ID of the line to enable roaming for."),
        ],
    ),
    tool(
        "disable_roaming",
        ToolKind::Write,
        "Disables international roaming on a line.",
        &[
            p("customer_id", STR, "ID of the customer who owns the line."),
            p("line_id", STR, "ID of the line to disable roaming for."),
        ],
    ),
    TRANSFER_TO_HUMAN_AGENTS,
    tool(
        "refuel_data",
        ToolKind::Write,
        "Refuels data for a specific line, adding to the customer's bill.\n\nChecks: Line status must be Active, Customer owns the line.\nLogic: Adds data to the line and charges customer based on the plan's refueling rate.",
        &[
            p("customer_id", STR, "ID of the customer who owns the line."),
            p("line_id", STR, "ID of the line to refuel data for."),
            p("gb_amount", NUM, "Amount of data to add in gigabytes."),
        ],
    ),
    helper(
        "suspend_line_for_overdue_bill",
        ToolKind::Write,
        "Suspends a line for an unpaid bill.",
        &[
            p("customer_id", STR, ""),
            p("line_id", STR, ""),
            p("new_bill_id", STR, ""),
            p("contract_ended", BOOL, ""),
        ],
    ),
    helper(
        "assert_data_refueling_amount",
        ToolKind::Read,
        "Assert that the data refueling amount is as expected.",
        &[
            p("customer_id", STR, ""),
            p("line_id", STR, ""),
            p("expected_amount", NUM, ""),
        ],
    ),
    helper(
        "assert_line_status",
        ToolKind::Read,
        "Assert that the line status is as expected.",
        &[
            p("customer_id", STR, ""),
            p("line_id", STR, ""),
            p("expected_status", STR, ""),
        ],
    ),
    helper(
        "assert_overdue_bill_exists",
        ToolKind::Read,
        "Assert that the overdue bill exists.",
        &[p("customer_id", STR, ""), p("overdue_bill_id", STR, "")],
    ),
    helper(
        "assert_no_overdue_bill",
        ToolKind::Read,
        "Assert that the overdue bill is not in the database or is paid.",
        &[p("overdue_bill_id", STR, "")],
    ),
];

/// The nested models of the user toolkit's parameters (pydantic `$defs`).
const NETWORK_MODE_PREFERENCE: SchemaDef = SchemaDef {
    name: "NetworkModePreference",
    schema: r#"{"enum":["4g_5g_preferred","4g_only","3g_only","2g_only"],"title":"NetworkModePreference","type":"string"}"#,
};
const APN_NAMES: SchemaDef = SchemaDef {
    name: "APNNames",
    schema: r#"{"enum":["internet","broken"],"title":"APNNames","type":"string"}"#,
};
const APN_SETTINGS: SchemaDef = SchemaDef {
    name: "APNSettings",
    schema: r##"{"additionalProperties":false,"description":"Represents the configuration for a single Access Point Name (APN).","properties":{"apn_name":{"$ref":"#/$defs/APNNames","default":"internet","description":"The name identifier for the APN connection."},"reset_at_reboot":{"default":false,"description":"Whether the APN settings will be reset at the next reboot.","title":"Reset At Reboot","type":"boolean"},"mms_apn":{"anyOf":[{"type":"string"},{"type":"null"}],"default":"mms","description":"Specific APN name used for MMS traffic, if different from general data.","title":"Mms Apn"},"mmsc_url":{"anyOf":[{"type":"string"},{"type":"null"}],"default":"http://mms.carrier.com/mms/wapenc","description":"The URL of the Multimedia Messaging Service Center (MMSC). Crucial for MMS.","title":"Mmsc Url"},"mms_proxy":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"description":"The proxy server address required for MMS traffic on some networks.","title":"Mms Proxy"},"mms_port":{"anyOf":[{"type":"integer"},{"type":"null"}],"default":null,"description":"The proxy server port required for MMS traffic on some networks.","title":"Mms Port"}},"title":"APNSettings","type":"object"}"##,
};

pub static USER_TOOLKIT: &[ToolDef] = &[
    helper(
        "set_user_info",
        ToolKind::Write,
        "Sets the user's name and phone number.",
        &[p("name", STR, ""), p("phone_number", STR, "")],
    ),
    helper(
        "set_user_location",
        ToolKind::Write,
        "Sets the user's location to abroad or not.",
        &[p("abroad", BOOL, "")],
    ),
    tool(
        "check_status_bar",
        ToolKind::Read,
        "Shows what icons are currently visible in your phone's status bar (the area at the top of the screen). Displays network signal strength, mobile data status (enabled, disabled, data saver), Wi-Fi status, and battery level.",
        &[],
    ),
    tool(
        "check_network_status",
        ToolKind::Read,
        "Checks your phone's connection status to cellular networks and Wi-Fi. Shows airplane mode status, signal strength, network type, whether mobile data is enabled, and whether data roaming is enabled.",
        &[],
    ),
    tool(
        "check_network_mode_preference",
        ToolKind::Read,
        "Shows the current network mode preference.",
        &[],
    ),
    ToolDef {
        defs: &[NETWORK_MODE_PREFERENCE],
        ..tool(
            "set_network_mode_preference",
            ToolKind::Write,
            "Changes the type of cellular network your phone prefers to connect to (e.g., 5G, LTE/4G, 3G). Higher-speed networks (LTE/5G) provide faster data but may use more battery.",
            &[p(
                "mode",
                r##"{"anyOf":[{"$ref":"#/$defs/NetworkModePreference"},{"type":"string"}]}"##,
                "",
            )],
        )
    },
    tool(
        "run_speed_test",
        ToolKind::Read,
        "Measures your current internet connection speed (download speed). Provides information about connection quality and what activities it can support.",
        &[],
    ),
    tool(
        "toggle_airplane_mode",
        ToolKind::Write,
        "Toggles Airplane Mode ON or OFF. When ON, it disconnects all wireless communications including cellular, Wi-Fi, and Bluetooth.\n\nReturns the new state of airplane_mode.",
        &[],
    ),
    helper(
        "turn_airplane_mode_on",
        ToolKind::Write,
        "Turns Airplane Mode ON.",
        &[],
    ),
    helper(
        "turn_airplane_mode_off",
        ToolKind::Write,
        "Turns Airplane Mode OFF.",
        &[],
    ),
    tool(
        "check_sim_status",
        ToolKind::Read,
        "Checks if your SIM card is working correctly and displays its current status. Shows if the SIM is active, missing, or locked with a PIN or PUK code.",
        &[],
    ),
    tool(
        "reseat_sim_card",
        ToolKind::Write,
        "Simulates removing and reinserting your SIM card. This can help resolve recognition issues.",
        &[],
    ),
    helper(
        "unseat_sim_card",
        ToolKind::Write,
        "Un-seats the SIM card by removing it. This is fixed by calling reseat_sim_card().",
        &[],
    ),
    helper(
        "lock_sim_card",
        ToolKind::Write,
        "Locks the SIM card by setting the PIN. This cannot be fixed by calling a tool.",
        &[p("mode", r#"{"enum":["pin","puk"],"type":"string"}"#, "")],
    ),
    tool(
        "toggle_data",
        ToolKind::Write,
        "Toggles your phone's mobile data connection ON or OFF. Controls whether your phone can use cellular data for internet access when Wi-Fi is unavailable.\n\nReturns the new data connection status.",
        &[],
    ),
    helper("turn_data_on", ToolKind::Write, "Turns Data ON.", &[]),
    helper("turn_data_off", ToolKind::Write, "Turns Data OFF.", &[]),
    tool(
        "toggle_roaming",
        ToolKind::Write,
        "Toggles Data Roaming ON or OFF. When ON, your phone can use data networks in areas outside your carrier's coverage.\n\nReturns the new data roaming status.",
        &[],
    ),
    helper(
        "turn_roaming_on",
        ToolKind::Write,
        "Turns Data Roaming ON.",
        &[],
    ),
    helper(
        "turn_roaming_off",
        ToolKind::Write,
        "Turns Data Roaming OFF.",
        &[],
    ),
    tool(
        "check_data_restriction_status",
        ToolKind::Read,
        "Checks if your phone has any data-limiting features active. Shows if Data Saver mode is on.",
        &[],
    ),
    tool(
        "toggle_data_saver_mode",
        ToolKind::Write,
        "Toggles Data Saver mode ON or OFF. When ON, it reduces data usage, which may affect data speed.\n\nReturns the new data saver mode status.",
        &[],
    ),
    helper(
        "turn_data_saver_mode_on",
        ToolKind::Write,
        "Turns Data Saver mode ON.",
        &[],
    ),
    helper(
        "turn_data_saver_mode_off",
        ToolKind::Write,
        "Turns Data Saver mode OFF.",
        &[],
    ),
    tool(
        "check_apn_settings",
        ToolKind::Read,
        "Checks the technical APN settings your phone uses to connect to your carrier's mobile data network. Shows current APN name and MMSC URL for picture messaging.",
        &[],
    ),
    ToolDef {
        defs: &[APN_NAMES, APN_SETTINGS],
        ..tool(
            "set_apn_settings",
            ToolKind::Write,
            "Sets the APN settings for the phone.",
            &[p(
                "apn_settings",
                r##"{"anyOf":[{"$ref":"#/$defs/APNSettings"},{"additionalProperties":true,"type":"object"}]}"##,
                "",
            )],
        )
    },
    tool(
        "reset_apn_settings",
        ToolKind::Write,
        "Resets your APN settings to the default settings.",
        &[],
    ),
    helper(
        "break_apn_settings",
        ToolKind::Write,
        "Breaks the APN settings. This is fixed by calling reset_apn_settings().",
        &[],
    ),
    helper(
        "break_apn_mms_setting",
        ToolKind::Write,
        "Breaks the APN MMS setting. This is fixed by calling reset_apn_settings().",
        &[],
    ),
    tool(
        "check_wifi_status",
        ToolKind::Read,
        "Checks your Wi-Fi connection status. Shows if Wi-Fi is turned on, which network you're connected to (if any), and the signal strength.",
        &[],
    ),
    tool(
        "toggle_wifi",
        ToolKind::Write,
        "Toggles your phone's Wi-Fi radio ON or OFF. Controls whether your phone can discover and connect to wireless networks for internet access.\n\nReturns the new Wi-Fi status.",
        &[],
    ),
    tool(
        "check_wifi_calling_status",
        ToolKind::Read,
        "Checks if Wi-Fi Calling is enabled on your device. This feature allows you to make and receive calls over a Wi-Fi network instead of using the cellular network.",
        &[],
    ),
    tool(
        "toggle_wifi_calling",
        ToolKind::Write,
        "Toggles Wi-Fi Calling ON or OFF. This feature allows you to make and receive calls over Wi-Fi instead of the cellular network, which can help in areas with weak cellular signal.\n\nReturns the new Wi-Fi Calling status.",
        &[],
    ),
    helper(
        "set_wifi_calling",
        ToolKind::Write,
        "Set the Wi-Fi Calling setting. Set MMS over WIFI accordingly if provided.",
        &[
            p("enabled", BOOL, ""),
            Param {
                name: "mms_over_wifi",
                required: false,
                schema: r#"{"anyOf":[{"type":"boolean"},{"type":"null"}],"default":null}"#,
                description: "",
            },
        ],
    ),
    tool(
        "check_vpn_status",
        ToolKind::Read,
        "Checks if you're using a VPN (Virtual Private Network) connection. Shows if a VPN is active, connected, and displays any available connection details.",
        &[],
    ),
    tool(
        "connect_vpn",
        ToolKind::Write,
        "Connects to your VPN (Virtual Private Network).",
        &[],
    ),
    tool(
        "disconnect_vpn",
        ToolKind::Write,
        "Disconnects any active VPN (Virtual Private Network) connection. Stops routing your internet traffic through a VPN server, which might affect connection speed or access to content.",
        &[],
    ),
    helper(
        "break_vpn",
        ToolKind::Write,
        "Breaks the VPN connection. Results in a slow mobile data.",
        &[],
    ),
    tool(
        "check_installed_apps",
        ToolKind::Read,
        "Returns the name of all installed apps on the phone.",
        &[],
    ),
    tool(
        "check_app_status",
        ToolKind::Read,
        "Checks detailed information about a specific app. Shows its permissions and background data usage settings.",
        &[p("app_name", STR, "")],
    ),
    tool(
        "check_app_permissions",
        ToolKind::Read,
        "Checks what permissions a specific app currently has. Shows if the app has access to features like storage, camera, location, etc.",
        &[p("app_name", STR, "")],
    ),
    tool(
        "grant_app_permission",
        ToolKind::Write,
        "Gives a specific permission to an app (like access to storage, camera, or location). Required for some app functions to work properly.",
        &[
            p(
                "app_name",
                STR,
                "The name of the app to grant the permission to.",
            ),
            p(
                "permission",
                STR,
                "The permission to grant, should be lowercase.",
            ),
        ],
    ),
    helper(
        "remove_app_permission",
        ToolKind::Write,
        "Removes a specific permission from an app.",
        &[p("app_name", STR, ""), p("permission", STR, "")],
    ),
    tool(
        "can_send_mms",
        ToolKind::Read,
        "Checks if the default messaging app can send MMS messages.",
        &[],
    ),
    tool(
        "reboot_device",
        ToolKind::Write,
        "Restarts your phone completely. This can help resolve many temporary software glitches by refreshing all running services and connections.",
        &[],
    ),
    helper(
        "simulate_network_search",
        ToolKind::Write,
        "Simulates the outcome of a cellular network search based on SIM status.",
        &[],
    ),
    tool(
        "check_payment_request",
        ToolKind::Read,
        "Checks if the agent has sent you a payment request.",
        &[],
    ),
    tool(
        "make_payment",
        ToolKind::Write,
        "Makes a payment for the bill that the agent has sent you.",
        &[],
    ),
    helper(
        "assert_airplane_mode_status",
        ToolKind::Read,
        "Assert that the airplane mode status is as expected.",
        &[p("expected_status", BOOL, "")],
    ),
    helper(
        "assert_service_status",
        ToolKind::Read,
        "Assert that the network connection status is as expected.",
        &[p("expected_status", STR, "")],
    ),
    helper(
        "assert_mobile_data_status",
        ToolKind::Read,
        "Assert that the mobile data status is as expected.",
        &[p("expected_status", BOOL, "")],
    ),
    helper(
        "assert_mobile_roaming_status",
        ToolKind::Read,
        "Assert that the roaming status is as expected.",
        &[p("expected_status", BOOL, "")],
    ),
    helper(
        "assert_mobile_data_saver_mode_status",
        ToolKind::Read,
        "Assert that the data saver mode status is as expected.",
        &[p("expected_status", BOOL, "")],
    ),
    helper(
        "assert_internet_speed",
        ToolKind::Read,
        "Assert that the internet speed is as expected.",
        &[
            p("expected_speed", NUM, ""),
            Param {
                name: "expected_desc",
                required: false,
                schema: r#"{"anyOf":[{"type":"string"},{"type":"null"}],"default":null}"#,
                description: "",
            },
        ],
    ),
    helper(
        "assert_internet_not_excellent",
        ToolKind::Read,
        "Assert that the internet speed is not excellent.",
        &[],
    ),
    helper(
        "assert_can_send_mms",
        ToolKind::Read,
        "Assert that the default messaging app can send MMS messages.",
        &[p("expected_status", BOOL, "")],
    ),
    helper(
        "assert_mobile_data_usage_exceeded",
        ToolKind::Read,
        "Assert that the mobile data usage exceeded status is as expected.",
        &[p("expected_status", BOOL, "")],
    ),
];
