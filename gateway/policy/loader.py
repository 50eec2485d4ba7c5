"""Policy YAML → validated `PolicyFile` → compiled, immutable `PolicySet`.

Errors name the file, the line and the key path, so an operator can fix every problem at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import yaml
from pydantic import ValidationError

from gateway.policy.capacity import TelemetryPolicy, compile_telemetry
from gateway.policy.rules import Rule, compile_rule
from gateway.policy.schema import (
    AllowedValuesSpec,
    BackendSpec,
    BaselineSpec,
    ModelPoolSpec,
    PolicyFile,
    TenantSpec,
)
from gateway.policy.simulation import SimulatorLaunch, simulator_launch
from gateway.policy.token_counting import (
    DEFAULT_ESTIMATE_RATIO,
    REFERENCE_ENCODING,
    default_counting,
    extra_encodings,
    window_threshold,
)
from gateway.policy.validation import semantic_problems
from gateway.secret_files import SecretFileError, read_secret_file
from gateway.types import Backend, PricePerMTok, TenantDetector, Zone

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


@dataclass(frozen=True, slots=True)
class Pool:
    backends: tuple[Backend, ...]
    strategy: str = "load_aware"  # see ModelPoolSpec.strategy


@dataclass(frozen=True, slots=True)
class Baseline:
    """The price every request is compared with in savings reports."""

    name: str
    price: PricePerMTok


@dataclass(frozen=True, slots=True)
class Routers:
    """Which fitted router (a `gateway router fit` directory) scores a request's complexity:
    the tenant's, else the model group's, else none (the shipped model)."""

    by_tenant: Mapping[str, Path] = field(default_factory=dict)
    by_model: Mapping[str, Path] = field(default_factory=dict)

    def choose(self, tenant: str, model: str) -> Path | None:
        return self.by_tenant.get(tenant) or self.by_model.get(model)

    def directories(self) -> frozenset[Path]:
        return frozenset((*self.by_tenant.values(), *self.by_model.values()))


@dataclass(frozen=True, slots=True)
class PolicySet:
    """The runtime form the router reads: lookups are dict hits, nothing is re-validated."""

    backends: dict[str, Backend]
    pools: dict[str, Pool]
    tenant_models: dict[str, frozenset[str]] = field(default_factory=dict)
    simulators: dict[str, SimulatorLaunch] = field(default_factory=dict)  # the demo's
    source: str = "<memory>"
    rules: tuple[Rule, ...] = ()
    telemetry: TelemetryPolicy = field(default_factory=TelemetryPolicy)
    tenant_specs: dict[str, TenantSpec] = field(default_factory=dict)  # budgets and limits
    baseline: Baseline | None = None  # what savings are measured against
    detectors: dict[str, tuple[TenantDetector, ...]] = field(default_factory=dict)
    default_min_confidence: float = 0.0  # sensitivity.min_confidence
    default_detectors: tuple[TenantDetector, ...] = ()  # sensitivity.allow, for every tenant
    routers: Routers = field(default_factory=Routers)  # `router:` directories
    # (model, tenant, endpoint, tags) → the rules whose identity conditions hold: most rules
    # name a tenant, model, endpoint or tag, so per request few need their content checked.
    _applicable: dict[tuple[str, str, str, tuple[str, ...]], tuple[Rule, ...]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def applicable_rules(
        self, model: str, tenant: str, endpoint: str, tags: tuple[str, ...] = ()
    ) -> tuple[Rule, ...]:
        key = (model, tenant, endpoint, tags)
        found = self._applicable.get(key)
        if found is None:
            if len(self._applicable) >= 10_000:  # bounded: names and tags come from clients
                self._applicable.clear()
            found = tuple(r for r in self.rules if r.applies_to(model, tenant, endpoint, tags))
            self._applicable[key] = found
        return found

    def tenant_detectors(self, tenant: str) -> tuple[TenantDetector, ...]:
        """The tenant's own sensitivity detectors and the values allowed for it (empty for
        most tenants)."""
        return self.detectors.get(tenant, self.default_detectors)

    def min_confidence(self, tenant: str) -> float:
        """Findings below this confidence do not make the tenant's requests sensitive."""
        spec = self.tenant_specs.get(tenant)
        if spec is not None and spec.min_confidence is not None:
            return spec.min_confidence
        return self.default_min_confidence

    def public_models(self) -> list[str]:
        """Names a client may send: virtual pools first, then every backend by name."""
        return [*self.pools, *(n for n in self.backends if n not in self.pools)]

    def token_thresholds(self, model: str, max_output_tokens: int | None) -> tuple[int, ...]:
        """Prompt sizes at which some routing decision for this model changes: each candidate's
        context window less the requested output. Token counting only needs to be exact when
        one of these could be crossed."""
        pool = self.pool(model)
        if pool is None:
            return ()
        reserve = max_output_tokens or 0
        return tuple(sorted({window_threshold(b, reserve) for b in pool.backends
                             if b.token_encoding in (None, REFERENCE_ENCODING)}))

    def other_encodings(
        self, model: str, max_output_tokens: int | None
    ) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """Encodings besides o200k that backends of this model's pool count in exactly (cl100k
        for older OpenAI models), each with its thresholds in that encoding."""
        pool = self.pool(model)
        if pool is None:
            return ()
        reserve = max_output_tokens or 0
        return tuple(
            (encoding, tuple(sorted({window_threshold(b, reserve) for b in pool.backends
                                     if b.token_encoding == encoding})))
            for encoding in extra_encodings(pool.backends)
        )

    def metrics_targets(self) -> dict[str, str]:
        """Backend name → Prometheus URL, for every backend whose engine is scraped."""
        return {n: b.metrics_url for n, b in self.backends.items() if b.metrics_url}

    def dcgm_targets(self) -> dict[str, str]:
        """Backend name → DCGM exporter URL, for deployments whose GPUs are watched."""
        return {n: b.dcgm_url for n, b in self.backends.items() if b.dcgm_url}

    def pool(self, model: str) -> Pool | None:
        found = self.pools.get(model)
        if found is not None:
            return found
        backend = self.backends.get(model)
        return Pool((backend,)) if backend is not None else None


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
        raise PolicyError([PolicyProblem(source, line, "", f"invalid YAML: {exc}")]) from exc
    if not isinstance(data, dict):
        raise PolicyError([PolicyProblem(source, 1, "", "a policy must be a YAML mapping")])
    try:
        spec = PolicyFile.model_validate(data)
    except ValidationError as exc:
        raise PolicyError(_problems(exc, root, source)) from exc
    semantic = semantic_problems(spec)
    if semantic:
        raise PolicyError([
            PolicyProblem(source, _line_of(root, loc), _dotted(loc), message)
            for loc, message in semantic
        ])
    keys, unreadable = read_key_files(spec)
    unreadable += missing_routers(spec)
    if unreadable:
        raise PolicyError([
            PolicyProblem(source, _line_of(root, loc), _dotted(loc), message)
            for loc, message in unreadable
        ])
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
            pools[name] = Pool(members, strategy=pool.strategy)
        else:
            pools[name] = Pool(tuple(backends[b] for b in pool))
    tenant_models = {
        tenant: frozenset(t.models) for tenant, t in spec.tenants.items() if t.models is not None
    }
    simulators = {b.name: launch for b in spec.backends
                  if (launch := simulator_launch(b)) is not None}
    rules = tuple(compile_rule(rule, i) for i, rule in enumerate(spec.rules))
    return PolicySet(
        backends, pools, tenant_models, simulators, source, rules,
        compile_telemetry(spec.telemetry), dict(spec.tenants),
        _baseline(spec, backends),
        {
            name: detectors for name, tenant in spec.tenants.items()
            if (detectors := _tenant_detectors(tenant, spec.sensitivity.allow))
        },
        spec.sensitivity.min_confidence,
        _allowed(spec.sensitivity.allow),
        Routers(
            {name: Path(t.router) for name, t in spec.tenants.items() if t.router},
            {name: Path(m.router) for name, m in spec.models.items()
             if isinstance(m, ModelPoolSpec) and m.router},
        ),
    )


def _tenant_detectors(
    tenant: TenantSpec, shared: list[AllowedValuesSpec]
) -> tuple[TenantDetector, ...]:
    own = tuple(TenantDetector(d.name, d.category, d.regex, tuple(d.words or ()))
                for d in tenant.detectors)
    return own + _allowed([*shared, *tenant.allow])


def _allowed(specs: list[AllowedValuesSpec]) -> tuple[TenantDetector, ...]:
    return tuple(TenantDetector(a.name, "", a.regex, tuple(a.values or ()), allow=True)
                 for a in specs)


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


def _compile_backend(spec: BackendSpec, key_from_file: str | None = None) -> Backend:
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
    kv = spec.kv
    metrics_url = str(spec.metrics_url) if spec.metrics_url is not None else None
    token_encoding, token_ratio = default_counting(spec.provider, spec.model)
    tokenize_url = None
    if spec.tokens is not None:
        exact = spec.tokens.count in ("o200k_base", "cl100k_base")
        token_encoding = spec.tokens.count if exact else None
        token_ratio = 1.0 if exact else spec.tokens.ratio or DEFAULT_ESTIMATE_RATIO
        if spec.tokens.count == "tokenize":
            tokenize_url = _count_url(spec.provider, str(spec.base_url).rstrip("/"))
    if metrics_url is None and spec.provider == "vllm":
        metrics_url = default_metrics_url(str(spec.base_url))
    return Backend(
        name=spec.name,
        provider=spec.provider,
        base_url=str(spec.base_url).rstrip("/"),
        model=spec.model,
        zone=spec.zone,
        context_window=spec.context_window,
        quality_tier=spec.quality_tier,
        price=price,
        api_key_env=spec.api_key_env,
        api_key_file=spec.api_key_file,
        api_key=key_from_file,
        read_timeout_s=spec.timeout_s or 300.0,
        max_connections=spec.max_connections or 512,
        ttft_s=ttft_s,
        tpot_s=tpot_s,
        api_version=spec.api_version,
        deployment=spec.deployment,
        # Azure and Anthropic send keys in their own headers unless told it is a bearer token.
        auth=spec.auth or ("api_key" if spec.provider in ("azure", "anthropic") else "bearer"),
        anthropic_version=spec.anthropic_version,
        default_max_tokens=spec.default_max_tokens,
        max_tokens_field=spec.max_tokens_field or "auto",
        metrics_url=metrics_url,
        kv_bytes_per_token=(
            2 * kv.layers * kv.kv_heads * kv.head_dim * kv.dtype_bytes if kv is not None else None
        ),
        # A simulated engine's batch size is the router's too, wherever the policy set it.
        max_num_seqs=spec.max_num_seqs or (
            spec.simulate.max_num_seqs if spec.simulate is not None else None),
        prefill_tokens_per_s=spec.latency.prefill_tokens_per_s if spec.latency else None,
        gpu_hourly_usd=spec.gpu.hourly_usd * spec.gpu.count if spec.gpu is not None else None,
        gpu_count=spec.gpu.count if spec.gpu is not None else None,
        gpu_type=spec.gpu.type if spec.gpu is not None else None,
        dcgm_url=str(spec.dcgm_url) if spec.dcgm_url is not None else None,
        token_encoding=token_encoding,
        token_ratio=token_ratio,
        tokenize_url=tokenize_url,
        responses_native=(spec.responses_api or (
            "native" if spec.provider in ("openai", "azure") else "translate")) == "native",
    )


def default_metrics_url(base_url: str) -> str:
    return engine_url(base_url, "metrics")


def _count_url(provider: str, base_url: str) -> str:
    """Where a backend counts a prompt itself: vLLM's /tokenize, Anthropic's count_tokens
    (base_url with or without its /v1, as for messages)."""
    if provider == "anthropic":
        base = base_url if base_url.endswith("/v1") else f"{base_url}/v1"
        return f"{base}/messages/count_tokens"
    return engine_url(base_url, "tokenize")


def engine_url(base_url: str, path: str) -> str:
    """vLLM serves /metrics and /tokenize at the server root, while base_url is usually its
    /v1."""
    parts = urlsplit(base_url)
    root = parts.path.rstrip("/").removesuffix("/v1")
    return urlunsplit((parts.scheme, parts.netloc, f"{root}/{path}", "", ""))


def _problems(exc: ValidationError, root: yaml.Node | None, source: str) -> list[PolicyProblem]:
    out = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        out.append(PolicyProblem(source, _line_of(root, loc), _dotted(loc), err["msg"]))
    return out


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
            match = next((v for k, v in node.value if k.value == str(key)), None)
            if match is None:  # a missing key: the mapping that lacks it is the best line
                return line
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(
            node.value
        ):
            node = node.value[key]
        else:
            return line
        line = node.start_mark.line + 1
    return line
