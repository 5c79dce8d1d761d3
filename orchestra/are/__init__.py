"""Running ARE's own default agent next to orchestra's scaffolds, to prove agent-loop parity."""
