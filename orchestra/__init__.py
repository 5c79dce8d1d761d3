"""orchestra: teams of LLM agents inside Meta's Agents Research Environments (ARE) and Gaia2.

Importing this package is cheap and has no side effects beyond one: it sets
`LITELLM_LOCAL_MODEL_COST_MAP=True` unless the variable is already set, so that no later
`import litellm` (ours or ARE's) reaches for the network. ARE itself is imported lazily, by
`orchestra.are`, the first time a scenario is loaded.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

__version__ = "0.1.0"
