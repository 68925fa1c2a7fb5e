"""Python callables as targets and graders, for `assay.evaluate(..., target=fn, graders=[fn])`.

Both follow the conventions of their YAML twins, so nothing new has to be learnt: a target
function is called like a `python` target's `module:function` (the case mapping in; a string or
the structured output mapping out), a grader function like an in-process `code-grader` (the
grading context mapping in; a number, a boolean or `{score, hits, misses, reasoning, details}`
out). Each records itself as that twin (`type: python` / `type: code-grader` with the
function's `module:qualname`), so a stored run says which code produced it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Literal

from pydantic import Field, PrivateAttr, TypeAdapter, ValidationError

from assay._strict_model import suggest
from assay.errors import UsageError
from assay.graders import (
    BUILTIN_GRADERS,
    Grader,
    GradingContext,
    Measurement,
    grader_spec,
    plugin_graders,
)
from assay.results import JSON, TargetOutput
from assay.targets import Target, TargetRequest
from assay.targets.python import call_function

__all__ = [
    "CallableTarget",
    "FunctionGrader",
    "GraderFunction",
    "GraderLike",
    "TargetFunction",
    "TargetLike",
    "as_grader",
    "as_graders",
    "as_target",
    "function_reference",
]

TargetFunction = Callable[[dict[str, JSON]], object]
"""`fn(case) -> str | mapping` (sync or async): the `python` target's convention."""
GraderFunction = Callable[[dict[str, JSON]], object]
"""`fn(context) -> float | bool | mapping` (sync or async): the in-process code-grader's."""
TargetLike = str | Target | TargetFunction
"""What `evaluate(target=...)` accepts: a target name, a target object or a function."""
GraderLike = Grader | GraderFunction | Mapping[str, JSON]
"""What `evaluate(graders=[...])` accepts: a grader object, a function or a YAML-style spec."""


def function_reference(function: Callable[..., object]) -> str:
    """`module:qualname` of a function, as a `python` target or `code-grader` would name it."""
    module = getattr(function, "__module__", None) or "__main__"
    name = getattr(function, "__qualname__", None) or type(function).__qualname__
    return f"{module}:{name}"


class CallableTarget(Target):
    """A Python function as the system under test: a `python` target that needs no import."""

    type: Literal["python"] = "python"
    """Recorded as a `python` target, the convention it follows."""
    function: str
    """The function's `module:qualname` (descriptive: the callable itself is held privately)."""
    _callable: TargetFunction = PrivateAttr()

    @classmethod
    def wrap(cls, function: TargetFunction) -> CallableTarget:
        """The target that calls `function` with each case."""
        target = cls(function=function_reference(function))
        target._callable = function
        return target

    def describe(self) -> str:
        """`python module:qualname`, like the `python` target."""
        return f"python {self.function}"

    async def call(self, request: TargetRequest) -> TargetOutput:
        """Call the function with the case mapping (SPEC §3) and parse what it returns.

        Raises:
            TargetError: The function raised or returned a value of the wrong shape.
        """
        return await call_function(self._callable, request, f"function '{self.function}'")


class FunctionGrader(Grader):
    """A Python function as a grader: an in-process `code-grader` that needs no import."""

    type: Literal["code-grader"] = "code-grader"
    """Recorded as a `code-grader`, the convention it follows."""
    function: str
    """The function's `module:qualname` (descriptive: the callable itself is held privately)."""
    timeout_s: Annotated[float, Field(gt=0)] = 30.0
    """Stop waiting after this many seconds; the case gets a grader error."""
    _callable: GraderFunction = PrivateAttr()

    @classmethod
    def wrap(
        cls,
        function: GraderFunction,
        *,
        name: str | None = None,
        weight: float = 1.0,
        required: bool = False,
        min_score: float | None = None,
        timeout_s: float = 30.0,
    ) -> FunctionGrader:
        """The grader that asks `function`; named after the function unless `name` is given."""
        grader = cls(
            function=function_reference(function),
            name=name or getattr(function, "__name__", None) or "code-grader",
            weight=weight,
            required=required,
            min_score=min_score,
            timeout_s=timeout_s,
        )
        grader._callable = function
        return grader

    @property
    def awaits_io(self) -> bool:
        """Runs in a worker thread (or awaits), like an in-process code-grader."""
        return True

    async def measure(self, ctx: GradingContext) -> Measurement:
        # the code-grader's calling convention, imported when a function first grades: a run
        # imports the modules of the graders it uses
        from assay.graders.code import (
            call_grader_function,
            context_mapping,
            measurement_from_reply,
        )

        source = f"function '{self.function}'"
        reply = await call_grader_function(
            self._callable, context_mapping(ctx), self.timeout_s, source
        )
        return measurement_from_reply(reply, source)


def as_target(target: Target | TargetFunction) -> Target:
    """A target object as is; a function wrapped in a `CallableTarget`.

    Raises:
        UsageError: `target` is neither.
    """
    if isinstance(target, Target):
        return target
    if callable(target):
        return CallableTarget.wrap(target)
    raise UsageError(
        f"target={target!r} is not a target: pass a target name, a Target object "
        "(e.g. assay.targets.FakeTarget(...)) or a function `fn(case) -> str`"
    )


_SPEC: TypeAdapter[Grader] | None = None


def _spec_adapter() -> TypeAdapter[Grader]:
    global _SPEC  # noqa: PLW0603 — built once on first use: it compiles every grader's schema
    if _SPEC is None:
        _SPEC = TypeAdapter(grader_spec())  # plugin types included
    return _SPEC


def as_grader(grader: GraderLike, index: int) -> Grader:
    """A grader object as is, a mapping validated like a YAML spec, a function wrapped.

    Raises:
        UsageError: `grader` is none of those, or the mapping is not a valid grader spec.
        PluginError: an installed grader plugin cannot be loaded.
    """
    where = f"graders[{index}]"
    if isinstance(grader, Grader):
        return grader
    if isinstance(grader, Mapping):
        spec = dict(grader)
        kind = spec.get("type")
        if not isinstance(kind, str):
            raise UsageError(f"{where}: a grader mapping needs a `type`, e.g. 'contains'")
        spec["type"] = kind.replace("_", "-")
        known = {*BUILTIN_GRADERS, *plugin_graders()}  # the names: no grader module imported
        if spec["type"] not in known:
            hint = suggest(spec["type"], known)
            raise UsageError(f"{where}: unknown grader type '{kind}'.{hint}")
        try:
            return _spec_adapter().validate_python(spec)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'][1:]) or 'type'}: {e['msg']}"
                for e in exc.errors()
            )
            raise UsageError(f"{where}: not a valid grader spec ({problems})") from None
    if callable(grader):
        return FunctionGrader.wrap(grader)
    raise UsageError(
        f"{where}={grader!r} is not a grader: pass a grader object (e.g. "
        "assay.graders.Contains(value='x')), a mapping like a YAML assertion, or a function "
        "`fn(context) -> float | bool | dict`"
    )


def as_graders(graders: Sequence[GraderLike]) -> list[Grader]:
    """Every entry of `evaluate(graders=...)` as a grader object, in order."""
    return [as_grader(g, i) for i, g in enumerate(graders)]
