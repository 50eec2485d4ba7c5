"""Scheduler: vLLM-style continuous batching over a BlockPool, and the cost of one step.

FCFS admission while free blocks cover a request's uncached prompt, up to max_num_seqs; every
running sequence gains one token per step; when a sequence needs a block and none is free, the
most recently admitted one is preempted (blocks freed, requeued at the front, recomputed
later). Pure and clock-free: the engine drives it and owns time.
"""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass, field

from gateway.sim.config import SimConfig
from gateway.sim.kv_cache import BlockPool, extend_block_hashes


class SeqStatus(enum.Enum):
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"


@dataclass(eq=False)
class Sequence:
    """One request inside the engine. Its whole answer (output_ids) is planned up front."""

    request_id: int
    prompt_ids: tuple[int, ...]
    output_ids: tuple[int, ...]
    finish_reason: str  # reported when output_ids is exhausted: "stop" or "length"
    status: SeqStatus = SeqStatus.WAITING
    num_generated: int = 0
    num_cached_tokens: int = 0  # prefix-cache hit at first admission (usage.cached_tokens)
    num_preemptions: int = 0
    admitted_once: bool = False
    blocks: list[int] = field(default_factory=list)
    block_hashes: list[int] = field(default_factory=list)
    num_registered_blocks: int = 0
    all_ids: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not self.output_ids:
            raise ValueError("a sequence must plan at least one output token")
        self.all_ids = self.prompt_ids + self.output_ids

    @property
    def num_tokens(self) -> int:
        return len(self.prompt_ids) + self.num_generated

    @property
    def finished(self) -> bool:
        return self.status is SeqStatus.FINISHED


@dataclass(frozen=True)
class Admission:
    seq: Sequence
    num_prefill_tokens: int  # tokens computed this step (the uncached part)
    num_cached_tokens: int
    first_time: bool  # False when a preempted sequence is readmitted to recompute


@dataclass(frozen=True)
class StepPlan:
    decodes: tuple[Sequence, ...]
    admissions: tuple[Admission, ...]
    preempted: tuple[Sequence, ...]

    @property
    def scheduled(self) -> list[Sequence]:
        return [*self.decodes, *(a.seq for a in self.admissions)]

    @property
    def batch_size(self) -> int:
        return len(self.decodes) + len(self.admissions)

    @property
    def num_prefill_tokens(self) -> int:
        return sum(a.num_prefill_tokens for a in self.admissions)


@dataclass(frozen=True)
class TokenOutput:
    seq: Sequence
    index: int  # 0-based position of the new token in the answer
    finish_reason: str | None  # set on the sequence's last token


def step_duration_s(config: SimConfig, plan: StepPlan) -> float:
    """Model time of one step: a decode cost growing with the batch, plus its prefill work."""
    if plan.batch_size == 0:
        return 0.0
    return (
        config.decode_step_base_s
        + config.decode_step_per_seq_s * plan.batch_size
        + plan.num_prefill_tokens / config.prefill_tokens_per_s
    )


def _blocks_for(num_tokens: int, block_size: int) -> int:
    return -(-num_tokens // block_size)


class Scheduler:
    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self.pool = BlockPool(
            config.num_gpu_blocks,
            config.block_size,
            enable_prefix_caching=config.enable_prefix_caching,
        )
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []  # in admission order: the last one is preempted first
        self.num_preemptions = 0

    @property
    def has_work(self) -> bool:
        return bool(self.waiting or self.running)

    def add(self, seq: Sequence) -> None:
        total = len(seq.prompt_ids) + len(seq.output_ids)
        if total > self.config.max_model_len:
            raise ValueError(f"sequence of {total} tokens exceeds max_model_len")
        self.waiting.append(seq)

    def abort(self, seq: Sequence) -> bool:
        """Drop a waiting or running sequence and free its blocks; False if already finished."""
        if seq.status is SeqStatus.WAITING:
            self.waiting.remove(seq)
        elif seq.status is SeqStatus.RUNNING:
            self.running.remove(seq)
            self.pool.free(seq.blocks)
            seq.blocks = []
        else:
            return False
        seq.status = SeqStatus.FINISHED
        return True

    def schedule(self) -> StepPlan:
        """Decide the next step: grow running sequences (preempting if need be), then admit."""
        decodes: list[Sequence] = []
        preempted: list[Sequence] = []
        for seq in list(self.running):
            if seq.status is not SeqStatus.RUNNING:
                continue  # preempted earlier in this loop
            while not self._grow(seq):
                victim = self.running.pop()
                self._preempt(victim)
                preempted.append(victim)
                if victim is seq:
                    break
            else:
                decodes.append(seq)
        # Like vLLM, a step that had to preempt admits nobody: memory is the bottleneck.
        admissions = [] if preempted else self._admit()
        return StepPlan(tuple(decodes), tuple(admissions), tuple(preempted))

    def complete(self, plan: StepPlan) -> list[TokenOutput]:
        """Apply a finished step: each sequence still running gains its next token."""
        outputs: list[TokenOutput] = []
        for seq in plan.scheduled:
            if seq.status is not SeqStatus.RUNNING:
                continue  # aborted while the step ran
            self._register_full_blocks(seq)
            seq.num_generated += 1
            done = seq.num_generated == len(seq.output_ids)
            reason = seq.finish_reason if done else None
            outputs.append(TokenOutput(seq, seq.num_generated - 1, reason))
            if done:
                self.running.remove(seq)
                self.pool.free(seq.blocks)
                seq.blocks = []
                seq.status = SeqStatus.FINISHED
        return outputs

    def _grow(self, seq: Sequence) -> bool:
        # This step writes the KV of every token so far (the last sampled one included).
        need = _blocks_for(seq.num_tokens, self.pool.block_size) - len(seq.blocks)
        if need <= 0:
            return True
        fresh = self.pool.allocate(need)
        if fresh is None:
            return False
        seq.blocks.extend(fresh)
        return True

    def _preempt(self, seq: Sequence) -> None:
        self.pool.free(seq.blocks)  # they stay in the prefix cache until reused
        seq.blocks = []
        seq.status = SeqStatus.WAITING
        seq.num_preemptions += 1
        self.num_preemptions += 1
        self.waiting.appendleft(seq)

    def _admit(self) -> list[Admission]:
        admissions: list[Admission] = []
        block_size = self.pool.block_size
        budget = self.config.max_num_batched_tokens
        prefill = 0
        while self.waiting and len(self.running) < self.config.max_num_seqs:
            seq = self.waiting[0]
            num_tokens = seq.num_tokens
            extend_block_hashes(seq.block_hashes, seq.all_ids, block_size, num_tokens)
            # At least the last token is always recomputed: it produces the next token's logits.
            hits = self.pool.find_cached(seq.block_hashes[: (num_tokens - 1) // block_size])
            computed = num_tokens - len(hits) * block_size
            if admissions and prefill + computed > budget:
                break
            need = _blocks_for(num_tokens, block_size) - len(hits)
            if not self.pool.can_take(hits, need):
                break  # FCFS: nobody overtakes the head of the queue
            seq.blocks = self.pool.take(hits, need)
            seq.num_registered_blocks = len(hits)
            self.waiting.popleft()
            self.running.append(seq)
            seq.status = SeqStatus.RUNNING
            first_time = not seq.admitted_once
            if first_time:
                seq.admitted_once = True
                seq.num_cached_tokens = len(hits) * block_size
            admissions.append(Admission(seq, computed, len(hits) * block_size, first_time))
            prefill += computed
        return admissions

    def _register_full_blocks(self, seq: Sequence) -> None:
        """After a step every token so far has its KV written: publish the full blocks."""
        block_size = self.pool.block_size
        num_tokens = seq.num_tokens
        full = num_tokens // block_size
        if full <= seq.num_registered_blocks:
            return
        extend_block_hashes(seq.block_hashes, seq.all_ids, block_size, num_tokens)
        for index in range(seq.num_registered_blocks, full):
            self.pool.register(seq.blocks[index], seq.block_hashes[index])
        seq.num_registered_blocks = full
