"""AgentV conformance: how many of an AgentV checkout's eval files assay validates as they are.

Issue 24's measure of "AgentV files run as they are". Given a local checkout of AgentV's
repository, this finds its eval files, then validates each one in this process exactly as
`assay validate <file>` does (the suite loaded, its target and judge resolved by `plan_run`),
with the repository root as the working directory and placeholder API keys in the
environment. It prints the counts (validated / failed / tracebacks) and, for each failing
file, its first error, grouped by cause. Usage:

    .venv/bin/python benchmarks/agentv_conformance.py /path/to/agentv
    .venv/bin/python benchmarks/agentv_conformance.py /path/to/agentv --files   # list them all

Which files are eval files: AgentV's discovery (`agentv eval` with no paths, the
`eval_patterns` defaults in packages/core/src/evaluation/loaders/config-loader.ts, and
`agentv validate <dir>`) looks for YAML named `*.eval.yaml`, `eval.yaml` or (v5)
`suite.yaml`, case-insensitively, or YAML under an `evals/` directory; node_modules, dist and
hidden directories are skipped. Of those, a file is an eval file when its top level holds
`tests` (or the older `eval_cases`), the key AgentV's loader requires. This finds 121 files at
v4.42.4 and 122 at the head of 2026-07-08, the figures of issue 24. TypeScript evals
(`*.eval.ts`) are not counted: assay reads YAML.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import traceback
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import yaml

PLACEHOLDER_KEYS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENERATIVE_AI_API_KEY",
    "OPENROUTER_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
)
"""Provider keys set (when unset) to a placeholder: validation needs them present, not real."""

_SKIPPED_DIRS = frozenset({"node_modules", "dist"})
_EVAL_NAMES = re.compile(r"(.*\.eval|eval|suite)\.ya?ml", re.IGNORECASE)


@dataclass
class Outcome:
    """One file's result: validated, or its first error (or the traceback of a crash)."""

    file: str
    ok: bool
    first_error: str = ""
    cause: str = ""
    traceback: str = ""
    loaded: bool = False
    """Whether the suite itself loaded (a failure then came from its target, judge or graders'
    programs, resolved by `plan_run`)."""
    causes: tuple[str, ...] = ()
    """The causes of all its errors (one each), for `--all`."""


def discover(root: Path) -> list[Path]:
    """AgentV's eval files under `root` (see the module docstring), sorted."""
    found: list[Path] = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("."))
        here = Path(directory)
        under_evals = "evals" in here.relative_to(root).parts
        for name in sorted(files):
            if not name.lower().endswith((".yaml", ".yml")):
                continue
            if not (_EVAL_NAMES.fullmatch(name) or under_evals):
                continue
            path = here / name
            try:
                data = yaml.safe_load(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, yaml.YAMLError):
                if _EVAL_NAMES.fullmatch(name):
                    found.append(path)  # named as an eval file: counted, and fails to load
                continue
            if isinstance(data, dict) and ("tests" in data or "eval_cases" in data):
                found.append(path)
    return sorted(found)


_PATHLIKE = re.compile(r"'[^'\s]*[/\\][^']*'|\([^)]*/[^)]*\)")
_LEADING_FILE = re.compile(r"^\S+\.ya?ml(:\d+)?:\s+")


def cause_of(message: str) -> str:
    """A message's first line with its specifics (file names, paths, numbers) blanked, so
    alike errors group; short quoted names (a key, a grader type) are kept: they are the
    cause."""
    text = _LEADING_FILE.sub("", message.splitlines()[0] if message else "")
    text = _PATHLIKE.sub("'…'", text)
    text = re.sub(r"\b\d+(\.\d+)?\b", "N", text)
    return text if len(text) <= 160 else text[:159] + "…"


def validate(
    file: Path, root: Path, judge_model: str | None = None, *, stand_in: bool = False
) -> Outcome:
    """Validate one file as `assay validate [--judge-model M]` does, from `root`; never
    raises. With `stand_in`, the suite's target is an offline `fake` target of the same
    name: what else stops the file, once its target resolves."""
    from assay.config import LoadedProject, ProjectConfig, load_project, load_suite
    from assay.errors import ConfigError, UserError
    from assay.runner import RunOptions, plan_run

    shown = str(file.relative_to(root))
    loaded = False
    try:
        project = load_project()
        suite = load_suite(shown)
        loaded = True
        options = RunOptions(judge_model=judge_model)
        if stand_in:
            name = suite.suite.target if isinstance(suite.suite.target, str) else "stand-in"
            fake = {"targets": {name: {"type": "fake", "default": "stand-in"}}}
            project = LoadedProject(ProjectConfig.model_validate(fake), None)
            options = RunOptions(judge_model=judge_model, target=name)
        plan_run(suite, project, options)
    except ConfigError as exc:
        first = exc.issues[0]
        causes = tuple(dict.fromkeys(cause_of(issue.message) for issue in exc.issues))
        return Outcome(
            shown, False, str(first), cause_of(first.message), loaded=loaded, causes=causes
        )
    except UserError as exc:
        return Outcome(shown, False, str(exc), cause_of(str(exc)), loaded=loaded)
    except BaseException as exc:  # a crash is what this measures: keep it, do not die of it
        if isinstance(exc, KeyboardInterrupt):
            raise
        return Outcome(shown, False, f"{type(exc).__name__}: {exc}", "", traceback.format_exc())
    return Outcome(shown, True)


def report(root: Path, outcomes: list[Outcome], *, every_cause: bool, files: bool) -> None:
    """Print the counts, the failing files grouped by the cause of their first error, and
    every traceback."""
    ok = [o for o in outcomes if o.ok]
    crashed = [o for o in outcomes if o.traceback]
    failed = [o for o in outcomes if not o.ok and not o.traceback]
    print(f"AgentV checkout: {root}")
    print(f"eval files: {len(outcomes)}")
    print(f"validated:  {len(ok)} ({100 * len(ok) / max(len(outcomes), 1):.1f}%)")
    print(f"failed:     {len(failed)}")
    print(
        "  of which the suite loaded and its target, judge or a program was refused: "
        f"{sum(o.loaded for o in failed)}"
    )
    print(f"tracebacks: {len(crashed)}")
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in failed:
        groups[outcome.cause].append(outcome)
    if groups:
        print("\nfailing files by cause of their first error (most files first):")
    for cause, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"\n[{len(members)}] {cause}")
        for outcome in members:
            print(f"    {outcome.first_error}")
    if every_cause:
        counts: dict[str, int] = defaultdict(int)
        for outcome in failed:
            for cause in outcome.causes or (outcome.cause,):
                counts[cause] += 1
        print("\nfiles by every cause among their errors (a file counts once per cause):")
        for cause, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"[{count}] {cause}")
    for outcome in crashed:
        print(f"\nTRACEBACK in {outcome.file}:\n{outcome.traceback}")
    if files:
        print("\nvalidated files:")
        for outcome in ok:
            print(f"    {outcome.file}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="a local checkout of AgentV's repository")
    parser.add_argument("--files", action="store_true", help="also list the validated files")
    parser.add_argument(
        "--all", action="store_true", help="also count files by every cause among their errors"
    )
    parser.add_argument(
        "--judge-model",
        metavar="MODEL",
        help="the judge `assay validate --judge-model` would be given (default: none, as a "
        "user who has configured none)",
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set an environment variable for the validation (repeatable), e.g. the "
        "LLM_TARGET an AgentV targets file reads",
    )
    parser.add_argument(
        "--stand-in-targets",
        action="store_true",
        help="give each suite an offline stand-in for its target, to see what else stops a "
        "file once its target resolves (AgentV's targets file is issue 24 item 1)",
    )
    args = parser.parse_args()
    root = args.checkout.resolve()
    if not root.is_dir():
        parser.error(f"{args.checkout} is not a directory")
    for key in PLACEHOLDER_KEYS:
        os.environ.setdefault(key, "placeholder")
    for pair in args.env:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            parser.error(f"--env wants NAME=VALUE, got {pair!r}")
        os.environ[name] = value
    os.chdir(root)
    outcomes = [
        validate(file, root, args.judge_model, stand_in=args.stand_in_targets)
        for file in discover(root)
    ]
    report(root, outcomes, every_cause=args.all, files=args.files)
    return 1 if any(o.traceback for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
