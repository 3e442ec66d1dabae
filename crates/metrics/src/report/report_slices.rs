//! A group's slice views (overall, PV, Mut) and the sums `report` takes over its scored
//! simulations: Pass^k tallies (and their process-valid twins), rewards and per-role costs.

use crate::measure::pass_k::{TaskTally, trial_pass1};
use crate::measure::slices::SliceMetrics;
use crate::summary::outcome::InfraPolicy;
use crate::summary::{ROLES, SimSummary};
use std::collections::BTreeMap;
use tauguard_core::record::Slice;

/// Running totals of one slice view (overall, PV or Mut) of a group. Records arrive sorted
/// by (task, trial) (see `dedupe`), so each (task, trial) cell of the per-trial Pass^1 is a
/// run of consecutive records.
pub(crate) struct SliceAcc {
    pub(crate) tasks: Vec<TaskTally>,
    cells: Vec<(u32, TaskTally)>,
    current: Option<(u32, u32, TaskTally)>,
    simulations: u64,
    infra_errors: u64,
}

impl SliceAcc {
    fn new(n_tasks: usize) -> SliceAcc {
        SliceAcc {
            tasks: vec![TaskTally::default(); n_tasks],
            cells: Vec::new(),
            current: None,
            simulations: 0,
            infra_errors: 0,
        }
    }

    fn add(&mut self, task: u32, trial: u32, success: bool) {
        self.simulations += 1;
        let t = &mut self.tasks[task as usize];
        t.n += 1;
        t.c += u32::from(success);
        match &mut self.current {
            Some((ct, tr, cell)) if *ct == task && *tr == trial => {
                cell.n += 1;
                cell.c += u32::from(success);
            }
            cur => {
                if let Some((_, tr, cell)) = cur.take() {
                    self.cells.push((tr, cell));
                }
                *cur = Some((
                    task,
                    trial,
                    TaskTally {
                        n: 1,
                        c: u32::from(success),
                    },
                ));
            }
        }
    }

    pub(crate) fn finish(mut self, max_k: Option<u32>) -> SliceMetrics {
        if let Some((_, tr, cell)) = self.current.take() {
            self.cells.push((tr, cell));
        }
        SliceMetrics::assemble(
            &self.tasks,
            trial_pass1(self.cells),
            self.simulations,
            self.infra_errors,
            max_k,
        )
    }
}

/// What the scored simulations of a group add up to.
pub(crate) struct Scored<'r> {
    pub slices: [SliceAcc; 3],
    /// The same blocks with process-valid success, for the process-evaluated simulations.
    pub pslices: [SliceAcc; 3],
    pub process: crate::measure::process::ProcessStats,
    pub reward_sum: f64,
    pub reward_n: u64,
    /// Per role: the sum of known costs, the simulations, and whether one was unpriced.
    pub costs: BTreeMap<&'r str, (f64, u64, bool)>,
}

impl<'r> Scored<'r> {
    pub(crate) fn new(n: usize) -> Self {
        Scored {
            slices: [SliceAcc::new(n), SliceAcc::new(n), SliceAcc::new(n)],
            pslices: [SliceAcc::new(n), SliceAcc::new(n), SliceAcc::new(n)],
            process: crate::measure::process::ProcessStats::default(),
            reward_sum: 0.0,
            reward_n: 0,
            costs: BTreeMap::new(),
        }
    }

    /// Counts simulation `rec` of task `ti` (its infrastructure error, and when scored under
    /// `infra`, its success, process validity, reward and costs).
    pub(crate) fn add(&mut self, rec: &'r SimSummary, ti: u32, infra: InfraPolicy) {
        // An unknown slice (imported results of a domain without a mutating-tool list)
        // counts overall only.
        let si = match rec.slice {
            Slice::Pv => Some(1),
            Slice::Mut => Some(2),
            Slice::Unknown => None,
        };
        if rec.is_infra_error() {
            self.slices[0].infra_errors += 1;
            if let Some(si) = si {
                self.slices[si].infra_errors += 1;
            }
        }
        if let Some(success) = rec.scored(infra) {
            self.slices[0].add(ti, rec.trial, success);
            if let Some(si) = si {
                self.slices[si].add(ti, rec.trial, success);
            }
            // An infrastructure error scored as a failure has no trajectory to judge: it fails
            // the process view too.
            let valid = rec
                .process
                .map(|p| p.valid)
                .or(rec.is_infra_error().then_some(false));
            if let Some(valid) = valid {
                self.pslices[0].add(ti, rec.trial, success && valid);
                if let Some(si) = si {
                    self.pslices[si].add(ti, rec.trial, success && valid);
                }
            }
            if let Some(p) = &rec.process {
                self.process.add(p);
            }
            // An imported upstream simulation without `reward_info` scores as a failure but
            // has no reward (pandas NaN upstream), so it stays out of the mean (τ²-bench §8).
            match rec.reward {
                Some(_) if rec.missing_reward_info => {}
                Some(r) => {
                    self.reward_sum += r;
                    self.reward_n += 1;
                }
                // Infrastructure error counted as a failure: reward 0.
                None => self.reward_n += 1,
            }
            let roles = ROLES.iter().zip(&rec.usage);
            let roles = roles.filter_map(|(r, u)| Some((*r, u.as_ref()?)));
            for (role, usage) in roles.chain(rec.other_usage.iter().map(|(r, u)| (r.as_str(), u))) {
                let e = self.costs.entry(role).or_default();
                match usage.cost {
                    Some(c) => {
                        e.0 += c;
                        e.1 += 1;
                    }
                    None => e.2 = true,
                }
            }
        }
    }
}
