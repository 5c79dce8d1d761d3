import pytest
from pydantic import ValidationError

from orchestra.clock import ClockConfig


def test_defaults_follow_the_brief():
    c = ClockConfig()
    assert (c.decode_rate_tps, c.prefill_rate_tps, c.tool_call_seconds, c.time_scale) == (50, 5000, 2.0, 1.0)


def test_turn_cost_is_the_formula():
    c = ClockConfig()
    # 100 completion tokens at 50 tok/s = 2 s; 5000 prompt tokens at 5000 tok/s = 1 s; 3 calls = 6 s
    assert c.turn_seconds(prompt_tokens=5000, completion_tokens=100, n_tool_calls=3) == pytest.approx(9.0)


def test_time_scale_multiplies_everything():
    c = ClockConfig(decode_rate_tps=10, prefill_rate_tps=1000, tool_call_seconds=1, time_scale=0.5)
    assert c.turn_seconds(prompt_tokens=2000, completion_tokens=20, n_tool_calls=2) == pytest.approx((2 + 2 + 2) * 0.5)


@pytest.mark.parametrize("field", ["decode_rate_tps", "prefill_rate_tps"])
def test_rates_must_be_positive(field):
    with pytest.raises(ValidationError):
        ClockConfig(**{field: 0})


@pytest.mark.parametrize("field", ["decode_rate_tps", "prefill_rate_tps", "tool_call_seconds", "time_scale"])
@pytest.mark.parametrize("value", [float("inf"), float("nan")])
def test_rates_must_be_finite(field, value):
    # an infinite tool cost or time scale would silently run the clock to the scenario's cap
    with pytest.raises(ValidationError, match=field):
        ClockConfig(**{field: value})


def test_negative_usage_is_rejected():
    with pytest.raises(ValueError, match="token counts"):
        ClockConfig().model_seconds(-1, 0)
