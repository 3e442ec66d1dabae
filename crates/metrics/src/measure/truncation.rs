//! Replies cut at the token limit, per role: a reply whose provider stop reason says its
//! token limit ended it (`length`, Anthropic `max_tokens`, Gemini `MAX_TOKENS`), as the
//! orchestrator counts it in every record's usage (`RoleUsage::truncated`, defined by
//! `tauguard_llm::cut_at_token_limit`). A cut reply is often half a sentence or half a
//! JSON object: a group with many of them measures the token limit as much as the agent.
//!
//! Counted over every simulation of a group, infrastructure errors included (their usage is
//! their last attempt's), since the replies happened whatever the simulation's outcome; the
//! role's calls are the denominator.

use crate::render::table::{Cell, Table};
use crate::render::tables::{headers, key_cells};
use crate::report::Report;
use crate::summary::SimSummary;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One role's replies in a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
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

/// Replies cut at the token limit per group and role; `None` when no group has one.
pub fn truncation_table(r: &Report) -> Option<Table> {
    if r.groups
        .iter()
        .all(|g| g.truncated_replies.values().all(|t| t.truncated == 0))
    {
        return None;
    }
    let roles: BTreeSet<&str> = r
        .groups
        .iter()
        .flat_map(|g| g.truncated_replies.keys().map(String::as_str))
        .collect();
    let mut t = Table::new(
        "truncated_replies",
        "Replies cut at the token limit, per role",
        &[],
    );
    let extra: Vec<String> = roles
        .iter()
        .flat_map(|role| [format!("{role} cut"), format!("{role} replies")])
        .collect();
    t.headers = headers(&extra.iter().map(String::as_str).collect::<Vec<_>>());
    for g in &r.groups {
        let mut row = key_cells(g);
        for role in &roles {
            match g.truncated_replies.get(*role) {
                Some(c) => row.extend([Cell::Int(c.truncated), Cell::Int(c.calls)]),
                None => row.extend([Cell::Missing, Cell::Missing]),
            }
        }
        t.rows.push(row);
    }
    t.notes.push(
        "cut: replies whose stop reason says the token limit ended them (`length`, Anthropic \
         `max_tokens`, Gemini `MAX_TOKENS`); replies: the role's model calls. Over every \
         simulation of the group, infrastructure errors included. The guard role holds the \
         verifier's and the guide's calls. `[run] truncated_replies` decides what a cut agent \
         reply does; `[guard] verifier_max_tokens` and `guide_max_tokens` set the guard's limits."
            .into(),
    );
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::synthetic::record;
    use tauguard_core::record::{RoleUsage, Slice};

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
