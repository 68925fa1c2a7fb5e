/* The studio's pages, drawn from the public JSON API (/api) with the shared views of
 * assay-view.js. Values reach the page as text nodes only (see assay-view.js). */
"use strict";
(function () {
  var V = window.AssayView;
  var el = V.el;
  var body = document.body;
  var main = document.getElementById("studio");
  var TOKEN_KEY = "assay-api-token";
  var REVIEWER_KEY = "assay-reviewer";
  var NOT_PASSED = ["borderline", "fail", "error"];

  /* ---- the API -------------------------------------------------------------------------- */

  function query(params) {
    var parts = [];
    Object.keys(params).forEach(function (key) {
      var value = params[key];
      if (value === null || value === undefined || value === "") return;
      (Array.isArray(value) ? value : [value]).forEach(function (one) {
        parts.push(encodeURIComponent(key) + "=" + encodeURIComponent(String(one)));
      });
    });
    return parts.length ? "?" + parts.join("&") : "";
  }

  /* fetch JSON; an error answer rejects with the envelope's message (and .status). */
  function api(path, options) {
    options = options || {};
    var method = options.method || "GET";
    var headers = { Accept: "application/json" };
    if (options.body !== undefined) headers["Content-Type"] = "application/json";
    var token = sessionStorage.getItem(TOKEN_KEY);
    if (method !== "GET" && token) headers.Authorization = "Bearer " + token;
    return fetch(path, {
      method: method, headers: headers, credentials: "same-origin",
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    }).then(function (response) {
      return response.text().then(function (text) {
        var data = null;
        try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
        if (!response.ok) {
          var message = data && data.error ? data.error.message : response.status + " " + response.statusText;
          var error = new Error(message);
          error.status = response.status;
          throw error;
        }
        return data;
      });
    });
  }

  function enc(value) { return encodeURIComponent(value); }
  function runHref(id) { return "/runs/" + enc(id); }
  function caseHref(runId, caseId) { return runHref(runId) + "/cases/" + enc(caseId); }
  function runLink(id) { return el("a", { href: runHref(id) }, el("code", { text: id })); }

  function failure(error) {
    return el("div", { class: "error-box", role: "alert", text: error.message || String(error) });
  }

  function show(nodes) {
    while (main.firstChild) main.removeChild(main.firstChild);
    (Array.isArray(nodes) ? nodes : [nodes]).forEach(function (node) { if (node) main.appendChild(node); });
  }

  function crumbs(parts) {
    var box = el("p", { class: "crumbs" });
    parts.forEach(function (part, i) {
      if (i) box.appendChild(document.createTextNode(" › "));
      box.appendChild(part[1] ? el("a", { href: part[1], text: part[0] }) : el("span", { text: part[0] }));
    });
    return box;
  }

  function studioConfig() {
    return api("/api/config").catch(function () { return { threshold: null }; });
  }

  /* ---- runs ----------------------------------------------------------------------------- */

  function trendChart(suite, runs, threshold) {
    var width = 480, height = 150, pad = 28;
    var ordered = runs.slice().sort(function (a, b) { return a.started_at < b.started_at ? -1 : 1; });
    var n = ordered.length;
    function x(i) { return n < 2 ? width / 2 : pad + i * (width - 2 * pad) / (n - 1); }
    function y(pct) { return height - pad / 2 - (height - pad) * pct / 100; }
    var chart = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    chart.setAttribute("viewBox", "0 0 " + width + " " + (height + 6));
    chart.setAttribute("role", "img");
    chart.setAttribute("aria-label", "trend of " + suite);
    function svg(tag, attrs, text) {
      var node = document.createElementNS("http://www.w3.org/2000/svg", tag);
      Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
      if (text !== undefined) node.textContent = text;
      chart.appendChild(node);
      return node;
    }
    [0, 50, 100].forEach(function (pct) {
      svg("line", { x1: pad, x2: width - pad / 2, y1: y(pct), y2: y(pct), stroke: "var(--line)" });
      svg("text", { x: 2, y: y(pct) + 4 }, pct + "%");
    });
    if (threshold !== null)
      svg("line", { x1: pad, x2: width - pad / 2, y1: y(threshold * 100), y2: y(threshold * 100),
                    stroke: "var(--borderline)", "stroke-dasharray": "4 3", class: "threshold" });
    var SERIES = [["cases_pass_rate_pct", "var(--accent)", "pass rate", "cases pass rate"],
                  ["weighted_metrics_score_pct", "var(--pass)", "score", "mean score"]];
    SERIES.forEach(function (line) {
      var points = ordered.map(function (run, i) { return x(i) + "," + y(run.summary[line[0]]); });
      svg("polyline", { points: points.join(" "), fill: "none", stroke: line[1], "stroke-width": 2,
                        class: "series", "data-series": line[2] });
      ordered.forEach(function (run, i) {
        var dot = svg("circle", { cx: x(i), cy: y(run.summary[line[0]]), r: 3, fill: line[1] });
        var title = document.createElementNS("http://www.w3.org/2000/svg", "title");
        title.textContent = run.id + ": " + line[2] + " " + V.pct(run.summary[line[0]]);
        dot.appendChild(title);
      });
    });
    /* A keyed legend: each entry carries a swatch of its series' own colour and dash. */
    function key(colour, label, dashed, series) {
      var swatch = document.createElementNS("http://www.w3.org/2000/svg", "svg");
      swatch.setAttribute("viewBox", "0 0 22 8");
      swatch.setAttribute("width", "22");
      swatch.setAttribute("height", "8");
      swatch.setAttribute("aria-hidden", "true");
      var stroke = document.createElementNS("http://www.w3.org/2000/svg", "line");
      [["x1", 0], ["x2", 22], ["y1", 4], ["y2", 4], ["stroke", colour], ["stroke-width", 3]]
        .forEach(function (a) { stroke.setAttribute(a[0], a[1]); });
      if (dashed) stroke.setAttribute("stroke-dasharray", "4 3");
      swatch.appendChild(stroke);
      return el("span", { class: "key", "data-series": series }, swatch, " " + label);
    }
    return el("div", { class: "card trend", "data-suite": suite },
      el("h4", { text: suite }), chart,
      el("div", { class: "legend muted" },
        SERIES.map(function (line) { return key(line[1], line[3], false, line[2]); }),
        threshold !== null ? key("var(--borderline)", "studio threshold " + V.pct(threshold * 100), true, "threshold") : null,
        el("span", { text: n + " run(s)" })));
  }

  function runsPage() {
    var state = { suite: new URLSearchParams(window.location.search).get("suite") || "", status: "", page: 1 };
    var selected = [];
    var trends = el("div", { class: "trends" });
    var suiteSelect = el("select", { name: "suite", "aria-label": "suite" }, el("option", { value: "", text: "all suites" }));
    var statusSelect = el("select", { name: "status", "aria-label": "status" },
      ["", "completed", "running", "interrupted", "failed"].map(function (s) {
        return el("option", { value: s, text: s || "any status" });
      }));
    var compareButton = el("button", { type: "button", class: "primary", disabled: true, text: "Compare selected" });
    var tbody = el("tbody");
    var info = el("span", { class: "muted" });
    var prev = el("button", { type: "button", text: "← newer" });
    var next = el("button", { type: "button", text: "older →" });
    var threshold = null;
    show([el("h1", { text: "Runs" }), trends,
          el("div", { class: "toolbar" }, suiteSelect, statusSelect, compareButton,
             el("span", { class: "muted", text: "select two runs to compare them" })),
          el("table", { class: "runs" },
            el("thead", null, el("tr", null, ["", "Run", "Suite", "Target", "Result", "Started", "Cases",
              "Pass rate", "Score", "Regression", "Duration"].map(function (h, i) {
                return el("th", { class: i >= 6 && i !== 9 ? "num" : "", text: h });
              }))), tbody),
          el("div", { class: "pager" }, prev, next, info)]);

    function drawTrends(runs) {
      while (trends.firstChild) trends.removeChild(trends.firstChild);
      var bySuite = {};
      runs.forEach(function (run) { (bySuite[run.suite] = bySuite[run.suite] || []).push(run); });
      Object.keys(bySuite).sort().slice(0, 6).forEach(function (suite) {
        trends.appendChild(trendChart(suite, bySuite[suite], threshold));
      });
    }

    function load() {
      return api("/api/runs" + query({ suite: state.suite, status: state.status, page: state.page, page_size: 25 }))
        .then(function (page) {
          while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
          if (!page.items.length)
            tbody.appendChild(el("tr", null, el("td", { colspan: 11, class: "empty", text: "no runs stored yet: run `assay run` and refresh" })));
          page.items.forEach(function (run) {
            var box = el("input", { type: "checkbox", name: "select", value: run.id, "aria-label": "select " + run.id,
                                    checked: selected.some(function (r) { return r.id === run.id; }) });
            box.addEventListener("change", function () {
              if (box.checked) selected.push(run);
              else selected = selected.filter(function (r) { return r.id !== run.id; });
              compareButton.disabled = selected.length !== 2;
            });
            var s = run.summary;
            tbody.appendChild(el("tr", { class: "run-row", "data-run-id": run.id },
              el("td", null, box), el("td", null, runLink(run.id)), el("td", { text: run.suite }),
              el("td", { text: run.target }), el("td", null, V.statusBadge(run)),
              el("td", { class: "muted", text: run.started_at.replace("T", " ").slice(0, 19) }),
              el("td", { class: "num", text: String(s.total) }),
              el("td", { class: "num", text: V.pct(s.cases_pass_rate_pct) }),
              el("td", { class: "num " + (s.total && !s.metrics_passed ? "score-below" : ""),
                         title: "needs " + V.pct(run.config.metrics_pass_threshold * 100),
                         text: V.pct(s.weighted_metrics_score_pct) }),
              el("td", { text: run.regression ? run.regression.status : "—" }),
              el("td", { class: "num", text: V.duration(run.duration_ms) })));
          });
          prev.disabled = state.page <= 1;
          next.disabled = state.page >= page.pages;
          info.textContent = page.total + " run(s) · page " + page.page + " of " + Math.max(1, page.pages);
        }).catch(function (error) { main.appendChild(failure(error)); });
    }

    function loadTrends() {
      return api("/api/runs" + query({ suite: state.suite, page_size: 500 })).then(function (page) {
        drawTrends(page.items.filter(function (run) { return run.status === "completed"; }));
        if (suiteSelect.options.length === 1) {
          var suites = {};
          page.items.forEach(function (run) { suites[run.suite] = true; });
          if (state.suite) suites[state.suite] = true;
          Object.keys(suites).sort().forEach(function (suite) {
            suiteSelect.appendChild(el("option", { value: suite, text: suite, selected: suite === state.suite }));
          });
        }
      });
    }

    suiteSelect.addEventListener("change", function () { state.suite = suiteSelect.value; state.page = 1; load(); loadTrends(); });
    statusSelect.addEventListener("change", function () { state.status = statusSelect.value; state.page = 1; load(); });
    prev.addEventListener("click", function () { state.page--; load(); });
    next.addEventListener("click", function () { state.page++; load(); });
    compareButton.addEventListener("click", function () {
      var pair = selected.slice().sort(function (a, b) { return a.started_at < b.started_at ? -1 : 1; });
      window.location.href = "/compare" + query({ base: pair[0].id, head: pair[1].id });
    });
    studioConfig().then(function (config) {
      threshold = config.threshold;
      return Promise.all([loadTrends(), load()]);
    }).catch(function (error) { main.appendChild(failure(error)); });
  }

  /* ---- one run -------------------------------------------------------------------------- */

  function apiSource(runId, facets) {
    return {
      counts: facets.verdicts,
      tags: Object.keys(facets.tags).sort(),
      graders: Object.keys(facets.graders).sort(),
      query: function (state) {
        var verdicts = V.VERDICTS.filter(function (v) { return state.verdicts[v]; });
        if (!verdicts.length) return Promise.resolve({ items: [], total: 0 });
        var params = { page: state.page + 1, page_size: state.pageSize, sort: state.sort, order: state.dir,
                       q: state.q, tag: state.tag };
        if (verdicts.length < V.VERDICTS.length) params.verdict = verdicts;
        if (state.grader) { params.grader = state.grader; params.grader_verdict = NOT_PASSED; }
        return api("/api/runs/" + enc(runId) + "/results" + query(params)).then(function (page) {
          return { items: page.items, total: page.total };
        });
      },
      open: function (item) { return Promise.resolve(item); },
    };
  }

  function runPage() {
    var id = body.dataset.runId;
    Promise.all([api("/api/runs/" + enc(id)), api("/api/runs/" + enc(id) + "/facets"), reviewsOf(id)])
      .then(function (answers) {
        var run = answers[0], facets = answers[1], reviews = answers[2];
        var byCase = reviewMap(reviews);
        var summary = V.summaryCards(run);
        var live = el("div", { class: "notice live", role: "status" });
        var links = el("p", { class: "toolbar" });
        if (run.regression && run.regression.baseline_run_id)
          links.appendChild(el("a", { href: "/compare" + query({ base: run.regression.baseline_run_id, head: run.id }),
                                      text: "compare with its baseline" }));
        links.appendChild(el("a", { href: "/compare" + query({ head: run.id }), text: "compare with another run" }));
        var table = V.caseTable(apiSource(run.id, facets), {
          sort: "score", dir: "asc", sortKeys: ["case_id", "score", "duration_ms"],
          searchLabel: "search case ids",
          caseLink: function (item) {
            return el("a", { href: caseHref(run.id, item.case_id), text: "open the case page" });
          },
          mark: function (item) { return byCase[item.case_id] ? V.reviewMark(byCase[item.case_id]) : null; },
        });
        var header = V.runHeader(run, "h1");
        show([crumbs([["Runs", "/"], [run.suite, "/" + query({ suite: run.suite })], [run.id, null]])]
          .concat(header, [run.status === "running" ? live : null, summary, reviewSummary(run.id, reviews),
                           links, el("h3", { text: "Cases" }), table]));
        if (run.status !== "running") return;
        live.textContent = "This run is in progress: results appear as they are stored.";
        var timer = setInterval(function () {
          api("/api/runs/" + enc(id)).then(function (fresh) {
            var cards = V.summaryCards(fresh);
            summary.parentNode.replaceChild(cards, summary);
            summary = cards;
            table.refresh();
            if (fresh.status !== "running") {
              clearInterval(timer);
              live.textContent = "The run finished (" + fresh.status + "). Reload for its final verdict.";
            }
          });
        }, 2000);
      }).catch(function (error) { show([crumbs([["Runs", "/"], [id, null]]), failure(error)]); });
  }

  /* ---- one case ------------------------------------------------------------------------- */

  function casePage() {
    var runId = body.dataset.runId, caseId = body.dataset.caseId;
    /* The run's reviews rather than GET …/review: a case nobody reviewed is not an error. */
    Promise.all([api("/api/runs/" + enc(runId)), api("/api/runs/" + enc(runId) + "/results/" + enc(caseId)),
                 reviewsOf(runId)])
      .then(function (answers) {
        var run = answers[0], item = answers[1], review = reviewMap(answers[2])[item.case_id];
        show([crumbs([["Runs", "/"], [run.suite + " " + run.id, runHref(run.id)], [item.case_id, null]]),
              el("h1", null, "Case ", el("span", { class: "mono", text: item.case_id })),
              review ? reviewBox(review) : null,
              V.casePanel(item)]);
      }).catch(function (error) {
        show([crumbs([["Runs", "/"], [runId, runHref(runId)], [caseId, null]]), failure(error)]);
      });
  }

  /* ---- human review ---------------------------------------------------------------------- */

  /* The review queue's order (SPEC §6): the cases a person is most needed for first. */
  var QUEUE = [
    { name: "borderline", verdicts: ["borderline"] },
    { name: "failed", verdicts: ["fail", "error"] },
    { name: "the rest", verdicts: ["pass"] },
  ];
  var QUEUE_PAGE = 20;  /* results fetched at a time: a 100,000-case run is never loaded whole */

  function reviewsOf(runId) { return api("/api/runs/" + enc(runId) + "/reviews"); }
  function reviewHref(runId) { return runHref(runId) + "/review"; }

  function reviewMap(list) {
    var map = {};
    list.items.forEach(function (review) { map[review.case_id] = review; });
    return map;
  }

  function when(iso) { return iso.replace("T", " ").slice(0, 19) + " UTC"; }

  /* A review in full: verdict, who, when and the note. */
  function reviewBox(review) {
    return el("div", { class: "review-box human-" + review.verdict, "data-human": review.verdict },
      el("strong", { text: "Human review: " }),
      el("span", { class: "badge v-" + review.verdict, text: review.verdict }),
      el("span", { class: "muted", text: (review.reviewer ? " by " + review.reviewer : "") + " · " + when(review.reviewed_at) }),
      review.note ? el("pre", { class: "review-note", text: review.note }) : null);
  }

  /* The run's reviewed counts, as `assay runs show` prints them, and the way to the queue. */
  function reviewSummary(runId, list) {
    return el("p", { class: "review-summary" }, el("strong", { text: "Human review " }),
      el("span", { class: "review-counts", text: V.reviewCounts(list) }), " · ",
      el("a", { href: reviewHref(runId), text: "open the review queue" }));
  }

  var KEYS = [
    ["p", "pass: record a pass and go to the next case"],
    ["f", "fail: record a fail and go to the next case"],
    ["c", "write a note (Esc leaves the note field)"],
    ["n or j", "next case"],
    ["k", "previous case"],
    ["?", "show or hide these keys"],
  ];

  function typing(target) {
    return Boolean(target) && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" ||
                               target.tagName === "SELECT" || target.isContentEditable);
  }

  function reviewPage() {
    var runId = body.dataset.runId;
    var params = new URLSearchParams(window.location.search);
    Promise.all([api("/api/runs/" + enc(runId)), api("/api/runs/" + enc(runId) + "/facets"), reviewsOf(runId)])
      .then(function (answers) { reviewQueue(answers[0], answers[1], answers[2], Number(params.get("at")) || 1); })
      .catch(function (error) { show([crumbs([["Runs", "/"], [runId, runHref(runId)], ["review", null]]), failure(error)]); });
  }

  function reviewQueue(run, facets, list, at) {
    var reviews = reviewMap(list);
    var groups = QUEUE.map(function (group) {
      var count = group.verdicts.reduce(function (sum, v) { return sum + (facets.verdicts[v] || 0); }, 0);
      return { name: group.name, verdicts: group.verdicts, count: count };
    });
    var total = groups.reduce(function (sum, g) { return sum + g.count; }, 0);
    var pages = {};
    var state = { pos: Math.min(Math.max(at - 1, 0), Math.max(total - 1, 0)), item: null, busy: false, serial: 0 };

    var reviewer = el("input", { name: "reviewer", type: "text", autocomplete: "name", placeholder: "your name",
                                 "aria-label": "reviewer" });
    reviewer.value = localStorage.getItem(REVIEWER_KEY) || "";
    reviewer.addEventListener("input", function () {
      if (reviewer.value) localStorage.setItem(REVIEWER_KEY, reviewer.value);
      else localStorage.removeItem(REVIEWER_KEY);
    });
    var progress = el("span", { class: "review-progress" });
    var where = el("span", { class: "queue-position muted" });
    var caseBox = el("div", { class: "review-case" });
    var machine = el("p", { class: "machine-verdict" });
    var current = el("div", { class: "current-review" });
    var note = el("textarea", { name: "note", rows: 4, placeholder: "why (optional)", "aria-label": "note" });
    var passButton = el("button", { type: "button", class: "verdict-pass", text: "Pass (p)" });
    var failButton = el("button", { type: "button", class: "verdict-fail", text: "Fail (f)" });
    var prev = el("button", { type: "button", text: "← previous (k)" });
    var next = el("button", { type: "button", text: "next (n) →" });
    var status = el("p", { class: "status", role: "status" });
    var token = el("input", { name: "token", type: "password", autocomplete: "off", "aria-label": "API token" });
    var tokenForm = el("form", { class: "token-form", hidden: true },
      el("label", null, "API token ", token),
      el("button", { type: "submit", class: "primary", text: "Use this token" }),
      el("span", { class: "muted", text: " kept for this browser tab only, as on the Settings page" }));
    var keys = el("div", { class: "review-keys panel", hidden: true, role: "note" },
      el("h4", { text: "Keys" }),
      el("dl", null, KEYS.map(function (k) { return [el("dt", null, el("kbd", { text: k[0] })), el("dd", { text: k[1] })]; })),
      el("p", { class: "muted", text: "The keys do nothing while you type in a field." }));

    var side = el("aside", { class: "review-side" },
      machine, current,
      el("div", { class: "verdict-buttons" }, passButton, failButton),
      el("label", { class: "note-label" }, "Note", note),
      status, tokenForm,
      el("div", { class: "pager" }, prev, next),
      el("p", { class: "muted" }, "Press ", el("kbd", { text: "?" }), " for the keys."),
      keys);
    show([crumbs([["Runs", "/"], [run.suite + " " + run.id, runHref(run.id)], ["review", null]]),
          el("h1", null, "Review ", el("span", { class: "mono", text: run.id })),
          el("div", { class: "toolbar" }, el("label", null, "Reviewer ", reviewer), progress, where),
          total ? el("div", { class: "review-layout" }, caseBox, side)
                : el("p", { class: "empty", text: "This run has no stored cases to review." })]);
    drawProgress();
    if (!total) return;

    function drawProgress() {
      progress.textContent = "reviewed " + Object.keys(reviews).length + " of " + total;
    }

    function locate(pos) {
      for (var g = 0; g < groups.length; g++) {
        if (pos < groups[g].count) return { group: g, offset: pos };
        pos -= groups[g].count;
      }
      return null;
    }

    /* The case at a queue position, fetched a page of one group at a time. */
    function caseAt(pos) {
      var spot = locate(pos);
      var number = Math.floor(spot.offset / QUEUE_PAGE) + 1;
      var key = spot.group + ":" + number;
      if (!pages[key]) {
        pages[key] = api("/api/runs/" + enc(run.id) + "/results" + query({
          verdict: groups[spot.group].verdicts, sort: "seq", page: number, page_size: QUEUE_PAGE,
        })).then(function (page) { return page.items; });
        pages[key].catch(function () { delete pages[key]; });
      }
      return pages[key].then(function (items) { return { item: items[spot.offset % QUEUE_PAGE] || null, spot: spot }; });
    }

    function drawReview() {
      while (current.firstChild) current.removeChild(current.firstChild);
      var review = state.item && reviews[state.item.case_id];
      if (review) {
        current.appendChild(reviewBox(review));
        current.appendChild(el("p", { class: "muted", text: "A new verdict replaces this review." }));
      } else current.appendChild(el("p", { class: "muted", text: "Not reviewed yet." }));
    }

    /* Show the case at `pos`; moving by hand clears the last verdict's message. */
    function go(pos, keepStatus) {
      if (pos < 0 || pos >= total) return;
      if (!keepStatus && tokenForm.hidden) { status.className = "status"; status.textContent = ""; }
      var mine = ++state.serial;
      state.pos = pos;
      state.item = null;
      passButton.disabled = failButton.disabled = true;
      prev.disabled = pos <= 0;
      next.disabled = pos >= total - 1;
      window.history.replaceState(null, "", "?at=" + (pos + 1));
      caseAt(pos).then(function (found) {
        if (mine !== state.serial) return;
        var group = groups[found.spot.group];
        where.textContent = "case " + (pos + 1) + " of " + total + " · " + group.name + " " +
          (found.spot.offset + 1) + " of " + group.count;
        while (caseBox.firstChild) caseBox.removeChild(caseBox.firstChild);
        if (!found.item) {  /* the run changed since the page opened */
          caseBox.appendChild(el("p", { class: "empty", text: "No case here any more: reload the queue." }));
          return;
        }
        state.item = found.item;
        if (caseBox.getAttribute("data-case-id") !== null) window.scrollTo(0, 0);  /* a new case reads from its top */
        caseBox.setAttribute("data-case-id", found.item.case_id);
        caseBox.appendChild(el("p", null, el("a", { href: caseHref(run.id, found.item.case_id), text: "open the case page" })));
        caseBox.appendChild(V.casePanel(found.item));
        while (machine.firstChild) machine.removeChild(machine.firstChild);
        machine.appendChild(document.createTextNode("The machine said "));
        machine.appendChild(V.verdictBadge(found.item.verdict));
        machine.appendChild(document.createTextNode(" (score " + V.score(found.item.score) + ")"));
        var review = reviews[found.item.case_id];
        note.value = review ? review.note : "";
        drawReview();
        passButton.disabled = failButton.disabled = false;
      }).catch(function (error) {
        if (mine !== state.serial) return;
        while (caseBox.firstChild) caseBox.removeChild(caseBox.firstChild);
        caseBox.appendChild(failure(error));
      });
    }

    function record(verdict) {
      var item = state.item;
      if (!item || state.busy) return;
      state.busy = true;
      status.className = "status";
      status.textContent = "recording…";
      api("/api/runs/" + enc(run.id) + "/results/" + enc(item.case_id) + "/review",
          { method: "PUT", body: { verdict: verdict, note: note.value, reviewer: reviewer.value } })
        .then(function (review) {
          var replaced = Boolean(reviews[item.case_id]);
          reviews[review.case_id] = review;
          drawProgress();
          status.className = "status saved";
          status.textContent = replaced ? "Replaced the review of " + item.case_id + ": now " + verdict + "."
                                        : "Recorded " + verdict + " for " + item.case_id + ".";
          tokenForm.hidden = true;
          if (state.pos < total - 1) go(state.pos + 1, true);
          else {
            drawReview();
            status.textContent += " That was the last case of the queue.";
          }
        }).catch(function (error) {
          status.className = "status bad";
          if (error.status === 401 || error.status === 403) {
            status.textContent = "Not recorded: " + error.message.replace(/\.$/, "") +
              ". This server needs its API token to record reviews: enter it below, then press the verdict again.";
            tokenForm.hidden = false;
            token.focus();
          } else status.textContent = "Not recorded: " + error.message;
        }).then(function () { state.busy = false; });
    }

    passButton.addEventListener("click", function () { record("pass"); });
    failButton.addEventListener("click", function () { record("fail"); });
    prev.addEventListener("click", function () { go(state.pos - 1); });
    next.addEventListener("click", function () { go(state.pos + 1); });
    token.value = sessionStorage.getItem(TOKEN_KEY) || "";
    tokenForm.addEventListener("submit", function (event) {
      event.preventDefault();
      if (token.value) sessionStorage.setItem(TOKEN_KEY, token.value);
      else sessionStorage.removeItem(TOKEN_KEY);
      tokenForm.hidden = true;
      status.className = "status";
      status.textContent = "Token set for this tab: press p or f again.";
      token.blur();
    });
    document.addEventListener("keydown", function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (typing(event.target)) {
        if (event.key === "Escape") event.target.blur();
        return;
      }
      var act = {
        p: function () { record("pass"); }, f: function () { record("fail"); },
        n: function () { go(state.pos + 1); }, j: function () { go(state.pos + 1); },
        k: function () { go(state.pos - 1); }, c: function () { note.focus(); },
        "?": function () { keys.hidden = !keys.hidden; },
        Escape: function () { keys.hidden = true; },
      }[event.key];
      if (!act) return;
      event.preventDefault();  /* the `c` that focuses the note is not typed into it */
      act();
    });
    go(state.pos, true);
  }

  /* ---- compare -------------------------------------------------------------------------- */

  var THRESHOLDS = [
    ["max_pass_rate_drop", "max pass-rate drop (0–1)"],
    ["max_avg_score_drop", "max mean-score drop (0–1)"],
    ["max_latency_increase_pct", "max latency increase (%)"],
    ["case_score_delta", "case score delta (0–1)"],
  ];

  function signed(value, digits, suffix) {
    if (value === null || value === undefined) return "—";
    return (value > 0 ? "+" : "") + value.toFixed(digits) + (suffix || "");
  }

  function deltaClass(value) { return value < 0 ? "delta-neg" : value > 0 ? "delta-pos" : ""; }

  function compareResult(doc) {
    var s = doc.summary;
    /* Every score and rate change in one unit: points on the 0–100 scale. */
    function pts(fraction) { return fraction === null || fraction === undefined ? null : fraction * 100; }
    function pctOf(fraction) { return fraction === null || fraction === undefined ? "—" : V.pct(fraction * 100); }
    var rows = [
      ["pass rate", pctOf(s.base_pass_rate), pctOf(s.head_pass_rate), pts(s.pass_rate_delta), " pt"],
      ["mean score", pctOf(s.base_avg_score), pctOf(s.head_avg_score), pts(s.avg_score_delta), " pt"],
    ];
    var table = el("table", { class: "compare-summary" },
      el("thead", null, el("tr", null, ["", "base", "head", "change"].map(function (h) { return el("th", { text: h }); }))),
      el("tbody", null, rows.map(function (r) {
        return el("tr", null, el("td", { text: r[0] }), el("td", { class: "num", text: r[1] }),
          el("td", { class: "num", text: r[2] }),
          el("td", { class: "num " + deltaClass(r[3]), text: signed(r[3], 1, r[4]) }));
      }), el("tr", { class: "latency" }, el("td", { text: "mean latency" }),
            el("td", { class: "num", text: V.duration(s.base_mean_latency_ms) }),
            el("td", { class: "num", text: V.duration(s.head_mean_latency_ms) }),
            /* slower is worse: a rise shows as a loss */
            el("td", { class: "num " + deltaClass(-(s.latency_increase_pct || 0)),
                       text: s.latency_increase_pct === null || s.latency_increase_pct === undefined ? "—" : signed(s.latency_increase_pct, 1, "%") }))));
    /* what `assay compare` prints as warning: / note: lines (other suites, cached shares,
       an exceeded gate not flagged) */
    var warnings = (doc.warnings || []).length
      ? el("ul", { class: "compare-warnings" }, doc.warnings.map(function (w) { return el("li", { text: "warning: " + w }); })) : null;
    var notes = (s.notes || []).length
      ? el("ul", { class: "compare-notes muted" }, s.notes.map(function (n) { return el("li", { text: "note: " + n }); })) : null;
    var stats = doc.statistics || {};
    var ci = stats.mean_delta_ci95;
    var verdict = el("p", null, el("span", { class: "badge " + (s.regression_detected ? "status-failed" : "status-passed"),
      text: s.regression_detected ? "REGRESSION" : "NO REGRESSION" }));
    var reasons = (s.reasons || []).length
      ? el("ul", { class: "reasons" }, s.reasons.map(function (r) { return el("li", { text: r }); })) : null;
    var statistics = el("p", { class: "muted" },
      "mean score change, paired bootstrap 95% interval: " +
      (ci ? "[" + signed(ci[0] * 100, 1) + ", " + signed(ci[1] * 100, 1) + "] pt" : "—") +
      " · exact McNemar test on pass/fail flips: p = " +
      (stats.mcnemar_p === null || stats.mcnemar_p === undefined ? "—" : stats.mcnemar_p.toPrecision(3)));
    var thresholds = el("p", { class: "muted", text: "thresholds: " + Object.keys(doc.thresholds).map(function (k) {
      return k + " " + doc.thresholds[k]; }).join(", ") });
    return [el("h2", null, runLink(doc.base), " → ", runLink(doc.head)), verdict, reasons, warnings, notes, table, statistics, thresholds,
            el("h3", { text: "Cases" }), compareCases(doc)];
  }

  function compareCases(doc) {
    var statuses = ["regressed", "improved", "new", "removed", "unchanged"];
    var counts = {};
    doc.cases.forEach(function (c) { counts[c.status] = (counts[c.status] || 0) + 1; });
    var state = { status: "changed", page: 0 };
    var select = el("select", { name: "status", "aria-label": "case status" },
      el("option", { value: "changed", text: "changed (" + (doc.cases.length - (counts.unchanged || 0)) + ")" }),
      el("option", { value: "", text: "all (" + doc.cases.length + ")" }),
      statuses.map(function (st) { return el("option", { value: st, text: st + " (" + (counts[st] || 0) + ")" }); }));
    var tbody = el("tbody");
    var info = el("span", { class: "muted" });
    var prev = el("button", { type: "button", text: "← previous" });
    var next = el("button", { type: "button", text: "next →" });
    var size = 50;
    function draw() {
      var rows = doc.cases.filter(function (c) {
        return state.status === "" || (state.status === "changed" ? c.status !== "unchanged" : c.status === state.status);
      });
      rows.sort(function (a, b) {  /* largest drops first, then by id */
        return (a.score_delta || 0) - (b.score_delta || 0) || (a.case_id < b.case_id ? -1 : a.case_id > b.case_id ? 1 : 0);
      });
      while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
      if (!rows.length) tbody.appendChild(el("tr", null, el("td", { colspan: 7, class: "empty", text: "no case matches" })));
      rows.slice(state.page * size, (state.page + 1) * size).forEach(function (c) {
        var run = c.status === "removed" ? doc.base : doc.head;
        tbody.appendChild(el("tr", { class: "compare-row", "data-case-id": c.case_id, "data-status": c.status },
          el("td", null, el("a", { href: caseHref(run, c.case_id), class: "mono", text: c.case_id })),
          el("td", { text: c.status }),
          el("td", null, c.base_verdict ? V.verdictBadge(c.base_verdict) : "—"),
          el("td", null, c.head_verdict ? V.verdictBadge(c.head_verdict) : "—"),
          el("td", { class: "num mono", text: V.score(c.base_score) }),
          el("td", { class: "num mono", text: V.score(c.head_score) }),
          el("td", { class: "num mono " + deltaClass(c.score_delta || 0),
                     text: signed(c.score_delta === null || c.score_delta === undefined ? null : c.score_delta * 100, 1, " pt") })));
      });
      var pages = Math.max(1, Math.ceil(rows.length / size));
      prev.disabled = state.page <= 0;
      next.disabled = state.page >= pages - 1;
      info.textContent = rows.length + " case(s) · page " + (state.page + 1) + " of " + pages;
    }
    select.addEventListener("change", function () { state.status = select.value; state.page = 0; draw(); });
    prev.addEventListener("click", function () { state.page--; draw(); });
    next.addEventListener("click", function () { state.page++; draw(); });
    draw();
    return el("div", null, el("div", { class: "toolbar" }, select),
      el("table", { class: "compare-cases" },
        el("thead", null, el("tr", null, ["Case", "Status", "Base", "Head", "Base score", "Head score", "Change (pt)"].map(function (h, i) {
          return el("th", { class: i >= 4 ? "num" : "", text: h }); }))), tbody),
      el("div", { class: "pager" }, prev, next, info));
  }

  function comparePage() {
    var params = new URLSearchParams(window.location.search);
    var form = el("form", { class: "compare-form", method: "get", action: "/compare" },
      el("label", null, "base run", el("input", { class: "run", name: "base", value: params.get("base") || "", placeholder: "run id, prefix or baseline", required: true })),
      el("label", null, "head run", el("input", { class: "run", name: "head", value: params.get("head") || "", placeholder: "run id or prefix", required: true })),
      THRESHOLDS.map(function (t) {
        return el("label", null, t[1], el("input", { name: t[0], type: "number", step: "any", min: 0, value: params.get(t[0]) || "" }));
      }),
      el("button", { type: "submit", class: "primary", text: "Compare" }));
    var result = el("div", { class: "compare-result" });
    show([el("h1", { text: "Compare runs" }), form, result]);
    if (!params.get("base") || !params.get("head")) return;
    var request = { base: params.get("base"), head: params.get("head") };
    THRESHOLDS.forEach(function (t) { if (params.get(t[0])) request[t[0]] = params.get(t[0]); });
    api("/api/runs/compare" + query(request)).then(function (doc) {
      compareResult(doc).forEach(function (node) { if (node) result.appendChild(node); });
    }).catch(function (error) { result.appendChild(failure(error)); });
  }

  /* ---- settings ------------------------------------------------------------------------- */

  function settingsPage() {
    var input = el("input", { name: "threshold", type: "number", min: 0, max: 1, step: 0.01, required: true });
    var token = el("input", { name: "token", type: "password", autocomplete: "off",
                              placeholder: "only when the server asks for one" });
    token.value = sessionStorage.getItem(TOKEN_KEY) || "";
    var status = el("p", { class: "status", role: "status" });
    var form = el("form", { class: "settings" },
      el("label", null, "Studio threshold (0–1)", input,
         el("span", { class: "muted", text: "Drawn as a reference line on the runs page's trend charts (each case's and run's score is marked against its own threshold). Stored as studio.threshold in .assay/config.yaml." })),
      el("label", null, "API token", token,
         el("span", { class: "muted", text: "Needed to save when the server listens beyond this machine (ASSAY_API_TOKEN); kept for this browser tab only." })),
      el("div", null, el("button", { type: "submit", class: "primary", text: "Save" })), status);
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      if (token.value) sessionStorage.setItem(TOKEN_KEY, token.value);
      else sessionStorage.removeItem(TOKEN_KEY);
      status.className = "status";
      status.textContent = "saving…";
      api("/api/config", { method: "PUT", body: { threshold: Number(input.value) } }).then(function (saved) {
        input.value = saved.threshold;
        status.className = "status saved";
        status.textContent = "Saved: the studio threshold is " + saved.threshold + ".";
      }).catch(function (error) {
        status.className = "status bad";
        status.textContent = error.status === 401 || error.status === 403
          ? "Not saved: " + error.message + ". Enter the server's API token above."
          : "Not saved: " + error.message;
      });
    });
    show([el("h1", { text: "Settings" }), form]);
    api("/api/config").then(function (config) { input.value = config.threshold; })
      .catch(function (error) { main.appendChild(failure(error)); });
  }

  var PAGES = { runs: runsPage, run: runPage, case: casePage, review: reviewPage, compare: comparePage,
                settings: settingsPage };
  var nav = { runs: "runs", run: "runs", case: "runs", review: "runs", compare: "compare",
              settings: "settings" }[body.dataset.page];
  var active = document.querySelector('nav.top a[data-nav="' + nav + '"]');
  if (active) active.classList.add("active");
  PAGES[body.dataset.page]();
})();
