"""Warm-up: load what the suite's graders need before the first case starts.

A grader type's first use can load an NLP library and its lexicon (the tone grader's TextBlob:
over a second), which would otherwise land inside one case's grading on the event loop and
delay every other case's target call with it. The tests of a large suite are not built to
find their graders: their JSON text is searched for each type that has something to load.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import get_args

from assay.config import Suite, SuiteTests
from assay.graders import ExpectedOutcomes, Grader, Rubrics
from assay.graders._kinds import is_composite

__all__ = ["grader_types", "warm_up_graders"]


def _subclasses(cls: type[Grader]) -> Iterator[type[Grader]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _warming_types() -> dict[str, type[Grader]]:
    """Every grader type (built-in or plugin) with its own `warm_up`, by its `type` name."""
    found: dict[str, type[Grader]] = {}
    for cls in _subclasses(Grader):  # type: ignore[type-abstract]  # subclasses are concrete
        field = cls.model_fields.get("type")
        if field is None or cls.warm_up.__func__ is Grader.warm_up.__func__:  # type: ignore[attr-defined]
            continue
        for name in get_args(field.annotation):
            if isinstance(name, str):
                found[name] = cls
    return found


def _walk(graders: Iterable[Grader]) -> Iterator[type[Grader]]:
    for grader in graders:
        yield type(grader)
        if is_composite(grader):
            yield from _walk(grader.assertions)


def grader_types(suite: Suite) -> set[type[Grader]]:
    """The grader types of `suite` that have something to warm up (composites' members and
    conversation turns included)."""
    warming = _warming_types()
    found = {cls for cls in _walk(suite.assertions) if cls in warming.values()}
    tests = suite.tests
    if isinstance(tests, SuiteTests):
        found.update(cls for name, cls in warming.items() if tests.mentions(f'"type":"{name}"'))
        # Graders a test asks for by a key of its own rather than by type.
        for key, cls in (("rubrics", Rubrics), ("expected_outcomes", ExpectedOutcomes)):
            if tests.mentions(f'"{key}":'):
                found.add(cls)
        return found
    for test in tests:
        turns = test.turns or ()
        graders = [*test.assertions, *(g for turn in turns for g in turn.assertions)]
        found.update(cls for cls in _walk(graders) if cls in warming.values())
        if test.rubrics:
            found.add(Rubrics)
        if test.expected_outcomes or any(turn.expected_outcomes for turn in turns):
            found.add(ExpectedOutcomes)
    return found


def warm_up_graders(suite: Suite) -> None:
    """Call `warm_up` of every grader type the suite uses (the runner does, off the loop)."""
    for cls in sorted(grader_types(suite), key=lambda c: c.__name__):
        cls.warm_up()
