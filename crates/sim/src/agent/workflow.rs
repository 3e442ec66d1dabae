//! The domain's troubleshooting workflow around the gold actions: the device checks the
//! policy-following agent asks the user for before an action (the diagnosis that shows the
//! fix is needed) and after it (the check that shows it worked), so that a fault-free
//! trajectory diagnoses before it fixes, as the workflow says, while τ²-bench's gold holds
//! the fixes alone.

use super::{SimAgent, Step};
use crate::phrases::device_request;
use serde_json::{Map, Value};

/// The device checks a domain's troubleshooting workflow has the user make around an action
/// (`tauguard_env::registry::Domain::device_workflow`, passed in by the caller): the
/// policy-following agent asks for each check before the action and each verification after
/// it, so a fault-free trajectory diagnoses before it fixes, as the workflow says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceChecks {
    /// Checks before the action, each with the action's arguments it takes (same name).
    pub diagnose: Vec<(String, Vec<String>)>,
    /// Checks after the action.
    pub verify: Vec<String>,
}

impl SimAgent {
    /// The workflow's checks before `action`, each with the arguments of the action it takes;
    /// a check the previous step already asked for is not asked again.
    pub(super) fn diagnose(&self, action: &str, args: &Map<String, Value>, steps: &mut Vec<Step>) {
        let Some(w) = self.spec.device_workflow.get(action) else {
            return;
        };
        for (tool, take) in &w.diagnose {
            let taken: Map<String, Value> = take
                .iter()
                .filter_map(|n| Some((n.clone(), args.get(n)?.clone())))
                .collect();
            let step = Step::Say(device_request(tool, &taken));
            if steps.last() != Some(&step) {
                steps.push(step);
            }
        }
    }

    /// The workflow's verifications after `action`, but for one the next gold action makes.
    pub(super) fn verify(
        &self,
        action: &str,
        next: Option<&tauguard_core::Action>,
        steps: &mut Vec<Step>,
    ) {
        let Some(w) = self.spec.device_workflow.get(action) else {
            return;
        };
        for tool in &w.verify {
            if next.is_some_and(|n| n.name == *tool) {
                continue;
            }
            steps.push(Step::Say(device_request(tool, &Map::new())));
        }
    }
}
