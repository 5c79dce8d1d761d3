"""Judging, in pure Python below the door to ARE: the judge settings (`settings`), the judge-call
cache (`cache`) and the LLM judge's engine (`engine`); the strict judge's facts (`facts`: what a text
says; `fact_check`: whether it carries the oracle's; `scenario_names`: the universe's names) and
`mutation` (plausible wrong texts); the scripted judge model (`script`).

ARE's judges themselves are built in `orchestra.are.judges`, and registered by the built-in
`judges` plugin through the `register_judges` hook.
"""
