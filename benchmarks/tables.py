"""Renders rows of cells as an aligned plain-text table or a Markdown table."""

from __future__ import annotations

from collections.abc import Sequence


def _aligned(cells: Sequence[str], widths: Sequence[int]) -> str:
    # The first column is a label and aligns left; the rest are figures and align right.
    padded = (
        c.ljust(w) if i == 0 else c.rjust(w)
        for i, (c, w) in enumerate(zip(cells, widths, strict=True))
    )
    return "  ".join(padded).rstrip()


def render_text(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = [_aligned(headers, widths), "  ".join("-" * w for w in widths)]
    lines += [_aligned(row, widths) for row in rows]
    return "\n".join(lines)


def render_markdown(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|---|" + "---:|" * (len(headers) - 1)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)
