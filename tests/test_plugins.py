"""Plugins found through entry points: every way a plugin can be wrong is one located error
naming the package, its version and the entry point (in-process: the registries' checks; in a
subprocess: `assay` exits 2 with that message and no traceback).

Installed distributions are made as pip leaves them: a `*.dist-info` directory (METADATA,
entry_points.txt) beside the module, on the path; `importlib.metadata` finds them for real.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay._plugins import (
    PluginSpec,
    checked_plugins,
    installed_entry_points,
    load_plugins,
    plugin_entries,
)
from assay.errors import PluginError
from assay.graders import GRADER_PLUGINS
from assay.providers import PROVIDER_PLUGINS, Preset, provider_presets
from assay.report import REPORTER_PLUGINS
from assay.targets import TARGET_PLUGINS
from tests.conftest import write
from tests.e2e._cli import assay, assay_env

GRADERS = """from collections.abc import Callable
from typing import Literal
from assay.graders import Grader, Measurement
from assay.providers import Preset
from assay.results import TargetOutput
from assay.targets import Target


class Shouty(Grader):
    type: Literal["shouty"] = "shouty"

    async def measure(self, ctx):
        return Measurement(score=1.0 if ctx.output.isupper() else 0.0)


class Abstract(Grader):
    type: Literal["abstract"] = "abstract"


class Misnamed(Shouty):
    type: Literal["something-else"] = "something-else"


def not_a_class(ctx):
    return 1.0


class Echo(Target):
    type: Literal["echo"] = "echo"
    prefix: str = ""

    async def call(self, request):
        return TargetOutput(output=self.prefix + request.prompt)


def write_ids(out, runs):
    for run, cases in runs:
        out.writelines(f"{case.case_id}\\n" for case in cases())


def write_boom(out, runs):
    raise ValueError("no ink")


class Later(Shouty):
    type: Literal["later"] = "later"
    thing: "Missing"


class Hooked(Shouty):
    type: Literal["hooked"] = "hooked"
    hook: Callable[[str], str]


ACME_LLM = Preset("acme-llm", "openai", "http://127.0.0.1:9/v1", "ACME_API_KEY")
OTHER_NAME = Preset("other", "openai", "http://127.0.0.1:9/v1", None)
NO_WIRE = Preset("scripted", "fake", None, None)
NOWHERE = Preset("nowhere", "anthropic", None, None)
"""


def make_dist(
    root: Path,
    package: str,
    entry_points: dict[str, dict[str, str]],
    modules: dict[str, str],
    version: str = "1.0",
) -> None:
    """An installed distribution in `root`: its metadata, entry points and modules."""
    info = root / f"{package.replace('-', '_')}-{version}.dist-info"
    write(info / "METADATA", f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n")
    sections = [
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in points.items())
        for group, points in entry_points.items()
    ]
    write(info / "entry_points.txt", "\n".join(sections))
    for name, source in modules.items():
        write(root / name, source)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory on `sys.path` whose distributions count as installed, for this test only."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    _forget_installed()
    yield root
    _forget_installed()


def _forget_installed() -> None:
    installed_entry_points.cache_clear()
    plugin_entries.cache_clear()
    provider_presets.cache_clear()


def _errors(spec: PluginSpec) -> list[str]:
    return [str(error) for _, _, error in checked_plugins(spec) if error is not None]


def _where(name: str, value: str, group: str = "assay.graders", package: str = "acme") -> str:
    return f'package {package} 1.0, entry point {name} = "{value}" (group {group})'


def test_a_valid_grader_plugin_is_loaded_by_its_name(site: Path) -> None:
    make_dist(
        site, "acme", {"assay.graders": {"shouty": "acme_g1:Shouty"}}, {"acme_g1.py": GRADERS}
    )
    (entry,) = plugin_entries("grader")
    assert (entry.name, entry.package, entry.version) == ("shouty", "acme", "1.0")
    loaded = load_plugins(GRADER_PLUGINS)
    assert list(loaded) == ["shouty"]
    assert getattr(loaded["shouty"], "__name__", None) == "Shouty"


def test_every_kind_of_broken_grader_plugin_is_a_located_error(site: Path) -> None:
    points = {
        "abstract": "acme_g2:Abstract",
        "contains": "acme_g2:Shouty",
        "function": "acme_g2:not_a_class",
        "gone": "acme_g2:Gone",
        "later": "acme_g2:Later",
        "missing-module": "acme_nowhere:Shouty",
        "misnamed": "acme_g2:Misnamed",
        "Shouty_Name": "acme_g2:Shouty",
        "shouty": "acme_g2:Shouty",
    }
    make_dist(site, "acme", {"assay.graders": points}, {"acme_g2.py": GRADERS})
    make_dist(site, "other", {"assay.graders": {"shouty": "acme_g2:Shouty"}}, {})
    assert _errors(GRADER_PLUGINS) == [
        f"{_where('Shouty_Name', 'acme_g2:Shouty')}: 'Shouty_Name' is not a valid grader name; "
        "use lowercase letters, digits and dashes (e.g. 'acme-words')",
        f"{_where('abstract', 'acme_g2:Abstract')}: its class Abstract is abstract "
        "(implement measure)",
        f"{_where('contains', 'acme_g2:Shouty')}: 'contains' is already a built-in grader type; "
        "the plugin must use another name",
        f"{_where('function', 'acme_g2:not_a_class')}: it gives the function "
        "acme_g2.not_a_class, not a subclass of assay.graders.Grader",
        f"{_where('gone', 'acme_g2:Gone')}: cannot be loaded (AttributeError: module 'acme_g2' "
        "has no attribute 'Gone'). Fix or uninstall the package (pip uninstall acme)",
        f"{_where('later', 'acme_g2:Later')}: its class Later is not fully defined (an "
        "annotation names a type that cannot be found); define that type, then call "
        "Later.model_rebuild()",
        f"{_where('misnamed', 'acme_g2:Misnamed')}: its class Misnamed must declare the type "
        'name of its entry point: type: Literal["misnamed"] = "misnamed"',
        f"{_where('missing-module', 'acme_nowhere:Shouty')}: cannot be loaded "
        "(ModuleNotFoundError: No module named 'acme_nowhere'). Fix or uninstall the package "
        "(pip uninstall acme)",
        f"{_where('shouty', 'acme_g2:Shouty', package='other')}: 'shouty' is also the grader "
        f"type of {_where('shouty', 'acme_g2:Shouty')}; two plugins cannot share a type name "
        "(uninstall one)",
    ]
    with pytest.raises(PluginError, match="'Shouty_Name' is not a valid grader name"):
        load_plugins(GRADER_PLUGINS)  # the first error, by name


def test_target_and_reporter_plugins_are_checked_for_their_kind(site: Path) -> None:
    make_dist(
        site,
        "acme",
        {
            "assay.targets": {"shouty": "acme_g3:Shouty"},
            "assay.reporters": {
                "csv": "acme_r3:write",
                "klass": "acme_r3:Writer",
                "one-arg": "acme_r3:one_arg",
            },
        },
        {
            "acme_g3.py": GRADERS,
            "acme_r3.py": "def write(out, runs):\n    out.write('x')\n\n\n"
            "class Writer:\n    pass\n\n\ndef one_arg(out):\n    pass\n",
        },
    )
    assert _errors(TARGET_PLUGINS) == [
        f"{_where('shouty', 'acme_g3:Shouty', 'assay.targets')}: it gives the class "
        "acme_g3.Shouty, not a subclass of assay.targets.Target"
    ]
    assert _errors(REPORTER_PLUGINS) == [
        f"{_where('klass', 'acme_r3:Writer', 'assay.reporters')}: it gives the class "
        "acme_r3.Writer, not a function write(out, runs)",
        f"{_where('one-arg', 'acme_r3:one_arg', 'assay.reporters')}: its function one_arg "
        "cannot be called as write(out, runs)",
    ]
    usable = [entry.name for entry, _, error in checked_plugins(REPORTER_PLUGINS) if not error]
    assert usable == ["csv"]  # one broken plugin hides no other


def test_provider_plugins_are_presets_named_as_their_entry_point_with_a_wire_and_endpoint(
    site: Path,
) -> None:
    make_dist(
        site,
        "acme",
        {
            "assay.providers": {
                "acme-llm": "acme_p1:ACME_LLM",
                "named": "acme_p1:OTHER_NAME",
                "scripted": "acme_p1:NO_WIRE",
                "nowhere": "acme_p1:NOWHERE",
                "klass": "acme_p1:Echo",
                "groq": "acme_p1:ACME_LLM",
            }
        },
        {"acme_p1.py": GRADERS},
    )
    where = "assay.providers"
    assert _errors(PROVIDER_PLUGINS) == [
        f"{_where('groq', 'acme_p1:ACME_LLM', where)}: 'groq' is already a built-in provider "
        "type; the plugin must use another name",
        f"{_where('klass', 'acme_p1:Echo', where)}: it gives the class acme_p1.Echo, not an "
        "assay.providers.Preset",
        f"{_where('named', 'acme_p1:OTHER_NAME', where)}: its Preset is named 'other'; name it "
        "'named', as its entry point",
        f"{_where('nowhere', 'acme_p1:NOWHERE', where)}: its Preset has neither base_url nor "
        "base_url_env: no endpoint to call",
        f"{_where('scripted', 'acme_p1:NO_WIRE', where)}: its Preset speaks 'fake'; a provider "
        "plugin speaks 'openai' or 'anthropic'",
    ]
    usable = [entry.name for entry, _, error in checked_plugins(PROVIDER_PLUGINS) if not error]
    assert usable == ["acme-llm"]


def test_targets_and_judges_take_a_provider_plugin_by_name_with_its_endpoint_and_key(
    site: Path,
) -> None:
    from assay.judge import JudgeSpec
    from assay.targets import AnthropicTarget, OpenAITarget

    make_dist(
        site, "acme", {"assay.providers": {"acme-llm": "acme_p2:ACME_LLM"}}, {"acme_p2.py": GRADERS}
    )
    assert provider_presets()["acme-llm"] == Preset(
        "acme-llm", "openai", "http://127.0.0.1:9/v1", "ACME_API_KEY"
    )
    target = OpenAITarget(type="openai", provider="acme-llm", model="m")
    config = target.provider_config()
    assert (target.api_key_env, config.endpoint()) == ("ACME_API_KEY", "http://127.0.0.1:9/v1")
    judge = JudgeSpec(provider="acme-llm", model="j")
    assert judge.resolved_api_key_env == "ACME_API_KEY"
    with pytest.raises(ValueError, match=r"unknown provider 'acme-lm'\. Did you mean 'acme-llm'\?"):
        JudgeSpec(provider="acme-lm", model="j")
    with pytest.raises(ValueError, match="provider 'acme-llm' speaks the openai protocol"):
        AnthropicTarget(type="anthropic", provider="acme-llm", model="m")


def _env(site: Path) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    return assay_env(PYTHONPATH=path)


def test_a_broken_plugin_stops_the_commands_that_load_it_with_exit_2(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(
        site,
        "acme",
        {"assay.graders": {"shouty": "acme_g4:Shouty"}, "assay.targets": {"echo": "acme_g4:Nope"}},
        {"acme_g4.py": GRADERS},
    )
    write(
        tmp_path / "s.eval.yaml",
        "name: s\ntarget: {type: fake, default: HI}\n"
        "tests:\n  - {id: a, input: q, assertions: [{type: shouty}]}\n",
    )
    message = (
        f"error: {_where('echo', 'acme_g4:Nope', 'assay.targets')}: cannot be loaded "
        "(AttributeError: module 'acme_g4' has no attribute 'Nope'). Fix or uninstall the "
        "package (pip uninstall acme)\n"
    )
    for args in (("validate", "s.eval.yaml"), ("run", "s.eval.yaml"), ("schema",)):
        done = assay(*args, cwd=tmp_path, env=_env(site))
        assert (done.returncode, done.stderr, done.stdout) == (2, message, ""), args
    listed = assay("plugins", "--json", cwd=tmp_path, env=_env(site))
    assert (listed.returncode, listed.stderr) == (2, message)
    assert [(p["name"], p["error"] is None) for p in json.loads(listed.stdout)] == [
        ("shouty", True),
        ("echo", False),
    ]
    assert assay("runs", "list", cwd=tmp_path, env=_env(site)).returncode == 0  # loads none

    (site / "acme-1.0.dist-info" / "entry_points.txt").write_text(
        "[assay.graders]\nshouty = acme_g4:Shouty\n"
    )
    ran = assay("run", "s.eval.yaml", "--json", cwd=tmp_path, env=_env(site))
    assert ran.returncode == 0, ran.stderr
    (result,) = json.loads(ran.stdout)["results"]
    assert (result["verdict"], result["grader_results"][0]["name"]) == ("pass", "shouty")


def test_plugin_types_work_in_project_targets_and_composites(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(
        site,
        "acme",
        {
            "assay.graders": {"shouty": "acme_g5:Shouty"},
            "assay.targets": {"echo": "acme_g5:Echo"},
            "assay.reporters": {"ids": "acme_g5:write_ids", "boom": "acme_g5:write_boom"},
            "assay.providers": {"acme-llm": "acme_g5:ACME_LLM"},
        },
        {"acme_g5.py": GRADERS},
    )
    write(tmp_path / "assay.yaml", "targets:\n  loud: {type: echo, prefix: 'HEY '}\n")
    write(
        tmp_path / "s.eval.yaml",
        "name: s\ntarget: loud\ntests:\n"
        "  - {id: a, input: YOU, assertions: [{type: composite, assertions: [{type: shouty}]}]}\n"
        "  - {id: b, input: you, assertions: [{type: shouty}]}\n",
    )
    ran = assay(
        "run", "s.eval.yaml", "--json", "--report", "ids:ids.txt", cwd=tmp_path, env=_env(site)
    )
    assert ran.returncode == 1, ran.stderr  # `b` is not all caps
    results = {r["case_id"]: r for r in json.loads(ran.stdout)["results"]}
    assert results["a"]["output"] == "HEY YOU"
    assert (results["a"]["verdict"], results["b"]["verdict"]) == ("pass", "fail")
    (member,) = results["a"]["grader_results"][0]["children"]
    assert (member["name"], member["score"]) == ("shouty", 1.0)
    assert (tmp_path / "ids.txt").read_text() == "a\nb\n"

    # A report format that raises: the run is stored, the report's error names the plugin.
    boom = assay("run", "s.eval.yaml", "--report", "boom:boom.txt", cwd=tmp_path, env=_env(site))
    assert boom.returncode == 2
    where = _where("boom", "acme_g5:write_boom", "assay.reporters")
    assert (
        f"error: could not write the boom report to boom.txt: {where}: writing the boom report "
        "failed (ValueError: no ink). The runs are stored; write it again with `assay report "
    ) in boom.stderr
    assert not (tmp_path / "boom.txt").exists()
    again = assay("report", "latest", "-f", "boom", cwd=tmp_path, env=_env(site))
    assert (again.returncode, "Traceback" in again.stderr) == (2, False)
    assert again.stderr.startswith(f"error: {where}: writing the boom report failed")

    listed = assay("plugins", cwd=tmp_path, env=_env(site))
    assert (listed.returncode, listed.stderr) == (0, "")
    assert listed.stdout.splitlines()[1:] == [
        "grader    shouty    acme     1.0      acme_g5:Shouty      ok",
        "target    echo      acme     1.0      acme_g5:Echo        ok",
        "provider  acme-llm  acme     1.0      acme_g5:ACME_LLM    ok",
        "reporter  boom      acme     1.0      acme_g5:write_boom  ok",
        "reporter  ids       acme     1.0      acme_g5:write_ids   ok",
    ]


def test_a_broken_report_plugin_leaves_the_built_in_formats_alone(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "acme", {"assay.reporters": {"csv": "acme_r6:gone"}}, {"acme_r6.py": ""})
    write(
        tmp_path / "s.eval.yaml",
        "name: s\ntarget: {type: fake, default: x}\n"
        "tests:\n  - {id: a, input: q, assertions: [{type: equals, value: x}]}\n",
    )
    ran = assay("run", "s.eval.yaml", "--report", "md:r.md", cwd=tmp_path, env=_env(site))
    assert ran.returncode == 0, ran.stderr
    asked = assay("run", "s.eval.yaml", "--report", "csv:r.csv", cwd=tmp_path, env=_env(site))
    assert asked.returncode == 2
    assert asked.stderr == (
        f"error: {_where('csv', 'acme_r6:gone', 'assay.reporters')}: cannot be loaded "
        "(AttributeError: module 'acme_r6' has no attribute 'gone'). Fix or uninstall the "
        "package (pip uninstall acme)\n"
    )


def test_assay_schema_warns_about_a_plugin_type_it_cannot_describe(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(
        site, "acme", {"assay.graders": {"hooked": "acme_g7:Hooked"}}, {"acme_g7.py": GRADERS}
    )
    printed = assay("schema", cwd=tmp_path, env=_env(site))
    assert printed.returncode == 0
    assert "Hooked" not in printed.stdout  # pydantic leaves the type out of the union
    assert printed.stderr == (
        f"warning: {_where('hooked', 'acme_g7:Hooked')}: the schema leaves out its grader type "
        "'hooked': an option of Hooked has no JSON Schema (Cannot generate a JsonSchema for "
        "core_schema.CallableSchema)\n"
    )


def test_assay_plugins_without_plugins_says_where_they_would_come_from(tmp_path: Path) -> None:
    listed = assay("plugins", cwd=tmp_path)
    assert (listed.returncode, listed.stderr) == (0, "")
    assert listed.stdout == (
        "no plugins installed (entry point groups assay.graders, assay.targets, "
        "assay.providers, assay.reporters; see docs/plugins.md)\n"
    )
    as_json = assay("plugins", "--json", cwd=tmp_path)
    assert (as_json.returncode, json.loads(as_json.stdout)) == (0, [])


def test_the_python_api_takes_plugin_types_by_name(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(
        site,
        "acme",
        {"assay.graders": {"shouty": "acme_g8:Shouty"}, "assay.targets": {"echo": "acme_g8:Echo"}},
        {"acme_g8.py": GRADERS},
    )
    script = (
        "import assay\n"
        "cases = [{'id': 'a', 'input': 'YO'}, {'id': 'b', 'input': 'yo'}]\n"
        "suite = {'name': 's', 'target': {'type': 'echo'}, 'tests': cases}\n"
        "run = assay.evaluate(suite, graders=[{'type': 'shouty'}],"
        " config=assay.EvalConfig(store=False))\n"
        "print(sorted((r.case_id, r.verdict) for r in run.results))\n"
        "try:\n"
        "    assay.evaluate(suite, graders=[{'type': 'shoty'}])\n"
        "except assay.UsageError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(site),
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "[('a', 'pass'), ('b', 'fail')]\n"
        "graders[0]: unknown grader type 'shoty'. Did you mean 'shouty'?\n"
    )
