//! The guide's request state, held by code rather than by the model: request cards, the
//! authorizations they hold, and the one-shot interception gate of the user-turn region.
//!
//! A verifier (model or sim) proposes per-request updates; [`GuideState::apply`] is the only
//! way they change the state, and it refuses what the workflow does not enumerate — an unknown
//! node id leaves the request where it was, an authorization that is not one of the
//! workflow's authorization nodes is dropped — so a model's slip can never enable a tool.

use super::flow::Flow;
use std::collections::BTreeSet;
use tauguard_core::record::{RequestCard, RequestStatus};

/// One request's update, as a verifier proposes it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestUpdate {
    /// An existing request's id; `None` opens a new request at the workflow's start.
    pub id: Option<String>,
    pub intent: Option<String>,
    /// The request's new position (`graph/node`): the first node not yet satisfied.
    pub node: Option<String>,
    /// The authorization nodes the request holds from now on (replaces the old list);
    /// `None` keeps it.
    pub authorizations: Option<Vec<String>>,
    pub status: Option<RequestStatus>,
    /// This request duplicates that one: its authorizations join it and its card goes.
    pub merge_into: Option<String>,
}

/// The one-shot gate of a user-turn region: the first mutating call of the region no request
/// authorizes is intercepted; after that the gate is spent and lets the region's other
/// unauthorized calls — the immediate retry first — through, so the guide intercepts exactly
/// once per region and can never deadlock the agent. A new user turn re-arms it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Gate {
    /// No interception yet in this region.
    #[default]
    Armed,
    /// This region's interception was made, of this tool.
    Spent(String),
}

/// The per-simulation state of a guide.
#[derive(Debug, Clone, Default)]
pub(crate) struct GuideState {
    pub cards: Vec<RequestCard>,
    /// Ids handed out so far (`r1`, `r2`, …).
    opened: u32,
    pub gate: Gate,
}

impl GuideState {
    /// Applies a verifier's updates in order; returns what was refused, each with its reason.
    pub(crate) fn apply(&mut self, flow: &Flow, updates: Vec<RequestUpdate>) -> Vec<String> {
        let mut rejected = Vec::new();
        for u in updates {
            let at = match &u.id {
                Some(id) => match self.cards.iter().position(|c| c.id == *id) {
                    Some(i) => i,
                    None => {
                        rejected.push(format!("unknown request id `{id}`: update ignored"));
                        continue;
                    }
                },
                None => {
                    self.opened += 1;
                    self.cards.push(RequestCard {
                        id: format!("r{}", self.opened),
                        intent: String::new(),
                        node: flow.start(),
                        authorizations: Vec::new(),
                        status: RequestStatus::Active,
                    });
                    self.cards.len() - 1
                }
            };
            let card = &mut self.cards[at];
            if let Some(intent) = u.intent {
                card.intent = intent;
            }
            if let Some(node) = u.node {
                if flow.contains(&node) {
                    card.node = node;
                } else {
                    rejected.push(format!(
                        "request `{}`: unknown node id `{node}`; it stays at `{}`",
                        card.id, card.node
                    ));
                }
            }
            if let Some(list) = u.authorizations {
                let mut kept = Vec::new();
                for a in list {
                    if flow.authorizations().contains_key(&a) {
                        if !kept.contains(&a) {
                            kept.push(a);
                        }
                    } else {
                        rejected.push(format!(
                            "request `{}`: `{a}` is not an authorization node of the workflow",
                            card.id
                        ));
                    }
                }
                card.authorizations = kept;
            }
            if let Some(status) = u.status {
                card.status = status;
                if status == RequestStatus::Completed {
                    card.authorizations.clear();
                }
            }
            if let Some(target) = u.merge_into {
                let id = card.id.clone();
                match self.cards.iter().position(|c| c.id == target && c.id != id) {
                    Some(t) => {
                        let moved = std::mem::take(&mut self.cards[at].authorizations);
                        for a in moved {
                            if !self.cards[t].authorizations.contains(&a) {
                                self.cards[t].authorizations.push(a);
                            }
                        }
                        self.cards.remove(at);
                        continue;
                    }
                    None => rejected.push(format!(
                        "request `{id}`: cannot merge into unknown request `{target}`"
                    )),
                }
            }
        }
        // Abandoned requests leave the state.
        self.cards.retain(|c| c.status != RequestStatus::Abandoned);
        rejected
    }

    /// The mutating tools the active requests' authorizations enable, rebuilt from the cards.
    pub(crate) fn enabled_tools(&self, flow: &Flow) -> BTreeSet<String> {
        self.cards
            .iter()
            .filter(|c| c.status == RequestStatus::Active)
            .flat_map(|c| &c.authorizations)
            .filter_map(|a| flow.authorizations().get(a).cloned())
            .collect()
    }

    /// The active requests holding an authorization for `tool`.
    pub(crate) fn authorizing(&self, flow: &Flow, tool: &str) -> Vec<String> {
        self.cards
            .iter()
            .filter(|c| c.status == RequestStatus::Active)
            .filter(|c| {
                c.authorizations
                    .iter()
                    .any(|a| flow.authorizations().get(a).is_some_and(|t| t == tool))
            })
            .map(|c| c.id.clone())
            .collect()
    }
}
