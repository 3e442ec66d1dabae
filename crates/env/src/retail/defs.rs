//! Declarations of the retail toolkit (`RetailTools`): names, kinds, descriptions and
//! parameter schemas in upstream registration order. Descriptions and schemas are upstream's,
//! as its `tools.json` publishes them, so a data directory without that file shows the model
//! the same schemas.

use crate::tooling::{Param, TRANSFER_TO_HUMAN_AGENTS, ToolDef, param as p, tool};
use tauguard_core::ToolKind;

const STR: &str = r#"{"type": "string"}"#;
const STRS: &str = r#"{"items": {"type": "string"}, "type": "array"}"#;
const ORDER_ID: Param = p(
    "order_id",
    STR,
    "The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id.",
);
const USER_ID: Param = p("user_id", STR, "The user id, such as 'sara_doe_496'.");
const ADDRESS1: Param = p(
    "address1",
    STR,
    "The first line of the address, such as '123 Main St'.",
);
const ADDRESS2: Param = p(
    "address2",
    STR,
    "The second line of the address, such as 'Apt 1' or ''.",
);
const CITY: Param = p("city", STR, "The city, such as 'San Francisco'.");
const STATE: Param = p("state", STR, "The state, such as 'CA'.");
const COUNTRY: Param = p("country", STR, "The country, such as 'USA'.");
const ZIP: Param = p("zip", STR, "The zip code, such as '12345'.");
const PAYMENT_METHOD_ID: Param = p(
    "payment_method_id",
    STR,
    "The payment method id to pay or receive refund for the item price difference, such as 'gift_card_0000000' or 'credit_card_0000000'. These can be looked up from the user or order details.",
);

/// The toolkit, in upstream registration order.
pub(super) const TOOLS: &[ToolDef] = &[
    crate::calculate::CALCULATE,
    tool(
        "cancel_pending_order",
        ToolKind::Write,
        "Cancel a pending order. If the order is already processed or delivered,\n\nit cannot be cancelled. The agent needs to explain the cancellation detail\nand ask for explicit user confirmation (yes/no) to proceed. If the user confirms,\nthe order status will be changed to 'cancelled' and the payment will be refunded.\nThe refund will be added to the user's gift card balance immediately if the payment\nwas made using a gift card, otherwise the refund would take 5-7 business days to process.\nThe function returns the order details after the cancellation.",
        &[
            ORDER_ID,
            p(
                "reason",
                STR,
                "The reason for cancellation, which should be either 'no longer needed' or 'ordered by mistake'.",
            ),
        ],
    ),
    tool(
        "exchange_delivered_order_items",
        ToolKind::Write,
        "Exchange items in a delivered order to new items of the same product type.\n\nFor a delivered order, return or exchange can be only done once by the agent.\nThe agent needs to explain the exchange detail and ask for explicit user confirmation (yes/no) to proceed.",
        &[
            ORDER_ID,
            p(
                "item_ids",
                STRS,
                "The item ids to be exchanged, each such as '1008292230'. There could be duplicate items in the list.",
            ),
            p(
                "new_item_ids",
                STRS,
                "The item ids to be exchanged for, each such as '1008292230'.\nThere could be duplicate items in the list. Each new item id should match the item id\nin the same position and be of the same product.",
            ),
            p(
                "payment_method_id",
                STR,
                "The payment method id to pay or receive refund for the item price difference,\nsuch as 'gift_card_0000000' or 'credit_card_0000000'. These can be looked up\nfrom the user or order details.",
            ),
        ],
    ),
    tool(
        "find_user_id_by_name_zip",
        ToolKind::Read,
        "Find user id by first name, last name, and zip code. If the user is not found, the function\n\nwill return an error message. By default, find user id by email, and only call this function\nif the user is not found by email or cannot remember email.",
        &[
            p(
                "first_name",
                STR,
                "The first name of the customer, such as 'John'.",
            ),
            p(
                "last_name",
                STR,
                "The last name of the customer, such as 'Doe'.",
            ),
            p("zip", STR, "The zip code of the customer, such as '12345'."),
        ],
    ),
    tool(
        "find_user_id_by_email",
        ToolKind::Read,
        "Find user id by email. If the user is not found, the function will return an error message.",
        &[p(
            "email",
            STR,
            "The email of the user, such as 'something@example.com'.",
        )],
    ),
    tool(
        "get_order_details",
        ToolKind::Read,
        "Get the status and details of an order.",
        &[ORDER_ID],
    ),
    tool(
        "get_product_details",
        ToolKind::Read,
        "Get the inventory details of a product.",
        &[p(
            "product_id",
            STR,
            "The product id, such as '6086499569'. Be careful the product id is different from the item id.",
        )],
    ),
    tool(
        "get_item_details",
        ToolKind::Read,
        "Get the inventory details of an item.",
        &[p(
            "item_id",
            STR,
            "The item id, such as '6086499569'. Be careful the item id is different from the product id.",
        )],
    ),
    tool(
        "get_user_details",
        ToolKind::Read,
        "Get the details of a user, including their orders.",
        &[USER_ID],
    ),
    tool(
        "list_all_product_types",
        ToolKind::Read,
        "List the name and product id of all product types.\n\nEach product type has a variety of different items with unique item ids and options.\nThere are only 50 product types in the store.",
        &[],
    ),
    tool(
        "modify_pending_order_address",
        ToolKind::Write,
        "Modify the shipping address of a pending order. The agent needs to explain the modification detail and ask for explicit user confirmation (yes/no) to proceed.",
        &[ORDER_ID, ADDRESS1, ADDRESS2, CITY, STATE, COUNTRY, ZIP],
    ),
    tool(
        "modify_pending_order_items",
        ToolKind::Write,
        "Modify items in a pending order to new items of the same product type. For a pending order, this function can only be called once. The agent needs to explain the exchange detail and ask for explicit user confirmation (yes/no) to proceed.",
        &[
            ORDER_ID,
            p(
                "item_ids",
                STRS,
                "The item ids to be modified, each such as '1008292230'. There could be duplicate items in the list.",
            ),
            p(
                "new_item_ids",
                STRS,
                "The item ids to be modified for, each such as '1008292230'. There could be duplicate items in the list. Each new item id should match the item id in the same position and be of the same product.",
            ),
            PAYMENT_METHOD_ID,
        ],
    ),
    tool(
        "modify_pending_order_payment",
        ToolKind::Write,
        "Modify the payment method of a pending order. The agent needs to explain the modification detail and ask for explicit user confirmation (yes/no) to proceed.",
        &[ORDER_ID, PAYMENT_METHOD_ID],
    ),
    tool(
        "modify_user_address",
        ToolKind::Write,
        "Modify the default address of a user. The agent needs to explain the modification detail and ask for explicit user confirmation (yes/no) to proceed.",
        &[USER_ID, ADDRESS1, ADDRESS2, CITY, STATE, COUNTRY, ZIP],
    ),
    tool(
        "return_delivered_order_items",
        ToolKind::Write,
        "Return some items of a delivered order.\n\nThe order status will be changed to 'return requested'.\nThe agent needs to explain the return detail and ask for explicit user confirmation (yes/no) to proceed.\nThe user will receive follow-up email for how and where to return the item.",
        &[
            ORDER_ID,
            p(
                "item_ids",
                STRS,
                "The item ids to be returned, each such as '1008292230'. There could be duplicate items in the list.",
            ),
            p(
                "payment_method_id",
                STR,
                "The payment method id to pay or receive refund for the item price difference, such as 'gift_card_0000000' or 'credit_card_0000000'.\nThese can be looked up from the user or order details.",
            ),
        ],
    ),
    TRANSFER_TO_HUMAN_AGENTS,
];
