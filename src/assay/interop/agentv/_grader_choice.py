"""Which model grades an AgentV target's outputs: the one AgentV's llm-graders would call.

AgentV v4 (`createEvaluationRuntime` in its orchestrator) grades with the target's
`grader_target` (`judge_target`), else the target itself, looked up in the same targets file;
a `grader_target` that is not there leaves the target to grade itself when it is a model API
(or `mock`), else no grader. AgentV v5 (a `providers.yaml` catalogue) grades with the
provider's `grader_target`, else `.agentv/config.yaml`'s `defaults.grader`, looked up in the
catalogue the eval file reads and then in the one the config file names; with neither, it
refuses a run whose assertions need a grader before any case runs.

Where AgentV finds a model API, it is the suite's judge. Where AgentV has no grader until its
llm-graders run (a name not in its targets, a `mock` or `cli` target that grades itself), its
llm-graders fail on every case; assay does the same (`deferred`): a located warning at load,
and an `error` verdict on each judged grader at run time unless the run is given a judge
(--judge-model, ASSAY_JUDGE_MODEL, assay.yaml), as `agentv eval --grader-target` would be.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from assay.interop.agentv._targets import AgentVTargets
from assay.results import JSON

__all__ = ["GraderChoice", "choose_grader"]

_MOCK = "its grader '{name}' is a mock target: AgentV grades with the mock's canned reply"
_JUDGE_KEYS = ("provider", "model", "base_url", "api_key_env", "api_version", "temperature")


@dataclass(frozen=True)
class GraderChoice:
    """AgentV's grader for one target, in assay's terms (at most one field is set)."""

    judge: dict[str, JSON] | None = None
    """The judge spec of a model API grader: the suite's `judge`."""
    deferred: str | None = None
    """Why AgentV has no grader until its llm-graders run (they fail there)."""
    unusable: str | None = None
    """Why AgentV's grader (an agent or command) cannot be assay's judge."""


def choose_grader(
    name: str,
    found: AgentVTargets,
    *,
    default_grader: str | None = None,
    catalog: Callable[[], AgentVTargets | None] | None = None,
) -> GraderChoice:
    """AgentV's grader for target `name` of `found`; `default_grader` is v5's
    `defaults.grader`, `catalog` reads the provider catalogue `.agentv/config.yaml` names (v5
    looks a grader up there too)."""
    own = found.graders.get(name)
    v5 = found.catalogue or default_grader is not None
    grader = own or (default_grader if v5 else name)
    if grader is None:
        return GraderChoice()  # v5 refuses such a run; assay's settings (or its error) decide
    where, targets = found.display, found
    if grader not in found.specs and grader not in found.notes and v5 and catalog is not None:
        other = catalog()
        if other is not None and (grader in other.specs or grader in other.notes):
            where, targets = other.display, other
    if grader in targets.notes:
        why = targets.notes[grader].message
        return GraderChoice(unusable=f"its grader '{grader}' cannot be used ({why})")
    spec = targets.specs.get(grader)
    if spec is None:
        if v5:
            return GraderChoice(
                deferred=f"its grader '{grader}' is not a provider of {where}; AgentV fails "
                "each llm-grader with 'Grader provider not found'"
            )
        spec = found.specs.get(name)
        if spec is not None and _is_model_api(spec):
            return GraderChoice(judge=_judge(spec))  # AgentV's model API grades itself
        if _kind(found, name) == "mock":
            return GraderChoice(deferred=_MOCK.format(name=name))
        return GraderChoice(
            deferred=f"its grader_target '{grader}' is not a target of {where} and a "
            f"{_kind(found, name)} target cannot grade; AgentV fails each llm-grader with "
            "'No grader provider available'"
        )
    if _is_model_api(spec):
        return GraderChoice(judge=_judge(spec))
    kind = _kind(targets, grader)
    if kind == "mock":
        return GraderChoice(deferred=_MOCK.format(name=grader))
    if grader == name and kind == "cli":
        return GraderChoice(
            deferred="it is a cli target without a grader_target: AgentV sends the grading "
            "prompt to the target's own command"
        )
    if grader == name:
        return GraderChoice()  # an agent without a grader: AgentV refuses the run, as assay does
    return GraderChoice(
        unusable=f"its grader '{grader}' is a {kind} target of {where}, which assay cannot use "
        "as the judge"
    )


def _is_model_api(spec: dict[str, JSON]) -> bool:
    return spec.get("type") in ("openai", "anthropic")


def _judge(spec: dict[str, JSON]) -> dict[str, JSON]:
    return {k: spec[k] for k in _JUDGE_KEYS if k in spec}


def _kind(found: AgentVTargets, name: str) -> str:
    return found.kinds.get(name, "command")
