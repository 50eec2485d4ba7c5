"""The request classifier: its worker processes (exact token counts, Presidio), warmed at
start-up rather than on a user's request, and the redaction of the gateway's own logs; and
the backends' own token counts, where a policy asks for them."""

from __future__ import annotations

import asyncio
import contextlib
from concurrent.futures import ProcessPoolExecutor
from contextlib import AsyncExitStack
from multiprocessing import get_context
from typing import TYPE_CHECKING

import httpx

from gateway.assembly.parent_watch import die_with_parent
from gateway.classify.presidio import PresidioConfig, PresidioFinder
from gateway.classify.profiler import RequestClassifier
from gateway.classify.sensitivity import SensitivityScanner
from gateway.classify.standard import standard_classifier
from gateway.classify.workers import compile_name_search, warm_worker
from gateway.policy.loader import PolicySet
from gateway.policy.token_counting import extra_encodings
from gateway.provider_kinds.engine_tokens import EngineTokenCounter
from gateway.settings import Settings

if TYPE_CHECKING:
    from gateway.classify.encoder_pool import EncoderPool
from gateway.telemetry.log_output import redact_gateway_logs


def open_classifier(stack: AsyncExitStack, settings: Settings, presidio: PresidioConfig | None,
                    policy: PolicySet) -> RequestClassifier:
    # Large exact token counts run in other processes (the encoder holds the GIL); two, so a
    # 128K-token prompt is counted in halves in parallel.
    token_pool = ProcessPoolExecutor(max_workers=2, mp_context=get_context("spawn"),
                                     initializer=die_with_parent)
    stack.callback(token_pool.shutdown, wait=False, cancel_futures=True)
    second_opinion = None
    if presidio is not None:
        second_opinion = PresidioFinder.in_processes(presidio, settings.presidio_workers,
                                                     initializer=die_with_parent)
        stack.callback(second_opinion.close)
    classifier = standard_classifier(token_pool, parallelism=2, extra=second_opinion,
                                     task_model=settings.task_model,
                                     complexity_model=settings.complexity_model,
                                     encoder_table=settings.encoder_table)
    accurate = None
    if settings.complexity_encoder == "minilm":
        classifier, accurate = _accurate(stack, settings, classifier)
    log_scanner = SensitivityScanner()  # logs are no tenant's: the built-in detectors
    stack.callback(redact_gateway_logs(lambda text: classifier.redact_text(text, log_scanner)))
    # Start both processes, load their vocabularies and compile their detectors now, not on
    # a user's request.
    encodings = ("o200k_base", *extra_encodings(policy.backends.values()))
    classifier.load_encodings(encodings)
    loop = asyncio.get_running_loop()
    warm_up = asyncio.gather(*(
        loop.run_in_executor(token_pool, warm_worker, encoding)
        for encoding in encodings for _ in range(2)
    ), loop.run_in_executor(None, compile_name_search),  # this process scans short texts
        *([second_opinion.warm()] if second_opinion else []),
        *([accurate.warm()] if accurate else []))

    async def stop_warming() -> None:
        warm_up.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await warm_up  # retrieve its outcome: a cancelled gather must not log noise

    stack.push_async_callback(stop_warming)
    return classifier


def _accurate(stack: AsyncExitStack, settings: Settings, classifier: RequestClassifier,
              ) -> tuple[RequestClassifier, EncoderPool]:
    """The accurate mode: the full MiniLM in its own worker processes, behind a micro-batching
    pool the event loop only awaits; its model was checked at start-up (serve)."""
    from gateway.classify.complexity_accurate import AccurateComplexity
    from gateway.classify.encoder_pool import EncoderPool, PoolLimits
    from gateway.classify.standard import pooled_accurate_model

    model = pooled_accurate_model(settings.complexity_model)
    workers = settings.complexity_encoder_workers
    # A full batch of long prompts takes seconds on a busy host; past this a request is a
    # retryable 503 rather than a wait without end.
    pool = EncoderPool.processes(workers=workers,
                                 limits=PoolLimits(max_in_flight=workers, batch_timeout_s=30.0))
    pool.start()
    stack.push_async_callback(pool.close)
    return classifier.with_accurate_complexity(AccurateComplexity(model, pool)), pool


def open_engine_counter(stack: AsyncExitStack,
                        transport: httpx.AsyncBaseTransport | None) -> EngineTokenCounter:
    """vLLM /tokenize and Anthropic count_tokens, asked when the estimate would refuse."""
    client = httpx.AsyncClient(limits=httpx.Limits(max_connections=32), transport=transport)
    stack.push_async_callback(client.aclose)
    return EngineTokenCounter(client)
