"""The closest valid name to a mistyped one ("did you mean `backends`?"), and which keys the
policy schema accepts at a place in the file, read from the schema's own models."""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel


def closest(name: str, choices: Iterable[str]) -> str | None:
    """The valid name a typo most likely meant: fewest single-character edits (a swap of two
    neighbours counts as one), within a third of the name's length; ties go to the more
    similar spelling, then the alphabet. None when nothing is that close."""
    limit = max(1, len(name) // 3)
    ranked = sorted(
        (distance, -difflib.SequenceMatcher(None, name, choice).ratio(), choice)
        for choice in set(choices) if choice != name
        if (distance := edit_distance(name, choice)) <= limit
    )
    return ranked[0][2] if ranked else None


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """' (did you mean 'x'?)' to append to a message, or ''."""
    found = closest(name, choices)
    return f" (did you mean {found!r}?)" if found is not None else ""


def edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions and swaps of
    adjacent characters each cost one."""
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            row[j] = min(rows[i - 1][j] + 1, row[j - 1] + 1, rows[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[i - 2][j - 2] + 1)
        rows.append(row)
    return rows[len(a)][len(b)]


def keys_at(root: type[BaseModel], loc: Sequence[str | int]) -> frozenset[str] | None:
    """The keys the schema accepts in the mapping at `loc` (a pydantic error location, union
    member tags included), or None where that is no model's mapping."""
    found = _models_at(root, loc)
    if not found:
        return None
    return frozenset(field.alias or name for model in found
                     for name, field in model.model_fields.items())


def _models_at(tp: Any, loc: Sequence[str | int]) -> list[type[BaseModel]]:
    if not loc:
        return [m for m in _members(tp) if _is_model(m)]
    step, rest = loc[0], loc[1:]
    members = _members(tp)
    tagged = [m for m in members if isinstance(step, str) and _tag(m) == step]
    if tagged:  # pydantic names the union member an error came from
        return _models_at(tagged[0], rest)
    for member in members:
        origin = typing.get_origin(member)
        if _is_model(member) and isinstance(step, str) and step in member.model_fields:
            return _models_at(member.model_fields[step].annotation, rest)
        if origin is list and isinstance(step, int):
            return _models_at(typing.get_args(member)[0], rest)
        if origin is dict and isinstance(step, str):
            return _models_at(typing.get_args(member)[1], rest)
    return []


def _members(tp: Any) -> list[Any]:
    """A union's members (None left out), Annotated unwrapped; anything else alone."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _members(typing.get_args(tp)[0])
    if origin is typing.Union or origin is types.UnionType:
        return [m for arg in typing.get_args(tp) if arg is not type(None)
                for m in _members(arg)]
    return [tp]


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _tag(tp: Any) -> str:
    if _is_model(tp):
        return str(tp.__name__)
    origin = typing.get_origin(tp)
    if origin is not None:
        args = ", ".join(_tag(a) for a in typing.get_args(tp))
        return f"{origin.__name__}[{args}]"
    return getattr(tp, "__name__", str(tp))
