"""`assay review`: a person's verdict on a case, and review labels in and out as JSONL.

`assay review RUN CASE --verdict pass|fail [--note TEXT]` records a review (SPEC §6);
`assay review export RUN -o labels.jsonl` and `assay review import labels.jsonl` move them
between stores and labelling tools, one `{"run_id", "case_id", "verdict", "note"}` per line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from assay.cli._store import db_option, open_cli_store

if TYPE_CHECKING:
    from assay.results import Review

__all__ = ["command"]

_SUBCOMMANDS = ("export", "import")


class _ReviewGroup(click.Group):
    """`review RUN CASE ...` records a review; `review export|import ...` are subcommands."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in _SUBCOMMANDS and args[0] not in ("-h", "--help"):
            args = ["set", *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(
            "assay review", "RUN CASE --verdict pass|fail [--note TEXT] | export | import"
        )


@click.group("review", cls=_ReviewGroup)
def command() -> None:
    """Record a person's verdict on a case; export and import review labels.

    \b
    assay review RUN CASE --verdict pass|fail [--note TEXT] [--reviewer NAME]
    assay review export RUN -o labels.jsonl
    assay review import labels.jsonl

    The machine verdict is kept beside the review; `assay calibrate` measures how well they
    agree. RUN is a run id, a unique id prefix, `latest` or `latest~N`.
    """


@command.command("set", hidden=True)
@click.argument("run_ref", metavar="RUN")
@click.argument("case_id", metavar="CASE")
@click.option("--verdict", type=click.Choice(["pass", "fail"]), required=True)
@click.option("--note", default="", help="Why, for the next reader.")
@click.option("--reviewer", default=None, help="Who reviews (default: $USER).")
@db_option
def set_command(
    run_ref: str, case_id: str, verdict: str, note: str, reviewer: str | None, db: str | None
) -> None:
    """Record (or replace) the review of CASE in RUN."""
    from assay.api import resolve_run_ref
    from assay.results import Review, now_iso

    with open_cli_store(db) as store:
        run_id = resolve_run_ref(store, run_ref)
        machine = store.get_case_result(run_id, case_id).verdict
        previous = store.get_review(run_id, case_id)
        stored = store.put_review(
            Review(
                run_id=run_id,
                case_id=case_id,
                verdict="pass" if verdict == "pass" else "fail",
                note=note,
                reviewer=os.environ.get("USER", "") if reviewer is None else reviewer,
                reviewed_at=now_iso(),
            )
        )
    click.echo(
        f"reviewed case '{case_id}' of run {stored.run_id}: {stored.verdict} "
        f"(the machine said {machine})"
    )
    if previous is not None:
        click.echo(f"replaced the review of {previous.reviewed_at} ({previous.verdict})")


@command.command("export")
@click.argument("run_ref", metavar="RUN")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Default: stdout."
)
@db_option
def export_command(run_ref: str, output: Path | None, db: str | None) -> None:
    """Write RUN's reviews as JSONL: one {"run_id", "case_id", "verdict", "note"} per line."""
    from assay.api import resolve_run_ref

    with open_cli_store(db) as store:
        reviews = store.list_reviews(resolve_run_ref(store, run_ref))
    lines = "".join(json.dumps(_label(r), ensure_ascii=False) + "\n" for r in reviews)
    if output is None:
        click.echo(lines, nl=False)
        return
    output.write_text(lines, encoding="utf-8")
    click.echo(f"wrote {len(reviews)} reviews to {output}", err=True)


def _label(review: Review) -> dict[str, str]:
    label = {"run_id": review.run_id, "case_id": review.case_id, "verdict": review.verdict}
    label["note"] = review.note
    if review.reviewer:
        label["reviewer"] = review.reviewer
    return label


@command.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@db_option
def import_command(path: Path, db: str | None) -> None:
    """Record the reviews of a JSONL file (as `export` writes); every line is checked first,
    so a file with a bad line records nothing."""
    from assay.errors import UsageError
    from assay.results import now_iso

    labels = _read_labels(path)
    with open_cli_store(db) as store:
        for number, review in labels:
            try:
                store.get_case_result(review.run_id, review.case_id)
            except UsageError as exc:
                raise UsageError(f"{path}:{number}: {exc}") from None
        at = now_iso()
        for _, review in labels:
            store.put_review(review.model_copy(update={"reviewed_at": at}))
    click.echo(f"recorded {len(labels)} reviews from {path}")


def _read_labels(path: Path) -> list[tuple[int, Review]]:
    """The file's reviews with their line numbers.

    Raises:
        UsageError: A line is not JSON or not a review label (`path:line: why`).
    """
    from pydantic import ValidationError

    from assay.errors import UsageError
    from assay.results import Review

    labels: list[tuple[int, Review]] = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UsageError(f"{path}:{number}: not JSON ({exc.msg})") from None
            if not isinstance(data, dict):
                raise UsageError(f"{path}:{number}: a label is a JSON object")
            try:
                labels.append((number, Review.model_validate({"reviewed_at": "", **data})))
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or '(line)'}: {e['msg']}"
                    for e in exc.errors()[:3]
                )
                raise UsageError(
                    f"{path}:{number}: not a review label ({problems}); a line is "
                    '{"run_id", "case_id", "verdict": "pass"|"fail", "note"}'
                ) from None
    return labels
