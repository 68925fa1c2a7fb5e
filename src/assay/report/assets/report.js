/* The HTML report: each run's data sits in a JSON data block of class "assay-run" (never
 * executed; "<" is written as \u003c so no value can close it) and is rendered here with the
 * shared views. */
"use strict";
(function () {
  var V = window.AssayView;

  /* How people reviewed the run (`assay review`, the studio's queue), beside the machine's
   * verdicts: the counts as `assay runs show` prints them, and a mark on each reviewed row. */
  function reviewed(reviews) {
    if (!reviews || !reviews.reviewed) return { line: null, mark: null };
    var byCase = {};
    reviews.items.forEach(function (review) { byCase[review.case_id] = review; });
    var text = "reviewed " + reviews.reviewed + " of " + reviews.cases + " cases: " +
      reviews.human_passed + " passed by people, the machine agreed on " + reviews.agreed;
    if (reviews.reviewed_pass_rate !== null)
      text += "; reviewed pass rate " + V.pct(reviews.reviewed_pass_rate * 100);
    var line = V.el("p", { class: "review-summary" }, V.el("strong", { text: "Human review " }),
      V.el("span", { class: "review-counts", text: text }));
    function mark(item) {
      var review = byCase[item.case_id];
      if (!review) return null;
      return V.el("span", { class: "review-mark human-" + review.verdict, "data-human": review.verdict,
        title: "reviewed: " + review.verdict + (review.reviewer ? " by " + review.reviewer : "") +
               (review.note ? " — " + review.note : ""),
        text: (review.verdict === "pass" ? "✓" : "✗") + " human" });
    }
    return { line: line, mark: mark };
  }
  var main = document.getElementById("report");
  var blocks = document.querySelectorAll("script.assay-run");
  Array.prototype.forEach.call(blocks, function (block) {
    var data = JSON.parse(block.textContent);
    var run = data.run, results = data.results;
    var section = V.el("section", { class: "run", "data-run-id": run.id });
    V.runHeader(run).forEach(function (node) { section.appendChild(node); });
    section.appendChild(V.summaryCards(run));
    var human = reviewed(data.reviews);
    if (human.line) section.appendChild(human.line);
    section.appendChild(V.histogram(V.histogramCounts(results)));
    section.appendChild(V.el("h3", { text: "Cases" }));
    section.appendChild(V.caseTable(V.memorySource(results), { mark: human.mark }));
    main.appendChild(section);
  });
  if (!blocks.length) main.appendChild(V.el("p", { class: "empty", text: "No runs in this report." }));
})();
