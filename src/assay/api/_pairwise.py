"""Pairwise judging of two runs (`assay compare --pairwise`, SPEC §6): the judge calls.

For every case both runs answered, the judge is asked twice which output is better, the base's
in position A and then the head's; the two answers are folded (`assay.comparison`) into a win,
a loss or a tie for the head. Calls run concurrently under the judge concurrency limit and go
through the response cache, so comparing the same runs again costs nothing.

Which judge: the head run's recorded judge (the suite's, as the run resolved it), over the
project's `assay.yaml` `judge:`, under `ASSAY_JUDGE_MODEL` / `ASSAY_JUDGE_BASE_URL` and the
command line. A stored run is data anybody may have written (`assay runs import`), so its
judge endpoint is never reused on its own: it would receive the judge's API key.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from assay.cache import ResponseCache
from assay.comparison import PairwiseCase, PairwiseResult, fold_preferences, summarise_pairwise
from assay.errors import UsageError
from assay.judge import (
    JudgeClient,
    JudgeError,
    Judgement,
    JudgePool,
    JudgeSpec,
    PairwiseAnswer,
    ask_preference,
    judge_from_env,
    merge_judges,
    pairwise_template,
)
from assay.results import JSON, CaseResult, RunResult, TokenUsage, add_usage
from assay.store import NotFoundError, Store

__all__ = [
    "DEFAULT_JUDGE_CONCURRENCY",
    "case_metadata",
    "judge_pairwise",
    "judge_pairwise_async",
    "pairwise_judge",
    "run_judge_concurrency",
]

DEFAULT_JUDGE_CONCURRENCY = 8
"""Judge calls at once when neither `--judge-concurrency` nor the head run says: the runs'
default."""

_ENDPOINT_FIELDS = frozenset({"base_url", "api_key_env"})
"""What a stored run's judge does not contribute: where the API key goes, and which key."""


def pairwise_judge(
    recorded: JSON,
    *,
    project: JudgeSpec | None = None,
    judge_model: str | None = None,
    judge_base_url: str | None = None,
    environ: Mapping[str, str] | None = None,
    run_id: str = "the head run",
) -> JudgeSpec:
    """The judge of pairwise judging, checked: a model, and its API key when it needs one.

    Args:
        recorded: The head run's snapshot `judge` (what the run resolved), or None.
        project: The `judge:` of `assay.yaml`.
        judge_model: `--judge-model`.
        judge_base_url: `--judge-base-url`.
        environ: Where `ASSAY_JUDGE_*` and the API key are read (default `os.environ`).
        run_id: The head run, as messages name it.

    Raises:
        UsageError: No level names a model; the run's judge had its own endpoint that no
            trusted level gives; or the judge's API key variable is not set.
    """
    env = os.environ if environ is None else environ
    stored = _recorded(recorded)
    flags = {"model": judge_model, "base_url": judge_base_url}
    given = {k: v for k, v in flags.items() if v}
    forced = merge_judges(judge_from_env(env), JudgeSpec.model_validate(given) if given else None)
    safe = None
    if stored is not None:
        kept = {n: getattr(stored, n) for n in stored.model_fields_set - _ENDPOINT_FIELDS}
        safe = JudgeSpec.model_validate(kept)
    spec = merge_judges(project, safe, forced)
    if spec is None or not spec.model:
        raise UsageError(
            "--pairwise needs a judge and none is configured: pass --judge-model, export "
            "ASSAY_JUDGE_MODEL, or set `judge: {model: ...}` in assay.yaml"
        )
    from_run = stored is not None and stored.model and not (forced is not None and forced.model)
    if from_run and stored is not None and stored.base_url and spec.base_url != stored.base_url:
        raise UsageError(
            f"run '{run_id}' asked its judge {stored.model} at {stored.base_url[:200]}, and "
            "a stored run's judge endpoint is not reused (it would receive the judge's API "
            f"key): pass --judge-base-url {stored.base_url[:200]} if you trust it, or name "
            "a judge with --judge-model"
        )
    variable = spec.resolved_api_key_env
    if not spec.base_url and variable and not env.get(variable):
        raise UsageError(
            f"the judge {spec.model} reads its API key from {variable}, which is not set; "
            "export it, or name another variable in assay.yaml's `judge.api_key_env`"
        )
    return spec


def _recorded(recorded: JSON) -> JudgeSpec | None:
    """A snapshot's judge as settings; None when absent or not valid here (e.g. a provider
    plugin this installation lacks)."""
    if not isinstance(recorded, dict):
        return None
    try:
        return JudgeSpec.model_validate(recorded)
    except ValueError:
        return None


_MAX_CONCURRENCY = 4096
"""The largest `--judge-concurrency`: a stored number beyond it is not used."""


def run_judge_concurrency(snapshot: Mapping[str, JSON]) -> int:
    """The judge concurrency the run had: its `--judge-concurrency`, else its suite's
    `execution.judge_concurrency`, else `DEFAULT_JUDGE_CONCURRENCY` (a stored value that is
    not a number in 1–4096 is ignored)."""
    options = snapshot.get("options")
    suite = snapshot.get("suite")
    execution = suite.get("execution") if isinstance(suite, dict) else None
    for level in (options, execution):
        value = level.get("judge_concurrency") if isinstance(level, dict) else None
        if type(value) is int and 1 <= value <= _MAX_CONCURRENCY:  # not a bool, not a float
            return value
    return DEFAULT_JUDGE_CONCURRENCY


def case_metadata(snapshot: Mapping[str, JSON]) -> dict[str, Mapping[str, JSON]]:
    """Each inline test's `metadata` by test id, from a run's snapshot: where the `fake`
    judge reads `fake_judge` (tests from dataset files are not in the snapshot)."""
    suite = snapshot.get("suite")
    tests = suite.get("tests") if isinstance(suite, dict) else None
    found: dict[str, Mapping[str, JSON]] = {}
    for test in tests if isinstance(tests, list) else []:
        if isinstance(test, dict) and isinstance(test.get("id"), str):
            metadata = test.get("metadata")
            if isinstance(metadata, dict):
                found[test["id"]] = metadata
    return found


@dataclass
class _Tally:
    """What the judge calls cost, over every case."""

    calls: int = 0
    cached: int = 0
    tokens: TokenUsage | None = None
    cost: float | None = None

    def add(
        self, tokens: TokenUsage | None, cost: float | None, *, cached: bool, answered: bool
    ) -> None:
        """Count one call: what it cost (a failed one too), whether it gave an answer."""
        self.tokens = add_usage(self.tokens, tokens)
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost
        self.calls += answered
        self.cached += cached


def judge_pairwise(
    store: Store | None,
    base: RunResult,
    head: RunResult,
    judge: JudgeSpec,
    *,
    concurrency: int = DEFAULT_JUDGE_CONCURRENCY,
    cache: ResponseCache | None = None,
    metadata: Mapping[str, Mapping[str, JSON]] | None = None,
) -> PairwiseResult:
    """Judge the head's outputs against the base's, case by case (two calls per case).

    Args:
        store: Where a run given without its results (`base.results` empty) is read, one
            case at a time; None when both runs carry their results (export files).
        base: The reference run.
        head: The candidate run.
        judge: The judge (`pairwise_judge`).
        concurrency: Judge calls at once.
        cache: The response cache, or None.
        metadata: Test metadata by case id, passed to the judge (the `fake` provider's
            `fake_judge`).

    Raises:
        UsageError: A run without its results and no store.
        assay.cache.CacheMiss: Replay mode and an answer is not cached.
    """
    return asyncio.run(
        judge_pairwise_async(
            store, base, head, judge, concurrency=concurrency, cache=cache, metadata=metadata
        )
    )


async def judge_pairwise_async(
    store: Store | None,
    base: RunResult,
    head: RunResult,
    judge: JudgeSpec,
    *,
    concurrency: int = DEFAULT_JUDGE_CONCURRENCY,
    cache: ResponseCache | None = None,
    metadata: Mapping[str, Mapping[str, JSON]] | None = None,
) -> PairwiseResult:
    """`judge_pairwise` inside a running event loop (the one code path; the sync function
    runs this)."""
    return await _judge_all(
        _pairs(store, base, head),
        judge,
        concurrency=concurrency,
        cache=cache,
        metadata=metadata or {},
    )


def _pairs(store: Store | None, base: RunResult, head: RunResult) -> Iterator[_Pair]:
    """The cases both runs answered, in the head's order: one head result at a time, its
    base result looked up (a stored base is read per case, so memory stays flat)."""
    if head.results:
        heads: Iterator[CaseResult] = iter(head.results)
    else:
        heads = _require(store).iter_case_results(head.id)
    listed = {r.case_id: r for r in base.results} if base.results else None
    for result in heads:
        if result.output is None:
            continue
        if listed is not None:
            found = listed.get(result.case_id)
        else:
            try:
                found = _require(store).get_case_result(base.id, result.case_id)
            except NotFoundError:
                found = None
        if found is not None and found.output is not None:
            yield _Pair(result.case_id, result.input, found.output, result.output)


def _require(store: Store | None) -> Store:
    if store is None:
        raise UsageError("a run without its case results needs the store it is in")
    return store


@dataclass(frozen=True, slots=True)
class _Pair:
    case_id: str
    input: JSON
    base: str
    head: str


async def _judge_all(
    pairs: Iterator[_Pair],
    spec: JudgeSpec,
    *,
    concurrency: int,
    cache: ResponseCache | None,
    metadata: Mapping[str, Mapping[str, JSON]],
) -> PairwiseResult:
    pool = JudgePool(forced=spec, cache=cache, concurrency=concurrency)
    client = pool.client()
    tally = _Tally()
    done: list[tuple[int, PairwiseCase]] = []
    numbered = enumerate(pairs)

    async def worker() -> None:
        # Workers share one iterator: at most `concurrency` cases are in flight, however
        # many the runs hold.
        for index, pair in numbered:
            done.append((index, await _judge_one(client, pair, tally, metadata)))

    try:
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    finally:
        await pool.close()
    done.sort(key=lambda item: item[0])
    return summarise_pairwise(
        (case for _, case in done),
        judge=spec.describe(),
        prompt=f"pairwise@{pairwise_template().version}",
        judge_calls=tally.calls,
        cached_calls=tally.cached,
        judge_token_usage=tally.tokens,
        judge_cost_usd=tally.cost,
    )


async def _judge_one(
    client: JudgeClient,
    pair: _Pair,
    tally: _Tally,
    metadata: Mapping[str, Mapping[str, JSON]],
) -> PairwiseCase:
    """Both orders of one case, asked at once, folded."""
    meta = metadata.get(pair.case_id)

    async def ask(a: str, b: str) -> Judgement[PairwiseAnswer] | JudgeError:
        try:
            answer = await ask_preference(
                client, input=pair.input, output_a=a, output_b=b, metadata=meta
            )
        except JudgeError as exc:
            tally.add(exc.token_usage, exc.cost_usd, cached=False, answered=False)
            return exc
        tally.add(answer.token_usage, answer.cost_usd, cached=answer.cached, answered=True)
        return answer

    base_first, head_first = await asyncio.gather(
        ask(pair.base, pair.head), ask(pair.head, pair.base)
    )
    answers = [r.answer for r in (base_first, head_first) if isinstance(r, Judgement)]
    reasoning = [answer.reasoning for answer in answers]
    if isinstance(base_first, JudgeError) or isinstance(head_first, JudgeError):
        failed = base_first if isinstance(base_first, JudgeError) else head_first
        return PairwiseCase(
            pair.case_id,
            None,
            None,
            None if isinstance(base_first, JudgeError) else base_first.answer.preferred,
            None if isinstance(head_first, JudgeError) else head_first.answer.preferred,
            reasoning,
            str(failed),
        )
    first, second = base_first.answer.preferred, head_first.answer.preferred
    outcome, consistent = fold_preferences(first, second)
    return PairwiseCase(pair.case_id, outcome, consistent, first, second, reasoning)
