// DOM helpers of the tauguard viewer. Every string from a record becomes a text node
// (createTextNode / textContent); no record data ever reaches innerHTML or an attribute
// that executes. Links accept only in-page "#/..." targets.
"use strict";
var TG = {};

// Attributes h() may set; anything else is refused loudly.
TG.ATTRS = { class: 1, title: 1, id: 1, colspan: 1, rowspan: 1, type: 1, value: 1,
  placeholder: 1, name: 1, for: 1, open: 1, selected: 1, disabled: 1 };

// h("div", {class: "x"}, "text", child, [more]) -> element.
TG.h = function (tag, props) {
  var el = document.createElement(tag);
  if (props) {
    Object.keys(props).forEach(function (k) {
      var v = props[k];
      if (v === null || v === undefined || v === false) return;
      if (k === "href") {
        var s = String(v);
        if (s.charAt(0) !== "#") throw new Error("refusing a non-fragment link: " + s);
        el.setAttribute("href", s);
      } else if (k.indexOf("data-") === 0 || TG.ATTRS[k]) {
        el.setAttribute(k, v === true ? "" : String(v));
      } else {
        throw new Error("attribute not allowed: " + k);
      }
    });
  }
  for (var i = 2; i < arguments.length; i++) TG.append(el, arguments[i]);
  return el;
};

TG.append = function (el, kid) {
  if (kid === null || kid === undefined || kid === false) return;
  if (Array.isArray(kid)) { kid.forEach(function (k) { TG.append(el, k); }); return; }
  if (kid instanceof Node) { el.appendChild(kid); return; }
  el.appendChild(document.createTextNode(String(kid)));
};

// Setting textContent drops every child at once (faster than removing them one by one).
TG.clear = function (el) { el.textContent = ""; return el; };

// Pretty JSON as text.
TG.json = function (v) {
  try { return JSON.stringify(v, null, 2); } catch (e) { return String(v); }
};

TG.num = function (x, digits) {
  if (x === null || x === undefined || typeof x !== "number" || isNaN(x)) return "—";
  return x.toFixed(digits === undefined ? 3 : digits);
};

// A start time for people: records hold Unix seconds ("1764636000"), shown as
// "2025-12-02 00:40:00 UTC"; an ISO time with a zone is shown in UTC the same way, one without
// a zone (τ²-bench writes local time) as its date and time only. Anything else as is.
TG.utcTime = function (t) {
  if (t === null || t === undefined || t === "") return null;
  var s = String(t);
  var local = /^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(\.\d+)?$/.exec(s);
  if (local) return local[1] + " " + local[2];
  var d = /^\d+(\.\d+)?$/.test(s) ? new Date(parseFloat(s) * 1000) : new Date(s);
  if (isNaN(d.getTime())) return s;
  return d.toISOString().slice(0, 19).replace("T", " ") + " UTC";
};

// A cost; null is a model without a price: unknown, never $0.0000.
TG.money = function (x) {
  return (x === null || x === undefined) ? "unknown" : "$" + x.toFixed(4);
};

// A collapsible block whose body is built only when first opened (large JSON stays cheap).
TG.lazyDetails = function (summary, build, cls) {
  var d = TG.h("details", { class: cls || null }, TG.h("summary", null, summary));
  var built = false;
  d.addEventListener("toggle", function () {
    if (d.open && !built) { built = true; TG.append(d, build()); }
  });
  return d;
};

TG.pre = function (text, cls) { return TG.h("pre", { class: cls || null }, text); };

TG.badge = function (text, cls) { return TG.h("span", { class: "badge " + (cls || "") }, text); };

TG.OUTCOMES = ["pass", "fail", "infra", "recovered"];
TG.OUTCOME_TEXT = { pass: "pass", fail: "fail", infra: "infra error",
  recovered: "blocked & recovered" };
