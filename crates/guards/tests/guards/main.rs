//! The guards integration tests as one binary: artifacts (rules, checklists), the compiler, the
//! LLM and offline verifiers, the hybrid guard and ToolGuard on live environments.

#[allow(dead_code)]
#[path = "../fixtures/verifier/support.rs"]
mod support;

mod checklist_artifacts;
mod compile_pipeline;
mod hybrid;
mod policyguard;
mod policyguard_sim;
mod policyguard_sim_inputs;
mod policyguide_llm;
mod toolguard_artifacts;
mod toolguard_env;
