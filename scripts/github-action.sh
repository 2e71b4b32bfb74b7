#!/usr/bin/env bash
# The steps of the neuron-env GitHub Action (action.yml): install neuron-env at the action's own
# ref into a private venv, run `neuron-env preflight`, publish the step outputs. It also runs
# outside GitHub, given the variables GitHub sets (GITHUB_ACTION_PATH, RUNNER_TEMP, GITHUB_OUTPUT,
# GITHUB_STEP_SUMMARY) and the INPUT_* variables action.yml passes.
set -euo pipefail
set -f # the whitespace-separated inputs are split into words, never expanded as globs

: "${GITHUB_ACTION_PATH:?}" "${RUNNER_TEMP:?}" "${GITHUB_OUTPUT:?}"
tool_venv="$RUNNER_TEMP/neuron-env-tool"
report_dir="$RUNNER_TEMP/neuron-env-preflight"

if [[ ! -x "$tool_venv/bin/neuron-env" ]]; then
  "${NEURON_ENV_TOOL_PYTHON:-python3}" -m venv "$tool_venv"
  "$tool_venv/bin/python" -m pip install --quiet --disable-pip-version-check "$GITHUB_ACTION_PATH"
fi

target=${INPUT_PYTHON:-}
if [[ -z $target && -n ${VIRTUAL_ENV:-} ]]; then
  target="$VIRTUAL_ENV/bin/python"
elif [[ -z $target ]]; then
  target=$(command -v python3 || true)
fi

args=(--format github --output "$report_dir/" --level "${INPUT_LEVEL:-1}")
[[ -n $target ]] && args+=(--python "$target")
[[ -n ${INPUT_TORCH:-} ]] && args+=(--torch "$INPUT_TORCH")
[[ -n ${INPUT_RELEASE:-} ]] && args+=(--release "$INPUT_RELEASE")
[[ ${INPUT_STRICT:-false} == true ]] && args+=(--strict)
read -r -a allowed <<<"${INPUT_ALLOW:-}"
for check in "${allowed[@]}"; do args+=(--allow "$check"); done
read -r -a extra <<<"${INPUT_ARGS:-}"
args+=("${extra[@]}")

status=0
"$tool_venv/bin/neuron-env" preflight "${args[@]}" || status=$?

verdict=$("$tool_venv/bin/python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["status"])' \
  "$report_dir/preflight.json" 2>/dev/null || echo error)
{
  echo "status=$verdict"
  echo "report-path=$report_dir/preflight.json"
} >>"$GITHUB_OUTPUT"
exit "$status"
