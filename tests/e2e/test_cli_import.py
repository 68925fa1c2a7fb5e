"""`assay import promptfoo` through the real console script, and the interop examples
(examples/promptfoo, examples/agentv) run offline as a user runs them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import write
from tests.e2e._cli import assay

REPO = Path(__file__).resolve().parents[2]
PROMPTFOO = REPO / "examples" / "promptfoo"
AGENTV = REPO / "examples" / "agentv"


def copy_example(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / source.name
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".assay", "__pycache__"))
    return target


def test_import_writes_the_committed_example_suite_and_warns_what_it_left_out(
    tmp_path: Path,
) -> None:
    example = copy_example(PROMPTFOO, tmp_path)
    (example / "suite.eval.yaml").unlink()
    shutil.rmtree(example / "promptfoo_wrappers")
    done = assay(
        "import", "promptfoo", "promptfooconfig.yaml", "-o", "suite.eval.yaml", cwd=example
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "wrote suite.eval.yaml and promptfoo_wrappers/: suite 'support-replies', 3 tests; "
        "0 items left out, 0 approximated; check it with `assay validate suite.eval.yaml`\n"
    )
    assert done.stderr == ""
    for name in ("suite.eval.yaml", *(f"promptfoo_wrappers/assertion.{x}" for x in ("cjs", "py"))):
        written = (example / name).read_text(encoding="utf-8")
        assert written == (PROMPTFOO / name).read_text(encoding="utf-8"), name
    valid = assay("validate", "suite.eval.yaml", cwd=example)
    assert valid.returncode == 0, valid.stderr
    assert valid.stdout == "ok  suite.eval.yaml: suite 'support-replies', 3 tests\n"


def test_i25_3_script_paths_are_relative_to_the_written_suite(tmp_path: Path) -> None:
    write(
        tmp_path / "pf" / "check.py",
        "def get_assert(output, context):\n    return 'Hi' in output\n",
    )
    write(
        tmp_path / "pf" / "promptfooconfig.yaml",
        "prompts: [hello]\nproviders: [openai:gpt-4o-mini]\n"
        "tests:\n  - assert: [{type: python, value: file://check.py}]\n",
    )
    (tmp_path / "evals").mkdir()
    done = assay(
        "import", "promptfoo", "pf/promptfooconfig.yaml", "-o", "evals/s.eval.yaml", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    suite = (tmp_path / "evals" / "s.eval.yaml").read_text(encoding="utf-8")
    assert "- promptfoo_wrappers/assertion.py\n    - --\n    - file://../pf/check.py\n" in suite
    wrapper = tmp_path / "evals" / "promptfoo_wrappers" / "assertion.py"
    assert wrapper.read_text(encoding="utf-8").startswith('"""promptfoo\'s `python` assertion')


def test_import_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    example = copy_example(PROMPTFOO, tmp_path)
    before = (example / "suite.eval.yaml").read_text(encoding="utf-8")
    write(example / "suite.eval.yaml", "keep me\n")
    refused = assay(
        "import", "promptfoo", "promptfooconfig.yaml", "-o", "suite.eval.yaml", cwd=example
    )
    assert refused.returncode == 2
    assert refused.stderr == (
        "error: suite.eval.yaml already exists; pass --force to overwrite it\n"
    )
    assert (example / "suite.eval.yaml").read_text(encoding="utf-8") == "keep me\n"
    forced = assay(
        "import",
        "promptfoo",
        "promptfooconfig.yaml",
        "-o",
        "suite.eval.yaml",
        "--force",
        cwd=example,
    )
    assert forced.returncode == 0, forced.stderr
    assert (example / "suite.eval.yaml").read_text(encoding="utf-8") == before


def test_bad_promptfoo_configs_exit_2_with_located_errors(tmp_path: Path) -> None:
    write(tmp_path / "broken.yaml", "prompts:\n  - 'unclosed\ntests: []\n")
    broken = assay("import", "promptfoo", "broken.yaml", "-o", "s.eval.yaml", cwd=tmp_path)
    assert broken.returncode == 2
    assert broken.stderr.startswith("error: broken.yaml:")
    assert "invalid YAML" in broken.stderr and "Traceback" not in broken.stderr
    write(
        tmp_path / "nofile.yaml",
        "prompts: [file://missing.txt]\ntests:\n  - assert: [{type: contains, value: x}]\n",
    )
    missing = assay("import", "promptfoo", "nofile.yaml", "-o", "s.eval.yaml", cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.startswith("error: nofile.yaml:1 prompts[0]: cannot read 'missing.txt'")
    assert not (tmp_path / "s.eval.yaml").exists()


def test_the_converted_promptfoo_example_runs_offline(tmp_path: Path) -> None:
    example = copy_example(PROMPTFOO, tmp_path)
    done = assay(
        "run", "suite.eval.yaml", "--target", "offline", "--no-cache", "--json", cwd=example
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert {r["case_id"]: r["verdict"] for r in result["results"]} == {
        "refund-window": "pass",
        "opening-hours": "pass",
        "order-status-as-json": "pass",
    }


def test_the_agentv_example_runs_offline_as_it_is(tmp_path: Path) -> None:
    example = copy_example(AGENTV, tmp_path)
    done = assay("run", ".", "--no-cache", "--json", cwd=example)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["suite"] == "support"
    assert {r["case_id"]: r["verdict"] for r in result["results"]} == {
        "order-status": "pass",
        "refund-damaged": "pass",
        "status-json": "pass",
    }
    assert "read as an AgentV eval file" in done.stderr
