"""`assay calibrate`: how well the machine's verdicts agree with people's reviews.

Over every reviewed case of the runs given: the case verdict (machine `pass` vs not) and each
judged grader against the human verdict, with Cohen's κ and its 95% interval (SPEC §6). With
`--min-kappa` it is a judge-quality gate for CI: exit 1 when κ is below it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from assay.cli._store import db_option, open_cli_store

if TYPE_CHECKING:
    from assay.comparison import Agreement, Calibration

__all__ = ["command"]


@click.command("calibrate")
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@click.option("--grader", metavar="NAME", help="Only this judged grader (and the case verdict).")
@click.option("--json", "as_json", is_flag=True, help="Print the agreement as JSON.")
@click.option(
    "--min-kappa",
    type=click.FloatRange(-1.0, 1.0),
    help="Exit 1 when κ (of --grader, else of the case verdict) is below this, or undefined.",
)
@db_option
def command(
    run_refs: tuple[str, ...],
    grader: str | None,
    as_json: bool,
    min_kappa: float | None,
    db: str | None,
) -> None:
    """Agreement of machine and human verdicts over the reviewed cases of RUN...

    Reviews come from `assay review`, the studio's review queue or `assay review import`.
    Exit codes: 0, 1 when κ is below --min-kappa, 2 for bad input (no reviews included).
    """
    from assay.api import resolve_run_ref
    from assay.comparison import calibrate
    from assay.errors import UsageError

    with open_cli_store(db) as store:
        reviewed = []
        for ref in run_refs:
            run_id = resolve_run_ref(store, ref)
            for review in store.list_reviews(run_id):
                reviewed.append((store.get_case_result(run_id, review.case_id), review))
    if not reviewed:
        raise UsageError(
            f"no reviewed cases in {', '.join(run_refs)}: review some with "
            "`assay review RUN CASE --verdict pass|fail` or the studio's review queue"
        )
    result = calibrate(reviewed, grader)
    if grader is not None and grader not in result.graders:
        raise UsageError(f"no judged grader named '{grader}' among the reviewed cases")
    if as_json:
        click.echo(json.dumps(result.to_json()))
    else:
        _print(result)
    if min_kappa is not None:
        gated = result.graders[grader] if grader is not None else result.case
        kappa = gated.cohen_kappa
        if kappa is None or kappa < min_kappa:
            shown = "undefined" if kappa is None else f"{kappa:.3f}"
            click.echo(
                f"κ {shown} of {grader or 'the case verdict'} is below --min-kappa {min_kappa}",
                err=True,
            )
            raise SystemExit(1)


def _print(result: Calibration) -> None:
    from rich.table import Table

    from assay.cli._output import stdout_console

    table = Table(box=None, pad_edge=False)
    for column in ("verdict of", "n", "agreement", "κ", "κ 95% CI", "false pass", "confusion"):
        table.add_column(
            column, justify="left" if column in ("verdict of", "confusion") else "right"
        )
    rows = [("case", result.case), *result.graders.items()]
    for name, agreement in rows:
        table.add_row(name, *_cells(agreement))
    console = stdout_console()
    console.print(table)
    console.print(
        "confusion: machine pass→human pass/fail, machine fail→human pass/fail; "
        "κ undefined when both sides gave every case one and the same verdict"
    )


def _cells(agreement: Agreement) -> tuple[str, ...]:
    def pct(value: float | None) -> str:
        return "—" if value is None else f"{value * 100:.1f}%"

    kappa = agreement.cohen_kappa
    interval = agreement.kappa_ci95
    matrix = agreement.confusion
    return (
        str(agreement.n),
        pct(agreement.agreement),
        "—" if kappa is None else f"{kappa:.3f}",
        "—" if interval is None else f"[{interval[0]:.3f}, {interval[1]:.3f}]",
        pct(agreement.false_pass_rate),
        f"{matrix['pass']['pass']}/{matrix['pass']['fail']}, "
        f"{matrix['fail']['pass']}/{matrix['fail']['fail']}",
    )
