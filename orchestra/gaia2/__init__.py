"""Gaia2's leaderboard protocol (ARE's `gaia2-run`) on orchestra's runner: the phases and their loop
(`protocol`), where the scenarios come from (`sources`), ARE's submission files (`traces`) and the
seven-column table (`table`)."""
