//! Declarations of the retail toolkit (`RetailTools`): names, kinds and parameters in
//! upstream registration order. The descriptions are our own words; they are shown to a
//! model only when the data directory has no `tools.json`.

use crate::tooling::{Param, ToolDef, param as p, tool};
use tauguard_core::ToolKind;

const STRING: &str = r#"{"type": "string"}"#;
const STRINGS: &str = r#"{"items": {"type": "string"}, "type": "array"}"#;

const ORDER_ID: Param = p(
    "order_id",
    STRING,
    "Order id including its leading '#', for example '#W0000000'.",
);
const USER_ID: Param = p("user_id", STRING, "User id, for example 'sara_doe_496'.");
const PAYMENT_METHOD_ID: Param = p(
    "payment_method_id",
    STRING,
    "Id of one of the user's payment methods, for example 'gift_card_0000000' or 'credit_card_0000000'.",
);

const ADDRESS_FIELDS: [Param; 6] = [
    p(
        "address1",
        STRING,
        "First address line, for example '123 Main St'.",
    ),
    p(
        "address2",
        STRING,
        "Second address line, for example 'Apt 1', or an empty string.",
    ),
    p("city", STRING, "City, for example 'San Francisco'."),
    p("state", STRING, "State, for example 'CA'."),
    p("country", STRING, "Country, for example 'USA'."),
    p("zip", STRING, "Zip code, for example '12345'."),
];

const fn with_address(first: Param) -> [Param; 7] {
    let a = ADDRESS_FIELDS;
    [first, a[0], a[1], a[2], a[3], a[4], a[5]]
}

const ORDER_ADDRESS: [Param; 7] = with_address(ORDER_ID);
const USER_ADDRESS: [Param; 7] = with_address(USER_ID);

/// The retail toolkit, in upstream order.
pub(super) const TOOLS: &[ToolDef] = &[
    tool(
        "calculate",
        ToolKind::Generic,
        "Evaluate an arithmetic expression made of numbers, + - * /, parentheses and spaces; the result is rounded to two decimals.",
        &[p(
            "expression",
            STRING,
            "The expression to evaluate, for example '2 + 2'.",
        )],
    ),
    tool(
        "cancel_pending_order",
        ToolKind::Write,
        "Cancel an order that is still pending, after explaining the details to the user and getting an explicit yes. Gift-card payments are refunded at once, other refunds take 5-7 business days. Returns the updated order.",
        &[
            ORDER_ID,
            p(
                "reason",
                STRING,
                "Either 'no longer needed' or 'ordered by mistake'.",
            ),
        ],
    ),
    tool(
        "exchange_delivered_order_items",
        ToolKind::Write,
        "Request an exchange of delivered items for other variants of the same products, after an explicit yes from the user; a delivered order can be returned or exchanged only once. Returns the updated order.",
        &[
            ORDER_ID,
            p(
                "item_ids",
                STRINGS,
                "Ids of the items to exchange; an id may repeat.",
            ),
            p(
                "new_item_ids",
                STRINGS,
                "Replacement item ids, position by position, each a variant of the same product as the item it replaces.",
            ),
            p(
                "payment_method_id",
                STRING,
                "Payment method that pays or receives the price difference, for example 'gift_card_0000000'.",
            ),
        ],
    ),
    tool(
        "find_user_id_by_name_zip",
        ToolKind::Read,
        "Look up a user id from first name, last name and zip code. Prefer the email lookup; use this one when the email is unknown or not found.",
        &[
            p(
                "first_name",
                STRING,
                "Customer first name, for example 'John'.",
            ),
            p(
                "last_name",
                STRING,
                "Customer last name, for example 'Doe'.",
            ),
            p("zip", STRING, "Customer zip code, for example '12345'."),
        ],
    ),
    tool(
        "find_user_id_by_email",
        ToolKind::Read,
        "Look up a user id from an email address.",
        &[p(
            "email",
            STRING,
            "Email address, for example 'something@example.com'.",
        )],
    ),
    tool(
        "get_order_details",
        ToolKind::Read,
        "Show the status and details of an order.",
        &[ORDER_ID],
    ),
    tool(
        "get_product_details",
        ToolKind::Read,
        "Show a product with all of its variants (item ids, options, availability, prices).",
        &[p(
            "product_id",
            STRING,
            "Product id, for example '6086499569' (not an item id).",
        )],
    ),
    tool(
        "get_item_details",
        ToolKind::Read,
        "Show one item (a product variant): options, availability and price.",
        &[p(
            "item_id",
            STRING,
            "Item id, for example '6086499569' (not a product id).",
        )],
    ),
    tool(
        "get_user_details",
        ToolKind::Read,
        "Show a user's profile, payment methods and orders.",
        &[USER_ID],
    ),
    tool(
        "list_all_product_types",
        ToolKind::Read,
        "List every product type (50 in the store) as a JSON object from product name to product id, sorted by name.",
        &[],
    ),
    tool(
        "modify_pending_order_address",
        ToolKind::Write,
        "Change the shipping address of a pending order, after an explicit yes from the user. Returns the updated order.",
        &ORDER_ADDRESS,
    ),
    tool(
        "modify_pending_order_items",
        ToolKind::Write,
        "Swap items of a pending order for other variants of the same products, after an explicit yes from the user; possible only once per order. Returns the updated order.",
        &[
            ORDER_ID,
            p(
                "item_ids",
                STRINGS,
                "Ids of the items to change; an id may repeat.",
            ),
            p(
                "new_item_ids",
                STRINGS,
                "Replacement item ids, position by position, each a different variant of the same product.",
            ),
            p(
                "payment_method_id",
                STRING,
                "Payment method that pays or receives the price difference, for example 'gift_card_0000000'.",
            ),
        ],
    ),
    tool(
        "modify_pending_order_payment",
        ToolKind::Write,
        "Move the payment of a pending order to another of the user's payment methods, after an explicit yes from the user. Returns the updated order.",
        &[ORDER_ID, PAYMENT_METHOD_ID],
    ),
    tool(
        "modify_user_address",
        ToolKind::Write,
        "Change a user's default address, after an explicit yes from the user. Returns the updated user.",
        &USER_ADDRESS,
    ),
    tool(
        "return_delivered_order_items",
        ToolKind::Write,
        "Request the return of delivered items, after an explicit yes from the user; the order becomes 'return requested' and the user receives return instructions by email. Returns the updated order.",
        &[
            ORDER_ID,
            p(
                "item_ids",
                STRINGS,
                "Ids of the items to return; an id may repeat.",
            ),
            p(
                "payment_method_id",
                STRING,
                "Where the refund goes: the original payment method or a gift card.",
            ),
        ],
    ),
    tool(
        "transfer_to_human_agents",
        ToolKind::Generic,
        "Hand the conversation to a human agent with a summary of the issue. Only when the user asks for one, or when policy and tools cannot resolve the request.",
        &[p("summary", STRING, "Summary of the user's issue.")],
    ),
];
