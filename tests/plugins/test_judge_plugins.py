"""Judges are plugins: the built-ins are registered like a third party's, and a plugin can add one."""

from __future__ import annotations

from typing import Any

import anyio

from orchestra.hookspecs import hookimpl
from orchestra.host import Host
from orchestra.judging.settings import JudgeConfig
from orchestra.rollout import RolloutSpec, execute
from support.helpers import scenario


class RejectEverything:
    """A judge plugin: ARE's scripted judge, except that it never accepts a rollout."""

    def __init__(self) -> None:
        self.built = 0

    @hookimpl
    def register_judges(self, register: Any) -> None:
        register("reject-all", self.build)

    def build(self, config: JudgeConfig) -> Any:
        from orchestra.are.judge_pool import build_scripted_judge

        self.built += 1
        judge = build_scripted_judge()
        validate = judge.validate

        def never(env: Any) -> Any:
            verdict = validate(env)
            verdict.success, verdict.rationale = False, "reject-all: this judge accepts nothing"
            return verdict

        judge.validate = never
        return judge


def test_a_plugin_judge_is_used_by_name_and_labels_its_verdicts():
    plugin = RejectEverything()
    host = Host.create([plugin], entry_points=False)
    assert set(host.judges) == {"scripted", "strict", "llm", "reject-all"}
    path = str(scenario("starter_search_lookup"))
    oracle = anyio.run(lambda: execute(RolloutSpec(scenario=path), host=host))
    assert oracle.result is not None and oracle.result.success and oracle.result.judge == "scripted"
    spec = RolloutSpec(scenario=path, session={"judge": {"mode": "reject-all"}})
    for _ in range(2):  # pooled: built once, reused
        record = anyio.run(lambda: execute(spec, host=host))
        assert record.error is None and record.result is not None
        assert (record.result.success, record.result.reward, record.result.judge) == (False, 0.0, "reject-all")
        assert "reject-all: this judge accepts nothing" in (record.result.rationale or "")
    assert plugin.built == 1


def test_the_built_in_judges_are_registered_by_the_judges_plugin():
    host = Host.create(entry_points=False)
    info = {p.name: p for p in host.plugins()}
    assert info["judges"].source == "builtin" and info["judges"].registered == {"judge": ["scripted", "strict", "llm"]}
