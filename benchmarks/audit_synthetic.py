"""Synthetic audit history for the report benchmark: N rows over D days, generated inside
Postgres (INSERT … SELECT generate_series, no round trips per row), then folded into the
rollup tables the way the writer keeps them (daily counters, latency and size histograms,
busy and load minutes).

The mix is deterministic (a multiplicative hash of the row number): 50 tenants, 6 backends
(3 self-hosted, 3 APIs), 8 rules, 4 requested models, 2 % errors, 10 % sensitive, half
streamed; see insert_sql for how routes are shaped.
"""

from __future__ import annotations

import math
import time
from datetime import date, timedelta

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.db.engine import create_engine
from gateway.db.migrate import upgrade

TENANTS = 50
BACKENDS = ("llama-8b-a", "llama-8b-b", "qwen-32b", "gpt-mini", "gpt-frontier", "claude")
ZONES = ("self_hosted",) * 3 + ("external",) * 3
RULES = 8
MODELS = ("auto", "chat", "code", "embed")


def _case(expr: str, values: tuple[str, ...]) -> str:
    arms = " ".join(f"WHEN {i} THEN '{v}'" for i, v in enumerate(values))
    return f"(CASE {expr} {arms} END)"


def insert_sql(rows: int, days: int, until: date, first: int = 0, count: int | None = None) -> str:
    """Rows `first`..`first + count` of `rows` spread evenly over the `days` days before
    `until`. Traffic is shaped like a real tenant's: each tenant asks for 2 of the 4 models,
    each model meets 3 of the 8 rules, each rule routes to 2 of the 6 backends, so a tenant
    has at most 12 (model, rule, backend) routes a day, not all 192 combinations."""
    start = until - timedelta(days=days)
    count = rows - first if count is None else count
    h = "((g::bigint * 2654435761) % 4294967296)"  # a cheap, well-mixed 32-bit hash of g
    shape = f"""
  SELECT g, h, t, m, r, (r + (h / 13) % 2) % 6 AS b FROM (
    SELECT g, h, t, m, (m * 2 + (h / 11) % 3) % {RULES} AS r FROM (
      SELECT g, h, h % {TENANTS} AS t, (h % {TENANTS} + (h / 7) % 2) % 4 AS m FROM (
        SELECT g, {h} AS h FROM generate_series({first}, {first + count - 1}) AS g
      ) a
    ) b
  ) c"""
    return f"""
INSERT INTO audit_log (
  chain_id, seq, ts, prev_hash, row_hash, request_id, tenant_id, tenant, key_id, endpoint,
  requested_model, backend, upstream_model, zone, rule, status, outcome, error_type, stream,
  prompt_tokens, completion_tokens, cached_tokens, max_output_tokens, prompt_tokens_exact,
  complexity, p_strong, sensitivity, redacted, tags, cost_micro_usd, baseline_cost_micro_usd,
  predicted_cost_micro_usd, duration_s, ttft_s, predicted_ttft_s, attempts, spill_over,
  affinity, unmetered, over_soft_limit, trace)
SELECT
  'bench-' || (g % 4), g / 4 + 1,
  TIMESTAMPTZ '{start.isoformat()} 00:00:00+00'
    + (g * ({days} * 86400.0 / {rows})) * INTERVAL '1 second',
  md5(g::text) || md5((g + 1)::text), md5((g + 7)::text) || md5((g + 9)::text),
  'req-' || g, 't' || t, 'tenant-' || t, 'k' || (h % 200),
  'chat.completions', {_case("m", MODELS)},
  {_case("b", BACKENDS)}, 'model-' || b, {_case("b", ZONES)}, 'rule-' || r,
  CASE WHEN (h / 17) % 50 = 0 THEN 502 ELSE 200 END,
  CASE WHEN (h / 17) % 50 = 0 THEN 'error' ELSE 'ok' END,
  CASE WHEN (h / 17) % 50 = 0 THEN 'upstream_error' END,
  (h % 2 = 0), 200 + (h / 19) % 4000, 20 + (h / 23) % 800, (h / 29) % 500, 1024, true,
  'low', 0.3, CASE WHEN (h / 31) % 10 = 0 THEN 'pii' ELSE '' END, false, '',
  CASE WHEN b < 3 THEN 40 + (h / 37) % 200 ELSE 900 + (h / 37) % 9000 END,
  3000 + (h / 37) % 20000, NULL,
  0.2 + ((h / 41) % 5000) / 1000.0, 0.02 + ((h / 43) % 800) / 1000.0, NULL,
  1, false, NULL, false, false, NULL
FROM ({shape}
) AS shaped
"""


ROLLUP_SQL = f"""
INSERT INTO audit_daily
SELECT (ts AT TIME ZONE 'UTC')::date, tenant_id, requested_model, coalesce(backend, ''),
  coalesce(rule, ''), max(tenant), max(coalesce(zone, '')), count(*),
  count(*) FILTER (WHERE status >= 400), sum(prompt_tokens), sum(completion_tokens),
  sum(cached_tokens), sum(cost_micro_usd), sum(coalesce(baseline_cost_micro_usd, 0)),
  count(*) FILTER (WHERE sensitivity <> ''),
  count(*) FILTER (WHERE sensitivity <> '' AND zone <> 'self_hosted'),
  count(*) FILTER (WHERE redacted), count(*) FILTER (WHERE spill_over),
  sum(duration_s), coalesce(sum(ttft_s), 0), count(ttft_s),
  coalesce(sum(duration_s - ttft_s) FILTER (WHERE status < 400 AND completion_tokens > 1), 0),
  0, 0,
  coalesce(sum(completion_tokens - 1) FILTER (
    WHERE status < 400 AND completion_tokens > 1 AND ttft_s IS NOT NULL), 0)
FROM audit_log GROUP BY 1, 2, 3, 4, 5;
INSERT INTO audit_latency
SELECT day, tenant_id, backend, metric, bucket, count(*) FROM (
  SELECT (ts AT TIME ZONE 'UTC')::date AS day, tenant_id, backend, 'total' AS metric,
    least(200, floor(ln(greatest(duration_s * 1000, 1)) / {math.log(1.1)}))::smallint AS bucket
  FROM audit_log WHERE status < 400
  UNION ALL
  SELECT (ts AT TIME ZONE 'UTC')::date, tenant_id, backend, 'ttft',
    least(200, floor(ln(greatest(ttft_s * 1000, 1)) / {math.log(1.1)}))::smallint
  FROM audit_log WHERE status < 400
) s GROUP BY 1, 2, 3, 4, 5;
INSERT INTO audit_latency
SELECT day, '*', backend, metric, bucket, sum(count) FROM audit_latency
GROUP BY day, backend, metric, bucket;
CREATE TEMPORARY TABLE spans ON COMMIT DROP AS
SELECT backend, ts, completion_tokens, ts - duration_s * INTERVAL '1 second' AS began,
  date_trunc('minute', ts - duration_s * INTERVAL '1 second') AS first_minute,
  date_trunc('minute', ts) AS last_minute
FROM audit_log WHERE backend IS NOT NULL;
INSERT INTO backend_load_minutes
SELECT backend, minute, sum(started), sum(inside), sum(finished) FROM (
  SELECT backend, first_minute AS minute, 1 AS started,
    extract(epoch FROM least(ts, first_minute + INTERVAL '1 minute') - began) AS inside,
    0 AS finished FROM spans
  UNION ALL
  SELECT backend, last_minute, 0, extract(epoch FROM ts - last_minute), 0
  FROM spans WHERE last_minute > first_minute
  UNION ALL
  SELECT backend, last_minute, 0, 0, completion_tokens FROM spans
) s GROUP BY 1, 2;
INSERT INTO backend_busy_minutes SELECT backend, minute FROM backend_load_minutes;
INSERT INTO audit_token_sizes
SELECT day, backend, metric, bucket, count(*) FROM (
  SELECT (ts AT TIME ZONE 'UTC')::date AS day, backend, 'prompt' AS metric,
    least(200, floor(ln(greatest(prompt_tokens, 1)) / {math.log(1.1)}))::smallint AS bucket
  FROM audit_log WHERE status < 400 AND backend IS NOT NULL
  UNION ALL
  SELECT (ts AT TIME ZONE 'UTC')::date, backend, 'output',
    least(200, floor(ln(greatest(completion_tokens, 1)) / {math.log(1.1)}))::smallint
  FROM audit_log WHERE status < 400 AND backend IS NOT NULL
) s GROUP BY 1, 2, 3, 4
"""


async def generate(engine: AsyncEngine, rows: int, days: int, until: date) -> dict[str, float]:
    """Empty the audit tables, insert the history and its rollups; seconds per phase."""
    timings: dict[str, float] = {}
    async with engine.begin() as conn:
        await conn.execute(text(
            "TRUNCATE audit_log, audit_daily, audit_latency, audit_chains, backend_busy_minutes,"
            " backend_load_minutes, audit_token_sizes"
        ))
    started = time.perf_counter()
    chunk = 1_000_000  # one transaction per million rows: bounded WAL and progress to show
    for offset in range(0, rows, chunk):
        count = min(chunk, rows - offset)
        sql = insert_sql(rows, days, until, offset, count)
        async with engine.begin() as conn:
            await conn.execute(text(sql))
        print(f"  {offset + count:>10,} rows  {time.perf_counter() - started:6.0f} s", flush=True)
    timings["insert_s"] = time.perf_counter() - started
    started = time.perf_counter()
    async with engine.begin() as conn:
        for statement in ROLLUP_SQL.split(";"):
            if statement.strip():
                await conn.execute(text(statement))
        await conn.execute(text("ANALYZE audit_log"))
        await conn.execute(text("ANALYZE audit_daily"))
        await conn.execute(text("ANALYZE audit_latency"))
        await conn.execute(text("ANALYZE backend_load_minutes"))
        await conn.execute(text("ANALYZE audit_token_sizes"))
    timings["rollup_s"] = time.perf_counter() - started
    return timings


async def fresh_database(url: str) -> None:
    engine = create_engine(url)
    async with engine.begin() as conn:
        await conn.execute(text("DROP SCHEMA public CASCADE"))
        await conn.execute(text("CREATE SCHEMA public"))
    await upgrade(engine)
    await engine.dispose()
