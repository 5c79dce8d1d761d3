"""The TRL adapter (`orchestra_client.trl`) against a real `orchestra serve`, without TRL.

`gaia2_environment(url, scenario)` builds the class TRL's `GRPOTrainer(environment_factory=...)`
instantiates per rollout; here its methods are called the way TRL 1.16 calls them (tools found with
`inspect.getmembers(type(env), inspect.isfunction)`, called as `method(**arguments)`, `reset(**row)`
with the dataset row, `get_reward()` once per rollout), by hand instead of by a model:

* the oracle's calls for `bundled/starter_execution_calendar` score 1.0, a wrong sequence 0.0 — on one
  instance, reset between episodes as TRL's pool reuses it;
* a call with a wrong argument (a bad value, an unknown name) returns orchestra's `ERROR: ...` text,
  no exception; a reset drops the unjudged episode's session;
* every tool carries what transformers' `get_json_schema` reads: a signature with the schema's
  parameters (required ones without default) and type hints, a docstring with `Args:` for each.
  (`get_json_schema` itself runs in the trainer's venv — transformers 5 cannot live here.)
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "clients" / "orchestra-client" / "src"))

from orchestra_client.trl import gaia2_environment  # noqa: E402

CALENDAR = "bundled/starter_execution_calendar"
OFFLINE = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1"}
ORACLE_CALLS: list[tuple[str, dict[str, Any]]] = [
    (
        "Calendar__add_calendar_event",
        {
            "title": "Q4 roadmap review",
            "start_datetime": "2024-10-17 14:00:00",
            "end_datetime": "2024-10-17 15:00:00",
            "location": "Room 4B",
            "attendees": ["Priya Shah", "Marcus Lee"],
        },
    ),
    (
        "Emails__send_email",
        {
            "recipients": ["priya.shah@example.com", "marcus.lee@example.com"],
            "subject": "Q4 roadmap review scheduled",
            "content": "Hi Priya and Marcus,\n\nThe Q4 roadmap review is booked for Thursday, October 17, 14:00-15:00 in Room 4B.\n\nBest,\nAlex",
        },
    ),
    ("AgentUserInterface__send_message_to_user", {"content": "Done: the review is on your calendar and both are emailed."}),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`orchestra serve --port 0` in a subprocess (the adapter needs a real URL); its base URL."""
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with log.open("w") as sink:
        proc = subprocess.Popen(
            [Path(sys.executable).parent / "orchestra", "serve", "--port", "0"], stdout=sink, stderr=subprocess.STDOUT, env={**os.environ, **OFFLINE}
        )
    try:
        deadline = time.monotonic() + 60
        while not (found := re.search(r"listening on (http://\S+)", log.read_text())):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"orchestra serve did not start (exit {proc.poll()}):\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        yield found.group(1)
    finally:
        proc.send_signal(2)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def tools_as_trl_sees_them(env: Any) -> dict[str, Any]:
    """TRL 1.16's discovery: public functions of the class but `reset`/`get_reward`, bound, keyed by `__name__`."""
    members = inspect.getmembers(type(env), predicate=inspect.isfunction)
    methods = [getattr(env, name) for name, _ in members if name not in ("reset", "get_reward") and not name.startswith("_")]
    return {m.__name__: m for m in methods}


def test_trl_environment_over_serve(server: str) -> None:
    Env = gaia2_environment(server, CALENDAR)
    env = Env()
    tools = tools_as_trl_sees_them(env)
    specs = {s["name"]: s for s in Env.tool_specs}
    assert set(tools) == set(specs) and {"Calendar__add_calendar_event", "Emails__send_email", "SystemApp__wait_for_notification"} <= set(tools)

    # What transformers' get_json_schema reads: signature (self dropped on the bound method), hints, Args: docs.
    for name, method in tools.items():
        schema = specs[name]["inputSchema"]
        params = inspect.signature(method).parameters
        assert list(params) == list(schema.get("properties") or {}), name
        assert {p for p, v in params.items() if v.default is inspect.Parameter.empty} == set(schema.get("required") or []), name
        assert all(v.annotation is not inspect.Parameter.empty for v in params.values()), name
        doc = inspect.getdoc(method) or ""
        assert doc and not doc.startswith("Args:"), name
        if params:
            args = doc.split("\nArgs:\n", 1)[1]
            assert all(re.search(rf"^\s+{p}: \S", args, re.M) for p in params), name
    add = inspect.signature(tools["Calendar__add_calendar_event"]).parameters
    assert add["attendees"].annotation == list[str] | None and add["title"].annotation is str

    # A tool before any episode: an exception (TRL turns it into {"error": ...} for the model).
    with pytest.raises(RuntimeError, match="reset"):
        tools["Calendar__get_all_tags"]()

    # The oracle's calls: 1.0. reset gets the dataset row (TRL passes every column, `prompt` included).
    task = env.reset(prompt=[{"role": "user", "content": "Help the user."}], scenario=CALENDAR)
    assert task is not None and "Q4 roadmap review" in task
    outputs = [tools[name](**arguments) for name, arguments in ORACLE_CALLS]
    assert not any(out.startswith("ERROR") for out in outputs), outputs
    assert env.get_reward() == 1.0 and env.get_reward() == 1.0  # judged once, cached
    assert env.result is not None and env.result["success"] is True and env.session_id is None  # the session is released

    # The same instance, reset (TRL's pool reuses it): wrong arguments are ERROR texts; a wrong sequence 0.0.
    env.reset(prompt=[])
    bad_value = tools["Calendar__add_calendar_event"](title="Q4 roadmap review", start_datetime="Thursday 2pm", end_datetime="2024-10-17 15:00:00")
    assert bad_value.startswith("ERROR") and "datetime" in bad_value
    unknown = tools["Calendar__add_calendar_event"](title="Q4 roadmap review", when="Thursday")
    assert unknown.startswith("ERROR") and "'when'" in unknown
    missing = tools["Calendar__get_calendar_event"]()
    assert missing.startswith("ERROR") and "event_id" in missing
    tools["Calendar__add_calendar_event"](title="Q4 roadmap review", start_datetime="2024-10-18 14:00:00", end_datetime="2024-10-18 15:00:00")
    tools["AgentUserInterface__send_message_to_user"](content="Done.")
    assert env.get_reward() == 0.0 and env.result is not None and env.result["success"] is False

    # A reset without get_reward drops the open (unjudged) session.
    env.reset()
    dropped = env.session_id
    env.reset()
    assert httpx.get(f"{server}/sessions/{dropped}").status_code == 404
    env._close()
