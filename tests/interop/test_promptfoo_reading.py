"""promptfoo configs read as promptfoo reads them (issue 25 items 2-4): prompts built by
programs (executable prompts, JavaScript and Python prompt functions, each seeing promptfoo's
context), and a config none of whose prompts converts saying why."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.interop.promptfoo import convert_promptfoo

FIXTURES = Path(__file__).parent / "fixtures" / "promptfoo" / "i25"


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
def test_i25_4_prompt_programs_run_per_case_with_promptfoos_context() -> None:
    conversion = convert_promptfoo(FIXTURES / "programs" / "programs.yaml", display="p.yaml")
    inputs = {c["id"]: c["input"] for c in conversion.suite["tests"]}  # type: ignore[index,union-attr]
    assert inputs == {
        "test-1-shell": "Greet Ada for openai:gpt-4.1-mini",
        "test-1-prompt-chat": [
            {"role": "system", "content": "You serve mini."},
            {"role": "user", "content": "Hi, I am Ada."},
        ],
        "test-1-prompt-fn-build": "Hello Ada from openai:gpt-4.1-mini",
    }
    text = "\n".join(str(w) for w in conversion.warnings)
    assert "p.yaml:3 prompts[0]: approximated: executable prompt `exec:./make_prompt.sh`" in text
    assert "prompt function 'prompt.js:chat' is called (by Node.js) once per case" in text


def test_i25_4_a_config_without_a_convertible_prompt_says_why(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        convert_promptfoo(FIXTURES / "programs" / "no_prompt.yaml", display="n.yaml")
    issues = [str(i) for i in caught.value.issues]
    assert issues[0] == "n.yaml:1 prompts: no prompt could be converted (see the warnings)"
    assert issues[1].startswith("n.yaml:2 prompts[0]: left out: prompt 'langfuse://greeting")
    assert issues[2].startswith(
        "n.yaml:3 prompts[1]: left out: prompt function 'builder.ts': a TypeScript function"
    )


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
def test_i25_3_inline_code_with_template_literals_is_kept_beside_the_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.config import parse_suite
    from assay.testing import FakeOpenAIServer
    from tests.interop.test_promptfoo_convert import run

    conversion = convert_promptfoo(
        FIXTURES / "programs" / "template_literal.yaml", display="t.yaml", output_dir=tmp_path
    )
    assert not [w for w in conversion.warnings if "${" in str(w)]  # nothing reads them as env
    code = {k: v for k, v in conversion.files.items() if "/code/" in k}
    assert sorted(v.strip()[-18:] for v in code.values()) == [
        "'${NOT_AN_ENV_VAR}' not in output"[-18:],
        "word}: ${seen}` };",
    ]
    for relative, text in conversion.files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text, encoding="utf-8")
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    monkeypatch.delenv("NOT_AN_ENV_VAR", raising=False)
    with FakeOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        results = run(parse_suite(conversion.suite, base_dir=tmp_path))
    [result] = results.values()
    assert (result.verdict, result.output) == ("pass", "Say hello")


def test_i25_2_an_unset_header_variable_is_sent_empty_as_promptfoo_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import yaml

    from assay.config import load_suite
    from assay.testing import FakeOpenAIServer
    from tests.interop.test_promptfoo_convert import run

    monkeypatch.delenv("I25_SERVICE_KEY", raising=False)
    conversion = convert_promptfoo(FIXTURES / "http" / "header_key.yaml", display="h.yaml")
    target = conversion.suite["targets"]["service"]  # type: ignore[call-overload,index]
    assert target["headers"] == {"Authorization": "Bearer ${I25_SERVICE_KEY:-}"}
    with FakeOpenAIServer() as server:
        target["url"] = f"{server.base_url}/chat/completions"
        suite = tmp_path / "h.eval.yaml"
        suite.write_text(yaml.safe_dump(conversion.suite), encoding="utf-8")
        results = run(load_suite(suite))  # the suite loads without the variable
        unset = server.seen[-1].headers["authorization"]
        monkeypatch.setenv("I25_SERVICE_KEY", "k-1")
        run(load_suite(suite))
        given = server.seen[-1].headers["authorization"]
    assert [r.verdict for r in results.values()] == ["pass"]
    assert (unset.strip(), given) == ("Bearer", "Bearer k-1")


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
def test_i25_4_javascript_test_generators_are_called_once() -> None:
    conversion = convert_promptfoo(FIXTURES / "programs" / "js_tests.yaml", display="j.yaml")
    inputs = [c["input"] for c in conversion.suite["tests"]]  # type: ignore[index,union-attr]
    assert inputs == ["Hi Ada", "Hi Grace", "Hi user0", "Hi user1"]
    text = "\n".join(str(w) for w in conversion.warnings)
    assert "j.yaml:4 tests[0]: approximated: the tests 'gen_tests.js' generates" in text


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
def test_i25_4_nunjucks_filters_written_in_javascript_render_the_prompts(tmp_path: Path) -> None:
    (tmp_path / "shout.js").write_text(
        "module.exports = function (s) { return String(s).toUpperCase(); };\n", encoding="utf-8"
    )
    (tmp_path / "wrap.mjs").write_text(
        "export default (s, open, close) => `${open}${s ?? 'nothing'}${close}`;\n",
        encoding="utf-8",
    )
    (tmp_path / "typed.ts").write_text("export default (s: string) => s;\n", encoding="utf-8")
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        "prompts:\n"
        '  - \'Say {{ word | shout }} {{ word | wrap("[", "]") }} {{ gone | wrap("<", ">") }}\'\n'
        "  - 'Typed {{ word | typed }}'\n"
        "providers: [openai:gpt-4.1-mini]\n"
        "nunjucksFilters:\n"
        "  shout: ./shout.js\n"
        "  wrap: file://wrap.mjs\n"
        "  typed: ./typed.ts\n"
        "tests:\n"
        "  - vars: {word: hello}\n",
        encoding="utf-8",
    )
    conversion = convert_promptfoo(config, display="f.yaml")
    inputs = {c["id"]: c["input"] for c in conversion.suite["tests"]}  # type: ignore[index,union-attr]
    assert inputs == {"test-1-p1": "Say HELLO [hello] <nothing>"}
    text = "\n".join(str(w) for w in conversion.warnings)
    assert (
        "f.yaml:5 nunjucksFilters: approximated: the filters (shout, wrap) run under Node.js"
        in text
    )
    assert (
        "f.yaml:8 nunjucksFilters.typed: left out: filter 'typed' ('./typed.ts') is not a" in text
    )
    assert "prompt 'p2' cannot be rendered" in text
