//! Dispatch of the retail toolkit: runs a bound tool by name. Reads that only dump a record
//! are answered here; the other bodies live in `queries` (reads), `orders` (order writes)
//! and `users` (user writes).

use super::lookup::{order_key, product_key, user_key};
use super::model::RetailDb;
use super::{orders, queries, users};
use crate::environment::{ToolResult, ToolValue};
use serde_json::{Map, Value};
use tauguard_core::pyjson;

/// Runs tool `name` with its bound arguments (one per declared parameter, all present).
pub(super) fn run(db: &mut RetailDb, name: &str, args: &[&Value]) -> ToolResult {
    let a = |i: usize| args.get(i).copied().unwrap_or(&Value::Null);
    match name {
        "calculate" => crate::calculate::calculate_arg(a(0)).map(ToolValue::Text),
        "cancel_pending_order" => orders::cancel_pending_order(db, a(0), a(1)),
        "exchange_delivered_order_items" => {
            orders::exchange_delivered_order_items(db, a(0), a(1), a(2), a(3))
        }
        "find_user_id_by_name_zip" => queries::find_user_id_by_name_zip(db, a(0), a(1), a(2)),
        "find_user_id_by_email" => queries::find_user_id_by_email(db, a(0)),
        "get_order_details" => {
            let id = order_key(db, a(0))?;
            Ok(ToolValue::cached(db.orders.dump(id)))
        }
        "get_product_details" => {
            let id = product_key(db, a(0))?;
            Ok(ToolValue::cached(db.products.dump(id)))
        }
        "get_item_details" => queries::get_item_details(db, a(0)),
        "get_user_details" => {
            let id = user_key(db, a(0))?;
            Ok(ToolValue::cached(db.users.dump(id)))
        }
        "list_all_product_types" => {
            let mut names = Map::new();
            for product in db.products.values() {
                names.insert(
                    product.name.clone(),
                    Value::String(product.product_id.clone()),
                );
            }
            Ok(ToolValue::Text(pyjson::dumps_sorted(&Value::Object(names))))
        }
        "modify_pending_order_address" => {
            orders::modify_pending_order_address(db, a(0), &[a(1), a(2), a(3), a(4), a(5), a(6)])
        }
        "modify_pending_order_items" => {
            orders::modify_pending_order_items(db, a(0), a(1), a(2), a(3))
        }
        "modify_pending_order_payment" => orders::modify_pending_order_payment(db, a(0), a(1)),
        "modify_user_address" => {
            users::modify_user_address(db, a(0), &[a(1), a(2), a(3), a(4), a(5), a(6)])
        }
        "return_delivered_order_items" => {
            orders::return_delivered_order_items(db, a(0), a(1), a(2))
        }
        "transfer_to_human_agents" => Ok(ToolValue::Text("Transfer successful".into())),
        other => Err(crate::py::no_attribute(super::OWNER, other)),
    }
}
