"""orchestra's doors to ARE beyond `orchestra.are_adapter` (judges, ARE's own default agent for parity checks); each module imports ARE lazily."""
