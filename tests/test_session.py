"""The session: thread-free ARE environment on the token-metered clock."""

from __future__ import annotations

import pytest

from orchestra.clock import ClockConfig
from orchestra.errors import SessionError
from orchestra.session import SEND_TO_USER_TOOL, WAIT_TOOL, Session, SessionConfig


def test_clock_moves_only_by_the_formula(scenario_path, judge_pool):
    config = SessionConfig(clock=ClockConfig(decode_rate_tps=40, prefill_rate_tps=2000, tool_call_seconds=1.5, time_scale=2.0))
    with Session.open(scenario_path("starter_execution_calendar"), config, judge_pool=judge_pool) as s:
        assert s.elapsed == 0.0
        s.charge_model(prompt_tokens=4000, completion_tokens=80)  # (80/40 + 4000/2000) * 2 = 8
        assert s.elapsed == pytest.approx(8.0)
        s.call_tool("Contacts__get_contacts", {})  # 1.5 * 2 = 3
        s.call_tool("Nope__nothing", {})  # a failed call is still a call
        assert s.elapsed == pytest.approx(14.0)
        result = s.finish()
    assert result.sim_seconds == pytest.approx(14.0)  # who spent what is the rollout's record (tests/test_rollout.py)


def test_events_fire_at_their_exact_simulated_time(scenario_path, judge_pool):
    with Session.open(scenario_path("starter_adaptability_reply"), judge_pool=judge_pool) as s:
        first = s.call_tool(WAIT_TOOL, {"timeout": 600})
        assert [n.kind for n in first.notifications] == ["user"]
        assert first.notifications[0].timestamp == s.env.start_time + 1.0
        second = s.call_tool(WAIT_TOOL, {"timeout": 600})
        texts = [n.text for n in second.notifications]
        assert any("New email received from elena.rossi@example.com" in t for t in texts), texts
        env_events = [e for e in s.env.event_log() if e.event_type.value == "ENV"]
        assert [round(e.event_time - s.env.start_time, 6) for e in env_events] == [31.0]
        # the wait ended exactly at the notification, then the call was charged
        assert s.elapsed == pytest.approx(31.0 + 2.0)


def test_wait_returns_pending_notifications_without_moving_backwards(scenario_path, judge_pool):
    with Session.open(scenario_path("starter_adaptability_reply"), judge_pool=judge_pool) as s:
        s.charge_model(prompt_tokens=0, completion_tokens=2000)  # 40 s: the user message (+1 s) is pending
        before = s.now
        out = s.call_tool(WAIT_TOOL, {"timeout": 10})
        assert [n.kind for n in out.notifications] == ["user", "environment"]
        assert out.sim_time == before
        assert s.now == before + 2.0  # only the tool charge; never backwards


def test_tool_errors_are_observations(scenario_path, judge_pool):
    with Session.open(scenario_path("starter_execution_calendar"), judge_pool=judge_pool) as s:
        unknown = s.call_tool("Emails__teleport", {})
        assert not unknown.ok and "Unknown tool 'Emails__teleport'" in unknown.error
        bad_args = s.call_tool("Emails__get_email_by_id", {"mail": "x"})
        # the one argument validator (orchestra.tool_schemas.validate_arguments), only when the tool failed
        assert not bad_args.ok and bad_args.error.startswith("Invalid arguments for Emails__get_email_by_id: missing required argument 'email_id' (expected ")
        assert "unknown argument 'mail' (Emails__get_email_by_id takes: email_id, folder_name)" in bad_args.error
        wrong_type = s.call_tool("Emails__list_emails", {"folder_name": 5})
        assert not wrong_type.ok and "argument 'folder_name' must be" in wrong_type.error and "got integer 5" in wrong_type.error
        app_error = s.call_tool("Emails__get_email_by_id", {"email_id": "does-not-exist"})
        assert not app_error.ok and app_error.error
        not_a_dict = s.call_tool("Emails__list_emails", ["INBOX"])  # type: ignore[arg-type]
        assert not not_a_dict.ok and "JSON object" in not_a_dict.error
        good = s.call_tool("Contacts__get_current_user_details", {})
        assert good.ok and good.output is not None
        assert not s.done


def test_duration_is_enforced(scenario_path, judge_pool):
    config = SessionConfig(duration=250)
    with Session.open(scenario_path("starter_time_deadline"), config, judge_pool=judge_pool) as s:
        while not s.done:
            s.call_tool(WAIT_TOOL, {"timeout": 10_000})
        assert s.elapsed <= 250 + 2.0 + 1e-6
        result = s.finish()
    assert result.stop_reason == "duration_reached"
    assert result.success is False and result.reward == 0.0


def test_answering_ends_the_turn_and_the_judge_decides(scenario_path, judge_pool):
    with Session.open(scenario_path("starter_search_lookup"), judge_pool=judge_pool) as s:
        s.call_tool(WAIT_TOOL, {"timeout": 60})
        s.call_tool(SEND_TO_USER_TOOL, {"content": "I do not know."})
        assert s.done and s.turns_completed == 1
        result = s.finish()
        with pytest.raises(SessionError):
            s.call_tool(SEND_TO_USER_TOOL, {"content": "again"})
    # the scripted judge skips free-text answers: the search scenario's only write is the answer
    assert result.success is True and result.reward == 1.0
    assert result.turns and result.turns[-1].success


def test_judge_is_built_once_and_reused(scenario_path):
    from orchestra.are.judge_pool import JudgePool

    pool = JudgePool()
    for name in ("starter_search_lookup", "starter_ambiguity_clarify", "starter_execution_calendar"):
        with Session.open(scenario_path(name), judge_pool=pool) as s:
            s.finish()
    assert pool.builds == 1


def test_duration_shorter_than_the_oracle_is_a_clear_error(scenario_path, judge_pool):
    from orchestra.errors import ScenarioError

    with pytest.raises(ScenarioError, match=r"starter_time_deadline.json: oracle action\(s\) .* did not happen within"):
        with Session.open(scenario_path("starter_time_deadline"), SessionConfig(duration=100), judge_pool=judge_pool):
            pass


def test_a_wait_with_notifications_pending_goes_through_ares_tool(scenario_path, judge_pool):
    """The event log shows the wait; the clock does not go back; the notifications stay queued."""
    with Session.open(scenario_path("starter_adaptability_reply"), judge_pool=judge_pool) as s:
        s.charge_model(prompt_tokens=0, completion_tokens=2000)  # 40 s: the user message (+1 s) is pending
        before = s.now
        out = s.execute_tool(WAIT_TOOL, {"timeout": 10})
        assert out.ok and out.output is None and out.notifications == []
        assert s.now == before
        waits = [e for e in s.env.event_log() if e.tool_name == "SystemApp__wait_for_notification"]
        assert [e.event_time for e in waits] == [before]
        assert [n.kind for n in s.notifications()] == ["user", "environment"]


def test_the_event_log_keeps_return_values_as_they_were(scenario_path, judge_pool):
    """A later change to the same app object does not rewrite what an earlier call returned."""
    with Session.open(scenario_path("starter_search_lookup"), judge_pool=judge_pool) as s:
        me = s.call_tool("Contacts__get_current_user_details", {})
        old_job = me.output.job
        edit = s.call_tool("Contacts__edit_contact", {"contact_id": me.output.contact_id, "updates": {"job": "Astronaut"}})
        assert edit.ok and me.output.job == "Astronaut"  # the very object the first call returned changed
        result = s.finish()
    got = next(e for e in result.event_log if e["tool"] == "ContactsApp__get_current_user_details")
    assert got["return"]["job"] == old_job != "Astronaut"


def test_agent_path_leaves_turns_to_the_policy(scenario_path, judge_pool):
    """`execute_tool` (the agent loop's path) never ends a turn; `call_tool` ends it on an answer,
    even a failed one (ARE logs the call before it runs)."""
    with Session.open(scenario_path("starter_search_lookup"), judge_pool=judge_pool) as s:
        s.execute_tool(SEND_TO_USER_TOOL, {"content": "hi"})
        assert s.turns_completed == 0
        bad = s.call_tool(SEND_TO_USER_TOOL, {"message": "wrong argument"})
        assert not bad.ok and "unknown argument 'message'" in bad.error and bad.exception is not None
        assert s.turns_completed == 1 and s.done


def test_events_due_during_a_model_call_run_at_its_end_as_in_are(scenario_path, judge_pool):
    """ARE pauses its environment during a model call and resumes it with the offset
    (`resume_with_offset`): the email due at +31 s keeps its time in the log, but it is processed —
    and its notification stamped — when the 40 s call ends."""
    with Session.open(scenario_path("starter_adaptability_reply"), judge_pool=judge_pool) as s:
        s.charge_model(prompt_tokens=0, completion_tokens=2000)  # 40 s
        notes = s.notifications()
        assert [(n.kind, n.timestamp - s.env.start_time) for n in notes] == [("user", 40.0), ("environment", 40.0)]
        env_events = [e for e in s.env.event_log() if e.event_type.value == "ENV"]
        assert [e.event_time - s.env.start_time for e in env_events] == [31.0]
