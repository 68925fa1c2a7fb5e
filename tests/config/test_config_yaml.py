"""YAML loading: syntax errors at line and column, and documents that would explode (aliases,
recursion, nesting) refused with one located issue before they cost time or memory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay.config import load_suite
from assay.errors import ConfigError
from tests.conftest import write

HEAD = "name: demo\ntarget: {type: fake, responses: [hi]}\ntests:\n"


def _errors(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_suite(path)
    return [str(issue) for issue in info.value.issues]


def _laughs(levels: int = 9, width: int = 9) -> str:
    """The classic "billion laughs": each anchor is a list of `width` aliases of the last."""
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return "name: bomb\n" + "\n".join(lines) + f"\ntests: *a{levels - 1}\n"


SYNTAX_ERRORS = {
    # A line indented one space short of its siblings: the mistake is that line's first key.
    "bad-indentation": (
        HEAD + "  - id: a\n    input: hi\n   assertions: [{type: contains, value: hi}]\n",
        "s.eval.yaml:6:4: invalid YAML: did not find expected '-' indicator (while parsing a "
        "block collection, from line 4 column 3). Check the indentation and quoting of this "
        "line and the one before",
    ),
    # The parser stops at the end of the file; the mistake is where the quote opens.
    "unclosed-quote": (
        HEAD + '  - id: a\n    input: "hi\n    assertions: []\n  - id: b\n    input: x\n',
        "s.eval.yaml:5:12: invalid YAML: the quoted text starting here is never closed (the "
        "file ends at line 9). Close it",
    ),
    "tab": (
        HEAD + "  - id: a\n\tinput: hi\n",
        "s.eval.yaml:5:1: invalid YAML: found a tab character that violates indentation (while "
        "scanning a plain scalar, from line 4 column 9). Indent with spaces: YAML does not "
        "allow tabs in indentation",
    ),
    "duplicate-key": (
        HEAD + "  - id: a\n    input: hi\n    input: ho\n",
        "s.eval.yaml:6:5 tests[0].input: duplicate key 'input' (first defined on line 5); "
        "remove one of them",
    ),
    "colon-in-value": (
        HEAD + "  - id: a\n    input: hi: there\n",
        "s.eval.yaml:5:14: invalid YAML: mapping values are not allowed in this context. "
        "Quote a value that contains ': '",
    ),
}


@pytest.mark.parametrize("case", sorted(SYNTAX_ERRORS))
def test_i21_12_yaml_syntax_errors_point_at_line_and_column(tmp_path: Path, case: str) -> None:
    body, expected = SYNTAX_ERRORS[case]
    assert _errors(write(tmp_path / "s.eval.yaml", body)) == [expected]


_MEASURE = """
import json, resource, sys, time
from assay.config import load_suite
from assay.errors import ConfigError
started = time.perf_counter()
try:
    load_suite(sys.argv[1])
    outcome = "loaded"
except ConfigError as exc:
    outcome = str(exc)
seconds = time.perf_counter() - started
try:  # this process's own peak: Linux keeps ru_maxrss across exec, so it starts at pytest's
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
except OSError:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"outcome": outcome, "seconds": seconds, "max_rss_kb": peak}))
"""


def _measured_load(path: Path) -> dict[str, object]:
    """Load a suite in a fresh interpreter (under a 1.5 GB address-space limit, so a regression
    fails instead of taking the machine) and report its outcome, time and peak memory."""
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000,) * 2)\n"
    done = subprocess.run(
        [sys.executable, "-c", limit + _MEASURE, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize(("levels", "size", "where"), [(9, 9, "7 a5[0]"), (10, 10, "6 a4[7]")])
def test_i22_7_billion_laughs_is_refused_at_once_with_little_memory(
    tmp_path: Path, levels: int, size: int, where: str
) -> None:
    path = write(tmp_path / "bomb.eval.yaml", _laughs(levels, size))
    assert len(path.read_bytes()) < 700  # the reported attack files were 495 and 672 bytes
    measured = _measured_load(path)
    assert measured["outcome"] == (
        f"bomb.eval.yaml:{where}: YAML aliases expand this file past 100,000 values; this one "
        f"repeats the anchor on line {int(where[0]) - 1}. A few bytes of anchors and aliases "
        "can stand for billions of values: write the data out, or use fewer aliases of large "
        "anchors"
    )
    # Before: 9 levels took 11.8 s and 608 MB, 10 levels more than 2 GB. Now ~0.1 s, ~60 MB
    # (the interpreter with assay imported is ~45 MB); bounds with margin for a loaded machine.
    assert isinstance(measured["seconds"], float) and measured["seconds"] < 3
    assert isinstance(measured["max_rss_kb"], int) and measured["max_rss_kb"] < 200_000


def test_i22_7_merge_keys_cannot_multiply_either(tmp_path: Path) -> None:
    lines = ["b0: &b0 {" + ", ".join(f"k{j}: lol" for j in range(9)) + "}"]
    lines += [f"b{i}: &b{i} {{<<: [{', '.join([f'*b{i - 1}'] * 9)}]}}" for i in range(1, 9)]
    path = write(tmp_path / "m.eval.yaml", "name: m\n" + "\n".join(lines) + "\ntests: []\n")
    measured = _measured_load(path)
    assert "YAML aliases expand this file past 100,000 values" in str(measured["outcome"])
    assert isinstance(measured["seconds"], float) and measured["seconds"] < 3


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "name: rec\ntests: &t [*t]\n",
            "s.eval.yaml:2 tests[0]: recursive YAML alias: the anchor on line 2 contains "
            "itself, so its value would be infinite; YAML data for assay must be a tree",
        ),
        (
            "name: rec\nx: &m {a: [*m]}\ntests: []\n",
            "s.eval.yaml:2 x.a[0]: recursive YAML alias: the anchor on line 2 contains itself, "
            "so its value would be infinite; YAML data for assay must be a tree",
        ),
        (
            "name: rec\nx: &m {a: 1, <<: *m}\ntests: []\n",
            "s.eval.yaml:2 x: recursive YAML merge: the mapping on line 2 is merged into itself",
        ),
    ],
)
def test_i22_13_recursive_yaml_alias_is_a_located_error(
    tmp_path: Path, body: str, expected: str
) -> None:
    assert _errors(write(tmp_path / "s.eval.yaml", body)) == [expected]


@pytest.mark.parametrize(
    ("depth", "expected"),
    [
        # Within what the parser allows, past what a suite needs (and Python's recursion).
        (995, "s.eval.yaml:2 tests[0][0][0][0][0][0][0]: nested deeper than 100 levels"),
        (
            5000,
            "s.eval.yaml:2:1007: invalid YAML: nested deeper than the YAML parser allows "
            "(1,000 levels). Flatten the data",
        ),
    ],
)
def test_i22_13_absurd_nesting_is_a_located_error(
    tmp_path: Path, depth: int, expected: str
) -> None:
    body = "name: deep\ntests: " + "[" * depth + "]" * depth + "\n"
    assert _errors(write(tmp_path / "s.eval.yaml", body)) == [expected]


def test_i22_7_anchors_for_shared_assertions_still_load(tmp_path: Path) -> None:
    """The legitimate use: one anchored list of graders (and a merged mapping) on every test of
    a large suite, adding a few values per value written."""
    checks = ", ".join(f"{{type: contains, value: h, weight: {w}}}" for w in range(1, 6))
    first = (
        f"  - {{id: t0, input: hi, assertions: &checks [{checks}],\n"
        "      metadata: &meta {team: support, owner: qa, area: billing}}\n"
    )
    tests = "".join(
        f"  - {{id: t{i}, input: hi, assertions: *checks, metadata: {{<<: *meta, n: {i}}}}}\n"
        for i in range(1, 3000)
    )
    body = HEAD + first + tests
    loaded = load_suite(write(tmp_path / "s.eval.yaml", body))
    assert len(loaded.suite.tests) == 3000
    last = loaded.suite.tests[2999]
    assert [g.weight for g in last.assertions] == [1, 2, 3, 4, 5]
    assert last.metadata == {"team": "support", "owner": "qa", "area": "billing", "n": 2999}
