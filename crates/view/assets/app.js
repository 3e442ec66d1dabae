// The viewer's entry: receives the index and simulation data files (scripts calling
// window.__tg_index / window.__tg_sim / window.__tg_process, so the site works from
// file://), loads each simulation (with its process verdict) on demand, and routes on the location hash:
//   #/                      overview           #/grid?cell=..&outcome=..   grid of outcomes
//   #/sim/N                 one simulation     #/sims/N/M                  two side by side
//   #/pair/A/B              McNemar's discordant pairs between cells A and B
// After each render, document.body's data-rendered attribute names the route (tests and
// the benchmark wait for it).
"use strict";
(function () {
  var SHARD = 1000;
  var pending = {};   // sim index -> [resolve, reject]
  var cache = {};     // sim index -> record (a few, for back and forth)
  var cacheOrder = [];

  window.__tg_sim = function (i, rec) {
    cache[i] = rec;
    cacheOrder.push(i);
    if (cacheOrder.length > 16) {
      var old = cacheOrder.shift();
      delete cache[old];
      delete processes[old];
    }
    var p = pending[i];
    if (p) { delete pending[i]; p[0](rec); }
  };

  // A simulation's process verdict (data/process/…), loaded with it when the index says it
  // was evaluated (row[9] not null).
  var processes = {};  // sim index -> process verdict
  var pendingProcess = {};
  window.__tg_process = function (i, v) {
    processes[i] = v;
    var p = pendingProcess[i];
    if (p) { delete pendingProcess[i]; p[0](v); }
  };
  TG.processOf = function (i) { return processes[i] || null; };

  function loadScript(file, waiting, i, resolve, reject) {
    waiting[i] = [resolve, reject];
    var s = document.createElement("script");
    s.src = file;
    s.onerror = function () {
      delete waiting[i];
      reject(new Error("cannot load " + file));
    };
    s.onload = function () { s.remove(); };
    document.body.appendChild(s);
  }

  function loadProcess(i) {
    var row = TG.index.sims[i];
    if (processes[i] || !row || row[9] === null || row[9] === undefined) return Promise.resolve(processes[i] || null);
    return new Promise(function (resolve, reject) {
      loadScript("data/process/" + Math.floor(i / SHARD) + "/" + i + ".js", pendingProcess, i, resolve, reject);
    });
  }

  TG.loadSim = function (i) {
    if (cache[i]) return loadProcess(i).then(function () { return cache[i]; });
    if (!(i >= 0 && i < TG.index.sims.length)) {
      return Promise.reject(new Error("no simulation #" + i + " in this site"));
    }
    var rec = new Promise(function (resolve, reject) {
      loadScript("data/sims/" + Math.floor(i / SHARD) + "/" + i + ".js", pending, i, resolve, reject);
    });
    return Promise.all([rec, loadProcess(i)]).then(function (both) { return both[0]; });
  };

  // Forgets loaded simulations (the benchmark measures first opens with it).
  TG.forget = function () { cache = {}; cacheOrder = []; processes = {}; };

  TG.cellLabel = function (c) { return TG.index.cells[c].label; };

  // "#/grid?a=1&b=2" -> {parts: ["grid"], query: {a: "1", b: "2"}}
  TG.route = function () {
    var hash = location.hash.replace(/^#\/?/, "");
    var q = hash.indexOf("?");
    var path = q < 0 ? hash : hash.slice(0, q);
    var query = {};
    if (q >= 0) {
      hash.slice(q + 1).split("&").forEach(function (kv) {
        if (!kv) return;
        var e = kv.indexOf("=");
        var k = decodeURIComponent(e < 0 ? kv : kv.slice(0, e));
        query[k] = e < 0 ? "" : decodeURIComponent(kv.slice(e + 1));
      });
    }
    return { parts: path.split("/").filter(function (p) { return p; }), query: query };
  };

  TG.queryString = function (query) {
    var keys = Object.keys(query).filter(function (k) { return query[k] !== "" && query[k] !== undefined; });
    if (!keys.length) return "";
    return "?" + keys.map(function (k) {
      return encodeURIComponent(k) + "=" + encodeURIComponent(query[k]);
    }).join("&");
  };

  var main = null;      // every page but the grid renders here
  var gridPage = null;  // the grid stays built while hidden: leaving and returning is cheap
  var gridKey = null;
  var generation = 0;

  // content-visibility keeps the hidden grid's layout, so hiding and showing it stay cheap
  // however many squares it holds (display: none would tear the layout down).
  function show(grid) {
    gridPage.className = grid ? "" : "page-hidden";
    main.className = grid ? "page-hidden" : "";
  }

  function done(name) {
    TG.renderedAt = performance.now();
    document.body.setAttribute("data-rendered", name);
  }

  function fail(err) {
    show(false);
    TG.clear(main);
    main.appendChild(TG.h("p", { class: "error" }, String(err && err.message || err)));
    done("error");
  }

  function render() {
    var gen = ++generation;
    var r = TG.route();
    var page = r.parts[0] || "";
    document.body.removeAttribute("data-rendered");
    try {
      if (page === "grid") {
        var key = JSON.stringify(r.query);
        if (key !== gridKey) {
          gridKey = null;
          TG.clear(gridPage);
          TG.renderGrid(gridPage, r.query);
          gridKey = key;
        }
        show(true);
        done("grid");
        return;
      }
      show(false);
      if (page === "") {
        TG.clear(main); TG.renderOverview(main); done("overview");
      } else if (page === "pair") {
        TG.clear(main); TG.renderPair(main, +r.parts[1], +r.parts[2]); done("pair");
      } else if (page === "sim" || page === "sims") {
        var ids = r.parts.slice(1).map(Number);
        var t0 = performance.now();
        Promise.all(ids.map(TG.loadSim)).then(function (recs) {
          if (gen !== generation) return;
          var t1 = performance.now();
          TG.clear(main);
          if (recs.length === 1) {
            main.appendChild(TG.renderSim(recs[0], ids[0]));
          } else {
            main.appendChild(TG.h("div", { class: "side-by-side" },
              recs.map(function (rec, k) { return TG.renderSim(rec, ids[k]); })));
          }
          TG.lastTiming = { load: t1 - t0, render: performance.now() - t1 };
          done(page + ":" + ids.join("/"));
        }).catch(function (e) { if (gen === generation) fail(e); });
      } else {
        fail(new Error("unknown page #/" + page));
      }
    } catch (e) {
      fail(e);
    }
  }

  window.__tg_index = function (index) {
    TG.index = index;
    var root = document.getElementById("main");
    TG.clear(root);
    main = root.appendChild(document.createElement("div"));
    main.id = "page";
    gridPage = root.appendChild(document.createElement("div"));
    gridPage.id = "page-grid";
    window.addEventListener("hashchange", render);
    render();
  };
})();
