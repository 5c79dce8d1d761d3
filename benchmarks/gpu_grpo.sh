#!/usr/bin/env bash
# GRPO on Gaia2 through orchestra with a real model, on a GPU machine (docs/rl.md, "On a GPU machine").
#
# What it runs, in order (each step's command is printed):
#   1. orchestra's venv (`dev.py setup`) and a GPU trainer venv of its own (.venv-gpu: vLLM, TRL, the
#      CUDA build of torch; their pins clash with ARE's, so never in orchestra's venv);
#   2. vLLM serving MODEL with token ids (`return_token_ids` is a per-request field orchestra sends);
#   3. orchestra playing GROUP members of each bundled Search scenario against it (`--token-ids`), the
#      environment's throughput and each episode's training trace (training/*.json) kept in OUT/vllm;
#   4. TRL's GRPOTrainer on MODEL itself (tests/integration/trainer/grpo_on_orchestra.py with --model,
#      free sampling, orchestra's `strict` judge as the reward), STEPS optimizer steps.
#
#   MODEL=Qwen/Qwen2.5-1.5B-Instruct GROUP=8 STEPS=10 OUT=gpu_run bash benchmarks/gpu_grpo.sh
#
# Needs a CUDA GPU and the network (PyPI, the Hugging Face hub for MODEL). Not run by the test suite:
# this workplace's GPU machines reach no network, and the CPU path of the same script is the TRL test.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${MODEL:-Qwen/Qwen2.5-1.5B-Instruct}
GROUP=${GROUP:-8}
STEPS=${STEPS:-10}
OUT=${OUT:-gpu_run}
PORT=${PORT:-8000}
run() { echo "+ $*" >&2; "$@"; }

run python3.11 dev.py setup
if [ ! -x .venv-gpu/bin/python ]; then
  run python3.11 -m venv .venv-gpu
  run .venv-gpu/bin/pip install -q "vllm==0.11.0" "trl==1.16.0" "datasets==5.2.0" "accelerate==1.16.0"
fi
mkdir -p "$OUT"

run .venv-gpu/bin/python -m vllm.entrypoints.openai.api_server --model "$MODEL" --served-model-name policy \
  --port "$PORT" --enable-auto-tool-choice --tool-call-parser hermes --gpu-memory-utilization 0.5 > "$OUT/vllm.log" 2>&1 &
VLLM=$!
trap 'kill $VLLM 2>/dev/null || true' EXIT
for _ in $(seq 600); do curl -sf "http://127.0.0.1:$PORT/v1/models" > /dev/null && break; sleep 1; done

# The environment against a fast server: rollouts per second and the training traces.
start=$(date +%s)
run .venv/bin/orchestra run --model openai/policy --endpoint "http://127.0.0.1:$PORT/v1" --api-key none --token-ids \
  --judge strict --scenarios bundled:search --runs "$GROUP" --seed 0 --concurrency 64 --out "$OUT/vllm" --no-progress || true
echo "orchestra + vLLM: $(wc -l < "$OUT/vllm/results.jsonl") episodes in $(( $(date +%s) - start )) s; traces in $OUT/vllm/training" >&2
kill $VLLM 2>/dev/null || true

# A real trainer on the real model: GRPO, rewards from ARE's judge through orchestra.
run .venv-gpu/bin/python tests/integration/trainer/grpo_on_orchestra.py --model "$MODEL" --device cuda \
  --orchestra .venv/bin/orchestra --scenario scenarios/search/validation/starter_search_lookup.json \
  --group "$GROUP" --steps "$STEPS" --max-steps 8 --lr 1e-6 --out "$OUT/trl"
