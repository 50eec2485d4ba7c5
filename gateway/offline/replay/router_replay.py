"""`gateway policy replay --router DIR`: recorded traffic re-decided with another router's
difficulty estimate, and the quality it would have had.

Each replayed row whose prompt was stored (tenants with `store_content`) gets the router's
p_strong and complexity class in place of the recorded ones before the policy decides it
again; other rows keep what was recorded. Quality is measured on the rows with a shadow
judgement (both answers scored): a row routed to the strong backend (or one of at least its
quality tier) scores the strong answer's score, any other row the served answer's.
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.audit.records import Row
from gateway.classify.router_model import RouterModel
from gateway.types import Backend


@dataclass(slots=True)
class RouterReplay:
    """Rescoring rows and tallying quality before and after, page by page."""

    model: RouterModel
    backends: dict[str, Backend]  # the replayed policy's
    strong: Backend | None  # the policy's shadow.strong, else its highest quality tier
    judged: dict[str, tuple[float, float]]  # request id → (weak, strong) scores, this page
    rescored: int = 0
    kept: int = 0  # no stored prompt: the recorded complexity stands
    judged_rows: int = 0
    quality_before: float = 0.0
    quality_after: float = 0.0
    strong_before: int = 0
    strong_after: int = 0

    def rescore(self, rows: list[Row], prompts: dict[str, str]) -> list[Row]:
        out = []
        for row in rows:
            prompt = prompts.get(row["request_id"])
            if prompt is None:
                self.kept += 1
                out.append(row)
                continue
            assessed = self.model.assess(prompt)
            self.rescored += 1
            out.append({**row, "p_strong": assessed.p_strong, "complexity": assessed.label})
        return out

    def observe(self, row: Row, backend: str) -> None:
        """The Replayer's observer: the backend the row would get now."""
        scores = self.judged.get(row["request_id"])
        if scores is None:
            return
        before, after = self._is_strong(row["backend"]), self._is_strong(backend)
        self.judged_rows += 1
        self.quality_before += scores[before]
        self.quality_after += scores[after]
        self.strong_before += before
        self.strong_after += after

    def summary(self) -> dict[str, float | int | None]:
        n = self.judged_rows
        return {
            "rescored_rows": self.rescored, "rows_without_prompt": self.kept,
            "judged_rows": n,
            "quality_recorded": round(self.quality_before / n, 4) if n else None,
            "quality_with_router": round(self.quality_after / n, 4) if n else None,
            "strong_share_recorded": round(self.strong_before / n, 4) if n else None,
            "strong_share_with_router": round(self.strong_after / n, 4) if n else None,
        }

    def lines(self, router: str) -> list[str]:
        s = self.summary()
        out = [f"router {router}: {s['rescored_rows']} rows rescored from their stored prompts,"
               f" {s['rows_without_prompt']} kept their recorded complexity (no stored prompt)"]
        if not self.judged_rows:
            out.append("quality: no shadow-judged request in the range")
        else:
            out.append(
                f"quality on {self.judged_rows} shadow-judged requests: recorded"
                f" {s['quality_recorded']:.3f}, with the router {s['quality_with_router']:.3f}"
                f" (strong backend share {s['strong_share_recorded']:.0%} →"
                f" {s['strong_share_with_router']:.0%})")
        return out

    def _is_strong(self, name: str | None) -> int:
        if self.strong is None or name is None:
            return 0
        backend = self.backends.get(name)
        return int(name == self.strong.name or (
            backend is not None and backend.quality_tier >= self.strong.quality_tier))


def strong_backend(backends: dict[str, Backend], shadow_strong: Backend | None) -> Backend | None:
    if shadow_strong is not None:
        return shadow_strong
    return max(backends.values(), key=lambda b: b.quality_tier, default=None)
