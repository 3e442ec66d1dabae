//! The guards integration tests as one binary: artifacts (rules, checklists), the LLM and
//! offline verifiers, the hybrid guard, ToolGuard on live environments (banking_knowledge's in `toolguard_banking.rs`), the PolicyGuide guide (the
//! LLM guide's shared pieces in `guide_support.rs`; the scripted model the verifier and guide
//! tests talk to in `scripted.rs`), the offline guide, its state machine, and the prompt each
//! model-calling guard reports for sizing (`model_prompt.rs`).

#[allow(dead_code)]
#[path = "../fixtures/verifier/support.rs"]
mod support;

mod checklist_artifacts;
mod guide_support;
mod hybrid;
mod model_prompt;
mod policyguard;
mod policyguard_sim;
mod policyguard_sim_inputs;
mod policyguide_factory;
mod policyguide_llm;
mod policyguide_llm_prompt;
mod policyguide_sim;
mod policyguide_state;
mod scripted;
mod toolguard_artifacts;
mod toolguard_banking;
mod toolguard_env;
