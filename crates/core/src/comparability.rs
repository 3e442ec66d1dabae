//! How a record says whether its cell ran τ²-bench's benchmark definition: the
//! `benchmark.*` keys of the cell settings every record carries. The orchestrator writes them
//! (its `comparability` module decides each item); reports, the viewer and exports read them
//! through [`CellStamp::of`], so the key names live in one place.

use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// The upstream commit whose benchmark definition the stamp compares with.
pub const UPSTREAM_COMMIT: &str = "a2c024725189473d2d7cea3a5cfdbcc67478e41f";
/// The commit as prose names it (`a2c0247`).
pub fn upstream_short() -> &'static str {
    &UPSTREAM_COMMIT[..7]
}

/// The stamp in one line, from the items that do not hold: `comparable with τ²-bench
/// a2c0247` or `not comparable with τ²-bench a2c0247: item, item`.
pub fn summary_line<'a>(deviating: impl IntoIterator<Item = &'a str>) -> String {
    let items: Vec<&str> = deviating.into_iter().collect();
    let commit = upstream_short();
    if items.is_empty() {
        format!("comparable with τ²-bench {commit}")
    } else {
        format!(
            "not comparable with τ²-bench {commit}: {}",
            items.join(", ")
        )
    }
}

/// The key prefix of the stamp's items among a cell's settings.
pub const CELL_PREFIX: &str = "benchmark.";
/// The cell key that says whether every item holds.
pub const COMPARABLE_KEY: &str = "benchmark.comparable";
/// The value of an item that equals upstream's.
pub const UPSTREAM: &str = "upstream";

/// The stamp items of a domain's data. A domain option chooses the files they are read from,
/// so cells told apart by an option differ in these as a consequence of it.
pub const DATA_ITEMS: [&str; 3] = ["policy", "database", "tool_schemas"];

/// The detail of a domain option's item (`retrieval = grep_only; upstream's default is
/// alltools`): the option and its value, and upstream's default when the value is another.
pub fn option_detail(name: &str, value: &str, upstream_default: &str) -> String {
    if value == upstream_default {
        format!("{name} = {value}")
    } else {
        format!("{name} = {value}; upstream's default is {upstream_default}")
    }
}

/// The value an item's detail names when it is the item of option `name` (see
/// [`option_detail`]); `None` for any other item (an option at upstream's default is stored
/// as [`UPSTREAM`], which names none).
pub fn option_value<'a>(name: &str, detail: &'a str) -> Option<&'a str> {
    let rest = detail.strip_prefix(name)?.strip_prefix(" = ")?;
    Some(
        rest.split_once("; upstream's default is ")
            .map_or(rest, |(value, _)| value),
    )
}

/// A cell's stamp as its settings carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CellStamp {
    pub comparable: bool,
    /// `(item, what deviates)` for each item that does not hold, sorted by item.
    pub deviations: Vec<(String, String)>,
}

impl CellStamp {
    /// The stamp of a cell's settings; `None` when they carry none (records written before
    /// the stamp existed, or imported from an upstream results file).
    pub fn of(cell: &BTreeMap<String, Value>) -> Option<CellStamp> {
        let comparable = cell.get(COMPARABLE_KEY)?.as_bool()?;
        let deviations = cell
            .iter()
            .filter(|(k, v)| {
                k.starts_with(CELL_PREFIX)
                    && k.as_str() != COMPARABLE_KEY
                    && v.as_str() != Some(UPSTREAM)
            })
            .map(|(k, v)| {
                let detail = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                (k[CELL_PREFIX.len()..].to_string(), detail)
            })
            .collect();
        Some(CellStamp {
            comparable,
            deviations,
        })
    }

    /// The items that do not hold, comma-separated.
    pub fn items(&self) -> String {
        self.deviations
            .iter()
            .map(|(k, _)| k.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// See [`summary_line`].
    pub fn summary(&self) -> String {
        summary_line(self.deviations.iter().map(|(k, _)| k.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cell_names_the_items_that_deviate() {
        let cell: BTreeMap<String, Value> = [
            ("benchmark.comparable", json!(false)),
            ("benchmark.policy", json!("upstream")),
            ("benchmark.sampling", json!("agent temperature 0.7")),
            ("agent.model", json!("m")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let s = CellStamp::of(&cell).unwrap();
        assert_eq!(
            s.deviations,
            [("sampling".to_string(), "agent temperature 0.7".to_string())]
        );
        assert_eq!(
            s.summary(),
            "not comparable with τ²-bench a2c0247: sampling"
        );
        assert_eq!(CellStamp::of(&BTreeMap::new()), None);
    }

    #[test]
    fn an_option_item_names_its_value_and_no_other_item_does() {
        let d = option_detail("retrieval", "grep_only", "alltools");
        assert_eq!(d, "retrieval = grep_only; upstream's default is alltools");
        assert_eq!(option_value("retrieval", &d), Some("grep_only"));
        let at_default = option_detail("retrieval", "alltools", "alltools");
        assert_eq!(option_value("retrieval", &at_default), Some("alltools"));
        assert_eq!(option_value("policy", "policy from data/x"), None);
        assert_eq!(option_value("retrieval", UPSTREAM), None);
    }
}
