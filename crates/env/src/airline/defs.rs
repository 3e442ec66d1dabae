//! Declarations of the airline toolkit (`AirlineTools` upstream) in registration order: the
//! names, kinds, descriptions and parameter schemas the agent is shown and the dispatcher in
//! [`super::tools`] binds arguments against. Descriptions, schemas and nested models
//! (`$defs`) are upstream's, as its `tools.json` publishes them, so a data directory without
//! that file shows the model the same schemas.

use crate::tooling::{Param, SchemaDef, TRANSFER_TO_HUMAN_AGENTS, ToolDef, param as p, tool};
use tauguard_core::ToolKind;

/// Class name upstream's `TypeError` and `AttributeError` texts carry.
pub const OWNER: &str = "AirlineTools";

const STR: &str = r#"{"type": "string"}"#;
const FLIGHT_INFO_LIST: &str = r##"{"items": {"anyOf": [{"$ref": "#/$defs/FlightInfo"}, {"additionalProperties": true, "type": "object"}]}, "type": "array"}"##;
const PASSENGER_LIST: &str = r##"{"items": {"anyOf": [{"$ref": "#/$defs/Passenger"}, {"additionalProperties": true, "type": "object"}]}, "type": "array"}"##;
const PAYMENT_LIST: &str = r##"{"items": {"anyOf": [{"$ref": "#/$defs/Payment"}, {"additionalProperties": true, "type": "object"}]}, "type": "array"}"##;
const INT: &str = r#"{"type": "integer"}"#;
const CABIN: &str = r#"{"enum": ["business", "economy", "basic_economy"], "type": "string"}"#;
const FLIGHT_INFO_DEF: SchemaDef = SchemaDef {
    name: "FlightInfo",
    schema: r#"{"properties": {"flight_number": {"description": "Flight number, such as 'HAT001'.", "title": "Flight Number", "type": "string"}, "date": {"description": "The date for the flight in the format 'YYYY-MM-DD', such as '2024-05-01'.", "title": "Date", "type": "string"}}, "required": ["flight_number", "date"], "title": "FlightInfo", "type": "object"}"#,
};
const PASSENGER_DEF: SchemaDef = SchemaDef {
    name: "Passenger",
    schema: r#"{"properties": {"first_name": {"description": "Passenger's first name", "title": "First Name", "type": "string"}, "last_name": {"description": "Passenger's last name", "title": "Last Name", "type": "string"}, "dob": {"description": "Date of birth in YYYY-MM-DD format", "title": "Dob", "type": "string"}}, "required": ["first_name", "last_name", "dob"], "title": "Passenger", "type": "object"}"#,
};
const PAYMENT_DEF: SchemaDef = SchemaDef {
    name: "Payment",
    schema: r#"{"properties": {"payment_id": {"description": "Unique identifier for the payment", "title": "Payment Id", "type": "string"}, "amount": {"description": "Payment amount in dollars", "title": "Amount", "type": "integer"}}, "required": ["payment_id", "amount"], "title": "Payment", "type": "object"}"#,
};
const PASSENGERS: Param = p(
    "passengers",
    PASSENGER_LIST,
    "An array of objects containing details about each passenger.",
);
const RESERVATION_ID: Param = p(
    "reservation_id",
    STR,
    "The reservation ID, such as 'ZFA04Y'.",
);
const ORIGIN: Param = p(
    "origin",
    STR,
    "The origin city airport in three letters, such as 'JFK'.",
);
const DESTINATION: Param = p(
    "destination",
    STR,
    "The destination city airport in three letters, such as 'LAX'.",
);
const PAYMENT_ID: Param = p(
    "payment_id",
    STR,
    "The payment id stored in user profile, such as 'credit_card_7815826', 'gift_card_7815826', 'certificate_7815826'.",
);

/// The toolkit, in upstream registration order.
pub static TOOLS: &[ToolDef] = &[
    ToolDef {
        defs: &[FLIGHT_INFO_DEF, PASSENGER_DEF, PAYMENT_DEF],
        ..tool(
            "book_reservation",
            ToolKind::Write,
            "Book a reservation.",
            &[
                p(
                    "user_id",
                    STR,
                    "The ID of the user to book the reservation such as 'sara_doe_496'`.",
                ),
                p(
                    "origin",
                    STR,
                    "The IATA code for the origin city such as 'SFO'.",
                ),
                p(
                    "destination",
                    STR,
                    "The IATA code for the destination city such as 'JFK'.",
                ),
                p(
                    "flight_type",
                    r#"{"enum": ["round_trip", "one_way"], "type": "string"}"#,
                    "The type of flight such as 'one_way' or 'round_trip'.",
                ),
                p(
                    "cabin",
                    CABIN,
                    "The cabin class such as 'basic_economy', 'economy', or 'business'.",
                ),
                p(
                    "flights",
                    FLIGHT_INFO_LIST,
                    "An array of objects containing details about each piece of flight.",
                ),
                PASSENGERS,
                p(
                    "payment_methods",
                    PAYMENT_LIST,
                    "An array of objects containing details about each payment method.",
                ),
                p(
                    "total_baggages",
                    INT,
                    "The total number of baggage items to book the reservation.",
                ),
                p(
                    "nonfree_baggages",
                    INT,
                    "The number of non-free baggage items to book the reservation.",
                ),
                p(
                    "insurance",
                    r#"{"enum": ["yes", "no"], "type": "string"}"#,
                    "Whether the reservation has insurance.",
                ),
            ],
        )
    },
    crate::calculate::CALCULATE,
    tool(
        "cancel_reservation",
        ToolKind::Write,
        "Cancel the whole reservation.",
        &[RESERVATION_ID],
    ),
    tool(
        "get_reservation_details",
        ToolKind::Read,
        "Get the details of a reservation.",
        &[p(
            "reservation_id",
            STR,
            "The reservation ID, such as '8JX2WO'.",
        )],
    ),
    tool(
        "get_user_details",
        ToolKind::Read,
        "Get the details of a user, including their reservations.",
        &[p("user_id", STR, "The user ID, such as 'sara_doe_496'.")],
    ),
    tool(
        "list_all_airports",
        ToolKind::Read,
        "Returns a list of all available airports.",
        &[],
    ),
    tool(
        "search_direct_flight",
        ToolKind::Read,
        "Search for direct flights between two cities on a specific date.",
        &[
            ORIGIN,
            DESTINATION,
            p(
                "date",
                STR,
                "The date of the flight in the format 'YYYY-MM-DD', such as '2024-01-01'.",
            ),
        ],
    ),
    tool(
        "search_onestop_flight",
        ToolKind::Read,
        "Search for one-stop flights between two cities on a specific date.",
        &[
            ORIGIN,
            DESTINATION,
            p(
                "date",
                STR,
                "The date of the flight in the format 'YYYY-MM-DD', such as '2024-05-01'.",
            ),
        ],
    ),
    tool(
        "send_certificate",
        ToolKind::Write,
        "Send a certificate to a user. Be careful!",
        &[
            p(
                "user_id",
                STR,
                "The ID of the user to book the reservation, such as 'sara_doe_496'.",
            ),
            p("amount", INT, "The amount of the certificate to send."),
        ],
    ),
    TRANSFER_TO_HUMAN_AGENTS,
    tool(
        "update_reservation_baggages",
        ToolKind::Write,
        "Update the baggage information of a reservation.",
        &[
            p(
                "reservation_id",
                STR,
                "The reservation ID, such as 'ZFA04Y'",
            ),
            p(
                "total_baggages",
                INT,
                "The updated total number of baggage items included in the reservation.",
            ),
            p(
                "nonfree_baggages",
                INT,
                "The updated number of non-free baggage items included in the reservation.",
            ),
            PAYMENT_ID,
        ],
    ),
    ToolDef {
        defs: &[FLIGHT_INFO_DEF],
        ..tool(
            "update_reservation_flights",
            ToolKind::Write,
            "Update the flight information of a reservation.",
            &[
                RESERVATION_ID,
                p("cabin", CABIN, "The cabin class of the reservation"),
                p(
                    "flights",
                    FLIGHT_INFO_LIST,
                    "An array of objects containing details about each piece of flight in the ENTIRE new reservation. Even if the a flight segment is not changed, it should still be included in the array.",
                ),
                PAYMENT_ID,
            ],
        )
    },
    ToolDef {
        defs: &[PASSENGER_DEF],
        ..tool(
            "update_reservation_passengers",
            ToolKind::Write,
            "Update the passenger information of a reservation.",
            &[RESERVATION_ID, PASSENGERS],
        )
    },
    tool(
        "get_flight_status",
        ToolKind::Read,
        "Get the status of a flight.",
        &[
            p("flight_number", STR, "The flight number."),
            p("date", STR, "The date of the flight."),
        ],
    ),
];
