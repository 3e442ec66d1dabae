// Overview page: the cells of the run(s) with the report's Pass^k per slice (the numbers
// `tauguard report` prints, computed in Rust by tauguard_metrics and stored in the index),
// each cell's flags (simulated, comparability, fail-mode verdicts, replies cut at the token
// limit), outcome counts (de-duplicated as the report's Sims are), process-valid Pass^k
// beside outcome Pass^k, the first deviations by level and position with each guard trigger
// schedule's intervention coverage (the report's `process`, docs/process-validity.md), the
// floors, and the McNemar comparisons between cells of one domain.
"use strict";
(function () {
  var h = TG.h;

  function passCells(block, maxK) {
    var out = [];
    for (var k = 1; k <= maxK; k++) {
      var v = block && block.pass_k ? block.pass_k[String(k)] : undefined;
      out.push(h("td", { class: "num" }, TG.num(v)));
    }
    return out;
  }

  // The cell's comparability stamp: a flag naming the items that deviate from τ²-bench's
  // benchmark definition, "unknown" when the records carry no stamp.
  function comparability(r) {
    var s = r && r.comparability;
    if (s === undefined) return null;
    if (s === null) {
      return h("div", { class: "muted small comparability", "data-comparable": "unknown" },
        "comparability with τ²-bench: unknown (no stamp)");
    }
    if (s.comparable) {
      return h("div", { class: "muted small comparability", "data-comparable": "yes" },
        "comparable with τ²-bench a2c0247");
    }
    var items = s.deviations.map(function (d) { return d[0]; });
    var detail = s.deviations.map(function (d) { return d[0] + ": " + d[1]; }).join("\n");
    return h("div", { class: "warning small comparability", "data-comparable": "no", title: detail },
      "not comparable with τ²-bench a2c0247: " + items.join(", "));
  }

  // Where the cell's guard artifacts came from (its records' artifacts.* settings): the
  // frozen set or a compiled one, per kind hand-written or compiled:<model>; the compiled
  // set's full origin (compiler, model, date, report) in the title.
  function artifacts(c) {
    var a = c.artifacts;
    if (!a) return null;
    var which = a.set ? "compiled set " + a.set : "frozen set";
    return h("div", { class: "muted small artifacts", "data-artifacts": a.set ? "compiled" : "frozen",
      title: a.compiled || a.origin }, "artifacts: " + which + " (" + a.origin + ")");
  }

  // Flags for a cell where more than the report's threshold of guard verdicts or guide runs
  // came from the fail mode (`flagged` in the group's JSON): its Block% or guide usage then
  // describe the fail mode, not the model. The reasons are in the flag's title.
  function failMode(r) {
    var out = [];
    [["fail_mode", "guard verdicts"], ["guide_fail_mode", "guide runs"]].forEach(function (p) {
      var f = r && r[p[0]];
      if (!f || !f.flagged) return;
      var reasons = Object.keys(f.by_reason).map(function (k) { return k + " " + f.by_reason[k]; });
      out.push(h("div", { class: "warning small fail-mode", "data-fail-mode": p[0], title: reasons.join(", ") },
        "fail mode: " + TG.num(f.share * 100, 1) + "% of " + p[1] + " (" + f.fail_mode + " of " +
        f.decisions + "; " + reasons.join(", ") + ")"));
    });
    return out;
  }

  // Replies cut at the token limit, per role with any (the report's truncated_replies): a
  // cell whose agent was cut short measures its token limit as much as the agent.
  function truncation(r) {
    var t = r && r.truncated_replies;
    if (!t) return null;
    var cut = Object.keys(t).filter(function (role) { return t[role].truncated > 0; });
    if (!cut.length) return null;
    return h("div", { class: "warning small truncation", "data-truncated": "yes" },
      "replies cut at the token limit: " + cut.map(function (role) {
        return role + " " + t[role].truncated + " of " + t[role].calls;
      }).join(", "));
  }

  function maxK() {
    var m = 1;
    TG.index.cells.forEach(function (c) {
      if (c.report && c.report.pass_k) m = Math.max(m, Object.keys(c.report.pass_k).length);
    });
    return m;
  }

  TG.renderOverview = function (main) {
    var idx = TG.index;
    var K = maxK();
    main.appendChild(h("h1", null, "Overview"));
    main.appendChild(h("p", { class: "muted" }, idx.sims.length + " simulations in " +
      idx.cells.length + " cells from " + idx.inputs.join(", ")));
    idx.warnings.forEach(function (w) { main.appendChild(h("p", { class: "warning" }, "warning: " + w)); });

    var head = [h("th", null, "Cell"), h("th", null, "Slice"), h("th", null, "Tasks"),
      h("th", null, "Sims"), h("th", null, "Infra")];
    for (var k = 1; k <= K; k++) head.push(h("th", { class: "num" }, "Pass^" + k));
    var H = String(idx.headline_k || 1);
    // Outcome passes and the trajectory is process-valid (docs/process-validity.md).
    head.push(h("th", { class: "num" }, "Process-valid Pass^" + H));
    head.push(h("th", { class: "num" }, "Δ vs baseline (Pass^" + (idx.headline_k || 1) + ")"));
    head.push(h("th", null, "Outcomes"));
    var body = [];
    idx.cells.forEach(function (c, ci) {
      var r = c.report || {};
      // Counted in Rust with duplicates of one simulation once, as the report counts "Sims".
      var n = c.outcomes;
      var slices = [["all", r], ["pv", r.pv], ["mut", r["mut"]]];
      slices.forEach(function (sl, si) {
        var row = [];
        if (si === 0) {
          row.push(h("td", { rowspan: 3, class: "cell-label" },
            h("a", { href: "#/grid" + TG.queryString({ cell: ci }), class: "cell-link", "data-cell": ci }, c.label),
            r.simulated ? h("div", { class: "muted small" }, "simulated (sim models): no paper result") : null,
            comparability(r), artifacts(c), failMode(r), truncation(r)));
        }
        var b = sl[1] || {};
        row.push(h("td", null, sl[0]));
        row.push(h("td", { class: "num" }, b.n_tasks === undefined ? "—" : b.n_tasks));
        row.push(h("td", { class: "num" }, b.n_simulations === undefined ? "—" : b.n_simulations));
        row.push(h("td", { class: "num" }, b.infra_errors === undefined ? "—" : b.infra_errors));
        row = row.concat(passCells(b, K));
        var pp = b.process_pass_k ? b.process_pass_k[H] : null;
        row.push(h("td", { class: "num process-valid" }, pp === null || pp === undefined ? "—" : TG.num(pp)));
        if (si === 0) {
          var d = r.delta_vs_baseline ? r.delta_vs_baseline[String(idx.headline_k)] : null;
          row.push(h("td", { rowspan: 3, class: "num" }, d === null || d === undefined ? "—" : (d >= 0 ? "+" : "") + TG.num(d)));
          row.push(h("td", { rowspan: 3 }, TG.OUTCOMES.map(function (o) {
            return h("a", { href: "#/grid" + TG.queryString({ cell: ci, outcome: o }), class: "count " + o },
              TG.OUTCOME_TEXT[o] + " " + n[o]);
          })));
        }
        body.push(h("tr", { class: si === 0 ? "first" : null }, row));
      });
    });
    main.appendChild(h("table", { class: "cells" }, h("thead", null, h("tr", null, head)), h("tbody", null, body)));

    if (idx.notes.length) {
      main.appendChild(h("ul", { class: "notes" }, idx.notes.map(function (n) { return h("li", null, n); })));
    }
    renderProcess(main, idx);
    renderFloors(main, idx.floors || []);
    renderPairs(main, idx);
  };

  // Per cell: where the first deviations fell (by level, by position relative to the guarded
  // calls) and the share each guard trigger schedule could have seen (PolicyGuide Theorem 1).
  function renderProcess(main, idx) {
    main.appendChild(h("h2", null, "Process view: first deviations and intervention coverage"));
    var cells = [];
    idx.cells.forEach(function (c, ci) { if (c.report && c.report.process) cells.push([c, ci]); });
    if (!cells.length) {
      main.appendChild(h("p", { class: "muted" }, "No simulation was process-evaluated (no procedure spec for these domains)."));
      return;
    }
    var schedules = cells[0][0].report.process.coverage.map(function (x) { return x.schedule; });
    var POS = ["inside_guarded_call", "before_first_guarded_call", "outside_guarded_calls"];
    var head = ["Cell", "Evaluated", "Process-valid", "Deviated", "A", "P", "W",
      "Inside guarded call", "Before first guarded call", "Outside guarded calls"]
      .concat(schedules.map(function (s) { return "Coverage: " + s; }));
    main.appendChild(h("table", { class: "process-table" },
      h("thead", null, h("tr", null, head.map(function (t) { return h("th", null, t); }))),
      h("tbody", null, cells.map(function (pair) {
        var p = pair[0].report.process;
        var row = [h("td", null, h("a", { href: "#/grid" + TG.queryString({ cell: pair[1] }) }, pair[0].label)),
          h("td", { class: "num" }, p.simulations), h("td", { class: "num" }, p.process_valid), h("td", { class: "num" }, p.deviated)];
        ["A", "P", "W"].forEach(function (l) { row.push(h("td", { class: "num" }, p.by_level[l] || 0)); });
        POS.forEach(function (k) { row.push(h("td", { class: "num" }, p.by_position[k] || 0)); });
        p.coverage.forEach(function (c) {
          row.push(h("td", { class: "num", "data-schedule": c.schedule }, c.share === null ? "—" : TG.num(c.share * 100, 1) + "%"));
        });
        return h("tr", { "data-cell": pair[1] }, row);
      }))));
  }

  function renderFloors(main, floors) {
    main.appendChild(h("h2", null, "Floors"));
    if (!floors.length) {
      main.appendChild(h("p", { class: "muted" }, "No floors in this report (built with --no-floors, or no data directory)."));
      return;
    }
    main.appendChild(h("table", { class: "floors" },
      h("thead", null, h("tr", null, ["Domain", "Floor agent", "Tasks", "Pass^1", "PV Pass^1", "Mut Pass^1",
        "Valid Pass^1", "Valid PV", "Valid Mut"].map(function (t) { return h("th", null, t); }))),
      h("tbody", null, floors.map(function (f) {
        return h("tr", null, h("td", null, f.domain), h("td", null, f.agent), h("td", { class: "num" }, f.n_tasks),
          h("td", { class: "num" }, TG.num(f.overall)), h("td", { class: "num" }, TG.num(f.pv)), h("td", { class: "num" }, TG.num(f["mut"])),
          h("td", { class: "num" }, TG.num(f.process_overall)), h("td", { class: "num" }, TG.num(f.process_pv)),
          h("td", { class: "num" }, TG.num(f.process_mut)));
      }))));
  }

  function renderPairs(main, idx) {
    main.appendChild(h("h2", null, "Paired comparisons (McNemar, by task and trial)"));
    if (!idx.pairs.length) {
      main.appendChild(h("p", { class: "muted" }, "No two cells share a domain and paired simulations."));
      return;
    }
    main.appendChild(h("table", { class: "pairs" },
      h("thead", null, h("tr", null, ["A", "B", "Pairs", "b (A pass, B fail)", "c (A fail, B pass)", "exact p", "mid-p"].map(function (t) { return h("th", null, t); }))),
      h("tbody", null, idx.pairs.map(function (p) {
        var link = "#/pair/" + p.a + "/" + p.b;
        return h("tr", null, h("td", null, h("a", { href: link }, TG.cellLabel(p.a))), h("td", null, TG.cellLabel(p.b)),
          h("td", { class: "num" }, p.n_pairs), h("td", { class: "num" }, p.test.b), h("td", { class: "num" }, p.test.c),
          h("td", { class: "num" }, TG.num(p.test.exact_p, 4)), h("td", { class: "num" }, TG.num(p.test.mid_p, 4)));
      }))));
  }
})();
