//! The τ²-bench task schema (§1.2 of the semantics notes). Unknown keys are tolerated, as
//! upstream's loader drops them; everything the evaluator reads is typed.

use crate::message::{Message, Requestor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub id: String,
    #[serde(default)]
    pub description: Option<Description>,
    pub user_scenario: UserScenario,
    #[serde(default)]
    pub ticket: Option<String>,
    #[serde(default)]
    pub initial_state: Option<InitialState>,
    #[serde(default)]
    pub evaluation_criteria: Option<EvaluationCriteria>,
    /// Bookkeeping only (upstream's `TaskIssue` list), kept as JSON so an export writes the
    /// task as upstream loaded it.
    #[serde(default)]
    pub issues: Option<Value>,
    /// Banking only upstream; kept for the same reason.
    #[serde(default)]
    pub required_documents: Option<Vec<String>>,
    /// `None` = every user tool; `Some([])` = none.
    #[serde(default)]
    pub user_tools: Option<Vec<String>>,
}

impl Task {
    /// Gold actions, empty when the task has none.
    pub fn gold_actions(&self) -> &[Action] {
        self.evaluation_criteria
            .as_ref()
            .and_then(|c| c.actions.as_deref())
            .unwrap_or(&[])
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Description {
    pub purpose: Option<String>,
    pub relevant_policies: Option<String>,
    pub notes: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserScenario {
    #[serde(default)]
    pub persona: Option<String>,
    pub instructions: Instructions,
}

/// Structured instructions, or a plain string used as is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Instructions {
    Structured(StructuredInstructions),
    Plain(String),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructuredInstructions {
    pub domain: String,
    pub reason_for_call: String,
    #[serde(default)]
    pub known_info: Option<String>,
    #[serde(default)]
    pub unknown_info: Option<String>,
    pub task_instructions: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InitialState {
    pub initialization_data: Option<InitializationData>,
    pub initialization_actions: Option<Vec<EnvFunctionCall>>,
    pub message_history: Option<Vec<Message>>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InitializationData {
    pub agent_data: Option<Value>,
    pub user_data: Option<Value>,
}

/// A call of any toolkit method (not only tools), used by initial states and assertions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvFunctionCall {
    pub env_type: Requestor,
    pub func_name: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvAssertion {
    pub env_type: Requestor,
    pub func_name: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
    #[serde(default = "default_true")]
    pub assert_value: bool,
    #[serde(default)]
    pub message: Option<String>,
}

fn default_true() -> bool {
    true
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RewardType {
    Db,
    EnvAssertion,
    NlAssertion,
    Action,
    Communicate,
}

fn default_reward_basis() -> Vec<RewardType> {
    vec![RewardType::Db, RewardType::Communicate]
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvaluationCriteria {
    #[serde(default)]
    pub actions: Option<Vec<Action>>,
    #[serde(default)]
    pub env_assertions: Option<Vec<EnvAssertion>>,
    #[serde(default)]
    pub communicate_info: Option<Vec<String>>,
    #[serde(default)]
    pub nl_assertions: Option<Vec<String>>,
    #[serde(default = "default_reward_basis")]
    pub reward_basis: Vec<RewardType>,
}

/// One gold action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Action {
    pub action_id: String,
    #[serde(default)]
    pub requestor: Requestor,
    pub name: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
    #[serde(default)]
    pub info: Option<String>,
    /// `None` = compare every argument of the predicted call; `Some([])` = name only.
    #[serde(default)]
    pub compare_args: Option<Vec<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerates_unknown_keys_and_defaults_basis() {
        let t: Task = serde_json::from_str(
            r#"{"id": "7", "annotations": null,
                "description": {"purpose": "p", "info": {"x": 1}},
                "user_scenario": {"persona": null, "instructions": {"domain": "airline",
                   "reason_for_call": "r", "known_info": null, "task_instructions": "t"}},
                "evaluation_criteria": {"actions": [{"action_id": "a", "name": "get_user_details",
                   "arguments": {"user_id": "u"}}]}}"#,
        )
        .unwrap();
        let crit = t.evaluation_criteria.as_ref().unwrap();
        assert_eq!(
            crit.reward_basis,
            vec![RewardType::Db, RewardType::Communicate]
        );
        assert_eq!(t.gold_actions()[0].requestor, Requestor::Assistant);
        assert!(t.gold_actions()[0].compare_args.is_none());
    }

    #[test]
    fn plain_string_instructions() {
        let t: Task =
            serde_json::from_str(r#"{"id": "1", "user_scenario": {"instructions": "just ask"}}"#)
                .unwrap();
        assert_eq!(
            t.user_scenario.instructions,
            Instructions::Plain("just ask".into())
        );
    }
}
