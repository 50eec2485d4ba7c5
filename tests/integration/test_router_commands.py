"""`gateway router fit|eval` and `gateway classify --router`: the formats the issue fixes, a
router that learns where the strong model wins, and mistakes named with their line."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import orjson
import pytest
from click.testing import CliRunner

from gateway.classify.router_model import RouterModel, RouterModelError
from gateway.cli.main import cli
from gateway.offline.evaluation.routing_metrics import apgr, routing_curve
from gateway.offline.training.router_fit import JudgedPrompt, fit_router
from tests.support.routers import shipped_encoder

LANGUAGES = ["Python", "Rust", "Go", "Java", "C++", "TypeScript"]
JOBS = ["parses a CSV file", "merges two sorted lists", "retries HTTP calls with backoff",
        "finds cycles in a graph", "validates an email address", "computes a moving average"]
GREETINGS = ["hi", "hello there", "good morning", "hey", "thanks a lot", "how are you today"]
NAMES = ["friend", "buddy", "everyone", "pal", "team", "mate"]


def outcomes(part: int) -> list[dict[str, object]]:
    """Code requests the strong model wins (on a 1-10 judge scale), small talk both answer
    alike; `part` picks disjoint prompt sets (fit on one, evaluate on the other)."""
    code = [f"Write a {lang} function that {job}." for lang, job in
            itertools.product(LANGUAGES, JOBS)]
    # Longer than the code requests, so prompt length ranks them the wrong way round.
    chat = [f"{greeting}, {name}! Just saying hello and wishing you a lovely, relaxing"
            " weekend with your family and friends." for greeting, name in
            itertools.product(GREETINGS, NAMES)]
    rows: list[dict[str, object]] = []
    for i, (prompt_code, prompt_chat) in enumerate(zip(code, chat, strict=True)):
        if i % 2 != part:
            continue
        rows.append({"id": f"c{i}", "prompt": prompt_code, "weak_score": 4, "strong_score": 9,
                     "weak_model": "small", "strong_model": "big"})
        rows.append({"prompt": prompt_chat, "weak_score": 8.5, "strong_score": 8})
    return rows


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_fitted_router_ranks_unseen_prompts_where_the_strong_model_wins(
        tmp_path: Path) -> None:
    runner = CliRunner()
    fitted = runner.invoke(cli, ["router", "fit", "--outcomes",
                                 str(write(tmp_path / "fit.jsonl", outcomes(0))),
                                 "--out", str(tmp_path / "router")])
    assert fitted.exit_code == 0, fitted.output
    assert "fitted on 36 outcomes (strong model better on 18)" in fitted.output
    document = json.loads((tmp_path / "router" / "router.json").read_text())
    assert document["format"] == "gateway-router-stacked/3"
    assert document["encoder"] == shipped_encoder()  # what it was fitted against
    assert "complexity_score" in document["dense"] and document["training"]["outcomes"] == 36

    evaluated = runner.invoke(cli, ["router", "eval", "--outcomes",
                                    str(write(tmp_path / "test.jsonl", outcomes(1))),
                                    "--router", str(tmp_path / "router")])
    assert evaluated.exit_code == 0, evaluated.output
    table = {line.split()[0]: float(line.split()[1]) for line in evaluated.output.splitlines()
             if line.startswith(("router ", "length ")) and "APGR" not in line}
    test = outcomes(1)
    weak = np.array([r["weak_score"] for r in test], dtype=float)
    strong = np.array([r["strong_score"] for r in test], dtype=float)
    best = apgr(routing_curve(strong - weak, weak, strong))  # the oracle's order
    assert table["router"] == pytest.approx(best, abs=0.002), evaluated.output
    assert table["length"] < 0.5 < table["router"]
    assert "calls to 95%" in evaluated.output and "length" in evaluated.output

    router = RouterModel.load(tmp_path / "router")
    assert router.p_strong("Write a Kotlin function that sorts a map.") > router.p_strong(
        "hello, folks! Just saying hello and wishing you a lovely, relaxing weekend with your"
        " family and friends.")


def test_classify_scores_complexity_with_the_router(tmp_path: Path) -> None:
    runner = CliRunner()
    runner.invoke(cli, ["router", "fit", "--outcomes",
                        str(write(tmp_path / "fit.jsonl", outcomes(0))),
                        "--out", str(tmp_path / "router")], catch_exceptions=False)
    source = tmp_path / "in.jsonl"
    source.write_text('{"prompt": "Write a Ruby function that reverses a string."}\n'
                      '{"prompt": "hello, folks! Just saying hello and wishing you a lovely,'
                      ' relaxing weekend."}\n', encoding="utf-8")
    shipped = runner.invoke(cli, ["classify", str(source)])
    routed = runner.invoke(cli, ["classify", str(source), "--router", str(tmp_path / "router")])
    assert shipped.exit_code == 0 and routed.exit_code == 0, routed.output
    code, chat = (orjson.loads(line) for line in routed.output.splitlines())
    assert code["complexity"]["p_strong"] > chat["complexity"]["p_strong"]
    # Classes by the router's own thresholds (its training prompts' 50th/80th percentiles).
    order = ["low", "medium", "high"]
    assert order.index(code["complexity"]["class"]) > order.index(chat["complexity"]["class"])
    assert shipped.output != routed.output


def test_mistakes_in_the_outcomes_are_named_with_their_line(tmp_path: Path) -> None:
    runner = CliRunner()
    rows = outcomes(0)
    rows[2] = {"prompt": "x", "weak_score": "good", "strong_score": 1}
    bad = runner.invoke(cli, ["router", "fit", "--outcomes", str(write(tmp_path / "b.jsonl",
                              rows)), "--out", str(tmp_path / "r")])
    assert bad.exit_code == 1 and "b.jsonl:3:" in bad.output and "numbers" in bad.output
    few = runner.invoke(cli, ["router", "fit", "--outcomes",
                              str(write(tmp_path / "f.jsonl", outcomes(0)[:5])),
                              "--out", str(tmp_path / "r")])
    assert few.exit_code == 1 and "at least 20 outcomes" in few.output
    missing = runner.invoke(cli, ["router", "eval", "--outcomes", str(tmp_path / "f.jsonl"),
                                  "--router", str(tmp_path)])
    assert missing.exit_code == 1 and "no router in" in missing.output


def test_a_router_file_from_another_version_is_refused(tmp_path: Path) -> None:
    judged = [JudgedPrompt(str(r["prompt"]), float(r["weak_score"]),  # type: ignore[arg-type]
                           float(r["strong_score"])) for r in outcomes(0)]  # type: ignore[arg-type]
    document = fit_router(judged)
    RouterModel.from_document(document)  # as fitted: accepted
    for change in ({"format": "gateway-router-stacked/2"}, {"featurizer_version": -1},
                   {"encoder": {"name": "other", "digest": "0" * 64}},
                   {"dense": [1.0]}, {"ngrams": {"word": "heavy"}}, {"intercept": "nan"},
                   {"thresholds": [0.1]}):
        with pytest.raises(RouterModelError):
            RouterModel.from_document({**document, **change})
    (tmp_path / "router.json").write_text("{", encoding="utf-8")
    with pytest.raises(RouterModelError, match="not valid JSON"):
        RouterModel.load(tmp_path)
