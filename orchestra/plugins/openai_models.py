"""Built-in plugin: a model on an OpenAI-compatible server is called straight, without litellm.

`openai/<name>` and `hosted_vllm/<name>` models with an `endpoint` go through
`orchestra.openai_client` (one HTTP request per call; token ids and logprobs kept); every other
model falls through to the `litellm_models` plugin. `ORCHESTRA_MODEL_CLIENT=litellm` sends every
model through litellm.
"""

from __future__ import annotations

from collections.abc import Awaitable

from orchestra.hookspecs import hookimpl
from orchestra.types import ModelRequest, ModelResponse
from orchestra.views import AgentView


@hookimpl
def model_call(agent: AgentView, request: ModelRequest) -> Awaitable[ModelResponse] | None:
    from orchestra.openai_client import complete_openai, takes_openai_path

    if not takes_openai_path(agent.model):
        return None
    return complete_openai(agent.model, request)
