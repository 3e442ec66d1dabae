//! The user-side database (`TelecomUserDB`): the simulated phone (`device`) and the user's
//! surroundings, with upstream's defaults for every absent field and upstream's field order.
//!
//! Two device fields can hold a value that is not the declared type, because upstream
//! assigns some tool arguments without validation: `network_mode_preference` (a non-string
//! `mode`) and `active_apn_settings` (a non-object `apn_settings`). They are kept as raw JSON
//! so that later accesses fail the way Python's do and dumps show what upstream would dump.

use crate::py::{no_attribute, py_enum, type_name};
use crate::tooling::ToolError;
use indexmap::IndexMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

py_enum!(SimStatus = "SimStatus" {
    Active = "ACTIVE": "active",
    Missing = "MISSING": "missing",
    LockedPin = "LOCKED_PIN": "locked_pin",
    LockedPuk = "LOCKED_PUK": "locked_puk",
});

py_enum!(NetworkTechnology = "NetworkTechnology" {
    None = "NONE": "none",
    TwoG = "TWO_G": "2G",
    ThreeG = "THREE_G": "3G",
    FourG = "FOUR_G": "4G",
    FiveG = "FIVE_G": "5G",
});

py_enum!(NetworkModePreference = "NetworkModePreference" {
    FourG5GPreferred = "FOUR_G_5G_PREFERRED": "4g_5g_preferred",
    FourGOnly = "FOUR_G_ONLY": "4g_only",
    ThreeGOnly = "THREE_G_ONLY": "3g_only",
    TwoGOnly = "TWO_G_ONLY": "2g_only",
});

py_enum!(SignalStrength = "SignalStrength" {
    None = "NONE": "none",
    Poor = "POOR": "poor",
    Fair = "FAIR": "fair",
    Good = "GOOD": "good",
    Excellent = "EXCELLENT": "excellent",
});

py_enum!(PerformanceLevel = "PerformanceLevel" {
    Unknown = "UNKNOWN": "unknown",
    Poor = "POOR": "poor",
    Fair = "FAIR": "fair",
    Good = "GOOD": "good",
    Excellent = "EXCELLENT": "excellent",
});

py_enum!(NetworkStatus = "NetworkStatus" {
    Connected = "CONNECTED": "connected",
    Searching = "SEARCHING": "searching",
    NoService = "NO_SERVICE": "no_service",
    EmergencyOnly = "EMERGENCY_ONLY": "emergency_only",
});

py_enum!(ApnName = "APNNames" {
    Internet = "INTERNET": "internet",
    Broken = "BROKEN": "broken",
});

pub(super) const DEFAULT_MMSC_URL: &str = "http://mms.carrier.com/mms/wapenc";

/// Absent fields take upstream's defaults, the values of [`ApnSettings::default`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct ApnSettings {
    pub apn_name: ApnName,
    pub reset_at_reboot: bool,
    pub mms_apn: Option<String>,
    pub mmsc_url: Option<String>,
    pub mms_proxy: Option<String>,
    /// A Python int (kept as a JSON number so big values survive).
    pub mms_port: Option<serde_json::Number>,
}

impl Default for ApnSettings {
    fn default() -> Self {
        ApnSettings {
            apn_name: ApnName::Internet,
            reset_at_reboot: false,
            mms_apn: Some("mms".into()),
            mmsc_url: Some(DEFAULT_MMSC_URL.into()),
            mms_proxy: None,
            mms_port: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct VpnDetails {
    #[serde(default)]
    pub server_address: Option<String>,
    #[serde(default)]
    pub protocol: Option<String>,
    #[serde(default = "unknown_performance")]
    pub server_performance: PerformanceLevel,
}

fn unknown_performance() -> PerformanceLevel {
    PerformanceLevel::Unknown
}

impl VpnDetails {
    /// Python `repr(model_dump())`: enum members show as `<PerformanceLevel.X: 'x'>`.
    pub(crate) fn dump_repr(&self) -> String {
        let opt = |v: &Option<String>| match v {
            Some(s) => tauguard_core::pyjson::str_repr(s),
            None => "None".into(),
        };
        format!(
            "{{'server_address': {}, 'protocol': {}, 'server_performance': {}}}",
            opt(&self.server_address),
            opt(&self.protocol),
            self.server_performance.py_repr()
        )
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct AppPermissions {
    pub sms: bool,
    pub storage: bool,
    pub phone: bool,
    pub network: bool,
}

/// Permission names in field order (`model_dump().keys()`).
pub(super) const PERMISSIONS: [&str; 4] = ["sms", "storage", "phone", "network"];

impl AppPermissions {
    pub(crate) fn get(&self, name: &str) -> Option<bool> {
        match name {
            "sms" => Some(self.sms),
            "storage" => Some(self.storage),
            "phone" => Some(self.phone),
            "network" => Some(self.network),
            _ => None,
        }
    }

    /// Sets a tracked permission; `false` if `name` is not one.
    pub(crate) fn set(&mut self, name: &str, value: bool) -> bool {
        let slot = match name {
            "sms" => &mut self.sms,
            "storage" => &mut self.storage,
            "phone" => &mut self.phone,
            "network" => &mut self.network,
            _ => return false,
        };
        *slot = value;
        true
    }

    /// Granted permissions in field order.
    pub(crate) fn granted(&self) -> Vec<&'static str> {
        PERMISSIONS
            .into_iter()
            .filter(|p| self.get(p) == Some(true))
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AppStatus {
    pub app_name: String,
    #[serde(default)]
    pub permissions: AppPermissions,
}

/// A declared-type field that may hold a raw, unvalidated value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Slot<T> {
    Typed(T),
    Raw(Value),
}

impl<T> Slot<T> {
    /// The typed value, or the `AttributeError` Python raises when reading `attr` of the
    /// raw value.
    pub(crate) fn get(&self, attr: &str) -> Result<&T, ToolError> {
        match self {
            Slot::Typed(t) => Ok(t),
            Slot::Raw(v) => Err(no_attribute(type_name(v), attr)),
        }
    }

    pub(crate) fn get_mut(&mut self, attr: &str) -> Result<&mut T, ToolError> {
        match self {
            Slot::Typed(t) => Ok(t),
            Slot::Raw(v) => Err(no_attribute(type_name(v), attr)),
        }
    }
}

impl<T: Serialize> Serialize for Slot<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Slot::Typed(t) => t.serialize(s),
            Slot::Raw(v) => v.serialize(s),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Slot<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(Slot::Typed)
    }
}

/// `MockPhoneAttributes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct Phone {
    pub sim_card_status: SimStatus,
    pub sim_card_missing: bool,
    pub airplane_mode: bool,
    pub network_signal_strength: SignalStrength,
    pub network_technology_connected: NetworkTechnology,
    pub network_connection_status: NetworkStatus,
    pub battery_level: i64,
    pub data_enabled: bool,
    pub roaming_enabled: bool,
    pub network_mode_preference: Slot<NetworkModePreference>,
    pub active_apn_settings: Slot<ApnSettings>,
    pub wifi_enabled: bool,
    pub wifi_connected: bool,
    pub wifi_ssid: Option<String>,
    pub wifi_signal_strength: SignalStrength,
    pub wifi_calling_enabled: bool,
    pub wifi_calling_mms_over_wifi: bool,
    pub data_saver_mode: bool,
    pub vpn_enabled_setting: bool,
    pub vpn_connected: bool,
    pub vpn_details: Option<VpnDetails>,
    pub app_statuses: IndexMap<String, AppStatus>,
}

impl Default for Phone {
    fn default() -> Self {
        let app = |name: &str, permissions: AppPermissions| {
            (
                name.to_string(),
                AppStatus {
                    app_name: name.to_string(),
                    permissions,
                },
            )
        };
        Phone {
            sim_card_status: SimStatus::Active,
            sim_card_missing: false,
            airplane_mode: false,
            network_signal_strength: SignalStrength::Good,
            network_technology_connected: NetworkTechnology::FiveG,
            network_connection_status: NetworkStatus::Connected,
            battery_level: 80,
            data_enabled: true,
            roaming_enabled: false,
            network_mode_preference: Slot::Typed(NetworkModePreference::FourG5GPreferred),
            active_apn_settings: Slot::Typed(ApnSettings::default()),
            wifi_enabled: false,
            wifi_connected: false,
            wifi_ssid: None,
            wifi_signal_strength: SignalStrength::None,
            wifi_calling_enabled: false,
            wifi_calling_mms_over_wifi: false,
            data_saver_mode: false,
            vpn_enabled_setting: false,
            vpn_connected: false,
            vpn_details: None,
            app_statuses: [
                app(
                    "messaging",
                    AppPermissions {
                        sms: true,
                        storage: true,
                        phone: true,
                        network: false,
                    },
                ),
                app(
                    "browser",
                    AppPermissions {
                        sms: false,
                        storage: true,
                        phone: false,
                        network: true,
                    },
                ),
            ]
            .into_iter()
            .collect(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PaymentRequest {
    pub bill_id: String,
    pub amount_due: f64,
    #[serde(default)]
    pub paid: bool,
}

/// `UserSurroundings`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct Surroundings {
    pub name: Option<String>,
    pub phone_number: Option<String>,
    pub is_abroad: bool,
    pub roaming_allowed: bool,
    pub signal_strength: IndexMap<NetworkTechnology, SignalStrength>,
    pub mobile_data_usage_exceeded: bool,
    pub line_active: bool,
    pub payment_request: Option<PaymentRequest>,
}

impl Default for Surroundings {
    fn default() -> Self {
        Surroundings {
            name: None,
            phone_number: None,
            is_abroad: false,
            roaming_allowed: false,
            signal_strength: [
                (NetworkTechnology::TwoG, SignalStrength::Poor),
                (NetworkTechnology::ThreeG, SignalStrength::Fair),
                (NetworkTechnology::FourG, SignalStrength::Good),
                (NetworkTechnology::FiveG, SignalStrength::Excellent),
            ]
            .into_iter()
            .collect(),
            mobile_data_usage_exceeded: false,
            line_active: true,
            payment_request: None,
        }
    }
}

impl Surroundings {
    /// `signal_strength.get(tech, SignalStrength.NONE)`.
    pub(crate) fn signal(&self, tech: NetworkTechnology) -> SignalStrength {
        self.signal_strength
            .get(&tech)
            .copied()
            .unwrap_or(SignalStrength::None)
    }
}

/// The user database.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct UserDb {
    pub device: Phone,
    pub surroundings: Surroundings,
}

impl UserDb {
    pub(crate) fn dump(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}
