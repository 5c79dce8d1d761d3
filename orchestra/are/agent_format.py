"""ARE's default agent (JSON ReAct) reused verbatim: its system prompt, tool descriptions, parser, message templates and error texts."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - import for type checkers only
    pass
from orchestra.are.environment import DrivenEnvironment
from orchestra.are.imports import import_are
from orchestra.types import ToolSpec

# --------------------------------------------------------------------------------------------
# ARE's agent prompt, for scaffolds that want to match ARE's default agent
# --------------------------------------------------------------------------------------------


def are_system_prompt(env: DrivenEnvironment, scenario: Any, *, agent_instructions: str | None = None, tool_descriptions: str) -> str:
    """ARE's default agent system prompt, filled as ARE fills it (ARE-NOTES §5.4).

    `agent_instructions=None` keeps ARE's JSON ReAct instructions (the Gaia2 paper's scaffold);
    other scaffolds pass their own and keep ARE's general and environment instructions.
    """
    import_are()
    from are.simulation.agents.default_agent.prompts.notification_system import (
        get_notification_system_prompt,
    )
    from are.simulation.agents.default_agent.prompts.system_prompt import (
        ARE_SIMULATION_ENVIRONMENT_INSTRUCTIONS,
        GENERAL_SYSTEM_PROMPT_TEMPLATE,
        REACT_LOOP_JSON_SYSTEM_PROMPT,
        SYSTEM_PROMPT_TEMPLATE,
    )

    prompt = SYSTEM_PROMPT_TEMPLATE.format(
        general_instructions=GENERAL_SYSTEM_PROMPT_TEMPLATE,
        agent_instructions=agent_instructions if agent_instructions is not None else REACT_LOOP_JSON_SYSTEM_PROMPT.format(json_agent_hints=""),
        environment_instructions=ARE_SIMULATION_ENVIRONMENT_INSTRUCTIONS.format(environment_hints=""),
    )
    if getattr(scenario, "additional_system_prompt", None):
        prompt += "\n\n" + scenario.additional_system_prompt
    date_str = datetime.fromtimestamp(float(scenario.start_time or 0), tz=UTC).strftime("%Y-%m-%d %H")
    return (
        prompt.replace("<<tool_descriptions>>", tool_descriptions)
        .replace("<<notification_system_description>>", get_notification_system_prompt(env.env.notification_system, scenario.apps))
        .replace("<<curent_time_description>>", f"Today's date in 'YYYY-MM-DD HH' format is {date_str}")
        .replace("<<agent_reminder_description>>", "")
    )


def are_app_agent_system_prompt(*, agent_instructions: str, tool_descriptions: str) -> str:
    """ARE's app-agent prompt frame (`DEFAULT_ARE_SIMULATION_APP_AGENT_REACT_JSON_SYSTEM_PROMPT`'s
    recipe) around another scaffold's agent instructions: ARE's general instructions, the given
    instructions, ARE's environment instructions with `APP_AGENT_HINTS`, the notification, time and
    reminder placeholders removed (`format_app_agent_system_prompt`), then the tool list."""
    import_are()
    from are.simulation.agents.default_agent.prompts.system_prompt import (
        APP_AGENT_HINTS,
        ARE_SIMULATION_ENVIRONMENT_INSTRUCTIONS,
        GENERAL_SYSTEM_PROMPT_TEMPLATE,
        SYSTEM_PROMPT_TEMPLATE,
        format_app_agent_system_prompt,
    )

    prompt = format_app_agent_system_prompt(
        SYSTEM_PROMPT_TEMPLATE.format(
            general_instructions=GENERAL_SYSTEM_PROMPT_TEMPLATE,
            agent_instructions=agent_instructions,
            environment_instructions=ARE_SIMULATION_ENVIRONMENT_INSTRUCTIONS.format(environment_hints=APP_AGENT_HINTS),
        )
    )
    return str(prompt).replace("<<tool_descriptions>>", tool_descriptions)


def are_app_agent_react_system_prompt(tools: dict[str, Any], *, prompt: str | None = None) -> str:
    """What ARE's app-agent shows its model (`AppAgentConfigBuilder.build("default_app_agent")`, then
    `BaseAgent.initialize`): `DEFAULT_ARE_SIMULATION_APP_AGENT_REACT_JSON_SYSTEM_PROMPT` — no
    notification policy, date or scenario prompt — with its tools filled in by
    `update_system_prompt_with_tools`. `tools` as `are_agent_tools` builds them (the app's
    `AppToolAdapter`s, then ARE's `FinalAnswerTool`). `prompt`: another app-agent prompt of the
    same recipe (`are_code_prompts`)."""
    import_are()
    from are.simulation.agents.default_agent.base_agent import (
        update_system_prompt_with_tools,
    )
    from are.simulation.agents.default_agent.prompts.system_prompt import (
        DEFAULT_ARE_SIMULATION_APP_AGENT_REACT_JSON_SYSTEM_PROMPT,
    )

    base = prompt if prompt is not None else str(DEFAULT_ARE_SIMULATION_APP_AGENT_REACT_JSON_SYSTEM_PROMPT)
    prompts = update_system_prompt_with_tools({"system_prompt": base}, list(tools.values()))
    return "\n\n".join(str(p) for p in prompts.values())


# --------------------------------------------------------------------------------------------
# ARE's default agent (JSON ReAct): its tools, parsing and messages, reused verbatim
# --------------------------------------------------------------------------------------------

#: ARE's `BaseAgent` retries an output holding neither `Thought:` nor `Action:` this many times
#: (env `BASE_AGENT_INVALID_FORMAT_RETRIES`, default 10) inside one iteration.
ARE_INVALID_FORMAT_RETRIES = 10
ARE_STOP_SEQUENCES = ("<end_action>", "Observation:")


def are_message_templates() -> dict[str, str]:
    """How ARE's agent renders each log for the model (`base_agent.DEFAULT_STEP_2_MESSAGE`)."""
    import_are()
    from are.simulation.agents.default_agent.base_agent import DEFAULT_STEP_2_MESSAGE

    return dict(DEFAULT_STEP_2_MESSAGE)


def are_force_retry_output() -> str:
    """ARE's canned output when the last message reports a server error (`FORCE_RETRY_PROMPT`)."""
    import_are()
    from are.simulation.agents.default_agent.base_agent import FORCE_RETRY_PROMPT

    return str(FORCE_RETRY_PROMPT)


class _PlainTool:
    """A tool that is not an ARE app tool (a plugin's), shaped like ARE's `Tool` for its template."""

    def __init__(self, spec: ToolSpec) -> None:
        self.name = spec.name
        self.description = spec.description
        self.inputs = {a.name: {"description": a.description, "type": a.type_text} for a in spec.args}
        self.output_type = spec.return_type


def are_agent_tools(app_tools: dict[str, Any], extra: dict[str, ToolSpec] | None = None) -> dict[str, Any]:
    """The tools as ARE's default agent holds them: `AppToolAdapter(app_tool)` per ARE app tool
    (in ARE's order), then the other tools; keyed by the name the model sees.

    Tools ARE has its own object for are ARE's: an app's `<App>__expert_agent` (Agent2Agent) is
    `AppToolAdapter` over ARE's `AppAgent` tool, `final_answer` is ARE's `FinalAnswerTool` (what
    ARE's app-agents hold); any other plugin tool is described from its `ToolSpec`."""
    import_are()
    from are.simulation.agents.default_agent.default_tools import FinalAnswerTool
    from are.simulation.tool_utils import AppToolAdapter

    from orchestra.are.agent2agent import expert_app_tool, is_expert_spec

    out: dict[str, Any] = {}
    for tool in app_tools.values():
        adapter = AppToolAdapter(tool)
        out[adapter.name] = adapter
    for name, spec in (extra or {}).items():
        if name in out:
            continue
        if is_expert_spec(spec):
            out[name] = AppToolAdapter(expert_app_tool(spec.app_name))
        elif name == FinalAnswerTool.name:
            out[name] = FinalAnswerTool()
        else:
            out[name] = _PlainTool(spec)
    return out


def are_tool_descriptions(tools: dict[str, Any]) -> str:
    """`<<tool_descriptions>>` exactly as ARE renders it (`Toolbox.show_tool_descriptions`)."""
    import_are()
    from are.simulation.tool_box import (
        DEFAULT_TOOL_DESCRIPTION_TEMPLATE,
        get_tool_description_with_args,
    )

    return "\n".join(get_tool_description_with_args(t, DEFAULT_TOOL_DESCRIPTION_TEMPLATE) for t in tools.values())


def are_tool_description(tool: Any) -> str:
    import_are()
    from are.simulation.tool_box import get_tool_description_with_args

    return str(get_tool_description_with_args(tool))


def are_react_system_prompt(env: DrivenEnvironment, scenario: Any, tools: dict[str, Any], *, prompt: str | None = None) -> str:
    """ARE's default agent system prompt, filled in ARE's order (`ARESimulationAgent.init_system_prompt`,
    then `update_system_prompt_with_tools` at the agent's first run). `prompt`: another of ARE's
    agent prompts filled the same way (`are_code_prompts`); default the JSON ReAct one."""
    import_are()
    from are.simulation.agents.default_agent.base_agent import (
        update_system_prompt_with_tools,
    )
    from are.simulation.agents.default_agent.prompts import (
        DEFAULT_ARE_SIMULATION_REACT_JSON_SYSTEM_PROMPT,
        get_notification_system_prompt,
    )

    prompt = prompt if prompt is not None else str(DEFAULT_ARE_SIMULATION_REACT_JSON_SYSTEM_PROMPT)
    if scenario.additional_system_prompt is not None:
        prompt += "\n\n" + scenario.additional_system_prompt
    prompt = prompt.replace("<<notification_system_description>>", get_notification_system_prompt(env.env.notification_system, scenario.apps))
    date_str = datetime.fromtimestamp(scenario.start_time or 0, tz=UTC).strftime("%Y-%m-%d %H")
    prompt = prompt.replace("<<curent_time_description>>", f"Today's date in 'YYYY-MM-DD HH' format is {date_str}")
    prompt = prompt.replace("<<agent_reminder_description>>", "")
    prompts = update_system_prompt_with_tools({"system_prompt": prompt}, list(tools.values()))
    return "\n\n".join(str(p) for p in prompts.values())


def are_code_prompts(*, hints: bool = False) -> tuple[str, str]:
    """ARE's code-agent prompts (`REACT_LOOP_CODE_SYSTEM_PROMPT`, with `CODE_AGENT_HINTS` when
    `hints`): the main agent's (`DEFAULT_ARE_SIMULATION_REACT_CODE_SYSTEM_PROMPT[_WITH_HINTS]`) and
    an app-agent's, built by ARE's app-agent recipe (`format_app_agent_system_prompt` over the
    code instructions and ARE's environment instructions with `APP_AGENT_HINTS`; ARE 1.2.0 ships
    the JSON app-agent prompt only). Both still hold `<<tool_descriptions>>` and, the main one,
    the notification / date placeholders `are_react_system_prompt` fills."""
    import_are()
    from are.simulation.agents.default_agent.prompts.system_prompt import (
        APP_AGENT_HINTS,
        ARE_SIMULATION_ENVIRONMENT_INSTRUCTIONS,
        CODE_AGENT_HINTS,
        DEFAULT_ARE_SIMULATION_REACT_CODE_SYSTEM_PROMPT,
        DEFAULT_ARE_SIMULATION_REACT_CODE_SYSTEM_PROMPT_WITH_HINTS,
        GENERAL_SYSTEM_PROMPT_TEMPLATE,
        REACT_LOOP_CODE_SYSTEM_PROMPT,
        SYSTEM_PROMPT_TEMPLATE,
        format_app_agent_system_prompt,
    )

    main = DEFAULT_ARE_SIMULATION_REACT_CODE_SYSTEM_PROMPT_WITH_HINTS if hints else DEFAULT_ARE_SIMULATION_REACT_CODE_SYSTEM_PROMPT
    app = format_app_agent_system_prompt(
        SYSTEM_PROMPT_TEMPLATE.format(
            general_instructions=GENERAL_SYSTEM_PROMPT_TEMPLATE,
            agent_instructions=REACT_LOOP_CODE_SYSTEM_PROMPT.format(code_agent_hints=CODE_AGENT_HINTS if hints else ""),
            environment_instructions=ARE_SIMULATION_ENVIRONMENT_INSTRUCTIONS.format(environment_hints=APP_AGENT_HINTS),
        )
    )
    return str(main), str(app)


class _Silent:
    """A logger that drops everything: ARE's executor logs every format error with a traceback."""

    def __getattr__(self, name: str) -> Any:
        return lambda *a, **k: None


def are_parse_action(llm_output: str) -> tuple[str, Any]:
    """ARE's `JsonActionExecutor`: `extract_action` then `parse_action` on an output, raising
    ARE's own exceptions (`InvalidActionAgentError`, `FormatError`, `JsonParsingAgentError`)
    with ARE's texts. Returns (tool name, action_input as ARE passes it on)."""
    import_are()
    from are.simulation.agents.default_agent.tools.json_action_executor import (
        JsonActionExecutor,
    )

    executor = JsonActionExecutor(use_custom_logger=False)
    executor.logger = _Silent()  # an attribute of our own executor instance
    action = executor.extract_action(llm_output=llm_output, split_token=executor.action_token)
    parsed = executor.parse_action(action)
    return str(parsed.tool_name), parsed.arguments


def are_split_action(llm_output: str, token: str) -> tuple[str, str]:
    """ARE's `BaseActionExecutor.extract_action` with another action token (the code agent's
    `Code:`): (rationale, action text), raising ARE's `InvalidActionAgentError` (no token) or
    `FormatError` (several)."""
    import_are()
    from are.simulation.agents.default_agent.tools.json_action_executor import (
        JsonActionExecutor,
    )

    executor = JsonActionExecutor(use_custom_logger=False)
    executor.logger = _Silent()
    action = executor.extract_action(llm_output=llm_output, split_token=token)
    return str(action.rationale), str(action.action)


def are_format_error(message: str) -> BaseException:
    """ARE's `FormatError` (an output whose action cannot be read)."""
    import_are()
    from are.simulation.exceptions import FormatError

    return FormatError(message)


def is_are_missing_token_error(exc: BaseException) -> bool:
    import_are()
    from are.simulation.exceptions import InvalidActionAgentError

    return isinstance(exc, InvalidActionAgentError)


def are_error_text(exc: BaseException) -> str:
    """An exception as ARE's agent logs it for the model (`BaseAgent.log_error` → `ErrorLog`)."""
    import_are()
    from are.simulation.exceptions import LoggedError

    if isinstance(exc, LoggedError):
        category = exc.category
    elif type(exc).__name__ in ("PromptTooLongException", "EmptyResponseException"):
        category = type(exc).__name__
    else:
        category = "UnhandledError"
    return f"Error: {type(exc).__name__}\nException: {exc}\nCategory: {category}"


def are_invalid_format_error(llm_output: str) -> BaseException:
    import_are()
    from are.simulation.exceptions import InvalidActionAgentError

    return InvalidActionAgentError(f"The LLM output was not formatted correctly: {llm_output}")


def are_retries_exhausted_error(count: int, llm_output: str) -> BaseException:
    import_are()
    from are.simulation.exceptions import InvalidActionAgentError

    return InvalidActionAgentError(f"LLM did not return a valid output after {count} iterations: {llm_output}")


def are_unknown_tool_error(name: str, known: list[str]) -> BaseException:
    import_are()
    from are.simulation.exceptions import UnavailableToolAgentError

    return UnavailableToolAgentError(f"Error: unknown tool {name}, should be instead one of {known}.")


def are_tool_execution_error(exc: BaseException | str, tool: Any) -> BaseException:
    """A failed tool call as ARE's executor reports it: ARE's own agent errors pass through;
    anything else gets the tool's description appended (`JsonExecutionAgentError`)."""
    import_are()
    from are.simulation.exceptions import JsonExecutionAgentError, LoggedError

    if isinstance(exc, LoggedError):
        return exc
    return JsonExecutionAgentError(
        f"Error in tool call execution: {exc}\nYou should only use this tool with a correct input.\n"
        f"As a reminder, this tool's description is the following:\n{are_tool_description(tool)}"
    )


def are_json_parsing_error(message: str) -> BaseException:
    """ARE's `JsonParsingAgentError` (what its parser raises on a bad action blob)."""
    import_are()
    from are.simulation.exceptions import JsonParsingAgentError

    return JsonParsingAgentError(message)
