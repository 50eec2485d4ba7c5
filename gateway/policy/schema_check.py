"""A policy document against the schema, with every problem at once: unknown keys get the
closest valid one, and a document whose only problems are unknown keys is still validated as
meant (each key taken as its suggestion), so the checks after the schema run in the same pass.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from gateway.policy.schema import PolicyFile
from gateway.policy.suggestions import closest, keys_at
from gateway.provider_kinds.registry import PROVIDER_KINDS

Loc = tuple[str | int, ...]
LISTED = 12  # more valid keys than this are not listed in a message
SCALAR_TAGS = ("str", "int", "float", "bool", "literal[", "function-")


ROUNDS = 4  # a typo inside a mistyped key's value shows only once that key is read as meant


def schema_check(data: dict[str, Any]) -> tuple[PolicyFile | None, list[tuple[Loc, str]]]:
    """The validated document (None when the schema's problems leave no meaning to check
    further) and the schema's problems, each at its key path as the file spells it."""
    problems: list[tuple[Loc, str]] = []
    spelt: dict[tuple[Loc, str], str] = {}  # (parent, key read as meant) → key as written
    document = data
    for _ in range(ROUNDS):
        try:
            return PolicyFile.model_validate(document), problems
        except ValidationError as exc:
            errors = _one_branch(exc.errors(), document)
        found, renames, stop = _round(errors, document)
        problems += [(_as_written(loc, spelt), message) for loc, message in found]
        if stop or not renames:
            return None, problems
        for (parent, wrong), right in renames.items():
            if right is not None:
                spelt[(parent, right)] = spelt.get((parent, wrong), wrong)
        document = _repaired(document, renames)
    return None, problems


def _as_written(loc: Loc, spelt: dict[tuple[Loc, str], str]) -> Loc:
    """A location in the document read as meant, with each renamed key as the file has it."""
    out: list[str | int] = []
    for i, step in enumerate(loc):
        out.append(spelt.get((loc[:i], step), step) if isinstance(step, str) else step)
    return tuple(out)


def _round(errors: Sequence[Any], data: dict[str, Any]) -> tuple[
        list[tuple[Loc, str]], dict[tuple[Loc, str], str | None], bool]:
    """One pass over the schema's errors: the problems, the unknown keys with the key each
    is taken for (None: dropped), and whether other errors leave nothing to go on with."""
    problems: list[tuple[Loc, str]] = []
    renames: dict[tuple[Loc, str], str | None] = {}
    for err in errors:
        if err["type"] != "extra_forbidden":
            continue
        loc = _shown(err, data)
        parent, key = loc[:-1], str(loc[-1])
        given = _node(data, parent)
        valid = valid_keys(err["loc"][:-1], given)
        free = valid - set(given) if isinstance(given, dict) else valid
        suggestion = closest(key, free)
        renames[(parent, key)] = suggestion
        hint = (f" (did you mean {suggestion!r}?)" if suggestion is not None
                else f"; valid here: {', '.join(sorted(valid))}" if 0 < len(valid) <= LISTED
                else "; `gateway policy schema` lists the valid keys" if valid else "")
        problems.append((loc, f"unknown key {key!r}{hint}"))
    meant = {(parent, right) for (parent, _), right in renames.items() if right is not None}
    others = []
    for err in errors:
        if err["type"] == "extra_forbidden":
            continue
        loc = _shown(err, data)
        if err["type"] == "missing" and (loc[:-1], str(loc[-1])) in meant:
            continue  # the same typo: the key is there, misspelt
        others.append((loc, str(err["msg"])))
    return problems + others, renames, bool(others)


def valid_keys(loc: Sequence[str | int], given: Any) -> frozenset[str]:
    """The keys accepted at `loc`. A backend's keys are flat: the shared ones and those of
    its provider kind (every kind's where the provider is unknown), which the schema keeps
    in its `options` field."""
    valid = keys_at(PolicyFile, loc) or frozenset()
    if "options" not in valid:
        return valid
    provider = given.get("provider") if isinstance(given, dict) else None
    found = PROVIDER_KINDS.get(provider) if isinstance(provider, str) else None
    kinds = [found] if found is not None else list(PROVIDER_KINDS)
    return (valid - {"options"}) | {key for kind in kinds for key in kind.options.model_fields}


def _repaired(data: dict[str, Any], renames: dict[tuple[Loc, str], str | None]) -> Any:
    fixed = copy.deepcopy(data)
    for (parent, wrong), right in renames.items():
        node = _node(fixed, parent)
        if isinstance(node, dict) and wrong in node:
            value = node.pop(wrong)
            if right is not None:
                node[right] = value
    return fixed


def _node(data: Any, loc: Loc) -> Any:
    for step in loc:
        if isinstance(data, dict) and step in data:
            data = data[step]
        elif isinstance(data, list) and isinstance(step, int) and step < len(data):
            data = data[step]
        else:
            return None
    return data


def _shown(err: Any, data: Any) -> Loc:
    """The error's location in the document: the union member names pydantic adds (a step
    the document does not have) left out."""
    loc = err["loc"]
    out: list[str | int] = []
    for i, step in enumerate(loc):
        if isinstance(data, dict) and step in data:
            data = data[step]
        elif isinstance(data, list) and isinstance(step, int) and step < len(data):
            data = data[step]
        elif not _is_tag(err, i, data):
            out.extend(loc[i:])  # a missing key, or an index past the end: shown as given
            break
        else:
            continue
        out.append(step)
    return tuple(out)


def _is_tag(err: Any, i: int, node: Any) -> bool:
    """Whether step i of an error's location is a union member's name: a step the document
    lacks that is not the missing key itself."""
    step = err["loc"][i]
    if not isinstance(step, str) or (isinstance(node, dict) and step in node):
        return False
    return i < len(err["loc"]) - 1 or err["type"] != "missing"


def _one_branch(errors: Sequence[Any], data: dict[str, Any]) -> list[Any]:
    """Where a value may be one of several shapes (a list or a mapping), only the errors of
    the shape it was given: a mapping with a mistyped key is not also 'not a valid list'."""
    kept: list[Any] = []
    by_place: dict[Loc, list[Any]] = {}
    for err in errors:
        place = _tag_place(err, data)
        if place is None:
            kept.append(err)
        else:
            by_place.setdefault(place, []).append(err)
    for place, group in by_place.items():
        node = _node(data, place)
        fitting = [e for e in group if _fits(str(e["loc"][len(place)]), node)]
        kept += fitting or group
    return sorted(kept, key=errors.index)


def _tag_place(err: Any, data: Any) -> Loc | None:
    loc = err["loc"]
    for i, step in enumerate(loc):
        if isinstance(data, dict) and step in data:
            data = data[step]
        elif isinstance(data, list) and isinstance(step, int) and step < len(data):
            data = data[step]
        elif _is_tag(err, i, data):
            return tuple(loc[:i])
        else:
            return None
    return None


def _fits(tag: str, node: Any) -> bool:
    if isinstance(node, dict):
        return not tag.startswith(("list[", *SCALAR_TAGS))
    if isinstance(node, list):
        return tag.startswith("list[")
    return tag.startswith(SCALAR_TAGS)
