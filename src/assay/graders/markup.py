"""XML graders: is-xml (the whole output is one XML document) and contains-xml (some part is).

Parsed with the standard library's expat, which loads no external resource. A document type
declaration with an internal subset is refused (its entity definitions are how "billion
laughs" documents expand), as promptfoo refuses it. `required_elements` are dot paths from the
root element (`order.items.item`): each must name a chain of nested elements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from assay.graders._base import Grader, GradingContext, Measurement
from assay.graders._details import detail

__all__ = ["ContainsXml", "IsXml"]

_MAX_FRAGMENTS = 50
"""Candidate fragments contains-xml tries; an output with more start tags keeps the first 50."""
_START_TAG = re.compile(r"<([A-Za-z_][\w.\-]*(?::[\w.\-]+)?)[\s/>]")


@dataclass
class _Element:
    tag: str
    children: list[_Element] = field(default_factory=list)


class _Refused(ValueError):
    """The document declares an internal DTD subset."""


def parse_xml(text: str) -> tuple[_Element | None, str | None]:
    """The root element of `text` as one XML document and None, or None and why it is not."""
    from xml.parsers import expat

    parser = expat.ParserCreate()
    stack: list[_Element] = []
    root: list[_Element] = []

    def start(tag: str, attributes: object) -> None:
        del attributes
        element = _Element(tag)
        (stack[-1].children if stack else root).append(element)
        stack.append(element)

    def end(tag: str) -> None:
        del tag
        stack.pop()

    def doctype(name: str, sysid: object, pubid: object, has_internal_subset: int) -> None:
        del name, sysid, pubid
        if has_internal_subset:
            raise _Refused("a DOCTYPE with an internal subset is not accepted")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.StartDoctypeDeclHandler = doctype
    try:
        parser.Parse(text.strip(), True)
    except _Refused as exc:
        return None, str(exc)
    except expat.ExpatError as exc:
        return None, f"line {exc.lineno} column {exc.offset + 1}: {expat.errors.messages[exc.code]}"
    return root[0], None


def _missing(root: _Element, paths: list[str]) -> list[str]:
    """The required dot paths that do not name a chain of nested elements."""
    missing = []
    for path in paths:
        first, *rest = path.split(".")
        found = root.tag == first
        level = [root]
        for name in rest if found else []:
            level = [c for e in level for c in e.children if c.tag == name]
            if not level:
                found = False
                break
        if not found:
            missing.append(path)
    return missing


class _XmlGrader(Grader):
    required_elements: list[str] = Field(default_factory=list)
    """Dot paths from the root element (`analysis.classification`) that must exist."""

    def _judge(self, root: _Element, fragment: str, ctx: GradingContext) -> Measurement:
        missing = _missing(root, self.required_elements)
        details = [
            detail(f"{self.type}.{p}", p not in missing, expected=p, message="required element")
            for p in self.required_elements
        ]
        if missing:
            return Measurement(
                score=0.0,
                misses=[f"XML lacks required element(s): {', '.join(missing)}"],
                details=details,
            )
        return Measurement(
            score=1.0,
            hits=[f"well-formed XML with root <{root.tag}>"],
            details=[
                detail(self.type, True, expected="well-formed XML", actual=fragment),
                *details,
            ],
        )


class IsXml(_XmlGrader):
    """The whole output is one well-formed XML document (score 1 or 0)."""

    type: Literal["is-xml"]

    async def measure(self, ctx: GradingContext) -> Measurement:
        root, problem = parse_xml(ctx.output)
        if root is None:
            return Measurement(
                score=0.0,
                misses=[f"output is not well-formed XML ({problem})"],
                details=[
                    detail(
                        "is-xml",
                        False,
                        expected="well-formed XML",
                        actual=ctx.output,
                        message=problem or "",
                    )
                ],
            )
        return self._judge(root, ctx.output, ctx)


class ContainsXml(_XmlGrader):
    """Some part of the output is a well-formed XML element (score 1 or 0)."""

    type: Literal["contains-xml"]

    async def measure(self, ctx: GradingContext) -> Measurement:
        text = ctx.output
        best: Measurement | None = None
        for match in list(_START_TAG.finditer(text))[:_MAX_FRAGMENTS]:
            name = match.group(1)
            closing = f"</{name}>"
            ends = [text.rfind(closing) + len(closing)] if closing in text else []
            self_closing = text.find("/>", match.start())
            if self_closing != -1:
                ends.append(self_closing + 2)
            for end in ends:
                if end <= match.start():
                    continue
                fragment = text[match.start() : end]
                root, _ = parse_xml(fragment)
                if root is None:
                    continue
                measured = self._judge(root, fragment, ctx)
                if measured.score == 1.0:
                    return measured
                best = best or measured
        if best is not None:
            return best
        return Measurement(
            score=0.0,
            misses=["output contains no well-formed XML element"],
            details=[detail("contains-xml", False, expected="an XML element", actual=text)],
        )
