/* The HTML report: each run's data sits in a JSON data block of class "assay-run" (never
 * executed; "<" is written as \u003c so no value can close it) and is rendered here with the
 * shared views. */
"use strict";
(function () {
  var V = window.AssayView;
  var main = document.getElementById("report");
  var blocks = document.querySelectorAll("script.assay-run");
  Array.prototype.forEach.call(blocks, function (block) {
    var data = JSON.parse(block.textContent);
    var run = data.run, results = data.results;
    var section = V.el("section", { class: "run", "data-run-id": run.id });
    V.runHeader(run).forEach(function (node) { section.appendChild(node); });
    section.appendChild(V.summaryCards(run));
    section.appendChild(V.histogram(V.histogramCounts(results)));
    section.appendChild(V.el("h3", { text: "Cases" }));
    section.appendChild(V.caseTable(V.memorySource(results)));
    main.appendChild(section);
  });
  if (!blocks.length) main.appendChild(V.el("p", { class: "empty", text: "No runs in this report." }));
})();
