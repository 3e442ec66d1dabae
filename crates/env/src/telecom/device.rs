//! The simulated phone's behaviour shared by many user tools: the status bar, the cellular
//! network search, whether mobile data works, the speed test model and MMS capability.
//! Each function mirrors one private method of upstream's `TelecomUserTools`.

use super::TelecomEnv;
use super::user_model::{
    ApnName, NetworkModePreference, NetworkStatus, NetworkTechnology, PerformanceLevel,
    SignalStrength, SimStatus, Slot,
};
use crate::tooling::ToolError;
use tauguard_core::pyjson::round2;

impl TelecomEnv {
    /// `_check_status_bar`: the indicators joined by ` | `.
    pub(crate) fn status_bar(&self) -> String {
        let d = self.phone();
        let mut parts: Vec<String> = Vec::new();
        if d.airplane_mode {
            parts.push("\u{2708}\u{fe0f} Airplane Mode".into());
        } else {
            parts.push(
                match d.network_signal_strength {
                    SignalStrength::None => "\u{1f4f5} No Signal",
                    SignalStrength::Poor => "\u{1f4f6}\u{b9} Poor",
                    SignalStrength::Fair => "\u{1f4f6}\u{b2} Fair",
                    SignalStrength::Good => "\u{1f4f6}\u{b3} Good",
                    SignalStrength::Excellent => "\u{1f4f6}\u{2074} Excellent",
                }
                .into(),
            );
            let tech = d.network_technology_connected;
            if tech != NetworkTechnology::None {
                parts.push(tech.value().into());
            }
            if d.data_enabled && tech != NetworkTechnology::None {
                parts.push("\u{1f4f1} Data Enabled".into());
                if d.data_saver_mode {
                    parts.push("\u{1f53d} Data Saver".into());
                }
            } else {
                parts.push("\u{1f4f5} Data Disabled".into());
            }
        }
        if d.wifi_enabled && d.wifi_connected {
            match d.wifi_ssid.as_deref() {
                Some(ssid) if !ssid.is_empty() => {
                    parts.push(format!("\u{1f4e1} Connected to {ssid}"))
                }
                _ => parts.push("\u{1f4e1} Enabled".into()),
            }
        }
        if d.vpn_connected {
            parts.push("\u{1f512} VPN Connected".into());
        }
        parts.push(format!("\u{1f50b} {}%", d.battery_level));
        parts.join(" | ")
    }

    /// `<update>\nStatus Bar: <status bar>`, the shape of most write tools' output.
    pub(crate) fn with_status_bar(&self, update: &str) -> String {
        format!("{update}\nStatus Bar: {}", self.status_bar())
    }

    /// `_check_sim_status`: a missing card overrides the card's own status.
    pub(crate) fn sim_status(&self) -> SimStatus {
        if self.phone().sim_card_missing {
            SimStatus::Missing
        } else {
            self.phone().sim_card_status
        }
    }

    /// `simulate_network_search`: connection, technology and signal from the SIM, the mode
    /// preference and the surroundings, then airplane mode, a broken APN and an inactive line
    /// each force no service. Fields are written in upstream's order, so an unreadable APN
    /// fails after the earlier writes, as in Python.
    pub(crate) fn simulate_network_search(&mut self) -> Result<(), ToolError> {
        let sim = self.sim_status();
        let line_active = self.surroundings().line_active;
        let connected = (sim == SimStatus::Active).then(|| {
            let s = self.surroundings();
            let tech = match &self.phone().network_mode_preference {
                Slot::Typed(NetworkModePreference::FourG5GPreferred) => {
                    if s.signal(NetworkTechnology::FiveG) == SignalStrength::None {
                        NetworkTechnology::FourG
                    } else {
                        NetworkTechnology::FiveG
                    }
                }
                Slot::Typed(NetworkModePreference::FourGOnly) => NetworkTechnology::FourG,
                Slot::Typed(NetworkModePreference::ThreeGOnly) => NetworkTechnology::ThreeG,
                Slot::Typed(NetworkModePreference::TwoGOnly) => NetworkTechnology::TwoG,
                // A raw, unvalidated preference matches no member: upstream's fallback.
                Slot::Raw(_) => NetworkTechnology::FourG,
            };
            (tech, s.signal(tech))
        });
        let d = self.phone_mut();
        let no_service = |d: &mut super::user_model::Phone| {
            d.network_connection_status = NetworkStatus::NoService;
            d.network_technology_connected = NetworkTechnology::None;
            d.network_signal_strength = SignalStrength::None;
        };
        match connected {
            Some((tech, signal)) => {
                d.network_connection_status = NetworkStatus::Connected;
                d.network_technology_connected = tech;
                d.network_signal_strength = signal;
            }
            None => no_service(d),
        }
        if d.airplane_mode {
            no_service(d);
        }
        if d.active_apn_settings.get("apn_name")?.apn_name == ApnName::Broken {
            no_service(d);
        }
        if !line_active {
            no_service(d);
        }
        Ok(())
    }

    /// `_get_mobile_data_working`.
    pub(crate) fn mobile_data_working(&self) -> bool {
        let (d, s) = (self.phone(), self.surroundings());
        if d.airplane_mode || d.network_signal_strength == SignalStrength::None {
            return false;
        }
        if d.network_connection_status == NetworkStatus::NoService {
            return false;
        }
        if s.is_abroad && (!d.roaming_enabled || !s.roaming_allowed) {
            return false;
        }
        d.data_enabled && !s.mobile_data_usage_exceeded
    }

    /// `_run_speed_test`: `(speed in Mbps, label)`, `(None, "No Connection")` without data.
    pub(crate) fn speed_test(&self) -> (Option<f64>, &'static str) {
        if !self.mobile_data_working() {
            return (None, "No Connection");
        }
        let d = self.phone();
        let mut base = match &d.vpn_details {
            Some(v) if d.vpn_connected && v.server_performance == PerformanceLevel::Poor => 0.1,
            _ => 1.0,
        };
        if d.data_saver_mode {
            base *= 0.2;
        }
        let (min, max) = match d.network_technology_connected {
            NetworkTechnology::TwoG => (0.1, 0.4),
            NetworkTechnology::ThreeG => (1.0, 5.0),
            NetworkTechnology::FourG => (10.0, 100.0),
            NetworkTechnology::FiveG => (50.0, 500.0),
            NetworkTechnology::None => (0.0, 0.0),
        };
        let factor = match d.network_signal_strength {
            SignalStrength::Poor => 0.2,
            SignalStrength::Fair => 0.5,
            SignalStrength::Good => 0.8,
            SignalStrength::Excellent => 1.0,
            SignalStrength::None => 0.0,
        };
        let speed = round2((min + max) / 2.0 * factor * base);
        let label = if speed < 1.0 {
            "Very Poor"
        } else if speed < 5.0 {
            "Poor"
        } else if speed < 25.0 {
            "Fair"
        } else if speed < 100.0 {
            "Good"
        } else {
            "Excellent"
        };
        (Some(speed), label)
    }

    /// `_can_send_mms`.
    pub(crate) fn can_send_mms(&self) -> Result<bool, ToolError> {
        if !self.mobile_data_working() {
            return Ok(false);
        }
        let d = self.phone();
        if d.network_technology_connected == NetworkTechnology::TwoG {
            return Ok(false);
        }
        if d.wifi_calling_enabled && d.wifi_calling_mms_over_wifi {
            return Ok(false);
        }
        if d.active_apn_settings.get("mmsc_url")?.mmsc_url.is_none() {
            return Ok(false);
        }
        Ok(d.app_statuses
            .get("messaging")
            .is_some_and(|app| app.permissions.storage && app.permissions.sms))
    }
}
