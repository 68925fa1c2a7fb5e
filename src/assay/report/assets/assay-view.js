/* assay views: the run summary, score histogram, case table and case panel, shared by the HTML
 * report (data embedded in the page) and the studio (data from /api).
 *
 * Every value that came from a model or a suite reaches the page through text nodes
 * (textContent, createTextNode) and never through innerHTML, so hostile output shows as text.
 */
"use strict";
(function (global) {
  var VERDICTS = ["pass", "borderline", "fail", "error"];
  var VERDICT_RANK = { pass: 0, borderline: 1, fail: 2, error: 3 };
  var SVG = "http://www.w3.org/2000/svg";

  /* el("td", {class: "num", title: "…"}, child, "text", …): an element with attributes and
   * children; strings become text nodes, null/undefined/false children are skipped. */
  function el(tag, attrs) {
    var node = document.createElement(tag);
    setAttrs(node, attrs);
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }

  function svg(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    setAttrs(node, attrs);
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }

  function setAttrs(node, attrs) {
    if (!attrs) return;
    Object.keys(attrs).forEach(function (key) {
      var value = attrs[key];
      if (value === null || value === undefined || value === false) return;
      if (key === "text") node.textContent = String(value);
      else if (key === "onclick") node.addEventListener("click", value);
      else if (key === "onchange") node.addEventListener("change", value);
      else if (key === "oninput") node.addEventListener("input", value);
      else node.setAttribute(key, value === true ? "" : String(value));
    });
  }

  function append(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) child.forEach(function (c) { append(node, c); });
    else if (typeof child === "string" || typeof child === "number")
      node.appendChild(document.createTextNode(String(child)));
    else node.appendChild(child);
  }

  /* ---- formatting ---------------------------------------------------------------------- */

  function score(value) { return value === null || value === undefined ? "—" : value.toFixed(2); }
  function pct(value) { return value.toFixed(1) + "%"; }
  function duration(ms) {
    if (ms === null || ms === undefined) return "—";
    if (ms < 1) return ms.toFixed(3) + " ms";  /* a fast function's 0.3 ms is not "0 ms" */
    if (ms < 10) return ms.toFixed(1) + " ms";
    if (ms < 1000) return Math.round(ms) + " ms";
    var s = ms / 1000;
    if (s < 60) return s.toFixed(s < 10 ? 2 : 1) + " s";
    var m = Math.floor(s / 60);
    return m + " min " + Math.round(s - 60 * m) + " s";
  }
  function tokens(usage) {
    if (!usage) return "—";
    return (usage.input + usage.output).toLocaleString("en-US") + " (" +
      usage.input.toLocaleString("en-US") + " in / " + usage.output.toLocaleString("en-US") + " out)";
  }
  function cost(value) {
    if (value === null || value === undefined) return "—";
    return "$" + (value >= 1 ? value.toFixed(2) : value.toPrecision(2));
  }
  function json(value) {
    return typeof value === "string" ? value : JSON.stringify(value, null, 2);
  }
  function verdictBadge(verdict) {
    return el("span", { class: "badge v-" + verdict, text: verdict });
  }

  /* ---- what a case says about itself ----------------------------------------------------- */

  function walkGraders(results, prefix, out) {
    (results || []).forEach(function (g) {
      var label = prefix + g.name;
      out.push({ label: label, result: g });
      walkGraders(g.children, label + " › ", out);
    });
    return out;
  }

  function caseGraders(item) {
    var out = walkGraders(item.grader_results, "", []);
    (item.turns || []).forEach(function (turn) {
      walkGraders(turn.grader_results, "turn " + turn.index + " › ", out);
    });
    return out;
  }

  /* The bar a grader's score is held to (SPEC §1.2): its min_score, else the case threshold. */
  function graderBar(g, threshold) {
    if (g.min_score !== null && g.min_score !== undefined) return { value: g.min_score, name: "its min_score" };
    if (threshold === null || threshold === undefined) return null;
    return { value: threshold, name: "the case threshold" };
  }

  /* Why a grader that scored did not pass, when it gives no misses: its score against its bar. */
  function belowBar(g, threshold) {
    if (g.verdict === "pass" || g.score === null || g.score === undefined) return null;
    var bar = graderBar(g, threshold);
    if (bar && g.score < bar.value)
      return "score " + score(g.score) + " is below " + bar.name + " " + score(bar.value);
    if (g.required) return "a required part of the check failed";
    return null;
  }

  /* Where the judge could not answer and another method decided: [{label, message}]. */
  function fallbacks(item) {
    if (item.verdict === "error") return [];
    var out = [];
    var units = item.samples && item.samples.length ? item.samples : [item];
    units.forEach(function (unit) {
      if (unit.verdict === "error") return;
      var where = unit === item ? "" : "sample " + unit.index + " › ";
      var graders = unit.turns && unit.turns.length
        ? [].concat.apply([], unit.turns.map(function (turn) {
            return walkGraders(turn.grader_results, "turn " + turn.index + " › ", []);
          }))
        : walkGraders(unit.grader_results, "", []);
      graders.forEach(function (g) {
        if (g.result.fallback) out.push({ label: where + g.label, message: g.result.fallback });
      });
    });
    return out;
  }

  /* The one line the table shows for a case that did not pass: why. */
  function mainMiss(item) {
    if (item.verdict === "pass") return "";
    if (item.error) return item.error.type + ": " + item.error.message;
    var graders = caseGraders(item);
    for (var i = 0; i < graders.length; i++) {
      var g = graders[i].result;
      if (g.error) return graders[i].label + ": " + g.error.message;
      if (g.verdict !== "pass" && g.misses && g.misses.length)
        return graders[i].label + ": " + g.misses[0];
    }
    var outcomes = item.expected_outcome_results || [];
    for (var j = 0; j < outcomes.length; j++)
      if (!outcomes[j].passed) return "✗ " + outcomes[j].outcome;
    for (var k = 0; k < graders.length; k++) {
      var g2 = graders[k].result;
      if (g2.verdict === "pass") continue;
      var reason = belowBar(g2, item.threshold);
      return graders[k].label + (reason ? ": " + reason : " " + g2.verdict);
    }
    var samples = item.samples || [];
    if (samples.length) {
      var passed = samples.filter(function (x) { return x.verdict === "pass"; }).length;
      return passed + " of " + samples.length + " samples passed";
    }
    return "";
  }

  /* ---- run summary ------------------------------------------------------------------------ */

  function statusBadge(run) {
    if (run.status !== "completed")
      return el("span", { class: "badge status-other", text: run.status.toUpperCase() });
    var passed = run.summary.passed && !(run.regression && run.regression.status === "critical");
    return el("span", { class: "badge " + (passed ? "status-passed" : "status-failed"),
                        text: passed ? "PASSED" : "FAILED" });
  }

  function distribution(summary) {
    var total = summary.total || 0;
    var counts = { pass: summary.passed_count, borderline: summary.borderline_count,
                   fail: summary.failed_count, error: summary.error_count };
    var bar = el("div", { class: "dist", role: "img",
                          "aria-label": VERDICTS.map(function (v) { return counts[v] + " " + v; }).join(", ") });
    VERDICTS.forEach(function (v) {
      if (!counts[v]) return;
      var part = el("div", { class: v, title: counts[v] + " " + v });
      part.style.width = (100 * counts[v] / total) + "%";
      bar.appendChild(part);
    });
    var legend = el("div", { class: "legend" }, VERDICTS.map(function (v) {
      var share = total ? (100 * counts[v] / total) : 0;
      return el("span", { "data-verdict": v }, el("i", { class: "dist-" + v }),
                counts[v] + " " + v + " (" + pct(share) + ")");
    }));
    Array.prototype.forEach.call(legend.querySelectorAll("i"), function (swatch, i) {
      swatch.style.background = "var(--" + VERDICTS[i] + ")";
    });
    return el("div", { class: "card" }, el("h4", { text: "Cases" }),
              el("div", { class: "big", text: String(total) }), bar, legend);
  }

  function dimension(title, valuePct, thresholdPct, passed) {
    return el("div", { class: "card" }, el("h4", { text: title }),
      el("div", { class: "big " + (passed ? "ok" : "bad") }, pct(valuePct), " ", passed ? "✓" : "✗"),
      el("div", { class: "muted", text: "threshold " + pct(thresholdPct) }));
  }

  function regressionCard(regression) {
    var card = el("div", { class: "card" }, el("h4", { text: "Regression" }));
    if (!regression) {
      card.appendChild(el("div", { class: "muted", text: "not measured (no baseline configured)" }));
      return card;
    }
    var cls = { new: "muted", clean: "ok", warning: "warn", critical: "bad" }[regression.status];
    card.appendChild(el("div", { class: "big " + cls, text: regression.status }));
    if (regression.baseline_run_id === null) {
      card.appendChild(el("div", { class: "muted", text: "no baseline yet (" + regression.strategy + ")" }));
      return card;
    }
    var delta = regression.score_delta || 0;
    card.appendChild(el("div", null, (delta >= 0 ? "+" : "") + (delta * 100).toFixed(1) +
      " pt vs ", el("code", { text: regression.baseline_run_id }), " (" + regression.strategy + ")"));
    var counts = Object.keys(regression.case_counts || {}).filter(function (k) {
      return regression.case_counts[k];
    }).map(function (k) { return regression.case_counts[k] + " " + k; });
    if (counts.length) card.appendChild(el("div", { class: "muted", text: counts.join(", ") }));
    return card;
  }

  function spendLine(label, usage, spent) {
    var total = usage ? (usage.input + usage.output).toLocaleString("en-US") + " tokens" : "— tokens";
    return el("div", { title: usage ? tokens(usage) : "no token usage reported" },
      el("strong", { text: label + " " }), total + " · " + cost(spent));
  }

  function spendCard(run) {
    var s = run.summary;
    var calls = s.judge_calls + " calls" + (s.judge_fallback_count ? ", " + s.judge_fallback_count + " fell back" : "");
    var judge = s.judge_calls
      ? spendLine("judge (" + calls + ")", s.judge_token_usage, s.judge_cost_usd)
      : el("div", null, el("strong", { text: "judge " }), "not used");
    return el("div", { class: "card" }, el("h4", { text: "Spend" }),
      spendLine("target", run.token_usage, run.cost_usd), judge,
      el("div", { class: "muted", text: "duration " + duration(run.duration_ms) }));
  }

  /* What makes a run's numbers less than complete: errors, judge fallbacks. */
  function runNotices(run) {
    var s = run.summary, notes = [];
    if (s.error_count)
      notes.push(el("div", { class: "notice errors", role: "note" }, el("strong", {
        text: s.error_count + (s.error_count === 1 ? " error" : " errors") + ": results incomplete" }),
        " — the cases that errored have no score and count as not passed"));
    if (s.judge_fallback_count)
      notes.push(el("div", { class: "notice fallbacks", role: "note" }, el("strong", {
        text: s.judge_fallback_count + (s.judge_fallback_count === 1 ? " judged check" : " judged checks") + " fell back" }),
        " — the judge could not answer and another method decided (expected outcomes → score, " +
        "deep factuality → shallow, judged tone → heuristic); the cases' graders say which"));
    return notes;
  }

  function runHeader(run, heading) {
    return [
      el(heading || "h2", null, run.suite, " ", el("span", { class: "muted", text: "→ " + run.target }),
         " ", statusBadge(run)),
      el("p", { class: "meta" }, el("span", null, "run ", el("code", { text: run.id })),
         el("span", { text: "started " + run.started_at }),
         run.finished_at ? el("span", { text: "finished " + run.finished_at }) : null,
         run.assay_version ? el("span", { text: "assay " + run.assay_version }) : null),
    ].concat(runNotices(run));
  }

  function summaryCards(run) {
    var s = run.summary, c = run.config;
    return el("div", { class: "cards" },
      distribution(s),
      dimension("Cases pass rate", s.cases_pass_rate_pct, c.cases_pass_threshold * 100, s.cases_passed),
      dimension("Weighted metrics score", s.weighted_metrics_score_pct, c.metrics_pass_threshold * 100,
                s.metrics_passed),
      regressionCard(run.regression),
      spendCard(run));
  }

  /* ---- score histogram ------------------------------------------------------------------- */

  /* counts[bin][verdict] over ten bins of 0.1; a score of 1.0 falls in the last bin. */
  function histogramCounts(items) {
    var bins = [];
    for (var i = 0; i < 10; i++) bins.push({ pass: 0, borderline: 0, fail: 0 });
    var errors = 0;
    items.forEach(function (item) {
      if (item.score === null || item.score === undefined || item.verdict === "error") { errors++; return; }
      var bin = Math.min(9, Math.floor(item.score * 10 + 1e-9));
      bins[bin][item.verdict] = (bins[bin][item.verdict] || 0) + 1;
    });
    return { bins: bins, errors: errors };
  }

  function histogram(counts) {
    var width = 1000, height = 150, pad = 24, barW = (width - 2 * pad) / 10;
    var max = 1;
    counts.bins.forEach(function (b) { max = Math.max(max, b.pass + b.borderline + b.fail); });
    var chart = svg("svg", { viewBox: "0 0 " + width + " " + (height + 20), role: "img",
                             "aria-label": "score histogram" });
    counts.bins.forEach(function (b, i) {
      var y = height;
      ["pass", "borderline", "fail"].forEach(function (v) {
        if (!b[v]) return;
        var h = (height - pad) * b[v] / max;
        y -= h;
        chart.appendChild(svg("rect", { x: pad + i * barW + 2, y: y, width: barW - 4, height: h,
                                        fill: "var(--" + v + ")", "data-bin": i, "data-verdict": v },
          svg("title", { text: b[v] + " " + v + " with score " + (i / 10).toFixed(1) + "–" +
                               ((i + 1) / 10).toFixed(1) })));
      });
      var total = b.pass + b.borderline + b.fail;
      if (total) chart.appendChild(svg("text", { x: pad + (i + 0.5) * barW, y: y - 3,
                                                 "text-anchor": "middle", text: String(total) }));
    });
    chart.appendChild(svg("line", { x1: pad, x2: width - pad, y1: height, y2: height,
                                    stroke: "var(--line)" }));
    for (var t = 0; t <= 10; t += 2)
      chart.appendChild(svg("text", { x: pad + t * barW, y: height + 14, "text-anchor": "middle",
                                      text: (t / 10).toFixed(1) }));
    return el("div", { class: "card histogram" }, el("h4", { text: "Score distribution" }), chart,
      counts.errors ? el("div", { class: "muted", text: counts.errors + " error case(s) have no score" }) : null);
  }

  /* ---- case panel ------------------------------------------------------------------------ */

  function section(title) {
    var box = el("div", null, el("h4", { text: title }));
    for (var i = 1; i < arguments.length; i++) append(box, arguments[i]);
    return box;
  }

  function toolCallsTable(calls) {
    return el("table", { class: "tool-calls" },
      el("thead", null, el("tr", null, el("th", { text: "#" }), el("th", { text: "tool" }),
        el("th", { text: "arguments" }), el("th", { text: "output" }), el("th", { class: "num", text: "duration" }))),
      el("tbody", null, calls.map(function (call, i) {
        return el("tr", null, el("td", { class: "num", text: String(i + 1) }),
          el("td", null, el("code", { text: call.tool })),
          el("td", null, el("pre", { text: json(call.args) })),
          el("td", null, call.output === null || call.output === undefined ? "—" : el("pre", { text: json(call.output) })),
          el("td", { class: "num", text: call.duration_ms === null || call.duration_ms === undefined ? "—" : duration(call.duration_ms) }));
      })));
  }

  function retrievedTable(passages) {
    return el("table", { class: "retrieved" },
      el("thead", null, el("tr", null, el("th", { text: "#" }), el("th", { text: "id" }),
        el("th", { class: "num", text: "score" }), el("th", { text: "text" }))),
      el("tbody", null, passages.map(function (p, i) {
        return el("tr", null, el("td", { class: "num", text: String(i + 1) }),
          el("td", null, p.id === null || p.id === undefined ? "—" : el("code", { text: p.id })),
          el("td", { class: "num", text: p.score === null || p.score === undefined ? "—" : String(p.score) }),
          el("td", null, el("pre", { text: p.text || "" })));
      })));
  }

  function contentText(content) {
    // a list of content parts (text, image, audio) as text, media as a short placeholder
    if (typeof content === "string") return content;
    if (!Array.isArray(content)) return json(content);
    return content.map(function (p) {
      if (p && p.type === "text") return String(p.text || "");
      if (p && p.type === "image_url") {
        var url = p.image_url && typeof p.image_url === "object" ? p.image_url.url : p.image_url;
        return "[image: " + String(url) + "]";
      }
      if (p && p.type === "input_audio") return "[audio: " + String((p.input_audio || {}).format || "?") + "]";
      return "[" + String((p && p.type) || "part") + "]";
    }).join("\n");
  }

  function transcript(messages) {
    return messages.map(function (m) {
      var box = el("div", { class: "msg" }, el("div", { class: "role", text: m.role + (m.name ? " · " + m.name : "") }));
      if (m.content !== null && m.content !== undefined) box.appendChild(el("pre", { text: contentText(m.content) }));
      if (m.tool_calls && m.tool_calls.length) box.appendChild(toolCallsTable(m.tool_calls));
      return box;
    });
  }

  function outcomes(results) {
    return results.map(function (o) {
      return el("div", { class: "outcome " + (o.passed ? "ok" : "bad") },
        el("span", { class: "mark", text: o.passed ? "✓" : "✗" }), el("span", { text: o.outcome }),
        o.justification ? el("div", { class: "muted", text: o.justification }) : null);
    });
  }

  function detailsTable(details) {
    return el("table", { class: "details" },
      el("thead", null, el("tr", null, el("th", { text: "check" }), el("th", { text: "" }),
        el("th", { text: "expected" }), el("th", { text: "actual" }), el("th", { text: "message" }))),
      el("tbody", null, details.map(function (d) {
        return el("tr", { class: d.passed ? "detail-pass" : "detail-fail" },
          el("td", null, el("code", { text: d.check })),
          el("td", { class: d.passed ? "ok" : "bad", text: d.passed ? "✓" : "✗" }),
          el("td", { class: "mono", text: d.expected === null || d.expected === undefined ? "" : d.expected }),
          el("td", { class: "mono", text: d.actual === null || d.actual === undefined ? "" : d.actual }),
          el("td", { text: d.message || "" }));
      })));
  }

  function list(title, items, cls) {
    if (!items || !items.length) return null;
    return el("div", { class: cls }, el("strong", { text: title + ": " }),
      el("ul", null, items.map(function (item) { return el("li", { text: item }); })));
  }

  function grader(g, threshold) {
    var facts = [g.type, "weight " + g.weight];
    if (g.required) facts.push("required");
    if (g.min_score !== null && g.min_score !== undefined) facts.push("min_score " + g.min_score);
    if (g.judge_model) facts.push("judge " + g.judge_model);
    if (g.fallback) facts.push("fell back");
    var open = g.verdict !== "pass" || Boolean(g.fallback);
    var box = el("details", { class: "grader", open: open },
      el("summary", null, verdictBadge(g.verdict), " ", el("strong", { text: g.name }), " ",
         el("span", { class: "mono", text: score(g.score) }), " ",
         el("span", { class: "muted", text: facts.join(" · ") })));
    var body = el("div", { class: "body" });
    if (g.fallback) body.appendChild(el("div", { class: "fallback-box", text: "fell back: " + g.fallback }));
    if (g.error) body.appendChild(el("div", { class: "error-box", text: g.error.type + ": " + g.error.message }));
    var reason = g.error ? null : belowBar(g, threshold);
    if (reason) body.appendChild(el("div", { class: "bad below-bar", text: "fails: " + reason }));
    append(body, list("misses", g.misses, "bad"));
    append(body, list("hits", g.hits, "ok"));
    if (g.reasoning) body.appendChild(el("div", null, el("strong", { text: "reasoning: " }), el("pre", { text: g.reasoning })));
    if (g.details && g.details.length) body.appendChild(detailsTable(g.details));
    if (g.children && g.children.length)
      body.appendChild(el("div", { class: "children" }, g.children.map(function (child) {
        return grader(child, threshold);
      })));
    box.appendChild(body);
    return box;
  }

  function gradedParts(item, threshold) {
    var parts = [];
    if (item.expected_outcome_results && item.expected_outcome_results.length)
      parts.push(section("Expected outcomes", outcomes(item.expected_outcome_results)));
    if (item.grader_results && item.grader_results.length)
      parts.push(section("Graders", item.grader_results.map(function (g) { return grader(g, threshold); })));
    return parts;
  }

  /* How people reviewed a run (`GET /api/runs/{id}/reviews`), worded as `assay runs show`
   * prints it; the studio's run page and the HTML report both show it. */
  function reviewCounts(reviews) {
    var text = "reviewed " + reviews.reviewed + " of " + reviews.cases + " cases";
    if (reviews.reviewed)
      text += ": " + reviews.human_passed + " passed by people, the machine agreed on " + reviews.agreed;
    if (reviews.reviewed_pass_rate !== null && reviews.reviewed)
      text += "; reviewed pass rate " + pct(reviews.reviewed_pass_rate * 100);
    return text;
  }

  /* The mark a reviewed case's row carries beside its machine verdict. */
  function reviewMark(review) {
    return el("span", { class: "review-mark human-" + review.verdict, "data-human": review.verdict,
                        title: "reviewed: " + review.verdict + (review.reviewer ? " by " + review.reviewer : "") +
                               (review.note ? " — " + review.note : ""),
                        text: (review.verdict === "pass" ? "✓" : "✗") + " human" });
  }

  var STOP_REASONS = {
    stop_when: "a stop_when grader passed", done: "the simulated user was done",
    max_turns: "max_turns reached", error: "an error"
  };

  /* Why a simulated conversation ended (its last turn carries it). */
  function stopReason(turn) {
    return "Conversation ended: " + (STOP_REASONS[turn.stop_reason] || turn.stop_reason) +
      (turn.stop_detail ? " (" + turn.stop_detail + ")" : "");
  }

  function turns(item, threshold) {
    return item.turns.map(function (turn) {
      return el("div", { class: "grader" },
        el("div", { class: "body" },
          el("h3", null, "Turn " + turn.index + " ", verdictBadge(turn.verdict), " ",
             el("span", { class: "mono", text: score(turn.score) })),
          turn.error ? el("div", { class: "error-box", text: turn.error.type + ": " + turn.error.message }) : null,
          turn.stop_reason ? el("div", { class: "stop-reason muted", text: stopReason(turn) }) : null,
          section("Input", el("pre", { text: json(turn.input) })),
          turn.output !== null && turn.output !== undefined ? section("Output", el("pre", { text: turn.output })) : null,
          gradedParts(turn, threshold)));
    });
  }

  function samples(item) {
    return item.samples.map(function (sample) {
      return el("details", { class: "grader", open: sample.verdict !== "pass" },
        el("summary", null, "sample " + sample.index + " ", verdictBadge(sample.verdict), " ",
           el("span", { class: "mono", text: score(sample.score) }), " ",
           el("span", { class: "muted", text: duration(sample.duration_ms) })),
        el("div", { class: "body" },
          sample.error ? el("div", { class: "error-box", text: sample.error.type + ": " + sample.error.message }) : null,
          sample.output !== null && sample.output !== undefined ? section("Output", el("pre", { text: sample.output })) : null,
          gradedParts(sample, item.threshold),
          sample.turns && sample.turns.length ? turns(sample, item.threshold) : null));
    });
  }

  function casePanel(item) {
    var facts = ["score " + score(item.score), "threshold " + item.threshold,
                 "duration " + duration(item.duration_ms)];
    if (item.token_usage) facts.push("tokens " + tokens(item.token_usage));
    if (item.cost_usd !== null && item.cost_usd !== undefined) facts.push("cost " + cost(item.cost_usd));
    if (item.judge_calls)
      facts.push("judge calls " + item.judge_calls +
                 (item.judge_cost_usd === null || item.judge_cost_usd === undefined ? "" : " (" + cost(item.judge_cost_usd) + ")"));
    if (item.rejudged_scores && item.rejudged_scores.length)
      facts.push("re-judged " + item.rejudged_scores.map(score).join(", "));
    var panel = el("div", { class: "panel case-panel", "data-case-id": item.case_id },
      el("h3", null, el("span", { class: "mono", text: item.case_id }), " ", verdictBadge(item.verdict)),
      el("div", { class: "muted", text: facts.join(" · ") }),
      item.tags && item.tags.length ? el("div", { class: "muted", text: "tags: " + item.tags.join(", ") }) : null);
    if (item.error) panel.appendChild(el("div", { class: "error-box", text: item.error.type + ": " + item.error.message }));
    var fell = fallbacks(item);
    if (fell.length)
      panel.appendChild(el("div", { class: "fallback-box" }, el("strong", { text: "The judge fell back: " }),
        el("ul", null, fell.map(function (f) { return el("li", { text: f.label + ": " + f.message }); }))));
    if (item.input !== null && item.input !== undefined) panel.appendChild(section("Input", el("pre", { text: json(item.input) })));
    if (item.messages && item.messages.length) panel.appendChild(section("Transcript", transcript(item.messages)));
    if (item.tool_calls && item.tool_calls.length) panel.appendChild(section("Tool calls", toolCallsTable(item.tool_calls)));
    if (item.output !== null && item.output !== undefined) panel.appendChild(section("Output", el("pre", { class: "case-output", text: item.output })));
    if (item.context && item.context.length) panel.appendChild(section("Retrieved context", retrievedTable(item.context)));
    append(panel, gradedParts(item, item.threshold));
    if (item.turns && item.turns.length) panel.appendChild(section("Turns", turns(item, item.threshold)));
    if (item.samples && item.samples.length) panel.appendChild(section("Samples (" + item.samples.length + ")", samples(item)));
    return panel;
  }

  /* ---- case table ------------------------------------------------------------------------ */

  /* A source answers query(state) with a promise of {items, total}; the report's lives in
   * memory, the studio's asks /api. Items need case_id, verdict, score, duration_ms, tags and
   * either main_miss or enough of a case result to work it out. */
  function memorySource(results) {
    var graderNames = {};
    var tagNames = {};
    results.forEach(function (r) {
      caseGraders(r).forEach(function (g) { graderNames[g.label] = true; });
      (r.tags || []).forEach(function (t) { tagNames[t] = true; });
    });
    var counts = { pass: 0, borderline: 0, fail: 0, error: 0 };
    results.forEach(function (r) { counts[r.verdict]++; });
    return {
      graders: Object.keys(graderNames).sort(),
      tags: Object.keys(tagNames).sort(),
      counts: counts,
      query: function (state) {
        var q = (state.q || "").toLowerCase();
        var rows = results.filter(function (r) {
          if (!state.verdicts[r.verdict]) return false;
          if (state.tag && (r.tags || []).indexOf(state.tag) < 0) return false;
          if (state.grader && !caseGraders(r).some(function (g) {
            return g.label === state.grader && g.result.verdict !== "pass";
          })) return false;
          if (q && r.case_id.toLowerCase().indexOf(q) < 0 &&
              (r.output || "").toLowerCase().indexOf(q) < 0 &&
              (r.tags || []).join(" ").toLowerCase().indexOf(q) < 0) return false;
          return true;
        });
        var key = state.sort, dir = state.dir === "desc" ? -1 : 1;
        rows.sort(function (a, b) {
          var x, y;
          if (key === "verdict") { x = VERDICT_RANK[a.verdict]; y = VERDICT_RANK[b.verdict]; }
          else if (key === "score") { x = a.score === null ? -1 : a.score; y = b.score === null ? -1 : b.score; }
          else if (key === "duration_ms") { x = a.duration_ms; y = b.duration_ms; }
          else { x = a.case_id; y = b.case_id; }
          if (x < y) return -dir;
          if (x > y) return dir;
          return a.case_id < b.case_id ? -1 : a.case_id > b.case_id ? 1 : 0;
        });
        var start = state.page * state.pageSize;
        return Promise.resolve({ items: rows.slice(start, start + state.pageSize), total: rows.length });
      },
      open: function (item) { return Promise.resolve(item); },
    };
  }

  var COLUMNS = [
    { key: "case_id", label: "Case" },
    { key: "verdict", label: "Verdict" },
    { key: "score", label: "Score", num: true },
    { key: "duration_ms", label: "Duration", num: true },
    { key: null, label: "Tags" },
    { key: null, label: "Why it did not pass" },
  ];

  /* A case's score coloured against its own bands (each result carries its resolved threshold
   * and borderline bound), never against one threshold for every case. */
  function scoreBand(item) {
    if (item.score === null || item.score === undefined || item.threshold === undefined) return "";
    if (item.score >= item.threshold - 1e-9) return "score-pass";
    if (item.borderline !== null && item.borderline !== undefined && item.score >= item.borderline - 1e-9)
      return "score-borderline";
    return "score-below";
  }

  /* The table's last cell: why the case did not pass, and which graders' judge fell back. */
  function whyCell(item) {
    var why = item.main_miss !== undefined ? item.main_miss : mainMiss(item);
    var fell = fallbacks(item).map(function (f) { return f.label; });
    if (!fell.length) return why;
    var note = "judge fell back: " + fell.filter(function (x, i) { return fell.indexOf(x) === i; }).join(", ");
    return why ? why + "; " + note : note;
  }

  /* A filterable, sortable, paged case table over `source`; clicking a row opens its panel.
   * `options.mark(item)`, when given, adds a node beside a row's verdict (the studio marks the
   * human review there). */
  function caseTable(source, options) {
    options = options || {};
    var state = { verdicts: { pass: true, borderline: true, fail: true, error: true }, q: "",
                  tag: "", grader: "", sort: options.sort || "verdict", dir: options.dir || "desc",
                  page: 0, pageSize: options.pageSize || 50 };
    var root = el("div", { class: "case-table" });
    var tbody = el("tbody");
    var info = el("span", { class: "muted" });
    var prev = el("button", { type: "button", class: "prev", text: "← previous" });
    var next = el("button", { type: "button", class: "next", text: "next →" });
    var sortKeys = options.sortKeys || ["case_id", "verdict", "score", "duration_ms"];
    var headers = COLUMNS.map(function (col) {
      var sortable = col.key && sortKeys.indexOf(col.key) >= 0;
      var th = el("th", { class: (col.num ? "num " : "") + (sortable ? "sortable" : ""), text: col.label,
                          "data-sort": sortable ? col.key : null });
      if (sortable) th.addEventListener("click", function () {
        if (state.sort === col.key) state.dir = state.dir === "asc" ? "desc" : "asc";
        else { state.sort = col.key; state.dir = col.key === "case_id" ? "asc" : "desc"; }
        state.page = 0;
        refresh();
      });
      return th;
    });

    var controls = el("div", { class: "controls" }, VERDICTS.map(function (v) {
      var box = el("input", { type: "checkbox", checked: true, name: "verdict", value: v });
      box.addEventListener("change", function () { state.verdicts[v] = box.checked; state.page = 0; refresh(); });
      var count = source.counts ? " (" + (source.counts[v] || 0) + ")" : "";
      return el("label", null, box, " ", verdictBadge(v), count);
    }));
    var search = el("input", { type: "search", placeholder: options.searchLabel || "search case id, output, tags", name: "q",
                               "aria-label": "search cases" });
    var timer = null;
    search.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { state.q = search.value; state.page = 0; refresh(); }, 150);
    });
    controls.appendChild(search);
    [["tag", source.tags, "any tag"], ["grader", source.graders, "any grader"]].forEach(function (spec) {
      if (!spec[1] || !spec[1].length) return;
      var select = el("select", { name: spec[0], "aria-label": spec[0] },
        el("option", { value: "", text: spec[2] }),
        spec[1].map(function (name) {
          return el("option", { value: name, text: spec[0] === "grader" ? "not passed: " + name : name });
        }));
      select.addEventListener("change", function () { state[spec[0]] = select.value; state.page = 0; refresh(); });
      controls.appendChild(select);
    });

    prev.addEventListener("click", function () { state.page--; refresh(); });
    next.addEventListener("click", function () { state.page++; refresh(); });
    root.appendChild(controls);
    root.appendChild(el("table", { class: "cases" }, el("thead", null, el("tr", null, headers)), tbody));
    root.appendChild(el("div", { class: "pager" }, prev, next, info));

    var serial = 0;
    function refresh() {
      var mine = ++serial;
      headers.forEach(function (th) {
        var key = th.getAttribute("data-sort");
        if (key === state.sort) th.setAttribute("aria-sort", state.dir === "asc" ? "ascending" : "descending");
        else th.removeAttribute("aria-sort");
      });
      return source.query(state).then(function (answer) {
        if (mine !== serial) return;
        render(answer);
      });
    }

    function render(answer) {
      while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
      if (!answer.items.length)
        tbody.appendChild(el("tr", null, el("td", { colspan: COLUMNS.length, class: "empty", text: "no case matches" })));
      answer.items.forEach(function (item) {
        var row = el("tr", { class: "case-row", "data-case-id": item.case_id, "data-verdict": item.verdict, tabindex: 0 },
          el("td", { class: "mono", text: item.case_id }),
          el("td", null, verdictBadge(item.verdict), options.mark ? options.mark(item) : null),
          el("td", { class: "num mono " + scoreBand(item), text: score(item.score),
                     title: item.threshold === undefined ? null : "threshold " + score(item.threshold) }),
          el("td", { class: "num", text: duration(item.duration_ms) }),
          el("td", { class: "muted", text: (item.tags || []).join(", ") }),
          el("td", { class: "miss", text: whyCell(item) }));
        var panelRow = null;
        function toggle() {
          if (panelRow) { tbody.removeChild(panelRow); panelRow = null; row.classList.remove("open"); return; }
          row.classList.add("open");
          panelRow = el("tr", { class: "panel-row" }, el("td", { colspan: COLUMNS.length }));
          row.parentNode.insertBefore(panelRow, row.nextSibling);
          var cell = panelRow.firstChild;
          source.open(item).then(function (full) {
            if (options.caseLink) cell.appendChild(el("p", null, options.caseLink(full)));
            cell.appendChild(casePanel(full));
          },
            function (err) { cell.appendChild(el("div", { class: "error-box", text: String(err) })); });
        }
        row.addEventListener("click", toggle);
        row.addEventListener("keydown", function (e) { if (e.key === "Enter") toggle(); });
        tbody.appendChild(row);
      });
      var pages = Math.max(1, Math.ceil(answer.total / state.pageSize));
      prev.disabled = state.page <= 0;
      next.disabled = state.page >= pages - 1;
      info.textContent = answer.total.toLocaleString("en-US") + " case(s) · page " + (state.page + 1) + " of " + pages;
    }

    root.refresh = refresh;
    refresh();
    return root;
  }

  global.AssayView = {
    VERDICTS: VERDICTS, el: el, score: score, pct: pct, reviewCounts: reviewCounts, reviewMark: reviewMark, duration: duration, tokens: tokens,
    cost: cost, verdictBadge: verdictBadge, statusBadge: statusBadge, mainMiss: mainMiss,
    fallbacks: fallbacks, belowBar: belowBar, scoreBand: scoreBand,
    runHeader: runHeader, summaryCards: summaryCards, histogramCounts: histogramCounts,
    histogram: histogram, casePanel: casePanel, memorySource: memorySource, caseTable: caseTable,
  };
})(window);
