// The viewer's entry: receives the index and simulation data files (scripts calling
// window.__tg_index / window.__tg_sim, so the site works from file://), loads each
// simulation on demand, and routes on the location hash:
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
    if (cacheOrder.length > 16) delete cache[cacheOrder.shift()];
    var p = pending[i];
    if (p) { delete pending[i]; p[0](rec); }
  };

  TG.loadSim = function (i) {
    if (cache[i]) return Promise.resolve(cache[i]);
    if (!(i >= 0 && i < TG.index.sims.length)) {
      return Promise.reject(new Error("no simulation #" + i + " in this site"));
    }
    return new Promise(function (resolve, reject) {
      pending[i] = [resolve, reject];
      var s = document.createElement("script");
      var file = "data/sims/" + Math.floor(i / SHARD) + "/" + i + ".js";
      s.src = file;
      s.onerror = function () {
        delete pending[i];
        reject(new Error("cannot load " + file));
      };
      s.onload = function () { s.remove(); };
      document.body.appendChild(s);
    });
  };

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

  var main = null;
  var generation = 0;

  function done(name) {
    TG.renderedAt = performance.now();
    document.body.setAttribute("data-rendered", name);
  }

  function fail(err) {
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
      if (page === "") {
        TG.clear(main); TG.renderOverview(main); done("overview");
      } else if (page === "grid") {
        TG.clear(main); TG.renderGrid(main, r.query); done("grid");
      } else if (page === "pair") {
        TG.clear(main); TG.renderPair(main, +r.parts[1], +r.parts[2]); done("pair");
      } else if (page === "sim" || page === "sims") {
        var ids = r.parts.slice(1).map(Number);
        Promise.all(ids.map(TG.loadSim)).then(function (recs) {
          if (gen !== generation) return;
          TG.clear(main);
          if (recs.length === 1) {
            main.appendChild(TG.renderSim(recs[0], ids[0]));
          } else {
            main.appendChild(TG.h("div", { class: "side-by-side" },
              recs.map(function (rec, k) { return TG.renderSim(rec, ids[k]); })));
          }
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
    main = document.getElementById("main");
    window.addEventListener("hashchange", render);
    render();
  };
})();
