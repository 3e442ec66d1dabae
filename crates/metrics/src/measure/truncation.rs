//! Replies cut at the token limit, per role: a reply whose provider stop reason says its
//! token limit ended it (`length`, Anthropic `max_tokens`, Gemini `MAX_TOKENS`), as the
//! orchestrator counts it in every record's usage (`RoleUsage::truncated`, defined by
//! `tauguard_llm::cut_at_token_limit`). A cut reply is often half a sentence or half a
//! JSON object: a group with many of them measures the token limit as much as the agent.
//!
//! Counted over every simulation of a group, infrastructure errors included (their usage is
//! their last attempt's), since the replies happened whatever the simulation's outcome; the
//! role's calls are the denominator.

use crate::measure::registry::{Column, Context, Measure, Place, TableDecl};
use crate::render::table::{Cell, Table};
use crate::render::tables::key_cells;
use crate::report::Report;
use crate::summary::SimSummary;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One role's replies in a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RoleReplies {
    /// Model calls of the role (each a reply, a cut one included).
    pub calls: u64,
    /// Replies cut at their token limit.
    pub truncated: u64,
}

/// Adds the usage of one simulation to `into`, per role with a usage entry.
pub(crate) fn add(into: &mut BTreeMap<String, RoleReplies>, rec: &SimSummary) {
    for (role, u) in rec.roles() {
        let r = into.entry(role.to_string()).or_default();
        r.calls += u.calls;
        r.truncated += u.truncated;
    }
}

/// The registry entry of cut replies: per role, so its table's columns repeat per role.
#[derive(Debug)]
pub(crate) struct Truncation;

const TABLE: TableDecl = TableDecl {
    id: "truncated_replies",
    columns: &[],
    repeated: &[
        Column {
            header: "{} cut",
            name: "{}_truncated",
            unit: "count",
            meaning: "{} replies cut at their token limit (stop reason length / max_tokens / \
                      MAX_TOKENS), every simulation of the group",
        },
        Column {
            header: "{} replies",
            name: "{}_replies",
            unit: "count",
            meaning: "{} model calls, every simulation of the group (the denominator of \
                      {}_truncated)",
        },
    ],
};

impl Measure for Truncation {
    const KEY: &'static str = "truncated_replies";
    const GROUP_COLUMNS: &'static [Column] = &[];
    const TABLES: &'static [TableDecl] = &[TABLE];
    const PLACE: Place = Place::after(&["cost_per_simulation"], &[], Some("spending"));
    type Acc = BTreeMap<String, RoleReplies>;
    /// Per role with usage.
    type Value = BTreeMap<String, RoleReplies>;

    fn add(
        acc: &mut BTreeMap<String, RoleReplies>,
        sim: &SimSummary,
        _own: &[u64],
        _cx: &Context<'_>,
    ) {
        add(acc, sim);
    }

    fn finish(
        acc: BTreeMap<String, RoleReplies>,
        _cx: &Context<'_>,
    ) -> BTreeMap<String, RoleReplies> {
        acc
    }

    fn group_cells(_v: &BTreeMap<String, RoleReplies>) -> Vec<Cell> {
        Vec::new()
    }

    /// Replies cut at the token limit per group and role; none when no group has one.
    fn tables(r: &Report) -> Vec<Table> {
        let per_group: Vec<BTreeMap<String, RoleReplies>> = (r.groups.iter())
            .map(|g| g.measures.get::<Truncation>().unwrap_or_default())
            .collect();
        if per_group
            .iter()
            .all(|g| g.values().all(|t| t.truncated == 0))
        {
            return Vec::new();
        }
        let roles: BTreeSet<&str> = (per_group.iter())
            .flat_map(|g| g.keys().map(String::as_str))
            .collect();
        let roles: Vec<&str> = roles.into_iter().collect();
        let mut t = TABLE.table_for("Replies cut at the token limit, per role", &roles);
        for (g, replies) in r.groups.iter().zip(&per_group) {
            let mut row = key_cells(g);
            for role in &roles {
                match replies.get(*role) {
                    Some(c) => row.extend([Cell::Int(c.truncated), Cell::Int(c.calls)]),
                    None => row.extend([Cell::Missing, Cell::Missing]),
                }
            }
            t.rows.push(row);
        }
        t.notes.push(
            "cut: replies whose stop reason says the token limit ended them (`length`, \
             Anthropic `max_tokens`, Gemini `MAX_TOKENS`); replies: the role's model calls. Over \
             every simulation of the group, infrastructure errors included. The guard role \
             holds the verifier's and the guide's calls. `[run] truncated_replies` decides what \
             a cut agent reply does; `[guard] verifier_max_tokens` and `guide_max_tokens` set \
             the guard's limits."
                .into(),
        );
        vec![t]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tauguard_core::record::{RoleUsage, Slice};
    use tauguard_testkit::synthetic::record;

    #[test]
    fn counts_calls_and_cut_replies_per_role() {
        let mut rec = record("0", Slice::Mut, 0, 1.0);
        rec.usage.insert(
            "agent".into(),
            RoleUsage {
                calls: 7,
                truncated: 6,
                ..RoleUsage::default()
            },
        );
        rec.usage.insert(
            "user".into(),
            RoleUsage {
                calls: 4,
                ..RoleUsage::default()
            },
        );
        let mut into = BTreeMap::new();
        add(&mut into, &SimSummary::of(&rec));
        add(&mut into, &SimSummary::of(&rec));
        assert_eq!(
            into["agent"],
            RoleReplies {
                calls: 14,
                truncated: 12
            }
        );
        assert_eq!(
            into["user"],
            RoleReplies {
                calls: 8,
                truncated: 0
            }
        );
    }
}
