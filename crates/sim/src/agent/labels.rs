//! Which drawn prerequisite skips are faults: a skip labels its call only when it removes a
//! read the policy requires before that call and no read left in its place covers it (one of
//! the same tool, agreeing on the arguments that tie the read to the call — a reservation, an
//! order). A skipped read that an earlier step makes anyway leaves the call as compliant as it
//! was, and labelling it would make the ground truth claim a violation that is not there.

use super::{SimAgent, State, Step};
use crate::faults::PlannedFaults;
use serde_json::{Map, Value};
use std::collections::HashSet;

impl SimAgent {
    /// Whether skipping the prerequisite reads of mutating call `k` of the `faulted` plan
    /// (whose mutating calls are `mutating_calls`) removes a required read.
    pub(super) fn skip_removes_required(
        &self,
        faulted: &[Step],
        mutating_calls: &[(String, Map<String, Value>)],
        k: usize,
    ) -> bool {
        let unskipped = SimAgent {
            spec: self.spec.clone(),
            faults: PlannedFaults {
                skip_prerequisite: Vec::new(),
                ..self.faults.clone()
            },
            pv: self.pv,
        }
        .plan(&State::default());
        let with = reads_before(&unskipped, k, &self.spec.mutating);
        let without = reads_before(faulted, k, &self.spec.mutating);
        let call_args = mutating_calls.get(k).map(|(_, a)| a);
        let tie = |s: &Step| match s {
            Step::Call(n, a) => {
                let tied: Vec<Value> = a
                    .values()
                    .filter(|v| call_args.is_some_and(|c| c.values().any(|x| x == *v)))
                    .cloned()
                    .collect();
                Some((n.clone(), tied))
            }
            Step::Say(_) => None,
        };
        let reads = self.spec.prerequisite_reads.get(k).into_iter().flatten();
        reads.filter(|r| !r.identity && !r.helper).any(|r| {
            let step = Step::Call(r.tool.clone(), r.arguments.clone());
            with.contains(&&step) && !without.iter().any(|w| tie(w) == tie(&step))
        })
    }
}

/// The read calls a plan makes before its `k`-th mutating call.
fn reads_before<'p>(plan: &'p [Step], k: usize, mutating: &HashSet<String>) -> Vec<&'p Step> {
    let mut seen = 0;
    let mut out = Vec::new();
    for s in plan {
        match s {
            Step::Call(n, _) if mutating.contains(n) => {
                if seen == k {
                    break;
                }
                seen += 1;
            }
            Step::Call(..) => out.push(s),
            Step::Say(_) => {}
        }
    }
    out
}
