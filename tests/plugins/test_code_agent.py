"""An agent's interpreter ends with its run: normally, on a permanent model error, on Ctrl-C."""

from __future__ import annotations

import threading

import anyio
import pytest

from orchestra.hookspecs import hookimpl
from orchestra.host import Host
from orchestra.models import ModelConfig
from orchestra.rollout import AgentConfig, Rollout, RolloutSpec
from support.helpers import scenario, write_script
from support.sandboxes import BACKENDS, require_backend

BLOCK = {"text": "Thought: t\nCode:\n```py\nkept = 41 + 1\nprint(kept)\n```<end_action>"}


def _alive(scaffold) -> bool:
    sandbox = scaffold.sandbox
    return sandbox is not None and sandbox.running


def _guest_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "orchestra-wasm-guest" and t.is_alive())


class Interrupt:
    """Ctrl-C during the agent's second model call."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl(wrapper=True, tryfirst=True)
    def model_call(self, agent, request):
        inner = yield
        self.calls += 1
        if self.calls == 2:
            inner.close()
            raise KeyboardInterrupt
        return inner


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("ending", ["answer", "model_error", "ctrl_c"])
def test_the_interpreter_is_torn_down_when_the_run_ends(backend, ending, tmp_path, judge_pool):
    require_backend(backend)
    entries = [BLOCK]
    if ending == "answer":
        entries.append({"text": "Thought: t\nCode:\n```py\nAgentUserInterface__send_message_to_user(content=str(kept))\n```<end_action>"})
    else:
        entries.append(BLOCK)  # model_error: the script then runs out (a permanent error); ctrl_c: never reached
    script = write_script(tmp_path, entries)
    host = Host.create([Interrupt()] if ending == "ctrl_c" else [], entry_points=False)
    seen: dict[str, bool] = {}
    before = _guest_threads()
    spec = RolloutSpec(
        scenario=str(scenario("starter_search_lookup")),
        agent=AgentConfig(scaffold="code", model=ModelConfig(model=f"orchestra/scripted:{script}"), scaffold_options={"sandbox": backend}),
    )
    with Rollout.open(spec, host=host, judge_pool=judge_pool) as rollout:
        assert rollout.main is not None
        scaffold = rollout.main.scaffold
        original = scaffold.record

        def record(*args, **kwargs):
            original(*args, **kwargs)
            seen.setdefault("alive_during_run", _alive(scaffold))

        scaffold.record = record
        if ending == "ctrl_c":
            with pytest.raises(KeyboardInterrupt):
                anyio.run(rollout.run)
        else:
            result = anyio.run(rollout.run)
            assert (result.error is None) == (ending == "answer"), result.error
    assert seen["alive_during_run"] is True
    assert scaffold.sandbox is None  # closed by the `code_agent` plugin
    assert _guest_threads() == before


def test_the_step_api_closes_the_interpreter_with_the_rollout(tmp_path, judge_pool):
    """A trainer drives the main agent itself (no `agent_run`): closing the rollout ends the interpreter."""
    from orchestra.types import ModelResponse, Usage

    spec = RolloutSpec(scenario=str(scenario("starter_search_lookup")), agent=AgentConfig(scaffold="code", model=ModelConfig(model="trainer/own")))
    with Rollout.open(spec, host=Host.create(entry_points=False), judge_pool=judge_pool) as rollout:
        assert rollout.main is not None
        scaffold = rollout.main.scaffold

        async def one_step() -> None:
            assert await rollout.next_request() is not None
            await rollout.apply(ModelResponse(text=BLOCK["text"], tool_calls=[], usage=Usage(100, 10)))

        anyio.run(one_step)
        assert _alive(scaffold)
    assert scaffold.sandbox is None
