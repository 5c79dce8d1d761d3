"""GRPO with TRL on a Gaia2 scenario played through orchestra — run in the trainer's venv, never orchestra's.

The trainer's stack (TRL, transformers 5, torch) cannot share a venv with ARE's pins, so the two meet
across a process boundary, the way a trainer meets an inference server:

* **the policy** is the trainer's own model, served on loopback as an OpenAI-compatible
  `/v1/chat/completions` (`PolicyServer`): the prompt rendered with the model's chat template, the
  completion sampled from the model, and the reply carrying the prompt's and the completion's token
  ids and the sampled tokens' logprobs (as vLLM's `return_token_ids` / `logprobs` do);
* **the environment** is `orchestra run --token-ids --out DIR` in orchestra's venv, pointed at that
  server: orchestra plays each scenario `num_generations` times (a GRPO group: one world loaded,
  copied per member), ARE's judge scores each member, and each episode's training trace
  (`DIR/training/NAME.json`) holds the exact ids the model saw and sampled;
* **TRL's `rollout_func`** turns those traces into `prompt_ids`, `completion_ids`, `logprobs` and
  `env_mask`, with the judge's reward for the reward function: no text is ever re-tokenized.

The action space is constrained, as a grammar constrains a server's decoding: the server samples,
token by token from the model's own distribution, one of a few candidate answers (`--candidates`:
the scenario's right answer and wrong ones), so a tiny model's group has rewards that differ. What
the test checks is the plumbing, on CPU: optimizer steps on real judge rewards, the trained ids equal
to the sampled ones, the clock charged from those token counts.

    python grpo_on_orchestra.py --orchestra .venv/bin/orchestra --tokenizer DIR --scenario FILE \\
        --candidates candidates.json --out OUT [--steps 2 --group 4]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import torch
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, Qwen2Config, Qwen2ForCausalLM
from trl import GRPOConfig, GRPOTrainer

ANSWER_TOOL = "AgentUserInterface__send_message_to_user"


class PolicyServer:
    """The trainer's model behind an OpenAI-compatible chat endpoint (loopback), sampling one of the
    candidate completions token by token; every sample it served is kept (`served`)."""

    def __init__(self, model: Any, tokenizer: Any, candidates: list[str] | None, *, max_new_tokens: int = 256) -> None:
        self.model, self.tokenizer = model, tokenizer
        self.candidates = candidates or []
        self.max_new_tokens = max_new_tokens
        self.end = tokenizer.convert_tokens_to_ids("<|im_end|>")
        #: Each candidate as the model writes it: the tool call in the chat template's format, then end of turn.
        self.sequences = [self._encode(c) + [self.end] for c in self.candidates]
        self.served: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:  # one sample at a time on the model
                    reply = server.complete(body)
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/v1"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def _free(self, body: dict[str, Any], prompt: list[int]) -> dict[str, Any]:
        """Unconstrained sampling (a real model on a GPU): Qwen's `<tool_call>` blocks become tool calls."""
        device = next(self.model.parameters()).device
        torch.manual_seed(int(body.get("seed", 0)))
        out = self.model.generate(
            torch.tensor([prompt], device=device),
            do_sample=True,
            temperature=float(body.get("temperature") or 1.0),
            max_new_tokens=self.max_new_tokens,
            eos_token_id=self.end,
            output_scores=True,
            return_dict_in_generate=True,
        )
        ids = out.sequences[0, len(prompt) :].tolist()
        logprobs = [float(torch.log_softmax(score[0].float(), -1)[i]) for score, i in zip(out.scores, ids)]
        text = self.tokenizer.decode(ids, skip_special_tokens=True)
        calls = []
        for n, block in enumerate(re.findall(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", text, re.S)):
            try:
                call = json.loads(block)
                calls.append({"id": f"call_{n}", "type": "function", "function": {"name": call["name"], "arguments": json.dumps(call.get("arguments", {}))}})
            except (ValueError, KeyError, TypeError):
                pass
        content = None if calls else text
        self.served.append({"prompt_ids": prompt, "completion_ids": ids, "logprobs": logprobs, "answer": text})
        return self._reply(body, prompt, ids, logprobs, {"role": "assistant", "content": content, **({"tool_calls": calls} if calls else {})})

    def _reply(self, body: dict[str, Any], prompt: list[int], ids: list[int], logprobs: list[float], message: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": f"policy-{len(self.served)}",
            "object": "chat.completion",
            "model": body.get("model", "policy"),
            "prompt_token_ids": prompt,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    "message": message,
                    "token_ids": ids,
                    "logprobs": {"content": [{"token": f"token_id:{i}", "logprob": lp} for i, lp in zip(ids, logprobs)]},
                }
            ],
            "usage": {"prompt_tokens": len(prompt), "completion_tokens": len(ids), "total_tokens": len(prompt) + len(ids)},
        }

    def _encode(self, answer: str) -> list[int]:
        call = json.dumps({"name": ANSWER_TOOL, "arguments": {"content": answer}})
        return list(self.tokenizer.encode(f"<tool_call>\n{call}\n</tool_call>", add_special_tokens=False))

    @torch.no_grad()
    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        text = self.tokenizer.apply_chat_template(body["messages"], tools=body.get("tools"), add_generation_prompt=True, tokenize=False)
        prompt = list(self.tokenizer.encode(text, add_special_tokens=False))
        if not self.sequences:
            return self._free(body, prompt)
        generator = torch.Generator().manual_seed(int(body.get("seed", 0)))
        live = list(range(len(self.sequences)))
        ids: list[int] = []
        logprobs: list[float] = []
        out = self.model(torch.tensor([prompt]), use_cache=True)
        while True:
            logp = torch.log_softmax(out.logits[0, -1].float(), -1)
            allowed = sorted({self.sequences[i][len(ids)] for i in live})
            choice = allowed[int(torch.multinomial(torch.softmax(logp[allowed], -1), 1, generator=generator))]
            ids.append(choice)
            logprobs.append(float(logp[choice]))  # the model's own logprob (vLLM reports the raw distribution)
            live = [i for i in live if self.sequences[i][len(ids) - 1] == choice]
            done = [i for i in live if len(self.sequences[i]) == len(ids)]
            if done:
                break
            out = self.model(torch.tensor([[choice]]), past_key_values=out.past_key_values, use_cache=True)
        answer = self.candidates[done[0]]
        self.served.append({"prompt_ids": prompt, "completion_ids": ids, "logprobs": logprobs, "answer": answer})
        call = {"id": f"call_{len(self.served)}", "type": "function", "function": {"name": ANSWER_TOOL, "arguments": json.dumps({"content": answer})}}
        return self._reply(body, prompt, ids, logprobs, {"role": "assistant", "content": None, "tool_calls": [call]})


def orchestra_rollouts(orchestra: str, server: PolicyServer, scenario: str, group: int, seed: int, out: Path, max_steps: int = 1) -> list[dict[str, Any]]:
    """One GRPO group through orchestra, in its own venv: the training traces, by member."""
    command = [
        orchestra, "run", "--model", "openai/policy", "--endpoint", server.url, "--api-key", "none", "--token-ids",
        "--scenarios", scenario, "--runs", str(group), "--seed", str(seed), "--max-steps", str(max_steps), "--judge", "strict",
        "--no-preflight", "--no-progress", "--out", str(out),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    if done.returncode not in (0, 1):  # 1: a FAIL is a verdict, not an error
        raise RuntimeError(f"orchestra run exited {done.returncode}: {done.stderr[-2000:]}")
    traces = [json.loads(p.read_text()) for p in sorted((out / "training").glob("*.json"))]
    return sorted(traces, key=lambda t: t["sample_index"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--orchestra", required=True, help="orchestra's command, in orchestra's venv")
    parser.add_argument("--tokenizer", help="a Hugging Face tokenizer folder (tokenizer.json, chat template); default: --model's")
    parser.add_argument("--scenario", required=True)
    parser.add_argument("--candidates", help="JSON list of answers (the right one and wrong ones) to constrain decoding to; without: free sampling")
    parser.add_argument("--model", help="a Hugging Face model to train (default: a tiny randomly initialised Qwen2, for the CPU test)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--max-steps", type=int, default=1, help="the agent's step budget per episode (orchestra run --max-steps)")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--group", type=int, default=4)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)  # a tiny model: one thread is as fast, and shares a busy machine better

    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer or args.model)
    if args.model:
        model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.bfloat16).to(args.device)
    else:
        config = Qwen2Config(
            vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=32768, tie_word_embeddings=True,
        )  # fmt: skip
        model = Qwen2ForCausalLM(config)  # a real architecture, randomly initialised: the plumbing, not the skill
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    server = PolicyServer(model, tokenizer, json.loads(Path(args.candidates).read_text()) if args.candidates else None)
    episodes: list[dict[str, Any]] = []

    def rollout_func(prompts: list[str], trainer: GRPOTrainer) -> dict[str, list[Any]]:
        batch: dict[str, list[Any]] = {"prompt_ids": [], "completion_ids": [], "logprobs": [], "env_mask": [], "judge_reward": []}
        group = trainer.args.num_generations
        if len(prompts) % group == 0 and all(prompts[i] == prompts[i - i % group] for i in range(len(prompts))):
            prompts = prompts[::group]  # a group's prompt, repeated: orchestra plays the group at once
        for prompt in prompts:
            step = trainer.state.global_step
            folder = Path(tempfile.mkdtemp(prefix=f"step{step}-", dir=out))
            for trace in orchestra_rollouts(args.orchestra, server, prompt, group, 1000 * step, folder, args.max_steps):
                [agent] = trace["agents"]
                sequence = agent["sequence"] or agent["turns"][0]  # several turns that do not extend: the first (this script's scope)
                batch["prompt_ids"].append(sequence["prompt_token_ids"])
                batch["completion_ids"].append(sequence["completion_token_ids"])
                batch["logprobs"].append(sequence["per_token_logps"])
                batch["env_mask"].append(sequence["loss_mask"])
                batch["judge_reward"].append(trace["reward"])
                episodes.append({"step": step, "trace": trace})
        return batch

    def judge_reward(completions: list[Any], judge_reward: list[float], **kwargs: Any) -> list[float]:
        return judge_reward  # ARE's judge, through orchestra

    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=[judge_reward],
        train_dataset=Dataset.from_dict({"prompt": [args.scenario] * args.steps}),
        rollout_func=rollout_func,
        args=GRPOConfig(
            output_dir=str(out / "trainer"),
            max_steps=args.steps,
            num_generations=args.group,
            per_device_train_batch_size=args.group,
            learning_rate=args.lr,
            beta=0.0,
            logging_steps=1,
            save_strategy="no",
            report_to=[],
            use_cpu=args.device == "cpu",
            seed=0,
            max_completion_length=256,
            temperature=1.0,
            dataloader_num_workers=0,
            bf16=False,
        ),  # fmt: skip
    )
    started = time.monotonic()
    trainer.train()
    seconds = time.monotonic() - started

    changed = sum(int(not torch.equal(before[name], p.detach())) for name, p in model.named_parameters())
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    report = {
        "optimizer_steps": trainer.state.global_step,
        "losses": losses,
        "parameters_changed": changed,
        "parameters": len(before),
        "served": server.served,
        "episodes": episodes,
        "rewards": [e["trace"]["reward"] for e in episodes],
        "seconds_per_step": round(seconds / max(1, trainer.state.global_step), 1),
        "tokens_per_step": round(
            sum(len(t["prompt_token_ids"]) + len(t["completion_token_ids"]) for e in episodes for a in e["trace"]["agents"] for t in a["turns"])
            / max(1, trainer.state.global_step)
        ),
    }
    (out / "report.json").write_text(json.dumps(report))
    print(json.dumps({k: report[k] for k in ("optimizer_steps", "losses", "parameters_changed", "rewards", "seconds_per_step", "tokens_per_step")}))
    assert all(math.isfinite(x) for x in losses)
    os._exit(0)  # the server thread is a daemon: do not wait for it


if __name__ == "__main__":
    main()
