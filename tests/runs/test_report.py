"""`orchestra.runs.report`: a run folder as one HTML page.

Over one real run folder holding every verdict (PASS, FAIL, ERROR; `report_runs.mixed_run`): the
summary table is `summarize`'s numbers, the budget curves end at pass@1, every rollout has its
transcript, the page is the same bytes twice and loads nothing — and, in a real headless Chromium,
it renders (charts drawn, a screenshot taken) with no request leaving the page and no console
error. Bad folders get one clear line; an interrupted run reports what finished.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from orchestra.cli import main
from orchestra.errors import OrchestraError
from orchestra.record import RolloutRecord
from orchestra.runs.report import anchor, budget_curve, capabilities_of, load_run, render
from orchestra.runs.run_dir import Manifest, read_results, rollout_name
from orchestra.runs.summary import summarize
from orchestra.trajectory import AgentTrajectory, ModelOutput, PromptRef, RunStart, Step, ToolCallEntry, Trajectory
from support.report_runs import mixed_run

#: The flags the report's browser test starts Chromium with (headless, offline, no first-run work).
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
INSTALL_CHROMIUM = "apt-get install -y chromium (Debian's package; `python3.11 dev.py test` installs it as root)"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("report") / "mixed"
    mixed_run(folder)
    return folder


class Tables(HTMLParser):
    """The text of every cell of the table with a given id, row by row."""

    def __init__(self, table_id: str) -> None:
        super().__init__()
        self.table_id, self.depth, self.rows = table_id, 0, []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and ("id", self.table_id) in attrs:
            self.depth = 1
        elif tag == "table" and self.depth:
            self.depth += 1
        elif self.depth and tag == "tr":
            self.rows.append([])
        elif self.depth and tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and self.depth:
            self.depth -= 1
        elif self.depth and tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def table(page: str, table_id: str) -> list[list[str]]:
    parser = Tables(table_id)
    parser.feed(page)
    return parser.rows


def test_the_summary_table_is_summarize_s(mixed: Path) -> None:
    run = load_run(mixed)
    page = render(run, plotly_js="")
    manifest = Manifest.model_validate_json((mixed / "manifest.json").read_text())
    expected = summarize(read_results(mixed), manifest)
    assert run.summary == expected
    rows = table(page, "summary")
    assert rows[0][:8] == ["capability", "scenarios", "runs", "rollouts", "pass", "fail", "error", "pass@1 % ± SE"]
    by_cap = {row[0]: row for row in rows[1:]}
    assert list(by_cap) == [c.capability for c in expected.capabilities]
    for c in expected.capabilities:
        row = by_cap[c.capability]
        assert row[1:7] == [str(c.scenarios), str(c.runs), str(c.rollouts), str(c.passed), str(c.failed), str(c.errors)]
        if c.pass_at_1 is None:
            assert row[7] == "–"
        else:
            assert row[7] == f"{100 * c.pass_at_1:.1f} ± {100 * (c.pass_at_1_stderr or 0):.1f}"
            assert row[8] == f"{100 * c.pass_at_k:.1f}"  # type: ignore[operator]
            assert row[9] == f"{100 * c.pass_hat_k[c.runs]:.1f}"
        assert row[12] == str(c.tokens)
    # the run holds every verdict: 6 PASS, 4 FAIL (2 perturbed oracle, 2 scripted), 2 ERROR
    total = by_cap["all"]
    assert total[4:7] == ["6", "4", "2"] and total[7] == "60.0 ± 0.0"
    statuses = [row[3] for row in table(page, "rollouts")[1:]]
    assert sorted(set(statuses)) == ["ERROR", "FAIL", "PASS"] and len(statuses) == 12


def test_budget_curves_climb_to_pass_at_1(mixed: Path) -> None:
    run = load_run(mixed)
    for c in run.summary.capabilities:
        records = run.records if c.capability == "all" else [r for r in run.records if c.capability in capabilities_of(r, run.manifest)]
        for cost in (lambda r: r.result.sim_seconds, lambda r: float(r.result.prompt_tokens + r.result.completion_tokens)):
            xs, ys = budget_curve(records, cost)
            if c.pass_at_1 is None:
                assert (xs, ys) == ([], [])
                continue
            assert xs[0] == 0.0 and xs == sorted(xs)
            assert all(a <= b for a, b in zip(ys, ys[1:], strict=False))
            assert ys[-1] == pytest.approx(c.pass_at_1)
            judged = [r for r in records if r.status in ("PASS", "FAIL")]
            assert xs[-1] == max(cost(r) for r in judged)
    # Half of what passed in `all` passed faster than the slowest PASS: the curve is a real curve, not a step at the end.
    xs, ys = budget_curve(run.records, lambda r: r.result.sim_seconds)
    assert len(set(ys)) >= 3


def test_every_rollout_has_its_transcript(mixed: Path) -> None:
    run = load_run(mixed)
    page = render(run, plotly_js="")
    for r in run.records:
        assert page.count(f'id="{anchor(r)}"') == 1 and f'href="#{anchor(r)}"' in page
    error = next(r for r in run.records if r.status == "ERROR")
    section = _section(page, error)
    assert "AuthenticationError" in section and 'class="errorbox"' in section
    failed = next(r for r in run.records if r.status == "FAIL" and r.perturbation == "wrong_arg")
    assert "Judge's rationale" in _section(page, failed) and _e_rationale(failed) in _section(page, failed)
    team = next(r for r in run.records if r.policy == "team:oracle")
    section = _section(page, team)
    assert "Delegations" in section and "Emails__expert_agent" in section and "EmailClientV2__send_email" in section
    # notifications: the environment's email reaches the team (an ENV event of the event log)
    assert 'class="ev-env"' in section and "EmailClientV2__create_and_add_email" in section


def _section(page: str, record: RolloutRecord) -> str:
    start = page.index(f'id="{anchor(record)}"')
    end = page.find('<details class="rollout"', start)
    return page[start : end if end > 0 else len(page)]


def _e_rationale(record: RolloutRecord) -> str:
    import html

    assert record.result is not None and record.result.rationale
    return html.escape(record.result.rationale.strip().splitlines()[-1])


def _trajectory() -> Trajectory:
    """A two-agent trajectory in docs/trajectories.md's schema: a notification, a thought, a
    rejected output, an unknown tool, a delegation with the sub-agent's own steps."""
    main_steps = [
        Step(
            index=0,
            run=1,
            t_start=1.0,
            t_model=2.0,
            t_end=3.0,
            notifications=["[NOTIFICATION] New email from elena.rossi@example.com <script>alert(1)</script>"],
            prompt=PromptRef(id=0, messages=[{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "[TASK] reply"}]),
            outputs=[
                ModelOutput(text="gibberish", rejected="The LLM output was not formatted correctly"),
                ModelOutput(text='Thought: look it up.\nAction:\n{"action": "Nope__x", "action_input": {}}'),
            ],
            thought="look it up.",
            tool_calls=[ToolCallEntry(name="Nope__x", t=2.0, ok=False, error="Tool Nope__x not found", problem="unknown_tool")],
        ),
        Step(
            index=1,
            run=1,
            t_start=3.0,
            t_model=4.0,
            t_end=9.0,
            prompt=PromptRef(id=1, base=0, prefix=2, messages=[{"role": "user", "content": "Observation: unknown tool"}]),
            outputs=[ModelOutput(text="Thought: ask the expert.")],
            thought="ask the expert.",
            tool_calls=[
                ToolCallEntry(
                    name="Emails__expert_agent",
                    event_name="AppAgent__expert_agent",
                    arguments={"task": "send it"},
                    t=4.0,
                    ok=True,
                    observation="Done: sent",
                    delegate="Emails",
                    event=1,
                )
            ],
        ),
    ]
    sub = AgentTrajectory(
        name="Emails",
        role="sub",
        parent="main",
        app="Emails",
        task="send it",
        model="orchestra/oracle",
        scaffold="react",
        runs=[RunStart(run=1, t=4.0, task="send it")],
        steps=[
            Step(
                index=0,
                run=1,
                t_start=4.0,
                t_model=5.0,
                t_end=6.0,
                thought="sending the email now",
                tool_calls=[
                    ToolCallEntry(
                        name="Emails__send_email", event_name="EmailClientV2__send_email", arguments={"subject": "Hi"}, t=5.5, ok=True, observation="id-42"
                    )
                ],
            )
        ],
    )
    main_agent = AgentTrajectory(
        name="main", role="main", model="m", scaffold="react", runs=[RunStart(run=1, t=1.0, task="Please reply to Elena")], steps=main_steps
    )
    return Trajectory(stop_reason="all_turns_completed", agents=[main_agent, sub], tool_names={"Emails__send_email": "EmailClientV2__send_email"})


def test_a_trajectory_is_rendered_step_by_step(mixed: Path, tmp_path: Path) -> None:
    folder = tmp_path / "with_trajectory"
    shutil.copytree(mixed, folder)
    record = next(r for r in load_run(folder).records if r.policy == "team:oracle")
    with_trajectory = record.model_copy(update={"trajectory": _trajectory()})
    (folder / "rollouts" / f"{rollout_name(record)}.json").write_text(json.dumps(with_trajectory.model_dump(mode="json")))
    run = load_run(folder)
    section = _section(render(run, plotly_js=""), with_trajectory)
    for shown in (
        "Please reply to Elena",  # the run's task
        "New email from elena.rossi@example.com",  # a notification, escaped
        "&lt;script&gt;alert(1)&lt;/script&gt;",
        "look it up.",  # a thought
        "rejected output: The LLM output was not formatted correctly",
        "UNKNOWN TOOL",
        "Tool Nope__x not found",
        "logged as <code>AppAgent__expert_agent</code>",
        "sub-agent <b>Emails</b>",  # the delegation, nested under its call
        "sending the email now",
        "EmailClientV2__send_email",
        "id-42",
        "request #1: 1 new message(s)",
    ):
        assert shown in section, shown
    assert "<script>alert(1)" not in section
    assert "has no trajectory" not in section
    other = next(r for r in run.records if r.policy != "team:oracle")
    assert "has no trajectory" in _section(render(run, plotly_js=""), other)


def test_the_page_is_deterministic_and_loads_nothing(mixed: Path, tmp_path: Path) -> None:
    first = render(load_run(mixed))
    copy = tmp_path / "mixed"
    shutil.copytree(mixed, copy)
    assert render(load_run(copy)) == first
    from plotly.offline import get_plotlyjs

    assert first.count(get_plotlyjs()) == 1  # plotly.js inlined, once
    outside_js = first.replace(get_plotlyjs(), "")
    assert not re.search(r"<(link|img|iframe|object|embed)\b", outside_js)
    assert not re.search(r"""\b(src|href)\s*=\s*["'](?!#)""", outside_js)  # only in-page links
    assert "url(" not in outside_js and "@import" not in outside_js
    assert "default-src 'none'" in first


def test_a_torn_last_line_is_left_out_and_said(mixed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "torn"
    shutil.copytree(mixed, folder)
    lines = (folder / "results.jsonl").read_text().splitlines()
    (folder / "results.jsonl").write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])  # killed mid-write
    assert main(["report", str(folder)]) == 0
    captured = capsys.readouterr()
    assert "results.jsonl is cut short" in captured.err and "11 rollout(s)" in captured.out
    page = (folder / "report.html").read_text()
    assert "results.jsonl is cut short" in page and len(table(page, "rollouts")) == 12  # a header and 11 rollouts


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda d: None, "no such folder"),
        (lambda d: d.write_text("x"), "not a folder"),
        (lambda d: d.mkdir(), "not a run folder (an empty folder"),
        (lambda d: (d.mkdir(), (d / "notes.txt").write_text("x")), "not a run folder (no results.jsonl or manifest.json in it"),
        (
            lambda d: [(d / phase).mkdir(parents=True) or (d / phase / "results.jsonl").write_text("") for phase in ("standard", "noise")],
            "a folder of run folders (`orchestra gaia2` keeps one per phase), not one run; report each: orchestra report ",
        ),
        (lambda d: (d.mkdir(), (d / "manifest.json").write_text("{}")), "no finished rollout yet (results.jsonl is missing)"),
        (
            lambda d: (d.mkdir(), (d / "manifest.json").write_text("{}"), (d / "results.jsonl").write_text("")),
            "no finished rollout yet (results.jsonl holds none)",
        ),
        (lambda d: (d.mkdir(), (d / "manifest.json").write_text("[1]")), "manifest.json: not a run manifest"),
        (lambda d: (d.mkdir(), (d / "results.jsonl").write_text('{"a": 1}\n{"b": 2}\n')), "results.jsonl:1: not a rollout record"),
    ],
)
def test_a_folder_that_is_not_a_run_gets_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], make, message: str) -> None:
    folder = tmp_path / "d"
    make(folder)
    with pytest.raises(OrchestraError, match=re.escape(message)):
        load_run(folder)
    assert main(["report", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("orchestra: error: ") and message in err and err.count("\n") == 1


def test_report_writes_where_asked(mixed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pages" / "run.html"
    assert main(["report", str(mixed), "-o", str(out)]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>")
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"{out}: 12 rollout(s) (6 PASS, 4 FAIL, 2 ERROR), ") and line.endswith(" MB")


# ------------------------------------------------------------------------------ in a real browser


def chromium_required() -> bool:
    """CI must render the page in a real browser: there a missing Chromium fails, never skips."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes") or os.environ.get("ORCHESTRA_REQUIRE_CHROMIUM", "").strip() == "1"


def chromium() -> str:
    """Debian's Chromium (or $ORCHESTRA_CHROMIUM), and the playwright driver; skip — or fail under CI — without them."""
    found = os.environ.get("ORCHESTRA_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    problem = None if found else f"no Chromium on this machine; install: {INSTALL_CHROMIUM}"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        problem = "the playwright package is not installed (the `test` extra: python3.11 dev.py setup)"
    if problem is not None:
        if chromium_required():
            pytest.fail(f"{problem}\n(CI=true, so this is a failure rather than a skip)", pytrace=False)
        pytest.skip(problem)
    assert found is not None
    return found


@pytest.mark.slow  # Chromium start-up and a 5 MB page: ~10-20 s
def test_the_report_renders_in_headless_chromium(mixed: Path, tmp_path: Path) -> None:
    executable = chromium()
    from playwright.sync_api import sync_playwright

    page_path = tmp_path / "report.html"
    assert main(["report", str(mixed), "-o", str(page_path)]) == 0
    run = load_run(mixed)
    team = next(r for r in run.records if r.policy == "team:oracle")
    requests: list[str] = []
    problems: list[str] = []
    shot = Path(os.environ.get("ORCHESTRA_REPORT_SCREENSHOT", tmp_path / "report.png"))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("request", lambda request: requests.append(request.url))
            page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}") if message.type == "error" else None)
            page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
            page.route(re.compile(r"^(?!file:).*"), lambda route: route.abort())  # nothing may leave the page; `requests` tells if it tried
            page.goto(page_path.as_uri(), wait_until="load")
            for chart in ("chart-rates", "chart-outcomes", "chart-time", "chart-cost"):
                page.wait_for_selector(f"#{chart} svg.main-svg", timeout=30_000)
            judged = [c for c in run.summary.capabilities if c.pass_at_1 is not None]
            assert page.locator("#chart-time .scatterlayer .trace").count() == len(judged)  # a curve per capability with a verdict, and `all`
            summary_rows = page.locator("#summary tr")
            assert summary_rows.count() == len(run.summary.capabilities) + 1
            assert "60.0 ± 0.0" in summary_rows.last.inner_text()
            # a transcript opens from the rollouts table, and shows the delegation and the environment's email
            transcript = page.locator(f"#{anchor(team)}")
            assert not transcript.locator(".body").is_visible()
            page.click(f'#rollouts a[href="#{anchor(team)}"]')
            assert transcript.locator(".body").is_visible()
            transcript.locator("details").evaluate_all("(all) => all.forEach((d) => { d.open = true; })")  # its nested sections (sub-agents, event log)
            text = transcript.inner_text()
            assert "Delegations" in text and "EmailClientV2__create_and_add_email" in text and "Emails__expert_agent" in text
            page.locator('.filters button[data-filter="ERROR"]').click()
            visible = [row.get_attribute("data-status") for row in page.locator("#rollouts tr[data-status]").all() if row.is_visible()]
            assert visible == ["ERROR", "ERROR"]
            page.locator('.filters button[data-filter="all"]').click()
            page.locator("#chart-rates").scroll_into_view_if_needed()
            bar = page.locator("#chart-rates .point").first.bounding_box()  # plotly's hover label: the chart is live, not a picture
            assert bar is not None
            page.mouse.move(bar["x"] + bar["width"] / 2, bar["y"] + bar["height"] / 2)
            page.wait_for_selector("#chart-rates .hoverlayer .hovertext", timeout=10_000)
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert requests == [page_path.as_uri()], requests
    assert problems == []
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 50_000


def test_condition_checks_are_folded_away_under_their_count() -> None:
    """ARE re-runs each condition event every tick: a noise run's fallback event log was 1,292 of
    1,410 rows `CONDITION ... → false`. They are hidden by default, under their count."""
    from orchestra.record import RolloutResult
    from orchestra.runs.report import _event_log

    def event(t: float, kind: str, tool: str, **extra: object) -> dict:
        return {"t": t, "type": kind, "id": extra.pop("id", f"{kind}-{t}"), "tool": tool, "args": {}, "return": extra.get("ret"), "exception": None}

    log = [event(1.0, "USER", "AgentUserInterface__send_message_to_agent")]
    log += [event(1.0 + i, "CONDITION", "condition_check", ret=False) for i in range(5)]
    log += [event(7.0, "ENV", "Messages__create_and_add_message", id="env_expansion_Messages_x_0"), event(8.0, "AGENT", "Contacts__get_contacts")]
    result = RolloutResult(
        scenario_id="a", source="a.json", success=True, reward=1.0, reward_mode="binary", rationale=None, turns=[], nb_turns=1,
        turns_completed=1, sim_seconds=9.0, stop_reason="all_turns_completed", event_log_sha256="0", event_log=log,
    )  # fmt: skip
    html = _event_log(RolloutRecord(scenario_id="a", source="a.json", policy="p", result=result), None)
    main, _, folded = html.partition('<details class="conditions">')
    assert main.count("<tr class=") == 3 and "condition_check" not in main
    assert "NOISE: INJECTED EVENT" in main and main.index("NOISE: INJECTED EVENT") > main.index("Messages__create_and_add_message")
    assert folded.startswith("<summary>5 condition check(s) hidden") and folded.count('<tr class="ev-condition">') == 5


@pytest.mark.slow  # Chromium start-up
def test_a_link_to_a_transcript_opens_it_in_headless_chromium(mixed: Path, tmp_path: Path) -> None:
    """`report.html#r-NAME` (a link from elsewhere, or typed) used to land on a closed transcript."""
    executable = chromium()
    from playwright.sync_api import sync_playwright

    page_path = tmp_path / "report.html"
    assert main(["report", str(mixed), "-o", str(page_path)]) == 0
    first, second = load_run(mixed).records[:2]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS, headless=True)
        try:
            page = browser.new_page()
            page.route(re.compile(r"^(?!file:).*"), lambda route: route.abort())
            page.goto(f"{page_path.as_uri()}#{anchor(first)}", wait_until="load")
            assert page.locator(f'[id="{anchor(first)}"] .body').is_visible()
            assert not page.locator(f'[id="{anchor(second)}"] .body').is_visible()
            page.evaluate(f"location.hash = {json.dumps('#' + anchor(second))}")  # a link followed inside the page
            page.wait_for_function(f"document.getElementById({json.dumps(anchor(second))}).open")
            assert page.locator(f'[id="{anchor(second)}"] .body').is_visible()
        finally:
            browser.close()
