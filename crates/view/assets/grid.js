// Grid of outcomes: per cell, tasks (rows) × trials (columns), each square coloured by
// outcome and linking to its simulation; filters (cell, slice, guard, outcome, termination,
// task search) live in the hash so a view can be linked. Also the pair page: McNemar's
// discordant pairs between two cells, each opening both simulations side by side.
"use strict";
(function () {
  var h = TG.h;
  var PAGE = 200;      // task rows per cell before "show more"
  var SQUARES = 2000;  // and at most about this many squares per cell

  function uniq(values) {
    var seen = {}, out = [];
    values.forEach(function (v) { if (!seen[v]) { seen[v] = 1; out.push(v); } });
    return out.sort();
  }

  function select(name, label, options, current, onChange) {
    var s = h("select", { name: name, id: "f-" + name },
      h("option", { value: "" }, "all"),
      options.map(function (o) {
        return h("option", { value: o[0], selected: String(o[0]) === String(current) }, o[1]);
      }));
    s.addEventListener("change", function () { onChange(name, s.value); });
    return h("label", { for: "f-" + name }, label + " ", s);
  }

  TG.renderGrid = function (main, query) {
    var idx = TG.index;
    function setFilter(name, value) {
      var q = {};
      Object.keys(query).forEach(function (k) { q[k] = query[k]; });
      q[name] = value;
      delete q.more;
      location.hash = "#/grid" + TG.queryString(q);
    }
    main.appendChild(h("h1", null, "Grid of outcomes"));
    var search = h("input", { type: "search", name: "q", id: "f-q", placeholder: "task id contains…", value: query.q || "" });
    search.addEventListener("change", function () { setFilter("q", search.value); });
    var form = h("form", { class: "filters" },
      select("cell", "Cell", idx.cells.map(function (c, i) { return [i, c.label]; }), query.cell, setFilter),
      select("slice", "Slice", [["pv", "PV"], ["mut", "Mut"], ["unknown", "unknown"]], query.slice, setFilter),
      select("guard", "Guard", uniq(idx.cells.map(function (c) { return c.guard; })).map(function (g) { return [g, g]; }), query.guard, setFilter),
      select("outcome", "Outcome", TG.OUTCOMES.map(function (o) { return [o, TG.OUTCOME_TEXT[o]]; }), query.outcome, setFilter),
      select("term", "Termination", idx.terms.map(function (t, i) { return [i, t]; }), query.term, setFilter),
      h("label", { for: "f-q" }, "Task ", search));
    form.addEventListener("submit", function (e) { e.preventDefault(); setFilter("q", search.value); });
    main.appendChild(form);
    main.appendChild(h("p", { class: "legend" }, TG.OUTCOMES.map(function (o) {
      return h("span", { class: "legend-item" }, h("span", { class: "sq " + o }), TG.OUTCOME_TEXT[o]);
    })));

    var matches = function (s) {
      return (query.slice === undefined || s[5] === query.slice) &&
        (query.outcome === undefined || s[3] === query.outcome) &&
        (query.term === undefined || String(s[4]) === query.term) &&
        (query.q === undefined || s[1].toLowerCase().indexOf(query.q.toLowerCase()) >= 0);
    };
    var byCell = {};
    idx.sims.forEach(function (s, i) {
      var c = idx.cells[s[0]];
      if (query.cell !== undefined && String(s[0]) !== query.cell) return;
      if (query.guard !== undefined && c.guard !== query.guard) return;
      if (!matches(s)) return;
      (byCell[s[0]] = byCell[s[0]] || []).push(i);
    });
    var cellIds = Object.keys(byCell).map(Number).sort(function (a, b) { return a - b; });
    var total = cellIds.reduce(function (n, c) { return n + byCell[c].length; }, 0);
    main.appendChild(h("p", { class: "muted", id: "grid-count" }, total + " simulations match"));
    var more = +(query.more || 1);
    cellIds.forEach(function (c) { main.appendChild(cellGrid(c, byCell[c], more, query)); });
    renderPairPicker(main);
  };

  // Rows of inline squares rather than a table: table layout is what makes large grids slow.
  function cellGrid(c, sims, more, query) {
    var idx = TG.index;
    var tasks = {}, order = [], maxTrial = 0;
    sims.forEach(function (i) {
      var s = idx.sims[i];
      if (!tasks[s[1]]) { tasks[s[1]] = {}; order.push(s[1]); }
      tasks[s[1]][s[2]] = i; // a later record of the same trial wins, as in the report
      maxTrial = Math.max(maxTrial, s[2]);
    });
    order.sort();
    var rowsPerPage = Math.max(10, Math.min(PAGE, Math.floor(SQUARES / (maxTrial + 1))));
    var shown = order.slice(0, rowsPerPage * more);
    var head = [h("span", { class: "task" }, "task \\ trial")];
    for (var t = 0; t <= maxTrial; t++) head.push(h("span", { class: "trial" }, String(t)));
    var rows = shown.map(function (task) {
      var cells = [h("span", { class: "task", title: task }, task)];
      for (var t = 0; t <= maxTrial; t++) {
        var i = tasks[task][t];
        if (i === undefined) { cells.push(h("span", { class: "gap" })); continue; }
        var s = idx.sims[i];
        var tip = task + " trial " + t + ": " + TG.OUTCOME_TEXT[s[3]] + " (" + idx.terms[s[4]] +
          (s[6] ? ", " + s[6] + " blocked call(s)" : "") + ")";
        cells.push(h("a", { href: "#/sim/" + i, class: "sq " + s[3], title: tip,
          "data-sim": i, "data-outcome": s[3], "data-blocked": s[6] }, s[6] ? String(s[6]) : ""));
      }
      return h("div", { class: "row" }, cells);
    });
    var block = h("section", { class: "grid-cell", "data-cell": c },
      h("h2", null, idx.cells[c].label, " ", h("span", { class: "muted small" }, sims.length + " simulations, " + order.length + " tasks")),
      h("div", { class: "grid" }, h("div", { class: "row head" }, head), rows));
    if (order.length > shown.length) {
      var q = {};
      Object.keys(query).forEach(function (k) { q[k] = query[k]; });
      q.more = more + 1;
      block.appendChild(h("a", { href: "#/grid" + TG.queryString(q), class: "more" },
        "show more (" + (order.length - shown.length) + " tasks hidden)"));
    }
    return block;
  }

  function renderPairPicker(main) {
    var idx = TG.index;
    if (!idx.pairs.length) return;
    main.appendChild(h("h2", null, "Compare two cells"));
    main.appendChild(h("ul", null, idx.pairs.map(function (p) {
      return h("li", null, h("a", { href: "#/pair/" + p.a + "/" + p.b }, TG.cellLabel(p.a) + "  vs  " + TG.cellLabel(p.b)),
        " — b = " + p.test.b + ", c = " + p.test.c);
    })));
  }

  TG.renderPair = function (main, a, b) {
    var idx = TG.index;
    var p = idx.pairs.filter(function (x) { return x.a === a && x.b === b; })[0];
    if (!p) throw new Error("no paired comparison between cells " + a + " and " + b);
    main.appendChild(h("h1", null, "McNemar: " + TG.cellLabel(a) + " (A) vs " + TG.cellLabel(b) + " (B)"));
    main.appendChild(h("p", null, p.n_pairs + " pairs by (task, trial), infrastructure errors dropped. b = " + p.test.b +
      ", c = " + p.test.c + ", exact p = " + TG.num(p.test.exact_p, 4) + ", mid-p = " + TG.num(p.test.mid_p, 4) +
      ", χ² = " + TG.num(p.test.chi2, 3) + " (p = " + TG.num(p.test.chi2_p, 4) + ")"));
    [["b: A passed, B failed", p.b_sims, "pairs-b"], ["c: A failed, B passed", p.c_sims, "pairs-c"]].forEach(function (part) {
      main.appendChild(h("h2", null, part[0] + " (" + part[1].length + ")"));
      main.appendChild(h("ul", { class: part[2] }, part[1].map(function (ab) {
        var s = idx.sims[ab[0]];
        return h("li", null, h("a", { href: "#/sims/" + ab[0] + "/" + ab[1] }, s[1] + " trial " + s[2] + " side by side"),
          " (", h("a", { href: "#/sim/" + ab[0] }, "A"), ", ", h("a", { href: "#/sim/" + ab[1] }, "B"), ")");
      })));
    });
  };
})();
