//! The phone's app tools: installed apps' status and permissions, granting a permission
//! (a tool) and removing one (the helper initialization actions use to break MMS).

use super::user_model::PERMISSIONS;
use super::{TelecomEnv, text};
use crate::environment::{ToolResult, ToolValue};
use crate::py::arg_str;
use crate::py::{dict_key, no_attribute, type_name};
use crate::tooling::ToolError;
use serde_json::Value;

impl TelecomEnv {
    pub(crate) fn check_app_status(&self, app_name: &Value) -> ToolResult {
        dict_key(app_name)?;
        let Some(app) = app_name
            .as_str()
            .and_then(|n| self.phone().app_statuses.get(n))
        else {
            return Ok(text(format!(
                "App '{}' not found on this phone.",
                arg_str(app_name)
            )));
        };
        let mut lines = vec![format!("Status for App: {}", arg_str(app_name))];
        let granted = app.permissions.granted();
        if granted.is_empty() {
            lines.push(" - Permissions: None granted.".into());
        } else {
            lines.push(" - Permissions Granted:".into());
            lines.extend(granted.iter().map(|p| format!("   - {p}")));
        }
        Ok(text(lines.join("\n")))
    }

    pub(crate) fn check_app_permissions(&self, app_name: &Value) -> ToolResult {
        dict_key(app_name)?;
        let shown = arg_str(app_name);
        let Some(app) = app_name
            .as_str()
            .and_then(|n| self.phone().app_statuses.get(n))
        else {
            return Ok(text(format!("App '{shown}' not found on this phone.")));
        };
        let granted = app.permissions.granted();
        Ok(text(if granted.is_empty() {
            format!("App '{shown}' currently has no permissions granted.")
        } else {
            format!("App '{shown}' has permission for: {}.", granted.join(", "))
        }))
    }

    /// What grant and remove share: the app is looked up (a dict lookup) before the
    /// permission is lower-cased, as upstream does, and the permission is set to `granted`
    /// only on an installed app and a permission the phone tracks. Returns upstream's
    /// `(success, message)`, worded for granting or removing.
    fn set_app_permission(
        &mut self,
        app_name: &Value,
        permission: &Value,
        granted: bool,
    ) -> Result<(bool, String), ToolError> {
        dict_key(app_name)?;
        let shown = arg_str(app_name);
        let app = app_name
            .as_str()
            .filter(|n| self.phone().app_statuses.contains_key(*n))
            .map(str::to_string);
        let permission = permission
            .as_str()
            .ok_or_else(|| no_attribute(type_name(permission), "lower"))?
            .to_lowercase();
        let (verb, done) = if granted {
            ("grant", "granted to")
        } else {
            ("remove", "removed from")
        };
        Ok(match app {
            None => (
                false,
                format!("App '{shown}' not found. Cannot {verb} permission."),
            ),
            Some(app) if PERMISSIONS.contains(&permission.as_str()) => {
                if let Some(status) = self.phone_mut().app_statuses.get_mut(&app) {
                    status.permissions.set(&permission, granted);
                }
                (
                    true,
                    format!("Permission '{permission}' {done} app '{shown}'."),
                )
            }
            // Only granting lists the permissions the phone tracks.
            Some(_) if granted => {
                let available: Vec<String> = PERMISSIONS.iter().map(|p| format!("'{p}'")).collect();
                (
                    false,
                    format!(
                        "Permission '{permission}' not tracked for app '{shown}', available permissions: [{}]",
                        available.join(", ")
                    ),
                )
            }
            Some(_) => (
                false,
                format!("Permission '{permission}' not tracked for app '{shown}'."),
            ),
        })
    }

    pub(crate) fn grant_app_permission(
        &mut self,
        app_name: &Value,
        permission: &Value,
    ) -> ToolResult {
        let (ok, message) = self.set_app_permission(app_name, permission, true)?;
        let result = if ok { "Success. " } else { "Error. " };
        Ok(text(self.with_status_bar(&format!("{result}{message}"))))
    }

    /// Returns upstream's `(success, message)` tuple as a JSON list (`True` stringified, as
    /// `to_json_str` renders bools inside containers).
    pub(crate) fn remove_app_permission(
        &mut self,
        app_name: &Value,
        permission: &Value,
    ) -> ToolResult {
        let (ok, message) = self.set_app_permission(app_name, permission, false)?;
        Ok(ToolValue::Json(Value::Array(vec![
            Value::String(if ok { "True" } else { "False" }.into()),
            Value::String(message),
        ])))
    }
}
