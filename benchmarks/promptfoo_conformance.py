"""promptfoo conformance: how many of promptfoo's own example configs `assay import promptfoo`
converts into a suite that `assay validate` accepts as it comes out (issue 25).

For every `promptfooconfig*.{yaml,yml,json,js,ts,…}` under the directory given (a promptfoo
checkout, or just its `examples/`), the script runs `assay import promptfoo CONFIG -o SUITE`
in this process (through the CLI's own entry point, so exit codes and messages are the user's)
into a temporary directory, then `assay validate SUITE` (in this process too; `--isolated` runs
it in a subprocess), with placeholder API
keys in the environment (a missing key is only a warning in `validate`, but the placeholders
keep the output quiet). It prints the counts and, for each failing config, its first error,
grouped by cause. Usage:

    .venv/bin/python benchmarks/promptfoo_conformance.py PATH/TO/promptfoo
    .venv/bin/python benchmarks/promptfoo_conformance.py PATH/TO/promptfoo/examples --show 5
    .venv/bin/python benchmarks/promptfoo_conformance.py DIR --json results.json

Nothing is sent anywhere: `validate` never calls a model.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

CONFIG_NAME = re.compile(r"promptfooconfig[\w.-]*\.(ya?ml|json|js|cjs|mjs|ts)$")
SKIP_DIRS = {"node_modules", ".git", "__pycache__", ".venv", "dist", "build"}
KEYS = [
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY",
    "DEEPSEEK_API_KEY",
    "MISTRAL_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "PERPLEXITY_API_KEY",
    "XAI_API_KEY",
    "CEREBRAS_API_KEY",
    "HF_API_TOKEN",
    "HF_TOKEN",
    "TRUEFOUNDRY_API_KEY",
    "HELICONE_API_KEY",
    "DATABRICKS_TOKEN",
    "REPLICATE_API_TOKEN",
    # Vertex AI: the access token is its key; the project names the endpoint, as in promptfoo
    "VERTEX_ACCESS_TOKEN",
    "VERTEX_PROJECT_ID",
    # Cloudflare AI Gateway: promptfoo reads the account and gateway ids from the environment
    # (when the provider's config does not set them), as it reads keys; they name the URL
    "CLOUDFLARE_ACCOUNT_ID",
    "CLOUDFLARE_GATEWAY_ID",
]


@dataclass
class Outcome:
    """What happened to one config."""

    config: str
    imported: bool = False
    tests: int | None = None
    validated: bool = False
    traceback: bool = False
    stage: str = ""
    """Where it stopped: `import` or `validate` (empty when it validated)."""
    error: str = ""
    warnings: int = 0
    notes: list[str] = field(default_factory=list)


def _looks_like_config(path: Path) -> bool:
    """Any YAML file whose top level has `prompts`, `providers` or `targets`, or `tests`
    with `redteam` (a config by content: generated redteam.yaml files and the like)."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    if not isinstance(data, dict):
        return False
    return bool({"prompts", "providers", "targets"} & set(data)) or {"tests", "redteam"} <= set(
        data
    )


def find_configs(root: Path, *, by_content: bool = False) -> list[Path]:
    """Every promptfoo config file under `root`, in a stable order: files named
    `promptfooconfig*`, and with `by_content` also YAML files that hold a config."""
    found: list[Path] = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            path = Path(directory) / name
            if CONFIG_NAME.fullmatch(name) or (
                by_content and name.endswith((".yaml", ".yml")) and _looks_like_config(path)
            ):
                found.append(path)
    return found


def _cli(argv: list[str], cwd: Path | None = None) -> tuple[int, str, str]:
    """An `assay` command in this process, through the CLI's own entry point (exit codes and
    messages are the user's): (exit code, stdout, stderr)."""
    from assay.cli._main import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    here = Path.cwd()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            if cwd is not None:
                os.chdir(cwd)
            main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        finally:
            os.chdir(here)
    return code, out.getvalue(), err.getvalue()


def _import(config: Path, suite: Path) -> tuple[int, str, str]:
    """`assay import promptfoo CONFIG -o SUITE --force`."""
    return _cli(["import", "promptfoo", str(config), "-o", str(suite), "--force"])


def _validate(suite: Path, env: dict[str, str], *, isolated: bool) -> tuple[int, str]:
    """`assay validate SUITE`: in this process (converted suites name no python target, so
    no user module is imported), or with `isolated` in a subprocess."""
    if not isolated:
        code, out, err = _cli(["validate", str(suite)], cwd=suite.parent)
        return code, err + out
    assay = Path(sys.executable).with_name("assay")
    try:
        done = subprocess.run(
            [str(assay), "validate", str(suite)],
            capture_output=True,
            text=True,
            env=env,
            cwd=suite.parent,
            timeout=120,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return 124, "validate did not finish within 120 s"
    return done.returncode, done.stderr + done.stdout


def _first_error(text: str) -> str:
    """The first `error:` line of an output (else its last line), without the temp path."""
    lines = [line for line in text.splitlines() if line.strip()]
    for n, line in enumerate(lines):
        if line.startswith("error:"):
            rest = line.removeprefix("error:").strip()
            return rest or (lines[n + 1].strip() if n + 1 < len(lines) else "")
    return lines[-1] if lines else ""


def cause(error: str) -> str:
    """An error reduced to its kind: no file names, line numbers, paths or quoted values."""
    text = re.sub(r"^\S+:\d+(:\d+)?( [\w\[\].'-]+)?: ", "", error)
    text = re.sub(r"^[\w./-]+\.(ya?ml|json|js|ts|cjs|mjs): ", "", text)
    text = re.sub(r"'[^']*'", "'…'", text)
    text = re.sub(r"`[^`]*`", "`…`", text)
    text = re.sub(r"\d+", "N", text)
    return text[:110]


def measure(
    config: Path, root: Path, work: Path, env: dict[str, str], *, isolated: bool
) -> Outcome:
    name = str(config.relative_to(root))
    outcome = Outcome(name)
    suite = work / (re.sub(r"[^\w.-]+", "_", name) + ".eval.yaml")
    code, out, err = _import(config, suite)
    outcome.warnings = err.count("warning: ")
    if "Traceback (most recent call last)" in err or code == 3:
        outcome.traceback = True
    if code != 0:
        outcome.stage = "import"
        outcome.error = _first_error(err + out)
        return outcome
    outcome.imported = True
    wrote = re.search(r", (\d+) tests?", out)
    outcome.tests = int(wrote.group(1)) if wrote else None
    code, text = _validate(suite, env, isolated=isolated)
    if "Traceback (most recent call last)" in text:
        outcome.traceback = True
    if code == 0:
        outcome.validated = True
    else:
        outcome.stage = "validate"
        outcome.error = _first_error(text)
    return outcome


def report(outcomes: list[Outcome], show: int) -> None:
    total = len(outcomes)

    def pct(n: int) -> str:
        return f"{n:4d} / {total} ({100 * n / total:5.1f}%)" if total else "0"

    imported = sum(o.imported for o in outcomes)
    validated = sum(o.validated for o in outcomes)
    empty = sum(o.imported and o.tests == 0 for o in outcomes)
    tracebacks = sum(o.traceback for o in outcomes)
    print(f"configs                {total}")
    print(f"imported (exit 0)      {pct(imported)}")
    print(f"validated              {pct(validated)}")
    print(f"wrote 0 tests          {pct(empty)}")
    print(f"tracebacks             {pct(tracebacks)}")
    print(f"warnings (total)       {sum(o.warnings for o in outcomes)}")
    groups: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
    for o in outcomes:
        if not o.validated:
            groups[(o.stage, cause(o.error))].append(o)
    if not groups:
        return
    print("\nfirst error of each failing config, grouped by cause (count, stage, cause):")
    for (stage, kind), members in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"\n{len(members):4d}  [{stage}] {kind}")
        for o in members[:show]:
            print(f"        {o.config}: {o.error[:220]}")
        if len(members) > show:
            print(f"        … and {len(members) - show} more")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="a promptfoo checkout, or its examples/ directory")
    parser.add_argument("--show", type=int, default=3, help="configs listed per cause")
    parser.add_argument("--json", type=Path, help="also write every outcome to this file")
    parser.add_argument("--only", help="only configs whose path contains this text")
    parser.add_argument(
        "--isolated",
        action="store_true",
        help="run each `assay validate` in its own process (slower; same verdicts)",
    )
    parser.add_argument(
        "--by-content",
        action="store_true",
        help="also count YAML files that hold a config under another name (redteam.yaml …)",
    )
    args = parser.parse_args()
    root: Path = args.root.resolve()
    examples = root / "examples" if (root / "examples").is_dir() else root
    configs = find_configs(examples, by_content=args.by_content)
    if args.only:
        configs = [c for c in configs if args.only in str(c)]
    env = {**os.environ, **{key: "placeholder-key" for key in KEYS}}
    os.environ.update({key: "placeholder-key" for key in KEYS})
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="pf-conformance-") as tmp:
        for config in configs:
            outcomes.append(measure(config, root, Path(tmp), env, isolated=args.isolated))
    report(outcomes, args.show)
    by_ext = Counter(Path(o.config).suffix for o in outcomes)
    print(f"\nconfig files by extension: {dict(sorted(by_ext.items()))}")
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=1))


if __name__ == "__main__":
    main()
