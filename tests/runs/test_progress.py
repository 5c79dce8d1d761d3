"""The live display: rows above a rich progress bar on a terminal, plain lines otherwise, JSON rows untouched."""

from __future__ import annotations

import io

from orchestra.record import RolloutRecord
from orchestra.runs.progress import PlainDisplay, RichDisplay, display_for


def _records(n: int) -> list[RolloutRecord]:
    return [
        RolloutRecord(scenario_id=f"s{i}", source=f"s{i}.json", policy="oracle", error="boom" if i == 0 else None, not_applicable=None if i == 0 else "n/a")
        for i in range(n)
    ]


def test_rich_display_prints_rows_and_a_bar_with_the_tallies():
    buffer = io.StringIO()
    records = _records(3)
    display = RichDisplay(lambda r: f"ROW {r.scenario_id} {r.status}", total=4, done=records[:1], file=buffer)
    display.console.force_terminal = True  # type: ignore[misc]
    with display:
        for r in records[1:]:
            display.add(r)
    text = buffer.getvalue()
    assert "ROW s1 N/A" in text and "ROW s2 N/A" in text and "3/4" in text and "errors 1" in text


def test_plain_and_json_rows_when_not_a_terminal(capsys):
    rows: list[str] = []
    json_display = display_for(json_rows=True, line=str, emit=lambda r: rows.append(r.scenario_id), total=1, done=[])
    assert isinstance(json_display, PlainDisplay)
    with json_display:
        json_display.add(_records(1)[0])
    assert rows == ["s0"]
    plain = display_for(json_rows=False, line=lambda r: f"line {r.status}", emit=lambda r: None, total=1, done=[], rich=None)
    assert isinstance(plain, PlainDisplay)  # pytest's stdout is not a terminal
    with plain:
        plain.add(_records(1)[0])
    assert capsys.readouterr().out == "line ERROR\n"
