//! The simulations of a report split into its groups (domain, agent, guard, cell hash) and
//! de-duplicated: the first step of `report.rs`, kept apart so the report's metrics read a
//! group whose records are already one per simulation.

use crate::summary::SimSummary;
use crate::summary::fast_hash::FxHashMap;
use rayon::prelude::*;
use std::sync::Arc;

/// (domain, agent, guard, cell hash).
pub(crate) type GroupKey<'a> = (&'a str, &'a str, &'a str, &'a str);

/// The records of one group after de-duplication, each with a dense task index.
pub(crate) struct Grouped<'a> {
    pub(crate) key: GroupKey<'a>,
    pub(crate) records: Vec<(&'a SimSummary, u32)>,
    pub(crate) n_tasks: u32,
    pub(crate) duplicates: u64,
}

pub(crate) type Split<'a> = Vec<(GroupKey<'a>, Vec<&'a SimSummary>)>;

/// Splits records by group key, keeping input order within each group. Chunks are split in
/// parallel and concatenated in chunk order. Consecutive records usually share their group,
/// so the previous key is compared before any hashing.
pub(crate) fn split_groups(records: &[SimSummary]) -> Split<'_> {
    fn split_chunk(records: &[SimSummary]) -> Split<'_> {
        let mut index: FxHashMap<GroupKey<'_>, usize> = FxHashMap::default();
        let mut groups: Split<'_> = Vec::new();
        let mut last: Option<(GroupKey<'_>, usize)> = None;
        let mut last_cell: *const crate::summary::CellInfo = std::ptr::null();
        for rec in records {
            let c = &rec.cell;
            // The same shared cell is the same group: skip comparing its strings.
            if std::ptr::eq(Arc::as_ptr(c), last_cell)
                && let Some((_, i)) = last
            {
                groups[i].1.push(rec);
                continue;
            }
            last_cell = Arc::as_ptr(c);
            let key = (
                c.domain.as_str(),
                c.agent_model.as_str(),
                c.guard.as_str(),
                c.cell_hash.as_str(),
            );
            let gi = match last {
                Some((k, i)) if k == key => i,
                _ => {
                    let i = *index.entry(key).or_insert_with(|| {
                        groups.push((key, Vec::new()));
                        groups.len() - 1
                    });
                    last = Some((key, i));
                    i
                }
            };
            groups[gi].1.push(rec);
        }
        groups
    }
    let chunk = records
        .len()
        .div_ceil(rayon::current_num_threads().max(1) * 4)
        .max(4096);
    let parts: Vec<Split<'_>> = records.par_chunks(chunk).map(split_chunk).collect();
    let mut index: FxHashMap<GroupKey<'_>, usize> = FxHashMap::default();
    let mut groups: Split<'_> = Vec::new();
    for part in parts {
        for (key, recs) in part {
            let i = *index.entry(key).or_insert_with(|| {
                groups.push((key, Vec::new()));
                groups.len() - 1
            });
            if groups[i].1.is_empty() {
                groups[i].1 = recs;
            } else {
                groups[i].1.extend(recs);
            }
        }
    }
    groups
}

/// Interns task ids and drops duplicate records of one simulation (same run, cell, task,
/// trial and seed): the last record wins unless it would replace a scored record with an
/// infrastructure error. Kept records are sorted by (task, trial).
pub(crate) fn dedupe<'a>(key: GroupKey<'a>, records: Vec<&'a SimSummary>) -> Grouped<'a> {
    let mut tasks: FxHashMap<&'a str, u32> = FxHashMap::default();
    // (task, trial, seed, input position); run and cell are compared only on a tie.
    let mut ids: Vec<(u32, u32, u64, u32)> = Vec::with_capacity(records.len());
    for (pos, rec) in records.iter().enumerate() {
        let next = tasks.len() as u32;
        let ti = *tasks.entry(&*rec.task_id).or_insert(next);
        ids.push((ti, rec.trial, rec.seed, pos as u32));
    }
    ids.sort_unstable();
    let same_run = |a: &SimSummary, b: &SimSummary| {
        a.cell.run_id == b.cell.run_id && a.cell.cell_id == b.cell.cell_id
    };
    let mut kept: Vec<(&'a SimSummary, u32)> = Vec::with_capacity(records.len());
    let mut duplicates = 0;
    let mut tie_start = 0;
    let mut prev: Option<(u32, u32, u64)> = None;
    for (ti, trial, seed, pos) in ids {
        let rec = records[pos as usize];
        if prev != Some((ti, trial, seed)) {
            prev = Some((ti, trial, seed));
            tie_start = kept.len();
            kept.push((rec, ti));
            continue;
        }
        match kept[tie_start..].iter_mut().find(|(k, _)| same_run(k, rec)) {
            Some(slot) => {
                duplicates += 1;
                if !rec.is_infra_error() || slot.0.is_infra_error() {
                    *slot = (rec, ti);
                }
            }
            None => kept.push((rec, ti)),
        }
    }
    Grouped {
        key,
        records: kept,
        n_tasks: tasks.len() as u32,
        duplicates,
    }
}
