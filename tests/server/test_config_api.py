"""`/api/config` and the studio config file: `studio.threshold`, the deprecated fallback."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient

from assay.config import StudioConfig, load_studio_config, studio_config_path
from assay.errors import ConfigError
from tests.server.conftest import assert_error


def test_defaults_without_a_file(client: TestClient, config_path: Path) -> None:
    assert client.get("/api/config").json() == {"threshold": 0.8}
    assert not config_path.exists()


def test_the_deprecated_key_is_read_and_replaced_on_write(
    client: TestClient, config_path: Path
) -> None:
    config_path.parent.mkdir(parents=True)
    config_path.write_text(
        "# kept? no: comments are not\nother: {keep: 1}\nstudio:\n  pass_threshold: 0.65\n"
        "  theme: dark\n",
        encoding="utf-8",
    )
    assert client.get("/api/config").json() == {"threshold": 0.65}
    response = client.put("/api/config", json={"threshold": 0.7})
    assert response.json() == {"threshold": 0.7}
    assert yaml.safe_load(config_path.read_text(encoding="utf-8")) == {
        "other": {"keep": 1},
        "studio": {"theme": "dark", "threshold": 0.7},
    }
    assert client.get("/api/config").json() == {"threshold": 0.7}


def test_threshold_wins_over_the_deprecated_key(config_path: Path) -> None:
    config_path.parent.mkdir(parents=True)
    config_path.write_text("studio: {threshold: 0.9, pass_threshold: 0.1}\n", encoding="utf-8")
    assert load_studio_config(config_path) == StudioConfig(threshold=0.9)


@pytest.mark.parametrize(
    "body", [{"threshold": 1.5}, {"threshold": -0.1}, {"threshold": "x"}, {"treshold": 0.5}, {}]
)
def test_invalid_settings_are_refused(client: TestClient, config_path: Path, body: object) -> None:
    if body == {}:
        # Every field has a default: an empty object resets to the defaults.
        assert client.put("/api/config", json=body).json() == {"threshold": 0.8}
        return
    assert_error(client.put("/api/config", json=body), 422, "validation_error")
    assert not config_path.exists()


def test_a_suggestion_for_a_misspelt_key(client: TestClient) -> None:
    error = assert_error(client.put("/api/config", json={"treshold": 0.5}), 422, "validation_error")
    assert "Did you mean 'threshold'?" in error["message"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("studio: [\n", "invalid YAML"),
        ("- a\n", "must be a mapping"),
        ("studio: 3\n", "studio: must be a mapping"),
        ("studio: {threshold: 2}\n", "studio.threshold: Input should be less than or equal to 1"),
    ],
)
def test_a_broken_file_is_a_config_error_and_is_not_overwritten(
    client: TestClient, config_path: Path, text: str, message: str
) -> None:
    config_path.parent.mkdir(parents=True)
    config_path.write_text(text, encoding="utf-8")
    assert_error(client.get("/api/config"), 500, "config_error", message)
    if "threshold" not in text and "3" not in text:
        assert_error(client.put("/api/config", json={"threshold": 0.5}), 500, "config_error")
        assert config_path.read_text(encoding="utf-8") == text
    with pytest.raises(ConfigError):
        load_studio_config(config_path)


def test_the_file_is_in_the_project_directory(tmp_path: Path) -> None:
    assert studio_config_path(tmp_path) == tmp_path / ".assay" / "config.yaml"
    (tmp_path / "assay.yaml").write_text("store: runs.db\n", encoding="utf-8")
    nested = tmp_path / "evals" / "deep"
    nested.mkdir(parents=True)
    assert studio_config_path(nested) == tmp_path / ".assay" / "config.yaml"


@pytest.mark.parametrize("mode", [0o644, 0o664, 0o600])
def test_i22_20_saving_keeps_the_file_mode(
    client: TestClient, config_path: Path, mode: int
) -> None:
    config_path.parent.mkdir(parents=True)
    config_path.write_text("studio: {threshold: 0.9}\nother: kept\n", encoding="utf-8")
    config_path.chmod(mode)
    assert client.put("/api/config", json={"threshold": 0.5}).status_code == 200
    assert stat.S_IMODE(config_path.stat().st_mode) == mode
    assert "other: kept" in config_path.read_text(encoding="utf-8")


def test_i22_20_a_new_file_gets_the_umask_mode(client: TestClient, config_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        assert client.put("/api/config", json={"threshold": 0.5}).status_code == 200
    finally:
        os.umask(previous)
    assert stat.S_IMODE(config_path.stat().st_mode) == 0o644
    assert [p.name for p in config_path.parent.iterdir()] == ["config.yaml"]


@pytest.mark.parametrize("text", ["studio: [\n", "studio: {threshold: 2}\n", "- a\n"])
def test_i22_20_a_config_error_names_no_server_path(
    client: TestClient, config_path: Path, text: str
) -> None:
    config_path.parent.mkdir(parents=True)
    config_path.write_text(text, encoding="utf-8")
    responses = [client.get("/api/config")]
    if "threshold" not in text:  # a PUT replaces a bad threshold, but not a broken file
        responses.append(client.put("/api/config", json={"threshold": 1}))
    for response in responses:
        error = assert_error(response, 500, "config_error")
        assert error["message"].startswith(".assay/config.yaml")
        assert str(config_path.parent.parent) not in response.text
        assert "/tmp" not in response.text and str(Path.home()) not in response.text


def test_i22_7_a_yaml_bomb_in_the_studio_settings_is_refused_with_its_line(
    client: TestClient, config_path: Path
) -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    config_path.parent.mkdir(parents=True)
    config_path.write_text("\n".join(lines) + "\nstudio: {threshold: 0.5}\n", encoding="utf-8")
    error = assert_error(client.get("/api/config"), 500, "config_error", "YAML aliases expand")
    assert error["message"].startswith(".assay/config.yaml:")


def test_i21_12_a_studio_settings_syntax_error_has_its_line_and_column(
    client: TestClient, config_path: Path
) -> None:
    config_path.parent.mkdir(parents=True)
    config_path.write_text("studio:\n  threshold: 0.5\n bad: 1\n", encoding="utf-8")
    error = assert_error(client.get("/api/config"), 500, "config_error")
    assert error["message"].startswith(".assay/config.yaml:3:2: invalid YAML: "), error
    assert "\n" not in error["message"]
