//! Declarations of the airline toolkit (`AirlineTools` upstream) in registration order: the
//! names, kinds, descriptions and parameter schemas the agent is shown and the dispatcher in
//! [`super::tools`] binds arguments against.

use crate::tooling::{Param, ToolDef, param as p, tool};
use tauguard_core::ToolKind;

/// Class name upstream's `TypeError` and `AttributeError` texts carry.
pub const OWNER: &str = "AirlineTools";

const STR: &str = r#"{"type": "string"}"#;
const INT: &str = r#"{"type": "integer"}"#;
const CABIN: &str = r#"{"enum": ["business", "economy", "basic_economy"], "type": "string"}"#;
const FLIGHTS: &str = r#"{"items": {"type": "object", "properties": {"flight_number": {"type": "string", "description": "Flight number, e.g. HAT001."}, "date": {"type": "string", "description": "Flight date as YYYY-MM-DD."}}, "required": ["flight_number", "date"]}, "type": "array"}"#;
const PASSENGERS: &str = r#"{"items": {"type": "object", "properties": {"first_name": {"type": "string", "description": "Given name."}, "last_name": {"type": "string", "description": "Family name."}, "dob": {"type": "string", "description": "Date of birth as YYYY-MM-DD."}}, "required": ["first_name", "last_name", "dob"]}, "type": "array"}"#;
const PAYMENTS: &str = r#"{"items": {"type": "object", "properties": {"payment_id": {"type": "string", "description": "Id of a payment method saved in the user's profile."}, "amount": {"type": "integer", "description": "Amount charged to it, in dollars."}}, "required": ["payment_id", "amount"]}, "type": "array"}"#;

const RESERVATION_ID: Param = p(
    "reservation_id",
    STR,
    "Six-character reservation code, e.g. 'ZFA04Y'.",
);
const PAYMENT_ID: Param = p(
    "payment_id",
    STR,
    "Id of a payment method saved in the user's profile, e.g. 'credit_card_7815826'.",
);

/// The toolkit, in upstream registration order.
pub static TOOLS: &[ToolDef] = &[
    tool(
        "book_reservation",
        ToolKind::Write,
        "Create a new reservation for a user.",
        &[
            p(
                "user_id",
                STR,
                "Id of the user making the booking, e.g. 'sara_doe_496'.",
            ),
            p("origin", STR, "IATA code of the trip's origin, e.g. 'SFO'."),
            p(
                "destination",
                STR,
                "IATA code of the trip's destination, e.g. 'JFK'.",
            ),
            p(
                "flight_type",
                r#"{"enum": ["round_trip", "one_way"], "type": "string"}"#,
                "Trip type: 'one_way' or 'round_trip'.",
            ),
            p(
                "cabin",
                CABIN,
                "Cabin class: 'basic_economy', 'economy' or 'business'.",
            ),
            p(
                "flights",
                FLIGHTS,
                "Every flight segment of the trip, each with its flight number and date.",
            ),
            p(
                "passengers",
                PASSENGERS,
                "Every traveller on the reservation.",
            ),
            p(
                "payment_methods",
                PAYMENTS,
                "How the total is split across the user's saved payment methods.",
            ),
            p(
                "total_baggages",
                INT,
                "Number of checked bags on the reservation.",
            ),
            p(
                "nonfree_baggages",
                INT,
                "Number of those bags that are charged for.",
            ),
            p(
                "insurance",
                r#"{"enum": ["yes", "no"], "type": "string"}"#,
                "Whether travel insurance is bought.",
            ),
        ],
    ),
    tool(
        "calculate",
        ToolKind::Generic,
        "Evaluate an arithmetic expression.",
        &[p(
            "expression",
            STR,
            "Expression to evaluate, e.g. '2 + 2'; only digits, + - * /, parentheses, dots and spaces are allowed.",
        )],
    ),
    tool(
        "cancel_reservation",
        ToolKind::Write,
        "Cancel an entire reservation.",
        &[RESERVATION_ID],
    ),
    tool(
        "get_reservation_details",
        ToolKind::Read,
        "Look up a reservation.",
        &[RESERVATION_ID],
    ),
    tool(
        "get_user_details",
        ToolKind::Read,
        "Look up a user's profile, including their reservations.",
        &[p("user_id", STR, "Id of the user, e.g. 'sara_doe_496'.")],
    ),
    tool(
        "list_all_airports",
        ToolKind::Read,
        "List every airport served, with its city.",
        &[],
    ),
    tool(
        "search_direct_flight",
        ToolKind::Read,
        "Find nonstop flights between two airports on a date.",
        &[
            p(
                "origin",
                STR,
                "IATA code of the departure airport, e.g. 'JFK'.",
            ),
            p(
                "destination",
                STR,
                "IATA code of the arrival airport, e.g. 'LAX'.",
            ),
            p("date", STR, "Travel date as YYYY-MM-DD, e.g. '2024-05-01'."),
        ],
    ),
    tool(
        "search_onestop_flight",
        ToolKind::Read,
        "Find connections with exactly one stop between two airports on a date.",
        &[
            p(
                "origin",
                STR,
                "IATA code of the departure airport, e.g. 'JFK'.",
            ),
            p(
                "destination",
                STR,
                "IATA code of the arrival airport, e.g. 'LAX'.",
            ),
            p("date", STR, "Travel date as YYYY-MM-DD, e.g. '2024-05-01'."),
        ],
    ),
    tool(
        "send_certificate",
        ToolKind::Write,
        "Issue a travel certificate to a user. Use with care.",
        &[
            p(
                "user_id",
                STR,
                "Id of the user receiving the certificate, e.g. 'sara_doe_496'.",
            ),
            p("amount", INT, "Value of the certificate in dollars."),
        ],
    ),
    tool(
        "transfer_to_human_agents",
        ToolKind::Generic,
        "Hand the conversation over to a human agent along with a short summary.\n\nOnly do this when the user explicitly asks for a human, or when the request cannot be handled under the policy with the available tools.",
        &[p("summary", STR, "Short summary of the user's issue.")],
    ),
    tool(
        "update_reservation_baggages",
        ToolKind::Write,
        "Change the checked-bag counts of a reservation.",
        &[
            RESERVATION_ID,
            p("total_baggages", INT, "New total number of checked bags."),
            p("nonfree_baggages", INT, "New number of charged bags."),
            PAYMENT_ID,
        ],
    ),
    tool(
        "update_reservation_flights",
        ToolKind::Write,
        "Replace the flights (and possibly the cabin) of a reservation.",
        &[
            RESERVATION_ID,
            p("cabin", CABIN, "Cabin class for the whole reservation."),
            p(
                "flights",
                FLIGHTS,
                "The complete new list of flight segments, unchanged segments included.",
            ),
            PAYMENT_ID,
        ],
    ),
    tool(
        "update_reservation_passengers",
        ToolKind::Write,
        "Replace the passenger details of a reservation (same number of passengers).",
        &[
            RESERVATION_ID,
            p("passengers", PASSENGERS, "The full updated passenger list."),
        ],
    ),
    tool(
        "get_flight_status",
        ToolKind::Read,
        "Report a flight's status on a date.",
        &[
            p("flight_number", STR, "Flight number, e.g. 'HAT001'."),
            p("date", STR, "Flight date as YYYY-MM-DD."),
        ],
    ),
];
