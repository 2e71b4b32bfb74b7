#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then run it:
# lint (ruff), types (mypy), import layering (import-linter) and pytest.
# Usage: bash scripts/test.sh [pytest arguments...]
# The users' validators (shellcheck 0.11, cfn-lint, hadolint, check-jsonschema, kubernetes-validate,
# mkdocs) come pinned from the test extra in pyproject.toml, not from the OS packages.
# Environment: PYTHON (default python3.11, else python3), NEURON_ENV_TEST_VENV (default .venv-test),
# NEURON_ENV_TEST_TORCH_VENV (default .venv-torch: torch for the device tests' target venvs),
# NEURON_ENV_TEST_WORKERS (default: one more than the CPU cores, pytest-xdist processes; 0 for
# one process).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
started=$SECONDS

# As root, some tests run neuron-env as the unprivileged user nobody (planted links, Slurm's
# non-operator): nobody must be able to read the checkout and the venvs. A checkout in a folder
# only root can read (e.g. under /root) is copied, as it stands, to one others can read, and the
# suite runs there.
nobody_reads() { setpriv --reuid=65534 --regid=65534 --clear-groups -- test -r "$1"; }
if [[ $(id -u) == 0 && -z ${NEURON_ENV_TEST_COPIED:-} ]] && command -v setpriv >/dev/null 2>&1 &&
  ! nobody_reads "$PWD/pyproject.toml"; then
  copy=/var/tmp/neuron-env-checkout-$(printf '%s' "$PWD" | sha256sum | cut -c1-12)
  printf '\n== %s\n' "nobody cannot read $PWD (some tests run as nobody): testing a copy in $copy"
  rm -rf "$copy" && mkdir -p "$copy"
  tar --exclude='./.venv*' -cf - . | tar -xf - -C "$copy"
  chmod -R a+rX "$copy"
  NEURON_ENV_TEST_COPIED=1 exec bash "$copy/scripts/test.sh" "$@"
fi

python=${PYTHON:-}
if [[ -z $python ]]; then
  if command -v python3.11 >/dev/null 2>&1; then python=python3.11; else python=python3; fi
fi
venv=${NEURON_ENV_TEST_VENV:-.venv-test}

log() { printf '\n== %s\n' "$*"; }

# Tools from the OS packages: the missing ones are named, with what needs them, before apt-get
# installs them (as root), or the command to install them is printed (otherwise).
missing=()
need_tool() { # tool, apt package, what needs it
  command -v "$1" >/dev/null 2>&1 || missing+=("$2: $3")
}
need_tool curl curl "the bootstrap test fetches over HTTP and IMDSv2 with the real curl"
need_tool setpriv util-linux "the permission tests drop root's file capabilities when run as root"
need_tool chromium chromium "the HTML report tests open each page headless (--dump-dom)"
if ((${#missing[@]})); then
  packages=("${missing[@]%%:*}")
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    log "installing with apt-get: ${packages[*]}"
    printf '   %s\n' "${missing[@]}"
    apt-get update -qq && apt-get install -y -qq "${packages[@]}" >/dev/null
  else
    printf 'The tests need these OS packages:\n' >&2
    printf '   %s\n' "${missing[@]}" >&2
    echo "Install them (e.g. sudo apt-get install ${packages[*]}) and run again." >&2
    exit 1
  fi
fi

# A real Slurm for tests/integration/test_slurm_cluster.py: the tests start munged, slurmctld and
# two slurmd on 127.0.0.1 once per session (as root) and stop them at its end.
if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
  if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
    log "installing slurm-wlm and munge (a two-node Slurm cluster on 127.0.0.1 for the Slurm tests)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
  fi
  export NEURON_ENV_TEST_REQUIRE_SLURM=1 # here they must run: a cluster that cannot start fails
else
  log "the real Slurm tests will be skipped: they need root (to install and run Slurm's daemons)"
fi

# The two environments live in a cache outside the checkout, keyed by what they are built from
# (the test venv by what pyproject.toml installs and the Python version, the torch venv by the
# torch pin), so a fresh clone reuses them instead of spending about 1.5 minutes reinstalling the
# same wheels. A miss runs the same install steps as a first run; .venv-test and .venv-torch in
# the checkout are links to them. An existing real folder at either path is used as it is (and kept up to date).
# Root's cache is one other users can read (the tests run some commands as nobody).
if [[ $(id -u) == 0 ]]; then default_cache=/var/cache/neuron-env-test; else
  default_cache=${XDG_CACHE_HOME:-$HOME/.cache}/neuron-env-test
fi
cache=${NEURON_ENV_TEST_CACHE:-$default_cache}
mkdir -p "$cache"
exec {lock}>"$cache/.lock"
flock "$lock"  # one set-up at a time (two checkouts may share the cache)
pyver=$("$python" -c 'import sys; print("py%d.%d" % sys.version_info[:2])')

link_to_cache() { # path in the checkout, folder in the cache
  if [[ ! -e $1 || -L $1 ]]; then
    ln -sfn "$2" "$1"
  fi
}

# What the installed venv is made from: the build system, the project's metadata (dependencies,
# the test extra, console scripts) and hatch's build settings. The tools' own settings in
# pyproject.toml ([tool.ruff], [tool.mypy], [tool.pytest], [tool.importlinter]) are read from the
# checkout on each run: changing them makes no new venv (a new venv costs about 40 s and 800 MB).
# Without tomllib (Python 3.10) the whole file is the key.
install_key() {
  "$python" - <<'PY' 2>/dev/null || sha256sum pyproject.toml | cut -d' ' -f1
import hashlib, json, tomllib
with open("pyproject.toml", "rb") as f:
    doc = tomllib.load(f)
made_from = {"build-system": doc.get("build-system"), "project": doc.get("project"),
             "hatch": doc.get("tool", {}).get("hatch")}
print(hashlib.sha256(json.dumps(made_from, sort_keys=True).encode()).hexdigest())
PY
}
wanted=$(install_key)
key=${wanted:0:16}
link_to_cache "$venv" "$cache/test-$pyver-$key"
# From here on the real folder: pip writes the path it runs from into every script's #! line.
venv=$(readlink -f "$venv")
log "test environment: $venv ($("$python" --version))"
if [[ ! -x $venv/bin/python ]]; then
  "$python" -m venv "$venv"
fi
# Installed again only when what it is made from changed since the last install (it takes a while).
stamp=$venv/.neuron-env-installed-from
if [[ ! -f $stamp || $(cat "$stamp") != "$wanted" ]]; then
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet --editable ".[test]"
  printf '%s' "$wanted" >"$stamp"
fi
# A venv shared by several checkouts imports neuron_env from the one it was last installed from:
# point it at this one (a second or two; dependencies untouched).
installed=$("$venv/bin/python" -I -c 'import os, neuron_env; print(os.path.dirname(os.path.dirname(neuron_env.__file__ or "")))' 2>/dev/null || true)
if [[ $installed != "$(pwd -P)" ]]; then
  "$venv/bin/python" -m pip install --quiet --no-deps --editable .
fi

torch_venv=${NEURON_ENV_TEST_TORCH_VENV:-$PWD/.venv-torch}
[[ -n ${NEURON_ENV_TEST_TORCH_VENV:-} ]] || link_to_cache "$torch_venv" "$cache/torch-2.13.0-$pyver"
torch_venv=$(readlink -f "$torch_venv")
log "torch for the device tests: $torch_venv"
if ! "$torch_venv/bin/python" -c "import torch" >/dev/null 2>&1; then
  "$python" -m venv "$torch_venv"
  # The machine's pip configuration on purpose: it provides the CPU build of torch.
  "$torch_venv/bin/python" -m pip install --quiet torch==2.13.0
fi
# Each change of pyproject.toml makes a new test venv (about 800 MB): keep the two used last.
touch "$venv"
find "$cache" -mindepth 1 -maxdepth 1 -name 'test-*' -type d -printf '%T@ %p\n' | sort -rn |
  tail -n +3 | cut -d' ' -f2- | while IFS= read -r old; do rm -rf -- "$old"; done
flock --unlock "$lock"
export NEURON_ENV_TEST_TORCH_VENV=$torch_venv

# Bytecode for the checkout, compiled once (both cores): the tests start neuron-env a few thousand
# times, and where PYTHONDONTWRITEBYTECODE is set (as on some CI machines) every one of them would
# otherwise compile each module it imports again (about a third of a doctor run's CPU).
"$venv/bin/python" -m compileall -q -j 0 neuron_env tests/support tests/fakes >/dev/null

log "ruff"
"$venv/bin/ruff" check .
"$venv/bin/ruff" format --check .

log "mypy"
# mypy's cache beside the venvs: it re-checks every file whose contents changed (a cold run
# costs about 20 s of CPU; a warm one about 1 s).
flock "$cache/.mypy-lock" "$venv/bin/mypy" --cache-dir "$cache/mypy-$pyver"

log "import layering"
"$venv/bin/lint-imports"

log "pytest"
# Worker processes, each test module kept in one (its module-scoped indexes built once), the
# costliest modules first (tests/conftest.py orders them by tests/durations.json; xdist would
# otherwise order them by their number of tests and hand a one-minute module out last);
# NEURON_ENV_TEST_WORKERS=0 runs everything in this process (e.g. with pdb). The 20 slowest tests
# are listed at the end, so a run that got slower names what did.
code=0
# One worker more than the cores: about a quarter of the tests' time is waiting (the timeouts
# they exercise, Slurm's scheduling, local servers), which the extra worker fills.
workers=${NEURON_ENV_TEST_WORKERS:-$(($(nproc) + 1))}
"$venv/bin/pytest" -n "$workers" --dist loadfile --no-loadscope-reorder --durations=20 "$@" || code=$?
elapsed=$((SECONDS - started))
log "done in $((elapsed / 60)) min $((elapsed % 60)) s (setup, lint, types and tests), exit $code"
exit "$code"
