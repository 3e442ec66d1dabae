//! How the sim agent reads the conversation back: its past outputs, the repairs the
//! remediations of its blocked calls name, its drawn reactions to a block (retry unchanged,
//! abandon) and the user's answers to its summaries — the [`State`] its plan is derived from
//! each turn — and the labels of those reactions in a finished conversation.

use super::{PastOutput, SimAgent, Step};
use crate::behaviour;
use crate::rng::SimRng;
use serde_json::{Map, Value};
use tauguard_core::Requestor;
use tauguard_core::dialogue::{declines, is_affirmative, is_guidance};
use tauguard_core::message::Message;
use tauguard_core::record::InjectedFault;

/// What the agent repairs of one mutating call.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Repair {
    pub reads: bool,
    pub confirmation: bool,
    pub argument: bool,
}

/// Everything the plan depends on besides the task: repairs, reactions to blocks and the
/// user's answers, all re-derived from the conversation each turn.
#[derive(Debug, Default)]
pub(super) struct State<'v> {
    pub identity: bool,
    /// Per mutating call: `Some` once its repair is due.
    pub calls: Vec<Option<Repair>>,
    pub refuse: bool,
    /// Per mutating call: reads a remediation or guidance named that the plan lacks.
    pub named_reads: Vec<Vec<String>>,
    /// Per mutating call: retry the blocked call once unchanged.
    pub retry: Vec<bool>,
    /// Give up after this mutating call's block.
    pub abandon: Option<usize>,
    pub view: &'v [Message],
}

/// The user's answer to a summary, as far as the conversation shows it.
pub(super) enum Answers {
    /// Go ahead (yes, or no answer yet) after this many re-asks.
    Proceed(usize),
    /// The user declined after this many re-asks.
    Declined(usize),
}

/// At most this many re-asks of one summary; a user still not saying yes has declined.
const MAX_REASKS: usize = 2;

impl SimAgent {
    pub(super) fn past_outputs(view: &[Message]) -> Vec<PastOutput> {
        let mut out = Vec::new();
        for (i, m) in view.iter().enumerate() {
            let Message::Assistant(a) = m else { continue };
            if let Some(calls) = a.tool_calls.as_ref().filter(|c| !c.is_empty()) {
                for c in calls {
                    let result = view[i + 1..].iter().find_map(|n| match n {
                        Message::Tool(t) if t.id == c.id => Some(t),
                        _ => None,
                    });
                    out.push(PastOutput {
                        step: Step::Call(c.name.clone(), c.arguments.clone()),
                        failed: result.is_some_and(|t| t.error || t.guard_blocked),
                        blocked: result
                            .filter(|t| t.guard_blocked)
                            .map(|t| t.content.clone()),
                        id: Some(c.id.clone()),
                    });
                }
            } else if let Some(text) = a.content.as_deref() {
                out.push(PastOutput {
                    step: Step::Say(text.to_string()),
                    failed: false,
                    blocked: None,
                    id: None,
                });
            }
        }
        out
    }

    /// What a remediation names for mutating call `k`: `(identity, repair)`. A remediation
    /// that names none of identity, reads or confirmation is read as being about the call's
    /// arguments.
    fn named(&self, k: usize, remediation: &str) -> (bool, Repair) {
        self.names(k, remediation, true)
    }

    /// What a guide's guidance names for mutating call `k`. Unlike a remediation, guidance
    /// arrives before any attempt, so text that names nothing asks for nothing.
    fn guided(&self, k: usize, guidance: &str) -> (bool, Repair) {
        self.names(k, guidance, false)
    }

    fn names(&self, k: usize, remediation: &str, fallback: bool) -> (bool, Repair) {
        let t = remediation.to_lowercase();
        let identity = t.contains("identity")
            || self
                .spec
                .identity_reads
                .iter()
                .any(|r| t.contains(r.as_str()));
        let reads = !self.named_lookups(k, remediation).is_empty()
            || t.contains("read_")
            || t.contains("argument_link")
            || t.contains("look up")
            || self
                .spec
                .prerequisite_reads
                .get(k)
                .into_iter()
                .flatten()
                .any(|r| !r.identity && t.contains(r.tool.as_str()));
        let confirmation = t.contains("confirm");
        let argument = self
            .faults
            .corrupt_argument
            .as_ref()
            .is_some_and(|(ck, arg)| *ck == k && t.contains(arg.as_str()))
            || t.contains("rule")
            || self.names_a_rule(&t)
            || (fallback && !(identity || reads || confirmation));
        (
            identity,
            Repair {
                reads,
                confirmation,
                argument,
            },
        )
    }

    /// Read-only tools a text names in backticks that call `k`'s planned reads lack.
    fn named_lookups(&self, k: usize, text: &str) -> Vec<String> {
        text.split('`')
            .skip(1)
            .step_by(2)
            .filter(|id| self.spec.lookups.contains_key(*id))
            .filter(|id| !self.spec.identity_reads.contains(*id))
            .filter(|id| {
                !self
                    .spec
                    .prerequisite_reads
                    .get(k)
                    .into_iter()
                    .flatten()
                    .any(|r| r.tool == *id)
            })
            .map(str::to_string)
            .fold(Vec::new(), |mut v, id| {
                if !v.contains(&id) {
                    v.push(id);
                }
                v
            })
    }

    /// Whether a remediation names a rule id in backticks (ToolGuard's "Could not verify
    /// `items_in_order`: ..."): a backticked name that is not one of the domain's tools.
    fn names_a_rule(&self, text: &str) -> bool {
        text.split('`').skip(1).step_by(2).any(|id| {
            !id.is_empty()
                && !self.spec.mutating.contains(id)
                && !self.spec.identity_reads.contains(id)
                && !self.spec.lookups.contains_key(id)
                && !self
                    .spec
                    .prerequisite_reads
                    .iter()
                    .flatten()
                    .any(|r| r.tool == id)
                && id.chars().all(|c| c.is_ascii_lowercase() || c == '_')
        })
    }

    /// The state the conversation shows: per mutating call, its failed attempts (in the
    /// faulted or the gold form) decide its repair, retry and abandonment.
    pub(super) fn state<'v>(&self, view: &'v [Message]) -> State<'v> {
        let past = Self::past_outputs(view);
        let base = State {
            view,
            ..State::default()
        };
        let faulted: Vec<Step> = self
            .plan(&base)
            .into_iter()
            .filter(|s| {
                matches!(s, Step::Call(n, _) if self.spec.mutating.contains(n))
                    && !self.is_tempting(s)
            })
            .collect();
        let gold: Vec<&Map<String, Value>> = self
            .spec
            .task
            .gold_actions()
            .iter()
            .filter(|a| a.requestor == Requestor::Assistant && self.spec.mutating.contains(&a.name))
            .map(|a| &a.arguments)
            .collect();
        // A guide's guidance about a mutating call (it names the tool in backticks) is read
        // like a remediation, before the call is attempted.
        let guidance: Vec<&str> = view
            .iter()
            .filter_map(|m| match m {
                Message::User(u) => u.content.as_deref().filter(|t| is_guidance(t)),
                _ => None,
            })
            .collect();
        let mut st = base;
        for (k, step) in faulted.iter().enumerate() {
            let Step::Call(name, args) = step else {
                continue;
            };
            let mine = |p: &&PastOutput| match &p.step {
                Step::Call(n, a) => n == name && (a == args || gold.get(k) == Some(&a)),
                Step::Say(_) => false,
            };
            let blocked: Vec<&str> = past
                .iter()
                .filter(mine)
                .filter_map(|p| p.blocked.as_deref())
                .collect();
            let env_error = past
                .iter()
                .filter(mine)
                .any(|p| p.failed && p.blocked.is_none());
            let mut rng = self.reaction_rng(k);
            let abandon = rng.chance(self.spec.profile.abandon_after_block);
            let retry = rng.chance(self.spec.profile.retry_unchanged);
            st.retry.push(retry && !blocked.is_empty());
            if abandon && !blocked.is_empty() && st.abandon.is_none() {
                st.abandon = Some(k);
            }
            // Giving up takes precedence over any repair of the blocked call.
            let abandoned = st.abandon == Some(k);
            let due = env_error || (!abandoned && blocked.len() > usize::from(retry));
            let repair = due.then(|| {
                if env_error {
                    st.identity = true;
                    return Repair {
                        reads: true,
                        confirmation: true,
                        argument: true,
                    };
                }
                let mut r = Repair::default();
                for text in &blocked {
                    let (id, n) = self.named(k, text);
                    st.identity |= id;
                    r.reads |= n.reads;
                    r.confirmation |= n.confirmation;
                    r.argument |= n.argument;
                }
                r
            });
            let executed = past.iter().filter(mine).any(|p| !p.failed);
            let about_it = format!("`{name}`");
            let mut guided = None::<Repair>;
            for text in guidance
                .iter()
                .filter(|t| !executed && t.contains(&about_it))
            {
                let (id, n) = self.guided(k, text);
                st.identity |= id;
                let r = guided.get_or_insert_with(Repair::default);
                r.reads |= n.reads;
                r.confirmation |= n.confirmation;
                r.argument |= n.argument;
            }
            let repair = match (repair, guided) {
                (Some(a), Some(b)) => Some(Repair {
                    reads: a.reads || b.reads,
                    confirmation: a.confirmation || b.confirmation,
                    argument: a.argument || b.argument,
                }),
                (a, b) => a.or(b),
            };
            let mut named = Vec::new();
            let texts = blocked.iter().copied().chain(
                guidance
                    .iter()
                    .copied()
                    .filter(|t| !executed && t.contains(&about_it)),
            );
            for text in texts {
                for tool in self.named_lookups(k, text) {
                    if !named.contains(&tool) {
                        named.push(tool);
                    }
                }
            }
            st.named_reads
                .push(if repair.is_some() { named } else { Vec::new() });
            st.calls.push(repair);
        }
        st.refuse = past.iter().any(|p| p.failed && self.is_tempting(&p.step));
        st
    }

    /// The draws of mutating call `k`'s reactions to a block, keyed apart from the faults.
    fn reaction_rng(&self, k: usize) -> SimRng {
        SimRng::keyed(
            &format!("agent-reaction:{}:{k}", self.spec.task.id),
            self.spec.trial,
            self.spec.seed,
        )
    }

    /// The agent's reactions to blocks in a finished conversation (`messages`, the agent's
    /// view): an unchanged retry (on the retried attempt) and an abandoned request (on the
    /// blocked attempt).
    pub fn behaviour_events(&self, messages: &[Message]) -> Vec<InjectedFault> {
        let st = self.state(messages);
        let past = Self::past_outputs(messages);
        let faulted: Vec<Step> = self
            .plan(&State::default())
            .into_iter()
            .filter(|s| matches!(s, Step::Call(n, _) if self.spec.mutating.contains(n)))
            .collect();
        let mut out = Vec::new();
        for (k, step) in faulted.iter().enumerate() {
            let Step::Call(name, _) = step else { continue };
            let tries: Vec<&PastOutput> = past.iter().filter(|p| p.step == *step).collect();
            let event = |kind: &str, p: &PastOutput, detail: &str| InjectedFault {
                kind: kind.into(),
                call_id: p.id.clone(),
                tool: Some(name.clone()),
                detail: detail.into(),
                at_message: None,
            };
            if st.abandon == Some(k)
                && let Some(p) = tries.iter().find(|p| p.blocked.is_some())
            {
                out.push(event(
                    behaviour::ABANDON_AFTER_BLOCK,
                    p,
                    "gave up on the request after the block",
                ));
            }
            if st.retry.get(k).copied().unwrap_or(false)
                && let Some(p) = tries.get(1)
            {
                out.push(event(
                    behaviour::RETRY_UNCHANGED,
                    p,
                    "retried the blocked call unchanged",
                ));
            }
        }
        out
    }
}

/// The user's answers to `summary` and its re-asks (`reask`): how many re-asks they call for
/// and whether the user declined. A decline ends it; a hesitation or a correction (neither a
/// yes nor a decline) calls for a re-ask, at most [`MAX_REASKS`].
pub(super) fn answers(view: &[Message], summary: &str, reask: &str) -> Answers {
    let said = |m: &Message, t: &str| matches!(m, Message::Assistant(a) if a.content.as_deref() == Some(t));
    // The latest summary: a repaired call asks again, and only the answers since count.
    let Some(mut at) = view.iter().rposition(|m| said(m, summary)) else {
        return Answers::Proceed(0);
    };
    let mut reasks = 0;
    loop {
        let reply = view[at + 1..].iter().find_map(|m| match m {
            // A guide's guidance is not the user's answer.
            Message::User(u) if !u.content.as_deref().is_some_and(is_guidance) => {
                Some(u.content.as_deref().unwrap_or_default())
            }
            _ => None,
        });
        let Some(reply) = reply else {
            return Answers::Proceed(reasks);
        };
        if is_affirmative(reply) {
            return Answers::Proceed(reasks);
        }
        if declines(reply) || reasks == MAX_REASKS {
            return Answers::Declined(reasks);
        }
        reasks += 1;
        match view[at + 1..].iter().position(|m| said(m, reask)) {
            Some(p) => at += 1 + p,
            None => return Answers::Proceed(reasks),
        }
    }
}
