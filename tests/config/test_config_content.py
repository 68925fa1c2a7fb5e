"""Content parts in input messages (issue 25 item 4): accepted in OpenAI's shape, checked
strictly with located errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.config import load_suite
from assay.errors import ConfigError
from tests.conftest import write

HEADER = """name: demo
target: {type: fake, responses: ["ok"]}
assertions: [{type: contains, value: ok}]
tests:
  - id: a
    input:
      - role: user
        content:
          - {type: text, text: What is this?}
"""


def _errors(tmp_path: Path, part: str) -> list[str]:
    write(tmp_path / "s.eval.yaml", HEADER + f"          - {part}\n")
    with pytest.raises(ConfigError) as info:
        load_suite(tmp_path / "s.eval.yaml")
    return [str(issue) for issue in info.value.issues]


def test_i25_4_text_image_and_audio_parts_load_as_written(tmp_path: Path) -> None:
    write(
        tmp_path / "s.eval.yaml",
        HEADER + "          - {type: image_url, image_url: {url: 'https://x.test/a.png'}}\n"
        "          - {type: image_url, image_url: {url: 'data:image/png;base64,iVBORw0K',"
        " detail: high}}\n"
        "          - {type: input_audio, input_audio: {data: UklGRg==, format: wav}}\n",
    )
    (test,) = load_suite(tmp_path / "s.eval.yaml").suite.tests
    assert test.input is not None and not isinstance(test.input, str)
    assert test.input[0].wire_content() == [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K",
                                            "detail": "high"}},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
    ]  # fmt: skip


def test_i25_4_an_unknown_part_type_is_a_located_error(tmp_path: Path) -> None:
    (error,) = _errors(tmp_path, "{type: image, source: {type: url, url: 'https://x.test'}}")
    assert error.startswith("s.eval.yaml:10 tests[0].input[0].content[1]")
    assert error.endswith(
        "unknown value type 'image'. Did you mean 'image_url'? "
        "Known value types: image_url, input_audio, text"
    )


@pytest.mark.parametrize(
    ("part", "says"),
    [
        ("{type: image_url, image_url: {url: ./cat.png}}", "must start with http://"),
        ("{type: image_url, image_url: {url: 'data:image/png;base64,@@'}}", "not base64"),
        ("{type: image_url, image_url: {url: 'https://x.test', detail: max}}", "detail"),
        ("{type: input_audio, input_audio: {data: UklGRg==, format: flac}}", "format"),
        ("{type: text, txt: hi}", "Did you mean 'text'?"),
    ],
)
def test_i25_4_a_malformed_part_is_a_located_error(tmp_path: Path, part: str, says: str) -> None:
    errors = _errors(tmp_path, part)
    assert errors and all(
        e.startswith("s.eval.yaml:10 tests[0].input[0].content[1]") for e in errors
    )
    assert says in " ".join(errors)
