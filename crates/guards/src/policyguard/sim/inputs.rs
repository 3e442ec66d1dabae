//! What a verifier is given, and the one mapping from a PolicyGuard variant to it. Everything
//! else in the sim verifier decides from an [`Inputs`] set, never from the variant, so two
//! variants can only differ offline where the inputs the paper gives them differ.

use crate::policyguard::Variant;

/// One input a verifier may be given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Input {
    /// The raw policy text.
    Policy,
    /// The per-tool checklist of the pending call's tool.
    Checklist,
    /// The domain's cross-tool rules (`general_rules.yaml`).
    GeneralRules,
    /// The user and assistant text of the conversation.
    Dialogue,
    /// The tool calls of the conversation and their results.
    ToolTrace,
}

impl Input {
    pub const ALL: [Input; 5] = [
        Input::Policy,
        Input::Checklist,
        Input::GeneralRules,
        Input::Dialogue,
        Input::ToolTrace,
    ];

    /// The name records show (`Decision.info.inputs`).
    pub fn as_str(self) -> &'static str {
        match self {
            Input::Policy => "policy",
            Input::Checklist => "checklist",
            Input::GeneralRules => "general_rules",
            Input::Dialogue => "dialogue",
            Input::ToolTrace => "tool_trace",
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A set of inputs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Inputs(u8);

impl Inputs {
    pub const NONE: Inputs = Inputs(0);

    pub fn of(inputs: &[Input]) -> Inputs {
        Inputs(inputs.iter().fold(0, |acc, i| acc | i.bit()))
    }

    /// Every input.
    pub fn all() -> Inputs {
        Inputs::of(&Input::ALL)
    }

    /// What the paper gives each PolicyGuard variant (docs/papers.md, "Configurations"): the
    /// raw policy to the `Raw` variants and to `Checklist`; the checklist and the general rules
    /// to the checklist variants; the dialogue to all but the dialogue-stripped ablation; the
    /// tool calls and results to all. The only place a variant becomes inputs.
    pub fn of_variant(variant: Variant) -> Inputs {
        let mut inputs = Inputs::of(&[Input::ToolTrace]);
        if variant.uses_policy() {
            inputs = inputs.with(Input::Policy);
        }
        if variant.uses_checklist() {
            inputs = inputs.with(Input::Checklist).with(Input::GeneralRules);
        }
        if variant.sees_dialogue() {
            inputs = inputs.with(Input::Dialogue);
        }
        inputs
    }

    pub fn has(self, input: Input) -> bool {
        self.0 & input.bit() != 0
    }

    pub fn with(self, input: Input) -> Inputs {
        Inputs(self.0 | input.bit())
    }

    pub fn without(self, input: Input) -> Inputs {
        Inputs(self.0 & !input.bit())
    }

    /// Every input of `other` is here.
    pub fn contains(self, other: Inputs) -> bool {
        self.0 & other.0 == other.0
    }

    /// Some input of `other` is here.
    pub fn intersects(self, other: Inputs) -> bool {
        self.0 & other.0 != 0
    }

    pub fn iter(self) -> impl Iterator<Item = Input> {
        Input::ALL.into_iter().filter(move |i| self.has(*i))
    }

    /// The names, in [`Input::ALL`] order.
    pub fn names(self) -> Vec<&'static str> {
        self.iter().map(Input::as_str).collect()
    }
}
