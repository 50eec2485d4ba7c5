"""The sim's scheduler: admission, batching limits, KV accounting, preemption, prefix hits,
and time to first token growing with the queue (driven on a virtual clock)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest

from gateway.sim.config import SimConfig
from gateway.sim.scheduler import Scheduler, SeqStatus, Sequence, step_duration_s


def make_seq(
    request_id: int, prompt_len: int, output_len: int, prefix: tuple[int, ...] = ()
) -> Sequence:
    # Distinct ids per request so that nothing hits the prefix cache by accident.
    base = 1000 + request_id * 100_000
    prompt = prefix + tuple(range(base, base + prompt_len - len(prefix)))
    output = tuple(range(base + 50_000, base + 50_000 + output_len))
    return Sequence(request_id, prompt, output, "stop")


def tiny(**overrides: object) -> SimConfig:
    values: dict[str, object] = {
        "block_size": 4,
        "num_gpu_blocks": 64,
        "max_model_len": 64,
        "max_num_seqs": 8,
    }
    values.update(overrides)
    return SimConfig(**values)  # type: ignore[arg-type]


@dataclass
class Timeline:
    first_token_s: dict[int, float] = field(default_factory=dict)
    finished_s: dict[int, float] = field(default_factory=dict)
    tokens: dict[int, list[int]] = field(default_factory=dict)
    max_blocks_used: int = 0


def run_virtual(scheduler: Scheduler, seqs: list[Sequence]) -> Timeline:
    """Run every sequence to completion, all arriving at t=0, on a virtual clock."""
    for seq in seqs:
        scheduler.add(seq)
    timeline = Timeline()
    now = 0.0
    for _ in range(100_000):
        if not scheduler.has_work:
            return timeline
        plan = scheduler.schedule()
        now += step_duration_s(scheduler.config, plan)
        timeline.max_blocks_used = max(timeline.max_blocks_used, scheduler.pool.num_used)
        for out in scheduler.complete(plan):
            rid = out.seq.request_id
            timeline.tokens.setdefault(rid, []).append(out.index)
            timeline.first_token_s.setdefault(rid, now)
            if out.finish_reason is not None:
                timeline.finished_s[rid] = now
    raise AssertionError("scheduler did not drain")


def test_admits_fcfs_up_to_max_num_seqs() -> None:
    scheduler = Scheduler(tiny(max_num_seqs=2))
    seqs = [make_seq(i, 8, 4) for i in range(3)]
    for seq in seqs:
        scheduler.add(seq)
    plan = scheduler.schedule()
    assert [a.seq for a in plan.admissions] == seqs[:2]
    assert list(scheduler.waiting) == [seqs[2]]
    scheduler.complete(plan)
    assert scheduler.schedule().batch_size == 2  # still capped while both run


def test_admission_waits_until_free_blocks_cover_the_prompt() -> None:
    scheduler = Scheduler(tiny(num_gpu_blocks=4, max_model_len=16))
    first, second = make_seq(0, 10, 1), make_seq(1, 8, 1)  # 3 blocks, then 2 blocks
    scheduler.add(first)
    scheduler.add(second)
    plan = scheduler.schedule()
    assert [a.seq for a in plan.admissions] == [first]
    assert second.status is SeqStatus.WAITING
    scheduler.complete(plan)  # first ends after one token and frees its 3 blocks
    assert [a.seq for a in scheduler.schedule().admissions] == [second]


def test_blocks_track_tokens_and_are_released_at_the_end() -> None:
    scheduler = Scheduler(tiny())
    seq = make_seq(0, 6, 9)
    scheduler.add(seq)
    while scheduler.has_work:
        plan = scheduler.schedule()
        # The step writes the KV of every token so far: ceil(tokens / block_size) blocks.
        assert len(seq.blocks) == -(-seq.num_tokens // 4)
        assert scheduler.pool.num_used == len(seq.blocks)
        assert scheduler.pool.usage == pytest.approx(len(seq.blocks) / 64)
        scheduler.complete(plan)
    assert seq.num_generated == 9
    assert scheduler.pool.num_used == 0


def test_preemption_under_tiny_kv_requeues_the_newest_and_still_finishes_all() -> None:
    # 6 blocks of 4 tokens; two sequences growing to 16 tokens (4 blocks) each cannot coexist.
    scheduler = Scheduler(tiny(num_gpu_blocks=6, max_model_len=24))
    old, new = make_seq(0, 4, 12), make_seq(1, 4, 12)
    scheduler.add(old)
    scheduler.add(new)
    preempted: list[Sequence] = []
    tokens: dict[int, list[int]] = {0: [], 1: []}
    while scheduler.has_work:
        plan = scheduler.schedule()
        preempted.extend(plan.preempted)
        if plan.preempted:
            assert scheduler.waiting[0] is plan.preempted[-1]  # requeued at the front
            assert plan.admissions == ()  # a preempting step admits nobody
        assert scheduler.pool.num_used <= 6
        for out in scheduler.complete(plan):
            tokens[out.seq.request_id].append(out.index)
    assert preempted and preempted[0] is new  # the most recently admitted goes first
    assert scheduler.num_preemptions == len(preempted) == new.num_preemptions
    assert tokens == {0: list(range(12)), 1: list(range(12))}  # recomputed, not repeated
    assert scheduler.pool.num_used == 0


def test_readmitted_sequence_recomputes_prompt_and_generated_tokens() -> None:
    scheduler = Scheduler(tiny(num_gpu_blocks=6, max_model_len=24, enable_prefix_caching=False))
    scheduler.add(make_seq(0, 4, 12))
    victim = make_seq(1, 4, 12)
    scheduler.add(victim)
    while not victim.num_preemptions:
        scheduler.complete(scheduler.schedule())
    generated = victim.num_generated
    while True:
        plan = scheduler.schedule()
        readmitted = [a for a in plan.admissions if a.seq is victim]
        scheduler.complete(plan)
        if readmitted:
            assert readmitted[0].num_prefill_tokens == 4 + generated
            assert not readmitted[0].first_time
            return


def test_repeated_prefix_hits_the_cache_in_whole_blocks() -> None:
    scheduler = Scheduler(tiny(block_size=16, num_gpu_blocks=32, max_model_len=128))
    shared = tuple(range(7, 47))  # 40 tokens: two full blocks of 16
    run_virtual(scheduler, [make_seq(0, 50, 3, prefix=shared)])
    follower = make_seq(1, 60, 3, prefix=shared)
    scheduler.add(follower)
    plan = scheduler.schedule()
    assert plan.admissions[0].num_cached_tokens == 32
    assert plan.admissions[0].num_prefill_tokens == 60 - 32
    assert follower.num_cached_tokens == 32


def test_an_identical_prompt_still_recomputes_its_last_token() -> None:
    scheduler = Scheduler(tiny(block_size=16, num_gpu_blocks=32, max_model_len=128))
    prompt = tuple(range(5, 53))  # 48 tokens = 3 full blocks
    run_virtual(scheduler, [Sequence(0, prompt, (1, 2), "stop")])
    scheduler.add(Sequence(1, prompt, (3,), "stop"))
    # The last token must be computed to get logits, so only (48 - 1) // 16 = 2 blocks hit.
    assert scheduler.schedule().admissions[0].num_cached_tokens == 32


def test_prefix_caching_off_never_hits() -> None:
    config = tiny(block_size=16, num_gpu_blocks=32, max_model_len=128)
    scheduler = Scheduler(replace(config, enable_prefix_caching=False))
    shared = tuple(range(7, 47))
    run_virtual(scheduler, [make_seq(0, 50, 3, prefix=shared)])
    scheduler.add(make_seq(1, 60, 3, prefix=shared))
    assert scheduler.schedule().admissions[0].num_cached_tokens == 0


def test_ttft_grows_with_the_queue() -> None:
    config = tiny(max_num_seqs=2, num_gpu_blocks=256, max_model_len=256)
    timeline = run_virtual(Scheduler(config), [make_seq(i, 200, 20) for i in range(8)])
    ttfts = [timeline.first_token_s[i] for i in range(8)]
    assert ttfts == sorted(ttfts)
    assert ttfts[-1] > 3 * ttfts[0]  # the last one waited for three pairs to finish


def test_ttft_includes_prefill_admitted_in_the_same_step() -> None:
    config = tiny(num_gpu_blocks=1024, max_model_len=1024, max_num_batched_tokens=8192)
    alone = run_virtual(Scheduler(config), [make_seq(0, 1000, 2)]).first_token_s[0]
    crowd = run_virtual(Scheduler(config), [make_seq(i, 1000, 2) for i in range(4)])
    assert crowd.first_token_s[0] == pytest.approx(
        alone + 3 * 1000 / config.prefill_tokens_per_s + 3 * config.decode_step_per_seq_s
    )


def test_prefill_budget_spreads_admissions_over_steps() -> None:
    config = tiny(num_gpu_blocks=1024, max_model_len=1024, max_num_batched_tokens=1000)
    scheduler = Scheduler(config)
    for i in range(3):
        scheduler.add(make_seq(i, 600, 2))
    assert len(scheduler.schedule().admissions) == 1  # 600 + 600 would exceed 1000


def test_step_duration_grows_with_batch_size() -> None:
    config = tiny()
    scheduler = Scheduler(config)
    durations = []
    for i in range(4):
        scheduler.add(make_seq(i, 4, 30))
        plan = scheduler.schedule()
        scheduler.complete(plan)
        prefill_s = plan.num_prefill_tokens / config.prefill_tokens_per_s
        durations.append(step_duration_s(config, plan) - prefill_s)
    assert durations == sorted(durations) and durations[-1] > durations[0]
    assert durations[0] == pytest.approx(config.decode_step_base_s + config.decode_step_per_seq_s)


def test_abort_frees_blocks_of_running_and_drops_waiting() -> None:
    scheduler = Scheduler(tiny(max_num_seqs=1))
    running, waiting = make_seq(0, 12, 10), make_seq(1, 12, 10)
    scheduler.add(running)
    scheduler.add(waiting)
    scheduler.complete(scheduler.schedule())
    assert scheduler.pool.num_used == 3  # 12 tokens in blocks of 4
    assert scheduler.abort(running) and scheduler.abort(waiting)
    assert scheduler.pool.num_used == 0 and not scheduler.has_work
    assert not scheduler.abort(running)


def test_rejects_a_sequence_longer_than_the_context() -> None:
    with pytest.raises(ValueError):
        Scheduler(tiny()).add(make_seq(0, 60, 10))


def test_config_refuses_a_context_the_kv_cache_cannot_hold() -> None:
    with pytest.raises(ValueError, match="exceeds the KV cache"):
        SimConfig(block_size=16, num_gpu_blocks=8, max_model_len=256)
