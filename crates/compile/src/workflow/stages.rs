//! The six stages of the workflow compiler, one function each, over one [`Run`] with the
//! compiling model. Each returns what the next stage reads and its one-line result for the
//! report's stage summaries.

use super::compose::{self, Wording};
use super::plan::{self, Plan, PlannedSubflow, RequestType};
use super::report::{MappingReview, Step};
use super::run::Run;
use super::tools::{self, ToolView};
use super::{DENY_LABEL, WorkflowCompileError, mapping, pretty, prompts, subflow};
use crate::classify::{mismatches, parse_classification};
use crate::session::StepOutcome;
use serde_json::json;
use tauguard_core::ToolSpec;
use tauguard_guards::{Bundle, Graph, SCHEMA_VERSION, Sizes, ToolCatalog, validate};

/// A compile in progress: the run with the model and the domain's policy text.
pub(super) struct Compile<'a> {
    pub s: Run<'a>,
    pub domain: &'a str,
    pub policy: &'a str,
}

/// Stage 1's outcome: the model's classification, how it differs from the environment's
/// catalogue, the catalogue later stages check against, and the tools as prompts show them.
pub(super) struct ClassifiedTools {
    pub classification: ToolCatalog,
    pub mismatches: Vec<String>,
    pub catalog: ToolCatalog,
    pub catalog_name: &'static str,
    pub views: Vec<ToolView>,
}

/// Stage 6's outcome: the valid bundle, the subflows pruned from it, its sizes and the
/// mapping review.
pub(super) struct Validated {
    pub bundle: Bundle,
    pub pruned: Vec<String>,
    pub sizes: Sizes,
    pub mapping: Option<MappingReview>,
}

impl Compile<'_> {
    /// Stage 1 (tools): the model classifies the agent tools; the classification is checked
    /// against the environment's catalogue when known.
    pub(super) async fn classify_tools(
        &mut self,
        tools: &[ToolSpec],
    ) -> Result<(ClassifiedTools, String), WorkflowCompileError> {
        let domain = self.domain;
        let views: Vec<ToolView> = tools.iter().map(|t| ToolView::of(t, None)).collect();
        let user = self.s.session.prompts.render(
            prompts::TOOLS,
            &json!({ "domain": domain, "policy": self.policy, "tools": views }),
        )?;
        let classification = self
            .s
            .ask(Step::Classify, "tools", user, |r| {
                parse_classification(r, domain, tools)
            })
            .await?
            .expect("classification never falls back");
        let known = self.s.session.options.known_tools.as_ref();
        let classification_mismatches = known
            .map(|k| mismatches(&classification, k))
            .unwrap_or_default();
        let (catalog, catalog_name) = tools::effective_catalog(&classification, known);
        let views: Vec<ToolView> = tools
            .iter()
            .map(|t| ToolView::of(t, Some(&catalog)))
            .collect();
        let summary = format!(
            "{} agent tools: {} mutating, {} read-only, {} other (checked against the {catalog_name} catalogue; {} classification mismatch(es))",
            tools.len(),
            classification.mutating.len(),
            classification.read_only.len(),
            classification.other.len(),
            classification_mismatches.len()
        );
        let classified = ClassifiedTools {
            classification,
            mismatches: classification_mismatches,
            catalog,
            catalog_name,
            views,
        };
        Ok((classified, summary))
    }

    /// The variables the plan and its review are rendered with.
    fn plan_vars(&self, tools: &ClassifiedTools) -> serde_json::Value {
        json!({
            "domain": self.domain, "policy": self.policy, "tools": tools.views,
            "deny_label": DENY_LABEL,
        })
    }

    /// Stage 2 (plan): the draft plan.
    pub(super) async fn draft_plan(
        &mut self,
        tools: &ClassifiedTools,
    ) -> Result<Plan, WorkflowCompileError> {
        let user = self
            .s
            .session
            .prompts
            .render(prompts::PLAN, &self.plan_vars(tools))?;
        let catalog = &tools.catalog;
        Ok(self
            .s
            .ask(Step::Plan, "plan", user, |r| plan::parse(r, catalog))
            .await?
            .expect("the plan never falls back"))
    }

    /// Stage 3 (plan review): the reviewed plan, or the draft when the review stayed
    /// invalid; stage 2's result (of the plan kept) and stage 3's.
    pub(super) async fn review_plan(
        &mut self,
        tools: &ClassifiedTools,
        draft: Plan,
    ) -> Result<(Plan, String, String), WorkflowCompileError> {
        let mut vars = self.plan_vars(tools);
        vars["draft"] = pretty(&draft).into();
        let user = self.s.session.prompts.render(prompts::PLAN_REVIEW, &vars)?;
        let catalog = &tools.catalog;
        let reviewed = self
            .s
            .ask(Step::PlanReview, "plan", user, |r| plan::parse(r, catalog))
            .await?;
        let plan = settle(&mut self.s, reviewed, draft);
        let stage2 = format!(
            "{} request types, {} subflows ({} shared), {} mutating tools covered, {} gap(s)",
            plan.request_types.len(),
            plan.subflows.len(),
            plan.shared().count(),
            plan.coverage.len(),
            plan.gaps.len()
        );
        let stage3 = review_result(&self.s, "the plan");
        Ok((plan, stage2, stage3))
    }

    /// Stage 4 (subflows): one graph per planned subflow, each then reviewed.
    pub(super) async fn write_subflows(
        &mut self,
        plan: &Plan,
        tools: &ClassifiedTools,
    ) -> Result<(Vec<Graph>, String), WorkflowCompileError> {
        let mut graphs: Vec<Graph> = Vec::new();
        for planned in &plan.subflows {
            graphs.push(self.write_subflow(plan, planned, tools).await?);
        }
        let of_step = |step: Step| self.s.steps.iter().filter(move |r| r.step == step);
        let summary = format!(
            "{} subflows written ({} repaired), {} changed by their branch review, {} reviews kept the draft",
            graphs.len(),
            of_step(Step::Subflow)
                .filter(|r| r.tally.outcome == StepOutcome::Repaired)
                .count(),
            of_step(Step::BranchReview)
                .filter(|r| r.tally.changed == Some(true))
                .count(),
            of_step(Step::BranchReview)
                .filter(|r| r.tally.outcome == StepOutcome::KeptPrevious)
                .count(),
        );
        Ok((graphs, summary))
    }

    /// One subflow's graph: drafted, then its branch review (the draft when the review
    /// stayed invalid).
    async fn write_subflow(
        &mut self,
        plan: &Plan,
        planned: &PlannedSubflow,
        tools: &ClassifiedTools,
    ) -> Result<Graph, WorkflowCompileError> {
        let views = &tools.views;
        let runs: Vec<&PlannedSubflow> = planned
            .runs
            .iter()
            .filter_map(|r| plan.subflow(r))
            .collect();
        let subflow_tools: Vec<&ToolView> = views
            .iter()
            .filter(|v| planned.tools.contains(&v.name))
            .collect();
        let request_types: Vec<&RequestType> = plan
            .request_types
            .iter()
            .filter(|r| r.subflow == planned.id)
            .collect();
        let mut vars = json!({
            "domain": self.domain, "policy": self.policy, "tools": views, "subflow": planned,
            "runs": runs, "subflow_tools": subflow_tools, "request_types": request_types,
        });
        let user = self.s.session.prompts.render(prompts::SUBFLOW, &vars)?;
        let check = |r: &str| subflow::parse(r, planned, plan, &tools.catalog);
        let draft = self
            .s
            .ask(Step::Subflow, &planned.id, user, check)
            .await?
            .expect("a subflow never falls back");
        vars["draft"] = pretty(&draft).into();
        let user = self
            .s
            .session
            .prompts
            .render(prompts::BRANCH_REVIEW, &vars)?;
        let reviewed = self
            .s
            .ask(Step::BranchReview, &planned.id, user, check)
            .await?;
        Ok(settle(&mut self.s, reviewed, draft))
    }

    /// Stage 5 (compose): the main graph, built from the plan; the model words the
    /// classifier and the refusal (the compiler's defaults when its wording stayed invalid).
    pub(super) async fn compose_main(
        &mut self,
        plan: &Plan,
    ) -> Result<(Graph, String), WorkflowCompileError> {
        let domain = self.domain;
        let user = self.s.session.prompts.render(
            prompts::COMPOSE,
            &json!({
                "domain": domain, "policy": self.policy, "request_types": plan.request_types,
                "identify": plan.identify, "deny_label": DENY_LABEL,
            }),
        )?;
        let wording = self
            .s
            .ask(Step::Compose, "main", user, compose::parse_wording)
            .await?;
        let worded_by = if wording.is_some() {
            "the model"
        } else {
            "the compiler's defaults (the model's stayed invalid)"
        };
        let wording = wording.unwrap_or_else(|| Wording::default_for(plan));
        let main = compose::main_graph(plan, &wording, &format!("{domain} requests"));
        let summary = format!(
            "main graph: {} nodes, {} request branches and the refusal branch{}; classifier worded by {worded_by}",
            main.nodes.len(),
            plan.request_types.len(),
            plan.identify
                .as_deref()
                .map(|i| format!(", identify subflow `{i}`"))
                .unwrap_or_default()
        );
        Ok((main, summary))
    }

    /// Stage 6 (validate): prunes subflows no node runs, fails on an invalid bundle, and
    /// asks for the mapping review.
    pub(super) async fn validate_and_map(
        &mut self,
        main: Graph,
        graphs: Vec<Graph>,
        tools: &ClassifiedTools,
    ) -> Result<(Validated, String), WorkflowCompileError> {
        let domain = self.domain;
        let (subflows, pruned) = compose::prune(&main, graphs);
        let bundle = Bundle {
            schema: SCHEMA_VERSION,
            domain: domain.to_string(),
            main,
            subflows,
        };
        let verdict = validate(&bundle, &tools.catalog);
        if !verdict.is_valid() {
            return Err(WorkflowCompileError::InvalidBundle {
                domain: domain.to_string(),
                problems: verdict.problems.iter().map(|p| p.to_string()).collect(),
            });
        }
        let user = self.s.session.prompts.render(
            prompts::MAPPING,
            &json!({ "domain": domain, "policy": self.policy, "outline": mapping::outline(&bundle) }),
        )?;
        let mapping = self
            .s
            .ask(Step::Mapping, "bundle", user, |r| {
                mapping::parse(r, &bundle)
            })
            .await?;
        let sizes = verdict.sizes;
        let summary = format!(
            "valid against the {} catalogue: {sizes}; pruned {}; mapping review: {}",
            tools.catalog_name,
            if pruned.is_empty() {
                "nothing".to_string()
            } else {
                pruned.join(", ")
            },
            match &mapping {
                Some(m) => format!(
                    "{} statements mapped, {} unmapped, {} unsupported nodes",
                    m.mappings.len(),
                    m.unmapped_policy.len(),
                    m.unsupported_nodes.len()
                ),
                None => "no valid answer".to_string(),
            }
        );
        let validated = Validated {
            bundle,
            pruned,
            sizes,
            mapping,
        };
        Ok((validated, summary))
    }
}

/// The reviewed version, or the draft when the review stayed invalid; records on the review
/// step whether it changed anything.
fn settle<T: PartialEq>(s: &mut Run<'_>, reviewed: Option<T>, draft: T) -> T {
    match reviewed {
        Some(r) => {
            s.mark_changed(r != draft);
            r
        }
        None => {
            s.mark_changed(false);
            draft
        }
    }
}

/// Stage 3's result in words, from its one review step.
fn review_result(s: &Run<'_>, what: &str) -> String {
    match s.steps.last() {
        Some(r) if r.tally.outcome == StepOutcome::KeptPrevious => {
            format!("the review stayed invalid; {what} as drafted was kept")
        }
        Some(r) if r.tally.changed == Some(true) => format!("the review changed {what}"),
        _ => format!("the review left {what} unchanged"),
    }
}
