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
    var line = V.el("p", { class: "review-summary" }, V.el("strong", { text: "Human review " }),
      V.el("span", { class: "review-counts", text: V.reviewCounts(reviews) }));
    function mark(item) { return byCase[item.case_id] ? V.reviewMark(byCase[item.case_id]) : null; }
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
