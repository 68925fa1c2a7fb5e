"""Start-up benchmark: the wall time of `assay --help` and of `python -c "import assay"`.

Each command is a fresh process, as a user or a shell completion meets it; the figure is the
best of `--repeats`. A bare `python -c pass` is timed too, so the interpreter's own start-up
can be told apart from assay's imports. Target (issue 10): `assay --help` under 0.3 s. Usage:

    .venv/bin/python benchmarks/startup_bench.py
    .venv/bin/python benchmarks/startup_bench.py --repeats 10
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from _timing import ASSAY

COMMANDS: dict[str, list[str]] = {
    "`python -c pass` (the interpreter alone)": [sys.executable, "-c", "pass"],
    '`python -c "import assay"`': [sys.executable, "-c", "import assay"],
    "`assay --help`": [ASSAY, "--help"],
}
HELP = "`assay --help`"


def best_wall(command: list[str], repeats: int) -> float:
    """The fastest of `repeats` runs of `command`, in seconds.

    Raises:
        RuntimeError: the command failed, with its stderr.
    """
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
        )
        timings.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise RuntimeError(f"{command} failed ({done.returncode}): {done.stderr.decode()}")
    return min(timings)


def measure(repeats: int) -> dict[str, float]:
    """Seconds for each of `COMMANDS`, best of `repeats`."""
    return {name: best_wall(command, repeats) for name, command in COMMANDS.items()}


def table(timings: dict[str, float], repeats: int) -> list[str]:
    """The Markdown table of start-up timings."""
    lines = [f"| command | wall (best of {repeats}) |", "|---|---|"]
    lines += [f"| {name} | {seconds:.3f} s |" for name, seconds in timings.items()]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="report the best of this many")
    args = parser.parse_args()
    print("\n".join(table(measure(args.repeats), args.repeats)))


if __name__ == "__main__":
    main()
