"""Run snapshots: pre-encoded JSON (the suite document) is embedded verbatim and reads back."""

from __future__ import annotations

import json

import pytest

from assay.store import RawJSON
from assay.store._snapshot import decode_snapshot, encode_snapshot


def test_raw_json_is_embedded_not_quoted() -> None:
    suite = json.dumps(
        {"name": "s", "tests": [{"id": "é"}]}, ensure_ascii=False, separators=(",", ":")
    )
    text = encode_snapshot({"suite": RawJSON(suite), "options": {"repeat": 2}, "note": "x"})
    assert text == '{"suite":{"name":"s","tests":[{"id":"é"}]},"options":{"repeat":2},"note":"x"}'
    assert decode_snapshot(text)["suite"] == {"name": "s", "tests": [{"id": "é"}]}


def test_plain_strings_that_look_like_placeholders_stay_strings() -> None:
    snapshot = {"a": "\x00raw-0000000000000000\x00suite", "suite": RawJSON("[1]")}
    assert decode_snapshot(encode_snapshot(snapshot)) == {
        "a": "\x00raw-0000000000000000\x00suite",
        "suite": [1],
    }


def test_a_snapshot_without_raw_parts_round_trips() -> None:
    snapshot = {"config": {"threshold": 0.8}, "git_commit": None}
    assert decode_snapshot(encode_snapshot(snapshot)) == snapshot


def test_a_stored_snapshot_must_be_an_object() -> None:
    with pytest.raises(ValueError, match="must be a JSON object"):
        decode_snapshot("[1, 2]")
