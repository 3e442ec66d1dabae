//! `block-all`: a floor, not a guard anyone would deploy. It blocks every mutating call, so a
//! table shows what a guard gets on the PV slice for free — every policy-violating call is
//! stopped — and what that costs on the Mut slice, where nothing can be done.

use crate::seam::{Decision, Guard, GuardContext, Ruling};
use tauguard_core::ToolCall;
use tauguard_core::record::RequirementResult;

/// Blocks every mutating call.
#[derive(Debug, Default)]
pub struct BlockAll;

impl Guard for BlockAll {
    fn name(&self) -> &str {
        "block-all"
    }

    fn on_mutating_call<'a>(
        &'a self,
        _ctx: &'a GuardContext<'a>,
        call: &'a ToolCall,
    ) -> Ruling<'a> {
        Decision::block(
            vec![RequirementResult {
                name: "never_mutate".into(),
                met: false,
                reason: format!(
                    "the block-all floor blocks every mutating call, `{}` included",
                    call.name
                ),
            }],
            format!(
                "`{}` cannot be performed here. Tell the user the change cannot be made.",
                call.name
            ),
        )
        .into_ruling()
    }
}
