"""Policy YAML → validated `PolicyFile` → compiled, immutable `PolicySet` (runtime.py).

Errors name the file, the line and the key path, so an operator can fix every problem at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gateway.policy.capacity import compile_telemetry
from gateway.policy.rules import compile_rule
from gateway.policy.runtime import Baseline, PolicySet, Pool, PoolStrategy, Routers, Shadow
from gateway.policy.schema import BackendSpec, BaselineSpec, ModelPoolSpec, PolicyFile
from gateway.policy.schema_check import schema_check
from gateway.policy.simulation import simulator_launch
from gateway.policy.tenants import TenantPolicy, allowed_values, compile_tenant
from gateway.policy.token_counting import DEFAULT_ESTIMATE_RATIO, default_counting
from gateway.policy.validation import semantic_problems
from gateway.provider_kinds.kind import ProviderKind
from gateway.provider_kinds.openai_family import vllm_metrics_url
from gateway.provider_kinds.registry import PROVIDER_KINDS
from gateway.secret_files import SecretFileError, read_secret_file
from gateway.types import AuthScheme, Backend, Endpoint, EngineFacts, PricePerMTok, Zone

ROUTER_FILE = "router.json"  # what `gateway router fit --out DIR` writes into DIR

# (TTFT s, time per output token s) before anything is measured: a nearby GPU answers fast;
# a commercial API adds network and queueing.
ZONE_LATENCY_PRIORS = {"self_hosted": (0.15, 0.02), "external": (0.6, 0.025)}


@dataclass(frozen=True, slots=True)
class PolicyProblem:
    file: str
    line: int | None
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.path or '<root>'}: {self.message}"


class PolicyError(Exception):
    def __init__(self, problems: list[PolicyProblem]) -> None:
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


def load_policy(path: Path) -> PolicySet:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:  # not UTF-8 text: rejected like bad YAML
        raise PolicyError([PolicyProblem(str(path), None, "", f"cannot read: {exc}")]) from exc
    return parse_policy(text, str(path))


def parse_policy(text: str, source: str = "<memory>") -> PolicySet:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        # The problem without PyYAML's quoted snippet and caret: one line, the line number
        # is in the problem's place already.
        said = [getattr(exc, "context", None), getattr(exc, "problem", None)]
        reason = ", ".join(p for p in said if p) or " ".join(str(exc).split())
        raise PolicyError([PolicyProblem(source, line, "", f"invalid YAML: {reason}")]) from exc
    if not isinstance(data, dict):
        raise PolicyError([PolicyProblem(source, 1, "", "a policy must be a YAML mapping")])
    # Every problem in one pass: the schema's, then (when the document still has a meaning)
    # references, unreachable rules, leak paths, simulator limits, key files and routers.
    spec, schema = schema_check(data)
    found = sorted(schema, key=lambda problem: _line_of(root, problem[0]) or 0)
    keys: dict[str, str] = {}
    if spec is not None:
        found += semantic_problems(spec)
        keys, unreadable = read_key_files(spec)
        found += unreadable + missing_routers(spec)
    if found or spec is None:
        raise PolicyError([PolicyProblem(source, _line_of(root, loc), _dotted(loc), message)
                           for loc, message in found])
    return compile_policy(spec, source, keys)


def read_key_files(
    spec: PolicyFile,
) -> tuple[dict[str, str], list[tuple[tuple[str | int, ...], str]]]:
    """Every backend's api_key_file, read now: each load (start-up, hot reload, SIGHUP) sees
    the file as it is, so a rotated key needs no restart; one that cannot be read rejects the
    policy (a reload then keeps the running policy and its keys)."""
    keys: dict[str, str] = {}
    problems: list[tuple[tuple[str | int, ...], str]] = []
    for i, backend in enumerate(spec.backends):
        if backend.api_key_file is not None:
            try:
                keys[backend.name] = read_secret_file(Path(backend.api_key_file))
            except SecretFileError as exc:
                problems.append((("backends", i, "api_key_file"), str(exc)))
    return keys, problems


def missing_routers(spec: PolicyFile) -> list[tuple[tuple[str | int, ...], str]]:
    """Every `router:` directory must hold a router file now; its contents are checked where
    it is loaded (classify/), and a router that fails there keeps the one in force."""
    named: list[tuple[tuple[str | int, ...], str]] = [
        (("tenants", name, "router"), t.router) for name, t in spec.tenants.items()
        if t.router is not None
    ]
    named += [(("models", name, "router"), m.router) for name, m in spec.models.items()
              if isinstance(m, ModelPoolSpec) and m.router is not None]
    return [(loc, f"no {ROUTER_FILE} in {directory} (write one with `gateway router fit`)")
            for loc, directory in named if not (Path(directory) / ROUTER_FILE).is_file()]


def compile_policy(
    spec: PolicyFile, source: str = "<memory>", keys: Mapping[str, str] | None = None
) -> PolicySet:
    keys = keys or {}
    backends = {b.name: _compile_backend(b, keys.get(b.name)) for b in spec.backends}
    pools = {}
    for name, pool in spec.models.items():
        if isinstance(pool, ModelPoolSpec):
            members = tuple(backends[b] for b in pool.backends)
            pools[name] = Pool(members, strategy=PoolStrategy(pool.strategy))
        else:
            pools[name] = Pool(tuple(backends[b] for b in pool))
    tenant_models = {
        tenant: frozenset(t.models) for tenant, t in spec.tenants.items() if t.models is not None
    }
    simulators = {b.name: launch for b in spec.backends
                  if (launch := simulator_launch(b)) is not None}
    # Rules hold the Backend objects they name: nothing is looked up by name per request.
    rules = tuple(compile_rule(rule, i, backends) for i, rule in enumerate(spec.rules))
    shared_allow = spec.sensitivity.allow
    min_confidence = spec.sensitivity.min_confidence
    tenants = {name: compile_tenant(t, shared_allow, min_confidence)
               for name, t in spec.tenants.items()}
    default_tenant = TenantPolicy(detectors=allowed_values(shared_allow),
                                  min_confidence=min_confidence)
    return PolicySet(
        backends, pools, tenant_models, simulators, source, rules,
        compile_telemetry(spec.telemetry), dict(spec.tenants),
        _baseline(spec, backends), tenants, default_tenant,
        shadow=_shadow(spec, backends),
        routers=Routers(
            {name: Path(t.router) for name, t in spec.tenants.items() if t.router},
            {name: Path(m.router) for name, m in spec.models.items()
             if isinstance(m, ModelPoolSpec) and m.router},
        ),
    )


def _shadow(spec: PolicyFile, backends: dict[str, Backend]) -> Shadow | None:
    shadow = spec.shadow
    if shadow is None:
        return None
    return Shadow(shadow.sample, backends[shadow.strong], backends[shadow.judge],
                  shadow.daily_usd)


def _baseline(spec: PolicyFile, backends: dict[str, Backend]) -> Baseline | None:
    if isinstance(spec.baseline, BaselineSpec):
        p = spec.baseline.price_per_mtok_usd
        return Baseline(spec.baseline.name,
                        PricePerMTok(p.input, p.output, p.cached_input, p.cache_write_input))
    backend = backends[spec.baseline] if spec.baseline else default_baseline(backends.values())
    if backend is None or backend.price is None:
        return None
    return Baseline(backend.name, backend.price)


def default_baseline(backends: Iterable[Backend]) -> Backend | None:
    """The frontier model: the priced external backend that charges most per output token."""
    priced = [(b.price, b) for b in backends if b.zone != Zone.SELF_HOSTED and b.price]
    best = max(priced, key=lambda pb: (pb[0].output_usd, pb[0].input_usd), default=None)
    return best[1] if best else None


def _engine_facts(spec: BackendSpec, kind: ProviderKind, base_url: str) -> EngineFacts | None:
    """What the policy says of the engine behind a backend, and where its kind's engine is
    scraped by default."""
    metrics_url = str(spec.metrics_url) if spec.metrics_url is not None else None
    if metrics_url is None and kind.metrics_url is not None:
        metrics_url = kind.metrics_url(base_url)
    kv, gpu = spec.kv, spec.gpu
    return EngineFacts(
        metrics_url=metrics_url,
        dcgm_url=str(spec.dcgm_url) if spec.dcgm_url is not None else None,
        kv_bytes_per_token=(
            2 * kv.layers * kv.kv_heads * kv.head_dim * kv.dtype_bytes if kv is not None else None
        ),
        # A simulated engine's batch size is the router's too, wherever the policy set it.
        max_num_seqs=spec.max_num_seqs or (
            spec.simulate.max_num_seqs if spec.simulate is not None else None),
        prefill_tokens_per_s=spec.latency.prefill_tokens_per_s if spec.latency else None,
        gpu_hourly_usd=gpu.hourly_usd * gpu.count if gpu is not None else None,
        gpu_count=gpu.count if gpu is not None else None,
        gpu_type=gpu.type if gpu is not None else None,
    ).declared()


def _compile_backend(spec: BackendSpec, key_from_file: str | None = None) -> Backend:
    kind = PROVIDER_KINDS[spec.provider]  # validated: a registered kind
    base_url = str(spec.base_url).rstrip("/")
    price = None
    if spec.price_per_mtok_usd is not None:
        p = spec.price_per_mtok_usd
        price = PricePerMTok(p.input, p.output, p.cached_input, p.cache_write_input)
    elif spec.gpu is not None:
        # Self-hosted tokens are not free: the GPUs cost money whether busy or idle. Until
        # throughput is measured, price them at the configured expected throughput.
        per_mtok = spec.gpu.hourly_usd * spec.gpu.count / (spec.gpu.est_tokens_per_s * 3600) * 1e6
        price = PricePerMTok(per_mtok, per_mtok)
    ttft_s, tpot_s = ZONE_LATENCY_PRIORS.get(spec.zone, ZONE_LATENCY_PRIORS["external"])
    if spec.latency is not None:
        ttft_s, tpot_s = spec.latency.ttft_ms / 1000, spec.latency.tpot_ms / 1000
    token_encoding, token_ratio = default_counting(kind, spec.model)
    tokenize_url = None
    if spec.tokens is not None:
        exact = spec.tokens.count in ("o200k_base", "cl100k_base")
        token_encoding = spec.tokens.count if exact else None
        token_ratio = 1.0 if exact else spec.tokens.ratio or DEFAULT_ESTIMATE_RATIO
        if spec.tokens.count == "tokenize" and kind.token_count is not None:
            tokenize_url = kind.token_count.url(base_url)
    responses_api = spec.responses_api or (
        "native" if kind.responses == "native" else "translate")
    return Backend(
        name=spec.name,
        provider=spec.provider,
        base_url=base_url,
        model=spec.model,
        zone=spec.zone,
        context_window=spec.context_window,
        quality_tier=spec.quality_tier,
        price=price,
        api_key_env=spec.api_key_env,
        api_key_file=spec.api_key_file,
        api_key=key_from_file,
        read_timeout_s=spec.timeout_s,
        max_connections=spec.max_connections,
        ttft_s=ttft_s,
        tpot_s=tpot_s,
        # Kinds with a key header of their own (Azure's, Anthropic's) send keys there unless
        # told it is a bearer token.
        auth=AuthScheme(spec.auth) if spec.auth else (
            AuthScheme.API_KEY if kind.api_key_header is not None else AuthScheme.BEARER),
        options=kind.compile(spec.options),
        telemetry_name=kind.telemetry_name,
        engine=_engine_facts(spec, kind, base_url),
        token_encoding=token_encoding,
        token_ratio=token_ratio,
        tokenize_url=tokenize_url,
        approved_for=frozenset(spec.approved_for or ()),
        approval=spec.approval,
        serves=kind.serves | ({Endpoint.RESPONSES} if responses_api == "native" else set()),
        takes_reasoning_effort=kind.reasoning_effort(spec.model),
    )


def default_metrics_url(base_url: str) -> str:
    """Where a vLLM engine serves its Prometheus metrics, from its base_url."""
    return vllm_metrics_url(base_url)


def _dotted(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts)


def _line_of(node: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """Walk the composed YAML tree along a pydantic error location to the nearest line."""
    line = node.start_mark.line + 1 if node is not None else None
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if k.value == str(key)), None)
            if pair is None:  # a missing key: the mapping that lacks it is the best line
                return line
            # The key's own line: a block value (a list, a mapping) starts on a later one.
            line, node = pair[0].start_mark.line + 1, pair[1]
            continue
        if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(
            node.value
        ):
            node = node.value[key]
        else:
            return line
        line = node.start_mark.line + 1
    return line
