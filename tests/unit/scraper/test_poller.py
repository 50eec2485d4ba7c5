"""MetricsPoller against in-process fake engines (httpx.MockTransport): concurrency, timeouts,
errors kept per target, baselines across set_targets, and the run() period."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator

import httpx
import pytest

from gateway.policy.loader import default_metrics_url as metrics_url_for
from gateway.scraper import poller as poller_module
from gateway.scraper.engine_metrics import EngineSample, parse_metrics
from gateway.scraper.poller import MetricsPoller
from gateway.types import BackendLoad
from tests.unit.scraper.exposition import EngineValues, fixture, vllm_text

A, B, C = "http://a:8000/metrics", "http://b:8000/metrics", "http://c:8000/metrics"


class RecordingSink:
    def __init__(self) -> None:
        self.loads: dict[str, list[BackendLoad]] = defaultdict(list)
        self.errors: dict[str, list[str]] = defaultdict(list)

    def record_load(self, backend: str, load: BackendLoad) -> None:
        self.loads[backend].append(load)

    def record_scrape_error(self, backend: str, error: str) -> None:
        self.errors[backend].append(error)


class FakeEngines:
    """URL → page; a URL with no page refuses the connection, as a dead server does."""

    def __init__(self) -> None:
        self.pages: dict[str, str] = {}
        self.status: dict[str, int] = {}
        self.delay_s: dict[str, float] = {}
        self.hits: Counter[str] = Counter()
        self.drops: Counter[str] = Counter()  # requests to answer by closing the connection

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        self.hits[url] += 1
        await asyncio.sleep(self.delay_s.get(url, 0.0))
        if self.drops[url] > 0:
            self.drops[url] -= 1
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        if url not in self.pages:
            raise httpx.ConnectError("All connection attempts failed", request=request)
        return httpx.Response(self.status.get(url, 200), text=self.pages[url])


class FakeClock:
    def __init__(self) -> None:
        self.now_s = 100.0

    def __call__(self) -> float:
        return self.now_s


@pytest.fixture
async def engines() -> AsyncIterator[tuple[FakeEngines, httpx.AsyncClient]]:
    fake = FakeEngines()
    async with httpx.AsyncClient(transport=httpx.MockTransport(fake)) as client:
        yield fake, client


def page(**values: float) -> str:
    return vllm_text({"0": EngineValues(**values)})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("base_url", "metrics_url"),
    [
        ("http://vllm:8000/v1", "http://vllm:8000/metrics"),
        ("http://vllm:8000/v1/", "http://vllm:8000/metrics"),
        ("http://vllm:8000", "http://vllm:8000/metrics"),
        ("http://vllm:8000/", "http://vllm:8000/metrics"),
        ("https://gpu.example/pool-a/v1?x=1", "https://gpu.example/pool-a/metrics"),
        ("http://127.0.0.1:58811/v1", "http://127.0.0.1:58811/metrics"),
    ],
)
def test_metrics_url_for(base_url: str, metrics_url: str) -> None:
    assert metrics_url_for(base_url) == metrics_url


def test_rejects_a_non_positive_period(engines: tuple[FakeEngines, httpx.AsyncClient]) -> None:
    with pytest.raises(ValueError):
        MetricsPoller(engines[1], RecordingSink(), interval_s=0)


async def test_every_target_is_recorded_and_rates_come_from_the_second_scrape(
    engines: tuple[FakeEngines, httpx.AsyncClient],
) -> None:
    fake, client = engines
    sink, clock = RecordingSink(), FakeClock()
    poller = MetricsPoller(client, sink, clock=clock)
    poller.set_targets({"a": A, "b": B})
    fake.pages = {A: page(running=3, generation_tokens=100), B: fixture("sglang.txt")}
    await poller.scrape_once()
    clock.now_s += 2.0
    fake.pages[A] = page(running=1, generation_tokens=500)
    await poller.scrape_once()

    first, second = sink.loads["a"]
    assert (first.running, first.generation_tokens_per_s, first.scraped_at_s) == (3, None, 100.0)
    assert (second.running, second.generation_tokens_per_s) == (1, 200.0)
    assert second.interval_s == 2.0 and second.scraped_at_s == 102.0
    assert [load.engine for load in sink.loads["b"]] == ["sglang", "sglang"]
    assert not sink.errors


async def test_a_failing_target_reports_a_short_error_and_spares_the_others(
    engines: tuple[FakeEngines, httpx.AsyncClient],
) -> None:
    fake, client = engines
    sink = RecordingSink()
    poller = MetricsPoller(client, sink, timeout_s=0.05)
    urls = {name: f"http://{name}:8000/metrics" for name in ("ok", "dead", "503", "html", "slow")}
    poller.set_targets(urls)
    fake.pages = {urls["ok"]: page(), urls["503"]: "busy", urls["html"]: "<html></html>",
                  urls["slow"]: page()}  # fmt: skip
    fake.status[urls["503"]] = 503
    fake.delay_s[urls["slow"]] = 5.0

    started = time.monotonic()
    await poller.scrape_once()
    assert time.monotonic() - started < 1.0  # the slow one is cut off at the timeout

    assert list(sink.loads) == ["ok"]
    assert sink.errors == {
        "dead": ["ConnectError: All connection attempts failed"],
        "503": ["HTTP 503"],
        "html": ["no vLLM, SGLang or llama.cpp series in the text"],
        "slow": ["timed out after 0.05 s"],
    }


async def test_a_dropped_connection_is_retried_once(
    engines: tuple[FakeEngines, httpx.AsyncClient],
) -> None:
    fake, client = engines
    sink = RecordingSink()
    poller = MetricsPoller(client, sink)
    fake.pages = {A: page(), B: page()}
    fake.drops.update({A: 1, B: 2})
    poller.set_targets({"a": A, "b": B})
    await poller.scrape_once()
    assert len(sink.loads["a"]) == 1 and fake.hits[A] == 2
    (error,) = sink.errors["b"]  # twice in a row is not a stale connection: reported
    assert error == "RemoteProtocolError: Server disconnected without sending a response."
    assert fake.hits[B] == 2


async def test_targets_are_scraped_concurrently(
    engines: tuple[FakeEngines, httpx.AsyncClient],
) -> None:
    fake, client = engines
    sink = RecordingSink()
    poller = MetricsPoller(client, sink, timeout_s=2.0)
    urls = {f"e{i}": f"http://e{i}:8000/metrics" for i in range(5)}
    poller.set_targets(urls)
    for url in urls.values():
        fake.pages[url], fake.delay_s[url] = page(), 0.2
    started = time.monotonic()
    await poller.scrape_once()
    assert time.monotonic() - started < 0.6  # 5 × 0.2 s one after another would be 1 s
    assert len(sink.loads) == 5


async def test_set_targets_keeps_baselines_of_unchanged_targets_only(
    engines: tuple[FakeEngines, httpx.AsyncClient],
) -> None:
    fake, client = engines
    sink, clock = RecordingSink(), FakeClock()
    poller = MetricsPoller(client, sink, clock=clock)
    fake.pages = {A: page(), B: page(), C: page()}
    poller.set_targets({"a": A, "b": B})
    await poller.scrape_once()

    clock.now_s += 1.0
    poller.set_targets({"a": A, "c": C})  # b removed, c added
    await poller.scrape_once()
    assert sink.loads["a"][-1].interval_s == 1.0
    assert sink.loads["c"][-1].interval_s is None
    assert len(sink.loads["b"]) == 1

    clock.now_s += 1.0
    poller.set_targets({"a": B, "c": C})  # a re-pointed at another server: starts over
    await poller.scrape_once()
    assert sink.loads["a"][-1].interval_s is None
    assert sink.loads["c"][-1].interval_s == 1.0


async def test_a_target_removed_mid_scrape_is_not_recorded(
    engines: tuple[FakeEngines, httpx.AsyncClient],
) -> None:
    fake, client = engines
    sink = RecordingSink()
    poller = MetricsPoller(client, sink)
    fake.pages, fake.delay_s = {A: page()}, {A: 0.1}
    poller.set_targets({"a": A, "dead": "http://dead:1/metrics"})
    scrape = asyncio.create_task(poller.scrape_once())
    await asyncio.sleep(0.02)
    poller.set_targets({})
    await scrape
    assert not sink.loads and not sink.errors["a"]


async def test_a_failed_scrape_keeps_the_baseline(
    engines: tuple[FakeEngines, httpx.AsyncClient],
) -> None:
    fake, client = engines
    sink, clock = RecordingSink(), FakeClock()
    poller = MetricsPoller(client, sink, clock=clock)
    poller.set_targets({"a": A})
    fake.pages[A] = page(generation_tokens=0)
    await poller.scrape_once()
    clock.now_s += 1.0
    fake.status[A] = 500
    await poller.scrape_once()
    clock.now_s += 1.0
    fake.status[A], fake.pages[A] = 200, page(generation_tokens=300)
    await poller.scrape_once()
    assert sink.errors["a"] == ["HTTP 500"]
    assert sink.loads["a"][-1].interval_s == 2.0
    assert sink.loads["a"][-1].generation_tokens_per_s == 150.0


async def test_an_unexpected_failure_is_logged_and_reported_briefly(
    engines: tuple[FakeEngines, httpx.AsyncClient],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake, client = engines

    def fragile_parse(text: str) -> EngineSample:
        if "boom" in text:
            raise RuntimeError("a bug")
        return parse_metrics(text)

    monkeypatch.setattr(poller_module, "parse_metrics", fragile_parse)
    sink = RecordingSink()
    poller = MetricsPoller(client, sink)
    fake.pages = {A: page(), B: page() + "# boom\n"}
    poller.set_targets({"a": A, "b": B})
    with caplog.at_level(logging.ERROR, logger="gateway.scraper.poller"):
        await poller.scrape_once()
    assert len(sink.loads["a"]) == 1
    assert sink.errors["b"] == ["internal error: RuntimeError"]
    assert "scraping b" in caplog.text and "a bug" in caplog.text


async def test_an_oversized_body_is_refused(
    engines: tuple[FakeEngines, httpx.AsyncClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, client = engines
    monkeypatch.setattr(poller_module, "MAX_BODY_BYTES", 100)
    sink = RecordingSink()
    poller = MetricsPoller(client, sink)
    fake.pages[A] = page()
    poller.set_targets({"a": A})
    await poller.scrape_once()
    assert sink.errors["a"] == ["response larger than 100 bytes"]


async def test_a_big_page_is_parsed_off_the_event_loop(
    engines: tuple[FakeEngines, httpx.AsyncClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, client = engines
    big, small = page(), "llamacpp:requests_processing 1\nllamacpp:requests_deferred 0\n"
    # By page text: gateways other tests left running in this process scrape too, and
    # reach the patched parser from their own threads.
    parsed_in: dict[str, list[int]] = {big: [], small: []}

    def parse_noting_thread(text: str) -> EngineSample:
        if text in parsed_in:
            parsed_in[text].append(threading.get_ident())
        return parse_metrics(text)

    monkeypatch.setattr(poller_module, "parse_metrics", parse_noting_thread)
    monkeypatch.setattr(poller_module, "INLINE_PARSE_MAX_CHARS", 1000)
    sink = RecordingSink()
    poller = MetricsPoller(client, sink)
    fake.pages = {A: big, B: small}
    poller.set_targets({"a": A, "b": B})
    await poller.scrape_once()
    assert len(sink.loads) == 2
    assert parsed_in[small] == [threading.get_ident()]  # the small one inline
    (worker,) = parsed_in[big]
    assert worker != threading.get_ident()  # the big one in a worker thread


async def test_run_keeps_the_period_including_the_scrape_time(
    engines: tuple[FakeEngines, httpx.AsyncClient],
) -> None:
    fake, client = engines
    poller = MetricsPoller(client, RecordingSink(), interval_s=0.2, timeout_s=1.0)
    fake.pages, fake.delay_s = {A: page()}, {A: 0.15}
    poller.set_targets({"a": A})
    task = asyncio.create_task(poller.run())
    await asyncio.sleep(1.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # Ticks at 0, 0.2, ..., 1.0 s: six. Sleeping interval_s after each scrape would give four.
    assert fake.hits[A] >= 5
