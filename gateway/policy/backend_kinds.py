"""A backend's keys split by kind: the shared ones validated by `BackendSpec`, the rest by the
schema of the provider kind it names (gateway/provider_kinds), with one list of errors that
keeps each key's location (and so its file and line).

The YAML stays flat (`deployment:` sits beside `base_url:`), so the split happens here rather
than in a nested `options:` block; a key another kind accepts is refused by name ("deployment
applies to provider azure only") rather than as merely unknown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ValidationError, ValidatorFunctionWrapHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import InitErrorDetails, PydanticCustomError

from gateway.provider_kinds.kind import OptionsSpec, ProviderKind
from gateway.provider_kinds.registry import PROVIDER_KINDS, listed

if TYPE_CHECKING:
    from gateway.policy.schema import BackendSpec

Loc = tuple[str | int, ...]


def validate_backend(
    cls: type[BackendSpec], data: Any, handler: ValidatorFunctionWrapHandler
) -> BackendSpec:
    """BackendSpec's wrap validator: shared keys, the kind's own keys, then the rules that
    span both. Every problem is reported, not only the first."""
    if not isinstance(data, dict):
        return handler(data)
    shared_keys = cls.model_fields.keys() - {"options"}
    shared = {k: v for k, v in data.items() if k in shared_keys}
    own = {k: v for k, v in data.items() if k not in shared_keys}
    errors: list[InitErrorDetails] = []
    provider = data.get("provider")
    kind = PROVIDER_KINDS.get(provider)
    if kind is None and isinstance(provider, str):
        expected = listed([f"'{n}'" for n in PROVIDER_KINDS.names()], "or")
        errors.append(_error("literal_error", f"Input should be {expected}", ("provider",),
                             provider))
    options = _kind_options(kind, own, errors) if kind is not None else None
    if kind is None:
        errors += [_error("extra_forbidden", "Extra inputs are not permitted", (key,), value)
                   for key, value in own.items() if not _accepted_anywhere(key)]
    spec = None
    try:
        spec = handler({**shared, "options": options} if options is not None else shared)
    except ValidationError as exc:
        errors += [_error(e["type"], e["msg"], tuple(e["loc"]), e["input"])
                   for e in exc.errors()]
    if spec is not None and kind is not None and options is not None:
        errors += [_error("value_error", message, loc, data.get(loc[0]) if loc else data)
                   for loc, message in _spanning_problems(spec, kind, options)]
    if errors:
        raise ValidationError.from_exception_data(cls.__name__, errors)
    assert spec is not None
    return spec


def _kind_options(
    kind: ProviderKind, own: dict[str, Any], errors: list[InitErrorDetails]
) -> OptionsSpec | None:
    accepted = {k: v for k, v in own.items() if k in kind.options.model_fields}
    for key, value in own.items():
        if key in accepted:
            continue
        others = [k.name for k in PROVIDER_KINDS if key in k.options.model_fields]
        if others:
            plural = "provider" if len(others) == 1 else "providers"
            errors.append(_error("value_error", f"{key} applies to {plural} "
                                 f"{listed(others)} only", (key,), value))
        else:
            errors.append(_error("extra_forbidden", "Extra inputs are not permitted", (key,),
                                 value))
    try:
        options = kind.options.model_validate(accepted)
    except ValidationError as exc:
        errors += [_error(e["type"], e["msg"], tuple(e["loc"]), e["input"])
                   for e in exc.errors()]
        return None
    return None if len(errors) else options


def _spanning_problems(
    spec: BackendSpec, kind: ProviderKind, options: OptionsSpec
) -> list[tuple[Loc, str]]:
    """Shared keys whose allowed values depend on the kind."""
    out: list[tuple[Loc, str]] = []
    if spec.auth == "api_key" and kind.api_key_header is None:
        keyed = [k.name for k in PROVIDER_KINDS if k.api_key_header is not None]
        out.append((("auth",), f"auth: api_key applies to providers {listed(keyed)} only"))
    if spec.tokens is not None and spec.tokens.count == "tokenize" and kind.token_count is None:
        counting = [k.name for k in PROVIDER_KINDS if k.token_count is not None]
        out.append((("tokens",), "tokens: {count: tokenize} needs provider "
                    f"{listed(counting, 'or')} (a backend that counts prompts itself)"))
    if spec.responses_api == "native" and kind.responses == "never":
        out.append((("responses_api",), f"responses_api: native is not served by provider "
                    f"{kind.name}: its backends are always translated"))
    out += [((key,) if key else (), message)
            for key, message in kind.check(options, str(spec.base_url))]
    return out


def _accepted_anywhere(key: str) -> bool:
    return any(key in kind.options.model_fields for kind in PROVIDER_KINDS)


def _error(kind: str, message: str, loc: Loc, value: Any) -> InitErrorDetails:
    # A custom error keeps the message exactly as written (and its braces as they are).
    return {"type": PydanticCustomError(kind, message), "loc": loc, "input": value}


def complete_json_schema(schema: JsonSchemaValue) -> None:
    """BackendSpec's JSON schema as operators write it, completed in place: `provider` one of
    the kinds, every kind's own keys beside the shared ones (the kind-dependent rules are the
    gateway's to check)."""
    properties = schema.setdefault("properties", {})
    properties.pop("options", None)
    properties["provider"] = {**properties.get("provider", {}),
                              "enum": list(PROVIDER_KINDS.names())}
    for kind in PROVIDER_KINDS:
        for key, value in kind.options.model_json_schema().get("properties", {}).items():
            properties.setdefault(key, value)
