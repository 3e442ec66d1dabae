//! The user's Wi-Fi, Wi-Fi calling and VPN tools, apart from the rest of the phone's toolkit
//! ([`super::device_tools`]) so each file stays readable. Outputs are upstream's texts.

use super::device_tools::{bool_arg, on_off};
use super::user_model::{PerformanceLevel, SignalStrength, VpnDetails};
use super::{Args, TelecomEnv, text};
use crate::environment::ToolResult;
use crate::py::no_attribute;
use serde_json::Value;

/// The VPN profile `connect_vpn` installs, with the environment's current performance of
/// upstream's shared default profile (see [`TelecomEnv::vpn_default`]).
fn default_vpn(performance: PerformanceLevel) -> VpnDetails {
    VpnDetails {
        server_address: Some("192.168.1.1".into()),
        protocol: Some("OpenVPN".into()),
        server_performance: performance,
    }
}

impl TelecomEnv {
    /// Wi-Fi and Wi-Fi calling.
    pub(super) fn wifi_tool(&mut self, name: &str, a: &Args) -> ToolResult {
        match name {
            "check_wifi_status" => {
                let d = self.phone();
                Ok(text(if !d.wifi_enabled {
                    "Wi-Fi is turned OFF.".to_string()
                } else if d.wifi_connected {
                    format!(
                        "Wi-Fi is ON and connected to '{}'. Signal strength: {}.",
                        d.wifi_ssid.as_deref().unwrap_or("None"),
                        d.wifi_signal_strength.value()
                    )
                } else {
                    "Wi-Fi is ON but not connected to any network.".to_string()
                }))
            }
            "toggle_wifi" => {
                if self.phone().airplane_mode {
                    return Ok(text(self.with_status_bar(
                        "Cannot change Wi-Fi settings while Airplane Mode is ON.",
                    )));
                }
                let d = self.phone_mut();
                d.wifi_enabled = !d.wifi_enabled;
                let on = d.wifi_enabled;
                if !on {
                    d.wifi_connected = false;
                    d.wifi_ssid = None;
                    d.wifi_signal_strength = SignalStrength::None;
                }
                Ok(self.toggled("Wi-Fi", on))
            }
            "check_wifi_calling_status" => Ok(text(format!(
                "Wi-Fi Calling is currently turned {}.",
                on_off(self.phone().wifi_calling_enabled)
            ))),
            "toggle_wifi_calling" => {
                let d = self.phone_mut();
                d.wifi_calling_enabled = !d.wifi_calling_enabled;
                let on = d.wifi_calling_enabled;
                Ok(self.toggled("Wi-Fi Calling", on))
            }
            "set_wifi_calling" => {
                let enabled = bool_arg("set_wifi_calling", "enabled", a.req(0))?;
                let mms = match a.opt(1) {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(bool_arg("set_wifi_calling", "mms_over_wifi", v)?),
                };
                let d = self.phone_mut();
                d.wifi_calling_enabled = enabled;
                let mut msg = format!("Wi-Fi Calling is now {}.", on_off(enabled));
                if let Some(m) = mms {
                    d.wifi_calling_mms_over_wifi = m;
                    msg.push_str(&format!("\nMMS over Wi-Fi is now {}.", on_off(m)));
                }
                Ok(text(msg))
            }
            other => self.vpn_tool(other, a),
        }
    }

    /// The VPN.
    fn vpn_tool(&mut self, name: &str, a: &Args) -> ToolResult {
        match name {
            "check_vpn_status" => {
                let d = self.phone();
                Ok(text(if d.vpn_connected {
                    match &d.vpn_details {
                        Some(v) => format!("VPN is ON and connected. Details: {}", v.dump_repr()),
                        None => {
                            "VPN is ON and connected (no specific details available).".to_string()
                        }
                    }
                } else if d.vpn_enabled_setting {
                    "VPN is turned ON in settings, but currently not connected.".to_string()
                } else {
                    "VPN is turned OFF.".to_string()
                }))
            }
            "connect_vpn" => Ok(text(self.connect_vpn())),
            "disconnect_vpn" => {
                let update = if self.disconnect_vpn() {
                    "VPN disconnected successfully."
                } else {
                    "No active VPN connection to disconnect."
                };
                Ok(text(self.with_status_bar(update)))
            }
            "break_vpn" => {
                self.connect_vpn();
                match &mut self.phone_mut().vpn_details {
                    Some(v) => v.server_performance = PerformanceLevel::Poor,
                    None => return Err(no_attribute("NoneType", "server_performance")),
                }
                // Upstream mutates the object in place; when that object is the shared
                // default profile, every later `connect_vpn` installs the degraded profile.
                if self.vpn_uses_default {
                    self.vpn_default = PerformanceLevel::Poor;
                }
                Ok(text("VPN connection broken."))
            }
            other => self.app_tool(other, a),
        }
    }

    /// `connect_vpn` (the tool): returns its message.
    fn connect_vpn(&mut self) -> String {
        if self.phone().vpn_connected {
            return "VPN already connected.".into();
        }
        let details = default_vpn(self.vpn_default);
        let d = self.phone_mut();
        d.vpn_connected = true;
        d.vpn_details = Some(details);
        self.vpn_uses_default = true;
        self.with_status_bar("VPN connected successfully.")
    }

    /// `_disconnect_vpn`: whether a connection was dropped.
    pub(super) fn disconnect_vpn(&mut self) -> bool {
        if !self.phone().vpn_connected {
            return false;
        }
        let d = self.phone_mut();
        d.vpn_connected = false;
        d.vpn_details = None;
        self.vpn_uses_default = false;
        true
    }
}
