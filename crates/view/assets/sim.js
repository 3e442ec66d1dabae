// Simulation page: header and usage, faults, the conversation as bubbles with tool calls
// (arguments and results collapsed), each guard decision inline at the call it judged
// (verdict, whether the fail mode gave it, requirements MET / NOT MET with reasons,
// remediation, executed, verifier cost),
// guide runs inline where they happened (at_message), faults and missing prerequisites on
// their call, and the reward: breakdown, DB, ACTION per gold action, COMMUNICATE, ENV, NL
// assertions with the judge's justification, gold actions beside what was executed; and the
// process view (docs/process-validity.md): whether the trajectory is process-valid by its
// domain's procedure spec, its first deviation, and every violation, each also flagged on
// the message it sits at.
"use strict";
(function () {
  var h = TG.h;

  // Calls, tokens, cost, time (a cache replay's own, and the answer's when it was first
  // given), and the replies cut at the token limit.
  function usageLine(u) {
    if (!u) return "";
    var t = u.usage || {};
    var line = (u.calls || 0) + " call(s), " + (t.prompt_tokens || 0) + " prompt + " + (t.completion_tokens || 0) +
      " completion tokens, cost " + (u.calls ? TG.money(u.cost) : "none") + ", " + TG.num(u.latency_seconds || 0, 2) + " s";
    if (u.original_latency_seconds) line += " (cache replay; " + TG.num(u.original_latency_seconds, 2) + " s when first answered)";
    if (u.truncated) line += ", " + u.truncated + " cut at the token limit";
    if (u.truncation_retries) line += " (" + u.truncation_retries + " retried)";
    return line;
  }

  // The stop reasons each wire format gives a reply cut at its token limit
  // (`tauguard_llm::model::cut_at_token_limit`).
  var CUT = ["length", "max_tokens", "MAX_TOKENS"];

  // A message the token limit cut short, or that replaced such a reply with a retry.
  function cutBadge(m) {
    var r = m.token_limit_retry;
    if (r) return [" ", TG.badge("retried after a cut at " + (r.max_tokens || r.completion_tokens) +
      " tokens, with " + r.retry_max_tokens, "truncated")];
    return CUT.indexOf(m.finish_reason) >= 0 ?
      [" ", TG.badge("cut at the token limit (" + m.finish_reason + ")", "truncated")] : null;
  }

  function kv(rows) {
    return h("dl", { class: "kv" }, rows.filter(function (r) { return r[1] !== undefined && r[1] !== null && r[1] !== ""; })
      .map(function (r) { return [h("dt", null, r[0]), h("dd", null, r[1])]; }));
  }

  // A verdict or guidance the fail mode gave, not the model: said beside the verdict, since a
  // fail-mode BLOCK looks like any other (the failed replies are in the info below).
  function failBadge(e) {
    if (e.verdict_source !== "fail_mode") return null;
    var why = (e.fail_reason || "unknown") + (e.fail_http_status ? " (HTTP " + e.fail_http_status + ")" : "");
    return [" ", TG.badge("fail mode: " + why, "fail-mode")];
  }

  function guardCard(e, attempt, faults) {
    var blocked = e.verdict === "block";
    return h("div", { class: "guard " + (blocked ? "blocked" : "passed"), "data-call": e.call_id },
      h("div", { class: "guard-head" },
        TG.badge("guard " + e.guard, "guard-name"), " ",
        TG.badge(blocked ? "BLOCK" : "PASS", blocked ? "verdict-block" : "verdict-pass"), " ",
        TG.badge(e.executed ? "executed" : "not executed", e.executed ? "exec" : "noexec"), failBadge(e)),
      e.requirements && e.requirements.length ? h("ul", { class: "reqs" }, e.requirements.map(function (q) {
        return h("li", { class: q.met ? "met" : "not-met" }, TG.badge(q.met ? "MET" : "NOT MET", q.met ? "met" : "not-met"),
          " ", h("strong", null, q.name), q.reason ? h("span", { class: "reason" }, " — " + q.reason) : null);
      })) : null,
      e.remediation ? h("div", { class: "remediation" }, h("strong", null, "Remediation: "), h("span", null, e.remediation)) : null,
      h("div", { class: "muted small" }, "verifier: " + usageLine(e.usage)),
      e.info ? TG.lazyDetails("guard info", function () { return TG.pre(TG.json(e.info)); }) : null);
  }

  function flags(call, ctx) {
    var out = [];
    var a = ctx.attempts[call.id];
    (ctx.faults[call.id] || []).forEach(function (f) {
      out.push(h("div", { class: "flag fault" }, "injected fault: " + f.kind + (f.detail ? " — " + f.detail : "")));
    });
    if (a && a.faults) a.faults.forEach(function (k) {
      if (!(ctx.faults[call.id] || []).some(function (f) { return f.kind === k; })) out.push(h("div", { class: "flag fault" }, "fault: " + k));
    });
    if (a && a.missing_prerequisites && a.missing_prerequisites.length) {
      out.push(h("div", { class: "flag missing" }, "missing prerequisites: " + a.missing_prerequisites.join(", ")));
    }
    return out;
  }

  function callCard(call, ctx, blockedEvent) {
    var result = ctx.results[call.id];
    var events = ctx.events[call.id] || [];
    var d = h("div", { class: "call" + (blockedEvent ? " blocked-call" : ""), "data-call": call.id },
      TG.lazyDetails([(blockedEvent ? "✗ blocked call " : "→ call ") + call.name, h("span", { class: "muted small" }, " " + (call.id || ""))],
        function () { return TG.pre(TG.json(call.arguments)); }, "call-args"),
      flags(call, ctx),
      events.map(function (e) { return guardCard(e, ctx.attempts[call.id]); }),
      result ? TG.lazyDetails(result.error ? "← error result" : "← result", function () { return TG.pre(result.content); },
        "call-result" + (result.error ? " error" : "")) : null);
    return d;
  }

  function guideCard(g) {
    return h("div", { class: "guide", "data-at": g.at_message },
      h("div", { class: "guide-head" }, TG.badge("guide " + g.guard, "guide-name"), " ", g.trigger === "interception" ? "after an intercepted call" : "before the agent's reply", failBadge(g)),
      g.guidance ? h("div", { class: "guidance" }, h("strong", null, "Guidance: "), h("span", null, g.guidance)) : h("div", { class: "muted" }, "no guidance"),
      g.requests && g.requests.length ? h("table", { class: "cards" },
        h("thead", null, h("tr", null, ["Request", "Intent", "Node", "Authorizations", "Status"].map(function (t) { return h("th", null, t); }))),
        h("tbody", null, g.requests.map(function (r) {
          return h("tr", null, h("td", null, r.id), h("td", null, r.intent), h("td", null, r.node),
            h("td", null, (r.authorizations || []).join(", ")), h("td", null, r.status));
        }))) : null,
      h("div", { class: "small" }, "enabled tools: " + ((g.enabled_tools || []).join(", ") || "none")),
      g.rejected && g.rejected.length ? h("ul", { class: "rejected" }, g.rejected.map(function (r) { return h("li", null, "rejected: " + r); })) : null,
      h("div", { class: "muted small" }, "guide: " + usageLine(g.usage)));
  }

  // Where each blocked call goes: before message at_message (records since at_message), else
  // before the message holding the next executed attempt, else at the end.
  function blockedAnchors(rec, msgCallIdx) {
    var out = {};
    (rec.guard_events || []).forEach(function (e) {
      if (msgCallIdx[e.call_id] !== undefined) return;
      var at = e.at_message;
      if (at === undefined || at === null) {
        at = rec.messages.length;
        var atts = rec.call_attempts || [];
        for (var j = (e.attempt_idx || 0) + 1; j < atts.length; j++) {
          var m = msgCallIdx[atts[j].call_id];
          if (m !== undefined) { at = m; break; }
        }
      }
      (out[at] = out[at] || []).push(e);
    });
    return out;
  }

  function violationText(v) {
    return v.requirement + " (" + v.level + ", " + v.position.replace(/_/g, " ") + ", judged " + v.judge + ")";
  }

  // The process verdict: valid or not, the first deviation, and every violation.
  function processSection(v) {
    if (!v) return null;
    var d = v.first_deviation;
    return h("section", { class: "process", "data-process-valid": v.process_valid ? "yes" : "no" },
      h("h2", null, "Process view ", TG.badge(v.process_valid ? "process-valid" : "not process-valid", v.process_valid ? "met" : "not-met")),
      d ? h("p", { class: "first-deviation" }, h("strong", null, "First deviation: "),
        "message #" + d.message_index + " — " + violationText(d) + (d.detail ? ": " + d.detail : "")) : h("p", { class: "muted" }, "No deviation."),
      v.violations.length ? h("table", { class: "violations" },
        h("thead", null, h("tr", null, ["Message", "Requirement", "Level", "Position", "Judge", "Detail"].map(function (t) { return h("th", null, t); }))),
        h("tbody", null, v.violations.map(function (x) {
          return h("tr", null, h("td", { class: "num", "data-msg-ref": x.message_index }, "#" + x.message_index),
            h("td", null, x.requirement), h("td", null, x.level), h("td", null, x.position.replace(/_/g, " ")),
            h("td", null, x.judge), h("td", null, x.detail));
        }))) : null);
  }

  function conversation(rec, proc) {
    var violationsAt = {};
    (proc ? proc.violations : []).forEach(function (v) { (violationsAt[v.message_index] = violationsAt[v.message_index] || []).push(v); });
    var ctx = { results: {}, events: {}, attempts: {}, faults: {} };
    var msgCallIdx = {};
    rec.messages.forEach(function (m, i) {
      if (m.role === "tool" && ctx.results[m.id] === undefined) ctx.results[m.id] = m;
      (m.tool_calls || []).forEach(function (c) { msgCallIdx[c.id] = i; });
    });
    (rec.guard_events || []).forEach(function (e) { (ctx.events[e.call_id] = ctx.events[e.call_id] || []).push(e); });
    (rec.call_attempts || []).forEach(function (a) { ctx.attempts[a.call_id] = a; });
    (rec.injected_faults || []).forEach(function (f) { if (f.call_id) (ctx.faults[f.call_id] = ctx.faults[f.call_id] || []).push(f); });
    var anchors = blockedAnchors(rec, msgCallIdx);
    var guides = {};
    (rec.guide_events || []).forEach(function (g) { (guides[g.at_message] = guides[g.at_message] || []).push(g); });
    var out = [];
    function between(i) {
      (anchors[i] || []).forEach(function (e) {
        var call = { id: e.call_id, name: e.tool, arguments: e.arguments };
        out.push(h("div", { class: "bubble assistant blocked-only" }, h("div", { class: "who" }, "agent (blocked call, not in the trajectory)"), callCard(call, ctx, e)));
      });
      (guides[i] || []).forEach(function (g) { out.push(guideCard(g)); });
    }
    rec.messages.forEach(function (m, i) {
      between(i);
      if (m.role === "system") {
        out.push(TG.lazyDetails("system prompt", function () { return TG.pre(m.content || ""); }, "system"));
        return;
      }
      if (m.role === "tool") {
        if (msgCallIdx[m.id] === undefined) {
          out.push(h("div", { class: "bubble tool" }, h("div", { class: "who" }, "tool result " + m.id), TG.pre(m.content)));
        }
        return;
      }
      var who = m.role === "user" ? "user" : "agent";
      out.push(h("div", { class: "bubble " + m.role, "data-msg": i },
        h("div", { class: "who" }, who + " #" + i, cutBadge(m)),
        m.content ? h("div", { class: "text" }, m.content) : null,
        (m.tool_calls || []).map(function (c) { return callCard(c, ctx, null); }),
        (violationsAt[i] || []).map(function (v) {
          return h("div", { class: "flag process-violation" }, "process violation: " + violationText(v) + (v.detail ? " — " + v.detail : ""));
        })));
    });
    var tail = Object.keys(anchors).map(Number).concat(Object.keys(guides).map(Number))
      .filter(function (k) { return k >= rec.messages.length; });
    tail.sort(function (a, b) { return a - b; }).filter(function (k, j, arr) { return arr.indexOf(k) === j; }).forEach(between);
    return h("div", { class: "conversation" }, out);
  }

  function checkList(title, items, textKey) {
    if (!items || !items.length) return null;
    return h("div", { class: "checks" }, h("h3", null, title), h("ul", null, items.map(function (c) {
      var met = c.met !== undefined ? c.met : c.action_match;
      return h("li", { class: met ? "met" : "not-met" }, TG.badge(met ? "met" : "not met", met ? "met" : "not-met"), " ",
        typeof c[textKey] === "string" ? c[textKey] : TG.json(c[textKey]),
        c.justification ? h("div", { class: "reason" }, "judge: " + c.justification) : null);
    })));
  }

  function rewardSection(rec) {
    var r = rec.reward;
    if (!r) return h("section", { class: "reward" }, h("h2", null, "Reward"), h("p", { class: "error" }, "not scored (infrastructure error): " + (rec.error || "")));
    var d = r.details || {};
    var breakdown = Object.keys(r.breakdown || {}).map(function (k) { return h("tr", null, h("td", null, k), h("td", { class: "num" }, TG.num(r.breakdown[k]))); });
    var executed = [];
    rec.messages.forEach(function (m) { (m.tool_calls || []).forEach(function (c) { executed.push(c); }); });
    var gold = d.action_checks || [];
    return h("section", { class: "reward" },
      h("h2", null, "Reward " + TG.num(r.reward)),
      h("table", { class: "breakdown" }, h("tbody", null, breakdown)),
      d.db_check ? h("p", null, "DB: ", TG.badge(d.db_check.db_match ? "match" : "mismatch", d.db_check.db_match ? "met" : "not-met")) : null,
      h("div", { class: "gold-vs-exec" },
        h("div", null, h("h3", null, "ACTION: gold actions (" + gold.length + ")"), h("ol", { class: "gold" }, gold.map(function (c) {
          var a = c.action || {};
          return h("li", { class: c.action_match ? "met" : "not-met" }, TG.badge(c.action_match ? "match" : "mismatch", c.action_match ? "met" : "not-met"),
            " " + (a.requestor === "user" ? "user: " : "") + a.name, TG.pre(TG.json(a.arguments)));
        }))),
        h("div", null, h("h3", null, "Executed calls (" + executed.length + ")"), h("ol", { class: "executed" }, executed.map(function (c) {
          return h("li", null, (c.requestor === "user" ? "user: " : "") + c.name, TG.pre(TG.json(c.arguments)));
        })))),
      checkList("COMMUNICATE", d.communicate_checks, "info"),
      checkList("ENV assertions", d.env_assertions, "env_assertion"),
      checkList("NL assertions", d.nl_assertions, "nl_assertion"));
  }

  TG.renderSim = function (rec, i) {
    var row = TG.index.sims[i];
    var outcome = row ? row[3] : "";
    var usage = Object.keys(rec.usage || {}).map(function (role) {
      return h("tr", null, h("td", null, role), h("td", null, usageLine(rec.usage[role])));
    });
    var behaviour = (rec.injected_faults || []).map(function (f) { return ["fault", f]; })
      .concat((rec.behaviour_events || []).map(function (f) { return ["behaviour", f]; }));
    return h("article", { class: "sim", "data-sim": i },
      h("h1", null, "Task " + rec.task_id + " · trial " + rec.trial + " ", TG.badge(TG.OUTCOME_TEXT[outcome] || outcome, "sq-badge " + outcome)),
      h("p", { class: "muted" }, row ? h("a", { href: "#/grid" + TG.queryString({ cell: row[0] }) }, TG.cellLabel(row[0])) : null),
      kv([["domain", rec.domain], ["guard", rec.guard], ["agent", rec.agent_model], ["user", rec.user_model],
        ["slice", rec.slice], ["termination", rec.termination_reason], ["reward", rec.reward ? TG.num(rec.reward.reward) : "—"],
        ["turns", rec.agent_turns + " agent, " + rec.user_turns + " user"], ["wall", TG.num(rec.wall_seconds, 1) + " s"],
        ["seed", String(rec.seed)], ["run", rec.run_id], ["started", TG.utcTime(rec.started_at)], ["error", rec.error],
        ["attack", rec.attack ? rec.attack.tool + " " + JSON.stringify(rec.attack.arguments) + " (" + rec.attack.strategy + ")" : null]]),
      usage.length ? h("table", { class: "usage" }, h("tbody", null, usage)) : null,
      behaviour.length ? h("ul", { class: "faults" }, behaviour.map(function (b) {
        var f = b[1];
        return h("li", null, b[0] + ": " + f.kind + (f.tool ? " on " + f.tool : "") + (f.call_id ? " (" + f.call_id + ")" : "") + (f.detail ? " — " + f.detail : ""));
      })) : null,
      h("h2", null, "Conversation"),
      conversation(rec, TG.processOf(i)),
      processSection(TG.processOf(i)),
      rewardSection(rec),
      TG.lazyDetails("raw record (JSON)", function () { return TG.pre(TG.json(rec)); }, "raw"));
  };
})();
