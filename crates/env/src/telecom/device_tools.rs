//! The user's toolkit (`TelecomUserTools`): the 30 phone tools the user simulator may call
//! and the helper methods initialization actions use to break the phone (`unseat_sim_card`,
//! `break_apn_settings`, `break_vpn`, ...). Outputs are upstream's texts, most ending with
//! the status bar. The app tools live in [`super::apps`].

use super::user_model::{
    ApnName, ApnSettings, NetworkModePreference, SignalStrength, SimStatus, Slot,
};
use super::{Args, TelecomEnv, text, validate};
use crate::environment::{ToolResult, ToolValue};
use crate::py::arg_str;
use crate::py::{no_attribute, type_name};
use crate::tooling::ToolError;
use serde_json::Value;

pub(super) fn on_off(b: bool) -> &'static str {
    if b { "ON" } else { "OFF" }
}

fn yes_no(b: bool) -> &'static str {
    if b { "Yes" } else { "No" }
}

/// A helper argument that must be a bool (task files only pass bools).
pub(super) fn bool_arg(func: &str, name: &str, v: &Value) -> Result<bool, ToolError> {
    v.as_bool().ok_or_else(|| {
        ToolError::type_error(format!(
            "{func}() expects a bool for '{name}', got {}",
            type_name(v)
        ))
    })
}

/// A helper argument that must be a str.
fn str_arg<'v>(func: &str, name: &str, v: &'v Value) -> Result<&'v str, ToolError> {
    v.as_str().ok_or_else(|| {
        ToolError::type_error(format!(
            "{func}() expects a str for '{name}', got {}",
            type_name(v)
        ))
    })
}

impl TelecomEnv {
    /// The user's tools, by area: each area answers its own tools and hands any other name on
    /// to the next; the last hands it to the assertions.
    pub(crate) fn call_user(&mut self, name: &str, a: &Args) -> ToolResult {
        self.surroundings_tool(name, a)
    }

    /// The user's own details and the payment requests the agent sends.
    fn surroundings_tool(&mut self, name: &str, a: &Args) -> ToolResult {
        match name {
            "set_user_info" => {
                let name = str_arg("set_user_info", "name", a.req(0))?.to_string();
                let phone = str_arg("set_user_info", "phone_number", a.req(1))?.to_string();
                let s = self.surroundings_mut();
                s.name = Some(name);
                s.phone_number = Some(phone);
                Ok(ToolValue::Json(Value::Null))
            }
            "set_user_location" => {
                self.surroundings_mut().is_abroad =
                    bool_arg("set_user_location", "abroad", a.req(0))?;
                Ok(ToolValue::Json(Value::Null))
            }
            "check_payment_request" => Ok(text(match &self.surroundings().payment_request {
                None => "No payment request has been made.".to_string(),
                Some(p) => format!(
                    "You have a payment request for bill {} of {} USD.",
                    p.bill_id,
                    crate::py::float_str(p.amount_due)
                ),
            })),
            "make_payment" => Ok(text(match &mut self.surroundings_mut().payment_request {
                None => "You do not have a payment request.".to_string(),
                Some(p) => {
                    p.paid = true;
                    format!(
                        "Payment of {} USD has been made for bill {}.",
                        crate::py::float_str(p.amount_due),
                        p.bill_id
                    )
                }
            })),

            other => self.network_tool(other, a),
        }
    }

    /// The status bar, the network, airplane mode, mobile data, roaming and data saver.
    fn network_tool(&mut self, name: &str, a: &Args) -> ToolResult {
        match name {
            "check_status_bar" => Ok(text(format!("Status Bar: {}", self.status_bar()))),
            "check_network_status" => Ok(text(self.check_network_status())),
            "check_network_mode_preference" => {
                let pref = self.phone().network_mode_preference.get("value")?;
                Ok(text(format!("Network Mode Preference: {}", pref.value())))
            }
            "set_network_mode_preference" => self.set_network_mode_preference(a.req(0)),
            "run_speed_test" => Ok(text(self.run_speed_test())),
            "toggle_airplane_mode" => {
                let on = self.toggle_airplane_mode()?;
                Ok(self.toggled("Airplane Mode", on))
            }
            "turn_airplane_mode_on" | "turn_airplane_mode_off" => {
                self.turn(name, "Airplane Mode", Self::toggle_airplane_mode)
            }
            "toggle_data" => {
                let on = self.toggle_data()?;
                Ok(self.toggled("Mobile Data", on))
            }
            "turn_data_on" => {
                self.phone_mut().data_enabled = true;
                Ok(text("Data connection restored."))
            }
            "turn_data_off" => {
                if self.toggle_data()? {
                    self.toggle_data()?;
                }
                Ok(text("Data connection broken."))
            }
            "toggle_roaming" => {
                let on = self.toggle_roaming()?;
                Ok(self.toggled("Data Roaming", on))
            }
            "turn_roaming_on" | "turn_roaming_off" => {
                self.turn(name, "Data Roaming", Self::toggle_roaming)
            }
            "check_data_restriction_status" => Ok(text(if self.phone().data_saver_mode {
                "Data Saver mode is ON (limits data usage)."
            } else {
                "Data Saver mode is OFF."
            })),
            "toggle_data_saver_mode" => {
                let on = self.toggle_data_saver();
                Ok(self.toggled("Data Saver Mode", on))
            }
            "turn_data_saver_mode_on" | "turn_data_saver_mode_off" => {
                self.turn(name, "Data Saver Mode", |env| Ok(env.toggle_data_saver()))
            }
            other => self.sim_tool(other, a),
        }
    }

    /// The SIM card.
    fn sim_tool(&mut self, name: &str, a: &Args) -> ToolResult {
        match name {
            "check_sim_status" => Ok(text(match self.sim_status() {
                SimStatus::Active => "Your SIM card is active and working.",
                SimStatus::Missing => "No SIM card detected in the phone.",
                SimStatus::LockedPin => "The SIM card is locked with a PIN code.",
                SimStatus::LockedPuk => "The SIM card is locked with a PUK code.",
            })),
            "reseat_sim_card" => {
                self.phone_mut().sim_card_missing = false;
                self.simulate_network_search()?;
                Ok(text(
                    self.with_status_bar("SIM card re-seated successfully."),
                ))
            }
            "unseat_sim_card" => {
                self.phone_mut().sim_card_missing = true;
                self.simulate_network_search()?;
                Ok(text("SIM card un-seated successfully."))
            }
            "lock_sim_card" => {
                let mode = a.req(0);
                match mode.as_str() {
                    Some("pin") => self.phone_mut().sim_card_status = SimStatus::LockedPin,
                    Some("puk") => self.phone_mut().sim_card_status = SimStatus::LockedPuk,
                    _ => {}
                }
                self.simulate_network_search()?;
                Ok(text(format!(
                    "SIM card locked successfully in {} mode.",
                    arg_str(mode)
                )))
            }
            other => self.apn_tool(other, a),
        }
    }

    /// The APN settings.
    fn apn_tool(&mut self, name: &str, a: &Args) -> ToolResult {
        match name {
            "check_apn_settings" => {
                let apn = self.phone().active_apn_settings.get("model_copy")?;
                let url = apn
                    .mmsc_url
                    .as_deref()
                    .filter(|u| !u.is_empty())
                    .unwrap_or("Not Set");
                Ok(text(format!(
                    "Current APN Name: {}\nMMSC URL (for picture messages): {url}\n(These are technical settings, usually best left unchanged.)",
                    apn.apn_name.value()
                )))
            }
            "set_apn_settings" => self.set_apn_settings(a.req(0)),
            "reset_apn_settings" => {
                self.phone_mut()
                    .active_apn_settings
                    .get_mut("reset_at_reboot")?
                    .reset_at_reboot = true;
                self.simulate_network_search()?;
                Ok(text(
                    self.with_status_bar("APN settings will reset at reboot."),
                ))
            }
            "break_apn_settings" => {
                self.phone_mut()
                    .active_apn_settings
                    .get_mut("apn_name")?
                    .apn_name = ApnName::Broken;
                self.simulate_network_search()?;
                Ok(text(
                    "APN settings broken. Please call reset_apn_settings() to fix.",
                ))
            }
            "break_apn_mms_setting" => {
                self.phone_mut()
                    .active_apn_settings
                    .get_mut("mmsc_url")?
                    .mmsc_url = None;
                Ok(text(
                    "APN MMS setting broken. Please call reset_apn_settings() to fix.",
                ))
            }
            other => self.wifi_tool(other, a),
        }
    }

    /// The installed apps, their permissions, and MMS.
    pub(super) fn app_tool(&mut self, name: &str, a: &Args) -> ToolResult {
        match name {
            "check_installed_apps" => {
                let names: Vec<&str> = self
                    .phone()
                    .app_statuses
                    .keys()
                    .map(String::as_str)
                    .collect();
                Ok(text(format!(
                    "The following apps are installed on the phone: {}",
                    names.join(", ")
                )))
            }
            "check_app_status" => self.check_app_status(a.req(0)),
            "check_app_permissions" => self.check_app_permissions(a.req(0)),
            "grant_app_permission" => self.grant_app_permission(a.req(0), a.req(1)),
            "remove_app_permission" => self.remove_app_permission(a.req(0), a.req(1)),
            "can_send_mms" => Ok(text(if self.can_send_mms()? {
                "Your messaging app can send MMS messages."
            } else {
                "Your messaging app cannot send MMS messages."
            })),
            other => self.device_tool(other, a),
        }
    }

    /// Restarting the phone and its network search.
    fn device_tool(&mut self, name: &str, a: &Args) -> ToolResult {
        match name {
            "reboot_device" => {
                let mut lines = Vec::new();
                if self
                    .phone()
                    .active_apn_settings
                    .get("reset_at_reboot")?
                    .reset_at_reboot
                {
                    lines.push("Resetting APN settings...");
                    self.phone_mut().active_apn_settings = Slot::Typed(ApnSettings::default());
                }
                lines.push("Restarting network services...");
                self.phone_mut().network_connection_status =
                    super::user_model::NetworkStatus::Searching;
                self.simulate_network_search()?;
                Ok(text(self.with_status_bar(&lines.join("\n"))))
            }
            "simulate_network_search" => {
                self.simulate_network_search()?;
                Ok(ToolValue::Json(Value::Null))
            }
            other => self.user_assertion(other, a),
        }
    }

    fn check_network_status(&self) -> String {
        let d = self.phone();
        let mut lines = vec![
            format!("Airplane Mode: {}", on_off(d.airplane_mode)),
            format!("SIM Card Status: {}", self.sim_status().value()),
            format!(
                "Cellular Connection: {}",
                d.network_connection_status.value()
            ),
            format!("Cellular Signal: {}", d.network_signal_strength.value()),
            format!(
                "Cellular Network Type: {}",
                d.network_technology_connected.value()
            ),
            format!("Mobile Data Enabled: {}", yes_no(d.data_enabled)),
            format!("Data Roaming Enabled: {}", yes_no(d.roaming_enabled)),
            format!("Wi-Fi Radio: {}", on_off(d.wifi_enabled)),
            format!("Wi-Fi Connected: {}", yes_no(d.wifi_connected)),
        ];
        if d.wifi_connected {
            lines.push(format!(
                "Connected Wi-Fi Network: {}",
                d.wifi_ssid.as_deref().unwrap_or("None")
            ));
        }
        lines.join("\n")
    }

    /// A string `mode` must name a member (else the "Failed" message); any other JSON value
    /// is stored unvalidated, as upstream's `isinstance(mode, str)` branch lets it through.
    fn set_network_mode_preference(&mut self, mode: &Value) -> ToolResult {
        let chosen = match mode {
            Value::String(s) => match NetworkModePreference::parse(s) {
                Some(m) => Slot::Typed(m),
                None => return Ok(text(self.failed_mode(mode))),
            },
            other => Slot::Raw(other.clone()),
        };
        self.phone_mut().network_mode_preference = chosen.clone();
        self.simulate_network_search()?;
        match chosen {
            Slot::Typed(m) => Ok(text(
                self.with_status_bar(&format!("Preferred Network Mode set to: {}", m.value())),
            )),
            Slot::Raw(Value::Null) => Ok(text(self.failed_mode(mode))),
            Slot::Raw(v) => Err(no_attribute(type_name(&v), "value")),
        }
    }

    fn failed_mode(&self, mode: &Value) -> String {
        let options: Vec<&str> = NetworkModePreference::ALL
            .iter()
            .map(|m| m.value())
            .collect();
        self.with_status_bar(&format!(
            "Failed to set network mode: '{}' is not a valid option. Please use one of: {}",
            arg_str(mode),
            options.join(", ")
        ))
    }

    fn run_speed_test(&self) -> String {
        let (speed, label) = self.speed_test();
        let Some(speed) = speed else {
            return format!("Speed test failed: {label}.");
        };
        let advice = match label {
            "Very Poor" => "Connection is very slow. Basic web browsing might be difficult.",
            "Poor" => "Connection is slow. Web browsing may be sluggish, streaming difficult.",
            "Fair" => "Connection is okay for web browsing and some standard definition streaming.",
            "Good" => "Connection is good for most activities, including HD streaming.",
            "Excellent" => "Connection is very fast.",
            _ => "",
        };
        format!(
            "Speed Test Result: {} Mbps ({label}). {advice}",
            crate::py::fixed2(speed)
        )
    }

    /// A `toggle_*` tool's reply: the new state, then the status bar.
    pub(super) fn toggled(&self, what: &str, on: bool) -> ToolValue {
        text(self.with_status_bar(&format!("{what} is now {}.", on_off(on))))
    }

    /// `turn_<x>_on` / `turn_<x>_off` as upstream writes them: toggle, and toggle back when
    /// that went the wrong way (every toggle with its side effects).
    fn turn(
        &mut self,
        name: &str,
        what: &str,
        toggle: fn(&mut Self) -> Result<bool, ToolError>,
    ) -> ToolResult {
        let want = name.ends_with("_on");
        if toggle(self)? != want {
            toggle(self)?;
        }
        Ok(text(format!("{what} is now {}.", on_off(want))))
    }

    /// `_toggle_airplane_mode`: returns the new state.
    fn toggle_airplane_mode(&mut self) -> Result<bool, ToolError> {
        let d = self.phone_mut();
        let was_on = d.airplane_mode;
        d.airplane_mode = !was_on;
        if was_on {
            d.network_connection_status = super::user_model::NetworkStatus::Searching;
            if d.wifi_enabled {
                d.wifi_connected = false;
                d.wifi_ssid = None;
                d.wifi_signal_strength = SignalStrength::None;
            }
        } else {
            d.wifi_connected = false;
            d.wifi_ssid = None;
            d.wifi_signal_strength = SignalStrength::None;
            self.disconnect_vpn();
        }
        self.simulate_network_search()?;
        Ok(self.phone().airplane_mode)
    }

    /// Flips one of the phone's switches that change what the network offers it, then
    /// searches the network again. Returns the new setting.
    fn toggle_and_search(
        &mut self,
        switch: fn(&mut super::user_model::Phone) -> &mut bool,
    ) -> Result<bool, ToolError> {
        let on = switch(self.phone_mut());
        *on = !*on;
        let on = *on;
        self.simulate_network_search()?;
        Ok(on)
    }

    fn toggle_data(&mut self) -> Result<bool, ToolError> {
        self.toggle_and_search(|d| &mut d.data_enabled)
    }

    fn toggle_roaming(&mut self) -> Result<bool, ToolError> {
        self.toggle_and_search(|d| &mut d.roaming_enabled)
    }

    fn toggle_data_saver(&mut self) -> bool {
        let d = self.phone_mut();
        d.data_saver_mode = !d.data_saver_mode;
        d.data_saver_mode
    }

    /// A dict is validated as `APNSettings(**dict)`; anything else is stored as is and the
    /// message then fails reading `.apn_name` of it, as upstream does.
    fn set_apn_settings(&mut self, settings: &Value) -> ToolResult {
        let apn = match settings {
            Value::Object(fields) => validate::apn_settings(fields)?,
            other => {
                self.phone_mut().active_apn_settings = Slot::Raw(other.clone());
                return Err(no_attribute(type_name(other), "apn_name"));
            }
        };
        let update = format!("APN settings set to: {}", apn.apn_name.value());
        self.phone_mut().active_apn_settings = Slot::Typed(apn);
        self.simulate_network_search()?;
        Ok(text(self.with_status_bar(&update)))
    }
}
