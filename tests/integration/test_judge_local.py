"""`--judge llm` end to end against a real local model (plumbing only: the 0.5B model's verdicts are not asserted).

ARE's LLM checkers send their prompts through orchestra's judge engine to the llama.cpp server over
HTTP; the usage comes back, is reported apart from the agent's, and a rerun is served from the cache.
"""

from __future__ import annotations

import json

from orchestra.cli import main


def test_llm_judge_on_a_local_server(local_server, scenario_path, tmp_path, capsys):
    args = [
        "replay",
        str(scenario_path("starter_search_lookup")),
        "--perturb",
        "wrong_answer",
        "--json",
        "--judge",
        "llm",
        "--judge-model",
        local_server.model,
        "--judge-endpoint",
        local_server.api_base,
        "--judge-api-key",
        "none",
        "--judge-max-tokens",
        "48",
        "--judge-cache",
        str(tmp_path / "cache"),
    ]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["status"] in ("PASS", "FAIL"), first
    assert first["judge"] == f"llm:{local_server.model}"
    usage = first["judge_usage"]
    assert usage["calls"] >= 1 and usage["prompt_tokens"] > 100 and usage["completion_tokens"] > 0
    assert first["sim_seconds"] == 5.0  # the judge's calls never move the simulated clock
    assert main(args) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["judge_usage"]["calls"] == 0 and second["judge_usage"]["cache_hits"] == usage["calls"]
    assert second["success"] == first["success"]
