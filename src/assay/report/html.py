"""The HTML report: one self-contained file (no network) that renders stored runs in a browser.

Each run is embedded as JSON in a `<script type="application/json">` block and drawn by the
shared views (`assets/assay-view.js`, also served by the studio): summary, score histogram, a
sortable and filterable case table, and a case panel with transcript, tool calls, expected
outcomes and every grader's Details.

Model output cannot inject markup, by two independent defences:

- in the data block every `<` is written as the JSON escape `\\u003c`, so no value can close the
  block, and the views put values on the page only as text nodes;
- a Content-Security-Policy allows only the report's own scripts and styles (by hash) and no
  network at all, so even markup that got onto the page could not run or call out.

Cases are streamed into the file one at a time; a 100,000-case run is never held in memory
here (the browser does hold the page it is given).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import html
import json
from collections.abc import Iterator, Mapping, Sequence
from importlib import resources
from typing import TextIO

from assay.report.junit import CaseSource
from assay.results import JSON, RunResult

__all__ = ["content_security_policy", "html_chunks", "write_html"]

_ASSETS = ("assay-view.css", "assay-view.js", "report.js")


@functools.cache
def _asset(name: str) -> str:
    return (resources.files("assay.report") / "assets" / name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _script() -> str:
    return _asset("assay-view.js") + "\n" + _asset("report.js")


def content_security_policy() -> str:
    """The report's policy: its own inline script and style (by hash), nothing else."""
    return (
        "default-src 'none'; "
        f"script-src {_sha256(_script())}; "
        f"style-src {_sha256(_asset('assay-view.css'))}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )


def _data(text: str) -> str:
    """JSON safe inside a script element: `<` (hence `</script>` and `<!--`) escaped."""
    return text.replace("<", "\\u003c")


def _title(runs: Sequence[tuple[RunResult, CaseSource]]) -> str:
    suites = ", ".join(dict.fromkeys(run.suite for run, _ in runs))
    return f"assay report: {suites}" if suites else "assay report"


def html_chunks(
    runs: Sequence[tuple[RunResult, CaseSource]],
    reviews: Mapping[str, JSON] | None = None,
) -> Iterator[str]:
    """The report as text chunks, case by case, for a stream to write as they come.

    `reviews` holds, by run id, how people reviewed the run (`GET /api/runs/{id}/reviews`'s
    document: counts, reviewed pass rate and the reviews); the page shows them beside the
    machine's verdicts."""
    reviews = reviews or {}
    yield (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy()}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="assay">\n'
        f"<title>{html.escape(_title(runs))}</title>\n"
        f"<style>{_asset('assay-view.css')}</style>\n</head>\n<body>\n"
        '<main id="report">\n<h1>assay report</h1>\n'
        "<noscript><p>This report draws its tables with JavaScript; "
        "open it in a browser with scripts enabled, or use the Markdown or JSON report."
        "</p></noscript>\n</main>\n"
    )
    for run, cases in runs:
        head = run.model_dump_json(exclude={"results"})
        reviewed = ""
        if run.id in reviews:
            reviewed = ',"reviews":' + _data(json.dumps(reviews[run.id], ensure_ascii=False))
        yield (
            f'<script type="application/json" class="assay-run">{{"run":{_data(head)}{reviewed},'
            '"results":['
        )
        for index, case in enumerate(cases()):
            yield ("," if index else "") + _data(case.model_dump_json())
        yield "]}</script>\n"
    yield f"<script>{_script()}</script>\n</body>\n</html>\n"


def write_html(
    out: TextIO,
    runs: Sequence[tuple[RunResult, CaseSource]],
    reviews: Mapping[str, JSON] | None = None,
) -> None:
    """Write the report of `runs` (each with a callable that yields its case results), with
    their human reviews by run id (see `html_chunks`)."""
    out.writelines(html_chunks(runs, reviews))
