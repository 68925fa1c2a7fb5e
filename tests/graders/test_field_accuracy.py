"""The field-accuracy grader (SPEC §4): JSONPath fields compared exactly, numerically, as dates."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from tests.conftest import write
from tests.graders._grading import SPEC, load_errors
from tests.graders._grading import grade as grade_spec

from assay import EvalConfig, evaluate
from assay.results import Detail, GraderResult


def grade(
    fields: list[dict[str, Any]], output: str, *, expected: Any = None, **options: Any
) -> GraderResult:
    spec = {"type": "field-accuracy", "fields": fields, **options}
    return grade_spec(spec, output, expected=expected)


def one(field: dict[str, Any], output: Any, expected: Any) -> GraderResult:
    """Grade a single field `$.v` holding `output` against `expected`, both as JSON."""
    return grade([{"path": "$.v", **field}], json.dumps({"v": output}), expected={"v": expected})


def error_of(spec: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python({"type": "field-accuracy", **spec})
    errors = info.value.errors()
    assert len(errors) == 1, errors
    return str(errors[0]["msg"])


INVOICE = {"total": 19.99, "date": "2024-03-05", "customer": {"name": "Ana"}}


def test_every_field_matching_scores_one_with_a_detail_per_field() -> None:
    fields = [
        {"path": "$.total", "match": "numeric_tolerance"},
        {"path": "$.date", "match": "date"},
        {"path": "$.customer.name"},
    ]
    output = '{"total": 20.0, "date": "2024-03-05T09:30:00", "customer": {"name": "Ana"}}'
    result = grade(fields, output, expected=INVOICE)
    assert (result.score, result.verdict, result.error) == (1.0, "pass", None)
    assert result.hits == ["$.total matches", "$.date matches", "$.customer.name matches"]
    assert result.misses == []
    assert result.reasoning == "3 of 3 fields match"
    assert result.details == [
        Detail(check="field.$.total", passed=True, expected="19.99", actual="20.0"),
        Detail(
            check="field.$.date", passed=True, expected="2024-03-05", actual="2024-03-05T09:30:00"
        ),
        Detail(check="field.$.customer.name", passed=True, expected="Ana", actual="Ana"),
    ]


def test_score_is_the_weighted_fraction_of_matching_fields() -> None:
    fields = [
        {"path": "$.total", "match": "numeric_tolerance", "weight": 3},
        {"path": "$.date", "match": "date"},
        {"path": "$.customer.name"},
    ]
    output = '{"total": 19.99, "date": "2024-03-06", "customer": {"name": "ana"}}'
    result = grade(fields, output, expected=INVOICE)
    assert (result.score, result.verdict) == (0.6, "fail")
    assert result.misses == [
        "$.date is a different date",
        "$.customer.name differs from the expected value",
    ]
    assert result.reasoning == "1 of 3 fields match"


def test_all_or_nothing_scores_zero_when_one_field_misses() -> None:
    fields = [{"path": "$.total", "match": "numeric_tolerance"}, {"path": "$.customer.name"}]
    output = '{"total": 19.99, "customer": {"name": "Bo"}}'
    result = grade(fields, output, expected=INVOICE, aggregation="all_or_nothing")
    assert (result.score, result.verdict) == (0.0, "fail")
    both = '{"total": 19.99, "customer": {"name": "Ana"}}'
    assert grade(fields, both, expected=INVOICE, aggregation="all_or_nothing").score == 1.0


def test_a_weight_zero_field_is_reported_but_not_scored() -> None:
    fields = [{"path": "$.total", "match": "numeric_tolerance"}, {"path": "$.note", "weight": 0}]
    result = grade(fields, '{"total": 19.99}', expected={"total": 19.99, "note": "x"})
    assert result.score == 1.0
    assert result.reasoning == "1 of 1 fields match"
    assert result.details[1] == Detail(
        check="field.$.note", passed=False, expected="x", message="is missing from the output"
    )
    all_or_nothing = grade(
        fields,
        '{"total": 19.99}',
        expected={"total": 19.99, "note": "x"},
        aggregation="all_or_nothing",
    )
    assert all_or_nothing.score == 1.0


def test_a_missing_field_fails_that_field_only() -> None:
    result = grade(
        [{"path": "$.a"}, {"path": "$.b.c"}], '{"a": 1, "b": {}}', expected={"a": 1, "b": {"c": 2}}
    )
    assert result.score == 0.5
    assert result.misses == ["$.b.c is missing from the output"]
    assert result.details[1] == Detail(
        check="field.$.b.c", passed=False, expected="2", message="is missing from the output"
    )


# --- exact ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("actual", "expected", "matches"),
    [
        ({"x": [1, 2]}, {"x": [1, 2]}, True),
        ({"x": [2, 1]}, {"x": [1, 2]}, False),
        (True, 1, False),  # JSON booleans are not numbers
        ("19.99", 19.99, False),
        (2.0, 2, True),
        (None, None, True),
        ("Zoë", "Zoë", True),
        ("zoë", "Zoë", False),
    ],
)
def test_exact_is_json_equality(actual: Any, expected: Any, matches: bool) -> None:
    assert one({}, actual, expected).score == (1.0 if matches else 0.0)


def test_a_null_field_is_present_not_missing() -> None:
    result = one({}, None, "x")
    assert result.details == [
        Detail(
            check="field.$.v",
            passed=False,
            expected="x",
            actual="null",
            message="differs from the expected value",
        )
    ]


# --- numeric_tolerance -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("actual", "expected", "matches"),
    [
        (20.0, 19.99, True),  # the default tolerance 0.01 is inclusive despite float error
        (19.98, 20.0, False),
        (-5, -5.01, True),
        ("19.99", 19.99, True),  # a numeric string is read as a number
        (" 20 ", "20.005", True),
        (10**400, 1, False),  # beyond the float range: not a number
    ],
)
def test_numeric_tolerance_is_absolute_by_default(
    actual: Any, expected: Any, matches: bool
) -> None:
    assert one({"match": "numeric_tolerance"}, actual, expected).score == (1.0 if matches else 0.0)


def test_numeric_miss_says_by_how_much() -> None:
    result = one({"match": "numeric_tolerance", "tolerance": 0.5}, 21.5, 20)
    assert result.details[0].message == "is off by 1.5 (tolerance ±0.5)"
    assert result.misses == ["$.v is off by 1.5 (tolerance ±0.5)"]


def test_relative_tolerance_is_a_fraction_of_the_expected_value() -> None:
    field = {"match": "numeric_tolerance", "tolerance": 0.05, "relative": True}
    assert one(field, 1050, 1000).score == 1.0
    assert one(field, 950, 1000).score == 1.0
    result = one(field, 1075, 1000)
    assert result.score == 0.0
    assert result.details[0].message == "is off by 7.5% (tolerance ±5.0%)"


def test_relative_tolerance_around_zero_allows_nothing() -> None:
    field = {"match": "numeric_tolerance", "tolerance": 0.5, "relative": True}
    assert one(field, 0, 0).score == 1.0
    result = one(field, 0.001, 0)
    assert result.details[0].message == (
        "is off by 0.001 from 0 (a relative tolerance allows no difference from 0)"
    )


@pytest.mark.parametrize("actual", ["about 20", "", True, None, {"n": 20}])
def test_a_non_number_fails_the_numeric_field(actual: Any) -> None:
    result = one({"match": "numeric_tolerance"}, actual, 20)
    assert result.score == 0.0
    assert result.details[0].message == "is not a number"


def test_a_single_value_counts_as_a_one_item_list() -> None:
    assert one({"match": "numeric_tolerance"}, [20], 20).score == 1.0
    result = one({"match": "numeric_tolerance"}, [20, 21], 20)
    assert result.details[0].message == "has 2 values, expected 1"


# --- date -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("actual", "expected", "matches"),
    [
        ("2024-03-05", "2024-03-05", True),
        ("2024-03-05T23:59:00", "2024-03-05", True),  # a date-only side compares calendar dates
        ("2024-03-06T00:00:00", "2024-03-05", False),
        ("2024-03-05T10:00:00+01:00", "2024-03-05T09:00:00Z", True),  # the same instant
        ("2024-03-05T10:00:00+01:00", "2024-03-05T10:00:00Z", False),
        ("20240305", "2024-03-05", True),  # ISO 8601 basic format
    ],
)
def test_date_compares_instants_and_dates(actual: str, expected: str, matches: bool) -> None:
    assert one({"match": "date"}, actual, expected).score == (1.0 if matches else 0.0)


def test_a_naive_and_an_aware_time_never_match() -> None:
    result = one({"match": "date"}, "2024-03-05T10:00:00", "2024-03-05T10:00:00Z")
    assert result.details[0].message == (
        "has a UTC offset where the expected value has none (or the reverse)"
    )


def test_formats_are_tried_in_order_then_iso() -> None:
    field = {"match": "date", "formats": ["%d/%m/%Y", "%B %d, %Y"]}
    assert one(field, "05/03/2024", "2024-03-05").score == 1.0
    assert one(field, "March 5, 2024", "05/03/2024").score == 1.0
    assert one(field, "2024-03-05", "March 5, 2024").score == 1.0
    result = one(field, "5 March 2024", "2024-03-05")
    assert result.details[0].message == "is not a date in the given formats or ISO 8601"


def test_a_datetime_format_compares_instants() -> None:
    field = {"match": "date", "formats": ["%d.%m.%Y %H:%M"]}
    assert one(field, "05.03.2024 10:30", "2024-03-05T10:30:00").score == 1.0
    assert one(field, "05.03.2024 10:31", "2024-03-05T10:30:00").details[0].message == (
        "is a different instant"
    )


@pytest.mark.parametrize("actual", [20240305, None, "yesterday", "2024-02-30"])
def test_a_non_date_fails_the_date_field(actual: Any) -> None:
    result = one({"match": "date"}, actual, "2024-03-05")
    assert result.score == 0.0
    assert result.details[0].message == "is not a date in the given formats or ISO 8601"


# --- paths selecting several nodes, and list values -------------------------------------------


def test_a_wildcard_path_compares_every_selected_value_in_order() -> None:
    field = {"path": "$.items[*].price", "match": "numeric_tolerance"}
    expected = {"items": [{"price": 1.0}, {"price": 2.5}]}
    assert (
        grade([field], '{"items": [{"price": 1.001}, {"price": 2.5}]}', expected=expected).score
        == 1.0
    )
    result = grade([field], '{"items": [{"price": 1.0}, {"price": 2.7}]}', expected=expected)
    assert result.details[0].message == "item 1 is off by 0.2 (tolerance ±0.01)"
    result = grade([field], '{"items": [{"price": 1.0}]}', expected=expected)
    assert result.details[0].message == "has 1 value, expected 2"


def test_a_filter_selecting_one_node_compares_that_value() -> None:
    field = {"path": "$.lines[?@.sku == 'A'].qty", "expected": 2}
    assert (
        grade([field], '{"lines": [{"sku": "B", "qty": 5}, {"sku": "A", "qty": 2}]}').score == 1.0
    )


def test_a_list_of_dates_is_compared_item_by_item() -> None:
    result = one({"match": "date"}, ["2024-01-01", "2024-01-03"], ["2024-01-01", "2024-01-02"])
    assert result.details[0].message == "item 1 is a different date"


# --- where the expected value comes from -------------------------------------------------------


def test_an_explicit_expected_value_needs_no_expected_output() -> None:
    fields = [{"path": "$.ok", "expected": True}, {"path": "$.none", "expected": None}]
    assert grade(fields, '{"ok": true, "none": null}').score == 1.0
    assert grade(fields, '{"ok": 1, "none": null}').score == 0.5


def test_an_explicit_expected_value_wins_over_the_expected_output() -> None:
    fields = [{"path": "$.total", "expected": 5}]
    assert grade(fields, '{"total": 5}', expected={"total": 7}).score == 1.0


def test_a_json_string_expected_output_is_parsed() -> None:
    result = grade([{"path": "$.a"}], '{"a": "x"}', expected='{"a": "x"}')
    assert result.score == 1.0


@pytest.mark.parametrize(
    ("expected", "message"),
    [
        (
            None,
            "field-accuracy field '$.a' has no `expected` value and test 'c' has no "
            "expected_output; add a JSON expected_output or an `expected` to the field",
        ),
        (
            "plain text",
            "field-accuracy reads field '$.a' from the expected_output of test 'c', which is not "
            "JSON (line 1 column 1: Expecting value)",
        ),
        (
            {"b": 1},
            "field-accuracy field '$.a' matches nothing in the expected_output of test 'c'; fix "
            "the path or give the field an `expected` value",
        ),
    ],
)
def test_an_unavailable_expected_value_is_a_grader_error(expected: Any, message: str) -> None:
    result = grade([{"path": "$.a"}], '{"a": 1}', expected=expected)
    assert (result.score, result.verdict) == (None, "error")
    assert result.error is not None and result.error.message == message


def test_a_non_numeric_expected_output_value_is_a_grader_error() -> None:
    result = grade(
        [{"path": "$.a", "match": "numeric_tolerance"}], '{"a": 1}', expected={"a": "n/a"}
    )
    assert result.error is not None
    assert result.error.message == (
        "field-accuracy field '$.a': the expected_output of test 'c' holds n/a is not a number"
    )


# --- outputs that are not JSON, large, or unusual ----------------------------------------------


@pytest.mark.parametrize(
    ("output", "where"),
    [
        ("", "line 1 column 1: Expecting value"),
        ("The total is 19.99", "line 1 column 1: Expecting value"),
        ('{"total": NaN}', "NaN is not a JSON value"),
    ],
)
def test_non_json_output_fails_every_field(output: str, where: str) -> None:
    result = grade([{"path": "$.total", "expected": 1}, {"path": "$.x", "expected": 2}], output)
    assert (result.score, result.verdict, result.error) == (0.0, "fail", None)
    assert result.misses == [f"output is not valid JSON ({where})"]
    assert result.details == [
        Detail(
            check="field.$.total",
            passed=False,
            expected="1",
            message=f"output is not JSON ({where})",
        ),
        Detail(
            check="field.$.x", passed=False, expected="2", message=f"output is not JSON ({where})"
        ),
    ]


def test_unicode_keys_and_values() -> None:
    fields = [{"path": "$['名前']", "expected": "山田 ✓"}, {"path": "$.città", "expected": "Roma"}]
    result = grade(fields, '{"名前": "山田 ✓", "città": "Roma"}')
    assert result.score == 1.0
    assert [d.check for d in result.details] == ["field.$['名前']", "field.$.città"]


def test_a_huge_output_is_graded_quickly_with_truncated_details() -> None:
    output = json.dumps({"total": 3, "blob": "x" * 1_000_000})
    started = time.perf_counter()
    result = grade(
        [{"path": "$.total", "expected": 3}, {"path": "$.blob", "expected": "y"}], output
    )
    assert time.perf_counter() - started < 5.0
    assert result.score == 0.5
    assert result.details[1].actual == "x" * 79 + "…"


def test_negation_swaps_hits_and_misses() -> None:
    result = grade([{"path": "$.a", "expected": 1}], '{"a": 2}', negate=True)
    assert (result.score, result.verdict) == (1.0, "pass")
    assert result.hits == ["$.a differs from the expected value"]
    assert result.details[0].passed is True


# --- configuration ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"fields": []}, "List should have at least 1 item after validation, not 0"),
        (
            {"fields": [{"path": "total"}]},
            "Value error, invalid JSONPath 'total': expected '$', found 't', line 1, column 0; "
            "write e.g. '$.total' or '$.items[0].price'",
        ),
        (
            {"fields": [{"path": "$.a", "tolerance": 0.1}]},
            "Value error, `tolerance` applies only to `match: numeric_tolerance` (field '$.a' "
            "uses `match: exact`)",
        ),
        (
            {"fields": [{"path": "$.a", "match": "date", "relative": False}]},
            "Value error, `relative` applies only to `match: numeric_tolerance` (field '$.a' "
            "uses `match: date`)",
        ),
        (
            {"fields": [{"path": "$.a", "match": "numeric_tolerance", "formats": ["%Y"]}]},
            "Value error, `formats` applies only to `match: date` (field '$.a' uses "
            "`match: numeric_tolerance`)",
        ),
        (
            {
                "fields": [
                    {"path": "$.a", "match": "numeric_tolerance", "tolerance": 5, "relative": True}
                ]
            },
            "Value error, relative tolerance 5 is not a fraction; write 0.05 for ±5%",
        ),
        (
            {"fields": [{"path": "$.a", "match": "numeric_tolerance", "tolerance": -1}]},
            "Input should be greater than or equal to 0",
        ),
        (
            {"fields": [{"path": "$.a", "match": "date", "formats": ["YYYY-MM-DD"]}]},
            "Value error, date format 'YYYY-MM-DD' has no strptime directive; "
            "write e.g. '%Y-%m-%d'",
        ),
        (
            {"fields": [{"path": "$.a", "match": "date", "formats": ["%Y-%Q"]}]},
            "Value error, date format '%Y-%Q' is not a strptime format: 'Q' is a bad directive in "
            "format '%Y-%Q'",
        ),
        (
            {"fields": [{"path": "$.a"}, {"path": "$['a']"}]},
            "Value error, field '$['a']' is listed twice (also as '$.a')",
        ),
        (
            {"fields": [{"path": "$.a", "weight": 0}]},
            "Value error, every field has weight 0; give at least one field a weight > 0",
        ),
        (
            {"fields": [{"path": "$.a", "match": "numeric_tolerance", "expected": "lots"}]},
            "Value error, field '$.a': `expected` lots is not a number",
        ),
        (
            {"fields": [{"path": "$.a", "match": "date", "expected": "soon"}]},
            "Value error, field '$.a': `expected` soon is not a date in the given formats or "
            "ISO 8601",
        ),
        (
            {"fields": [{"path": "$.a", "match": "fuzzy"}]},
            "Input should be 'exact', 'numeric_tolerance' or 'date'",
        ),
        (
            {"fields": [{"path": "$.a"}], "aggregation": "mean"},
            "Input should be 'weighted_average' or 'all_or_nothing'",
        ),
    ],
)
def test_bad_configs_are_rejected_with_a_fix(spec: dict[str, Any], message: str) -> None:
    assert error_of(spec) == message


# --- the suite loader and a run ----------------------------------------------------------------


def test_missing_expected_values_are_reported_when_the_suite_loads(tmp_path: Path) -> None:
    errors = load_errors(
        tmp_path,
        "assertions: [{type: field-accuracy, fields: [{path: $.total}]}]\n"
        "tests:\n"
        "  - {id: a, input: hi}\n"
        "  - {id: b, input: hi, expected_output: 'not json'}\n"
        "  - {id: c, input: hi, expected_output: {sum: 1}}\n"
        "  - {id: d, input: hi, expected_output: {total: 1}}\n",
    )
    assert errors == [
        "s.eval.yaml:3 assertions[0]: field-accuracy field '$.total' has no `expected` value and "
        "test 'a' has no expected_output; add a JSON expected_output or an `expected` to the field",
        "s.eval.yaml:3 assertions[0]: field-accuracy reads field '$.total' from the "
        "expected_output of test 'b', which is not JSON (line 1 column 1: Expecting value)",
        "s.eval.yaml:3 assertions[0]: field-accuracy field '$.total' matches nothing in the "
        "expected_output of test 'c'; fix the path or give the field an `expected` value",
    ]


def test_a_bad_path_is_located_when_the_suite_loads(tmp_path: Path) -> None:
    errors = load_errors(
        tmp_path,
        "tests:\n  - id: a\n    input: hi\n"
        "    assertions: [{type: field-accuracy, fields: [{path: '$.a[', expected: 1}]}]\n",
    )
    assert len(errors) == 1
    assert errors[0].startswith("s.eval.yaml:6 tests[0].assertions[0].fields[0].path: ")
    assert "invalid JSONPath '$.a['" in errors[0]


SUITE = """\
name: invoices
target:
  type: fake
  responses:
    inv-1: '{"total": 120.004, "issued": "05/03/2024", "currency": "EUR"}'
    inv-2: '{"total": 99.0, "issued": "2024-03-07", "currency": "EUR"}'
    inv-3: 'I could not read the invoice.'
assertions:
  - type: field-accuracy
    fields:
      - {path: $.total, match: numeric_tolerance, weight: 2}
      - {path: $.issued, match: date, formats: ['%d/%m/%Y']}
      - {path: $.currency}
tests:
  - {id: inv-1, input: inv-1, expected_output: {total: 120, issued: '2024-03-05', currency: EUR}}
  - {id: inv-2, input: inv-2, expected_output: {total: 120, issued: '2024-03-05', currency: EUR}}
  - {id: inv-3, input: inv-3, expected_output: {total: 120, issued: '2024-03-05', currency: EUR}}
"""


def test_dates_given_as_python_dates_are_compared_as_iso_text() -> None:
    # the Python API may hand over datetime.date values where YAML or JSON would have text
    import datetime

    fields = [
        {"path": "$.d", "match": "date"},
        {"path": "$.e", "expected": datetime.date(2024, 3, 5)},
    ]
    result = grade(
        fields, '{"d": "2024-03-05", "e": "2024-03-05"}', expected={"d": datetime.date(2024, 3, 5)}
    )
    assert result.score == 1.0
    assert [d.expected for d in result.details] == ["2024-03-05", "2024-03-05"]


def test_a_suite_through_evaluate(tmp_path: Path) -> None:
    path = write(tmp_path / "invoices.eval.yaml", SUITE)
    run = evaluate(path, config=EvalConfig(store=False, cache_mode="off"))
    outcome = {c.case_id: (c.verdict, c.score) for c in run.results}
    assert outcome == {"inv-1": ("pass", 1.0), "inv-2": ("fail", 0.25), "inv-3": ("fail", 0.0)}
    inv2 = next(c for c in run.results if c.case_id == "inv-2")
    assert inv2.grader_results[0].misses == [
        "$.total is off by 21 (tolerance ±0.01)",
        "$.issued is a different date",
    ]


DOCUMENT = {"a": {"b": [10, {"c": None}], "k e y": 1}, "l": [[1, 2], [3]], "0": "zero"}


@pytest.mark.parametrize(
    "path",
    [
        "$",
        "$.a.b[0]",
        "$.a.b[-1].c",
        "$.a.b[-3]",
        "$.a.b[2]",
        "$.a['k e y']",
        "$.l[1][0]",
        "$.l.x",
        "$.a[0]",
        "$['0']",
        "$[0]",
        "$.missing.deeper",
    ],
)
def test_the_singular_path_shortcut_agrees_with_the_query_engine(path: str) -> None:
    import jsonpath_rfc9535

    from assay.graders.structured import _MISSING, _keys, _select

    assert _keys(path) is not None
    nodes = jsonpath_rfc9535.compile(path).find(DOCUMENT).values()
    assert _select(path, DOCUMENT) == (nodes[0] if nodes else _MISSING)
