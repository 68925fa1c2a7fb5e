"""`${VAR}` values recorded while loading, and taken back out of JSON text (run snapshots)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.config import load_project, load_suite
from tests.conftest import write

SECRET = "tok-0123456789abcdef"


def test_i22_2_a_loaded_suite_redacts_what_the_environment_put_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("API_TOKEN", SECRET)
    monkeypatch.setenv("PORT", "8080")
    monkeypatch.setenv("EMPTY", "")
    monkeypatch.delenv("UNSET_VAR", raising=False)
    suite = write(
        tmp_path / "s.eval.yaml",
        "name: s\n"
        "target:\n"
        "  type: http\n"
        "  url: 'http://localhost:${PORT}/v1'\n"
        "  headers: {Authorization: 'Bearer ${API_TOKEN}', X-Empty: '${EMPTY}',"
        " X-Default: '${UNSET_VAR:-plain}'}\n"
        "tests:\n"
        "  - {id: a, input: '8080 stays', assertions: [{type: contains, value: x}]}\n",
    )
    loaded = load_suite(suite)
    assert '"Bearer ' + SECRET + '"' in loaded.document  # the run itself needs the value
    redacted = json.loads(loaded.expansions.redact(loaded.document))
    assert redacted["target"]["headers"] == {
        "Authorization": "Bearer ${API_TOKEN}",
        "X-Empty": "",
        "X-Default": "plain",
    }
    assert redacted["target"]["url"] == "http://localhost:${PORT}/v1"
    assert redacted["tests"][0]["input"] == "8080 stays"  # short values: whole scalars only
    # A long value is removed wherever else it appears (a normalised or copied value).
    assert loaded.expansions.redact(json.dumps({"x": f"see {SECRET}!"})) == (
        '{"x": "see ${API_TOKEN}!"}'
    )


def test_i22_2_the_project_config_records_its_expansions_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("API_TOKEN", SECRET)
    write(tmp_path / "assay.yaml", "judge: {model: 'm', base_url: 'http://h/${API_TOKEN}'}\n")
    project = load_project(tmp_path / "assay.yaml")
    dumped = json.dumps(project.config.model_dump(mode="json", exclude_unset=True))
    assert SECRET in dumped
    assert SECRET not in project.expansions.redact(dumped)
