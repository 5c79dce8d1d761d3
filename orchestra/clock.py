"""The token-metered clock: how much simulated time one agent turn costs.

ARE's stock loop advances simulated time with the wall clock (a thread that ticks and sleeps one
second). orchestra replaces exactly that: simulated time moves only when an agent spends tokens or
calls tools, so a rollout's timeline is a pure function of what the agent did, never of how fast
the machine or the model server happened to be. The rates are global (one for every model), which
keeps rewards comparable across models: a model is charged for the tokens it emits, not for the
speed of the hardware it ran on.

    dt = (completion_tokens / decode_rate_tps
          + prompt_tokens / prefill_rate_tps
          + tool_call_seconds * n_tool_calls) * time_scale

This module is pure arithmetic; the ARE clock object that the environment reads lives in the ARE
adapter (`orchestra.are.environment.SimClock`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ClockConfig(BaseModel):
    """Rates of the token-metered clock. Defaults follow the project brief (50 / 5000 / 2.0 / 1.0)."""

    # finite only: an infinite tool cost or time scale would run the clock to the scenario's cap
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    decode_rate_tps: float = Field(50.0, gt=0, description="Completion tokens decoded per simulated second.")
    prefill_rate_tps: float = Field(5000.0, gt=0, description="Prompt tokens prefilled per simulated second.")
    tool_call_seconds: float = Field(2.0, ge=0, description="Simulated seconds charged per tool call.")
    time_scale: float = Field(1.0, ge=0, description="Multiplier applied to the whole turn cost.")

    def model_seconds(self, prompt_tokens: int, completion_tokens: int) -> float:
        """Simulated seconds one model call costs (the token part of the formula)."""
        if prompt_tokens < 0 or completion_tokens < 0:
            raise ValueError(f"token counts must be >= 0, got prompt={prompt_tokens} completion={completion_tokens}")
        return (completion_tokens / self.decode_rate_tps + prompt_tokens / self.prefill_rate_tps) * self.time_scale

    def tool_seconds(self, n_tool_calls: int = 1) -> float:
        """Simulated seconds charged for `n_tool_calls` tool calls."""
        if n_tool_calls < 0:
            raise ValueError(f"n_tool_calls must be >= 0, got {n_tool_calls}")
        return self.tool_call_seconds * n_tool_calls * self.time_scale

    def turn_seconds(self, prompt_tokens: int, completion_tokens: int, n_tool_calls: int) -> float:
        """The whole formula for one agent turn: model call plus its tool calls."""
        return self.model_seconds(prompt_tokens, completion_tokens) + self.tool_seconds(n_tool_calls)
