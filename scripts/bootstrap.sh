#!/usr/bin/env bash
# neuron-env bootstrap: make an Ubuntu host Neuron-ready, then validate it with neuron-env doctor.
#
# One script for both ways a Trainium host comes up: the launch-template user data embeds it
# ('neuron-env launch-template render') and the AMI recipe uploads it ('neuron-env ami render').
#
# Stages, in order; each is idempotent (a marker under /var/lib/neuron-env/stages records the
# inputs it ran with, and a second run with the same inputs skips it):
#   prerequisites  apt: python3-venv, curl, gnupg, ca-certificates
#   tool           neuron-env itself, in its own venv (/opt/neuron-env/tool), on PATH: from a
#                  URL or S3 object whose sha256 is checked before anything is installed, from
#                  the image (ami), or from the configured index (pypi, checked with a sha256)
#   system         'neuron-env install --system --execute': Neuron apt repo, driver, runtime,
#                  collectives, tools, kernel headers (auto: only if neuron-ls is missing)
#   efa            the EFA installer, signature checked (auto: only if /opt/amazon/efa is missing)
#   python-env     'neuron-env install' into --venv (auto: only if the venv is missing)
#   validate       'neuron-env doctor --format json' (every run): report, marker files, tag
#
# Results: log /var/log/neuron-env/bootstrap.log; report /var/log/neuron-env/doctor.json;
# marker /var/lib/neuron-env/status (ok|warn|fail|error) and /var/lib/neuron-env/ready (exists
# only when the host passed); the instance tag neuron-env:status when the instance profile
# allows ec2:CreateTags. Exit status: 0 healthy, 1 unhealthy or a stage failed, 2 bad usage.
#
# Environment: NEURON_ENV_ROOT prefixes every path it reads or writes (tests use a temporary
# root); AWS_EC2_METADATA_SERVICE_ENDPOINT overrides the IMDS address.
set -euo pipefail

readonly ROOT=${NEURON_ENV_ROOT:-}
readonly LOG_DIR=$ROOT/var/log/neuron-env
readonly STATE_DIR=$ROOT/var/lib/neuron-env
readonly LOG=$LOG_DIR/bootstrap.log
readonly REPORT=$LOG_DIR/doctor.json
readonly STATUS_FILE=$STATE_DIR/status
readonly READY_FILE=$STATE_DIR/ready
readonly TOOL_VENV=$ROOT/opt/neuron-env/tool
readonly NEURON_ENV=$TOOL_VENV/bin/neuron-env
readonly IMDS=${AWS_EC2_METADATA_SERVICE_ENDPOINT:-http://169.254.169.254/}
readonly STATUS_TAG=neuron-env:status
readonly EFA_URL=https://efa-installer.amazonaws.com/aws-efa-installer-latest.tar.gz

release='' torch='' source='' sha256='' spec='' venv=/opt/neuron-env/venv level=1
system_mode=auto efa_mode=auto python_mode=auto tag=yes image_build=no efa_url=$EFA_URL
validated=no fetched=''

usage() {
  cat <<'USAGE'
Usage: neuron-env-bootstrap --release R --torch X.Y --neuron-env-source SOURCE [options]
  --neuron-env-source SOURCE where neuron-env comes from: an http(s):// or s3:// wheel (.whl) or
                             wheelhouse (.tar.gz), checked against --neuron-env-sha256; ami (the
                             image already holds it); pypi (pip install --neuron-env-spec SPEC)
  --neuron-env-sha256 HEX    the source file's sha256 (required for URL and S3 sources)
  --neuron-env-spec SPEC     with pypi: the requirement to install (e.g. neuron-env==0.1.0)
  --venv DIR                 Python environment to use or build (default /opt/neuron-env/venv)
  --system auto|always|never     Neuron apt packages (auto: when neuron-ls is missing)
  --efa auto|always|never        EFA installer (auto: when /opt/amazon/efa is missing)
  --python-env auto|always|never 'neuron-env install' (auto: when the venv is missing)
  --level 0|1|2              neuron-env doctor level (default 1: includes a device smoke test)
  --efa-installer-url URL    EFA installer tarball (its .sig and the key sit beside it)
  --no-tag                   do not publish the neuron-env:status instance tag
  --image-build              building an AMI: validate, then leave no instance-specific results
USAGE
}

die() {
  printf 'neuron-env-bootstrap: %s\n' "$*" >&2
  exit 2
}

log() {
  local line
  line="$(date -u +%Y-%m-%dT%H:%M:%SZ) neuron-env-bootstrap: $*"
  printf '%s\n' "$line" >>"$LOG"
  printf '%s\n' "$line" >&2
}

# Run a command with its output in the log only, after logging the command line itself.
run() {
  log "+ $(printf '%q ' "$@")"
  "$@" >>"$LOG" 2>&1
}

parse_args() {
  while (($#)); do
    case $1 in
      --release) release=${2-}; shift ;;
      --torch) torch=${2-}; shift ;;
      --neuron-env-source) source=${2-}; shift ;;
      --neuron-env-sha256) sha256=${2-}; shift ;;
      --neuron-env-spec) spec=${2-}; shift ;;
      --venv) venv=${2-}; shift ;;
      --system) system_mode=${2-}; shift ;;
      --efa) efa_mode=${2-}; shift ;;
      --python-env) python_mode=${2-}; shift ;;
      --level) level=${2-}; shift ;;
      --efa-installer-url) efa_url=${2-}; shift ;;
      --no-tag) tag=no ;;
      --image-build) image_build=yes ;;
      -h | --help) usage; exit 0 ;;
      *) usage >&2; die "unknown argument: $1" ;;
    esac
    shift
  done
  [[ $release =~ ^[0-9]+(\.[0-9]+)+$ ]] || die "--release must be a version like 2.33.1"
  [[ $torch =~ ^[0-9]+\.[0-9]+$ ]] || die "--torch must be a PyTorch minor like 2.14"
  check_source
  [[ $venv == /* ]] || die "--venv must be an absolute path"
  [[ $level =~ ^[012]$ ]] || die "--level must be 0, 1 or 2"
  local mode
  for mode in "$system_mode" "$efa_mode" "$python_mode"; do
    [[ $mode =~ ^(auto|always|never)$ ]] || die "stage modes are auto, always or never"
  done
}

check_source() {
  [[ -z $sha256 || $sha256 =~ ^[0-9a-f]{64}$ ]] ||
    die "--neuron-env-sha256 must be 64 lowercase hex digits (sha256sum's output)"
  case $source in
    ami)
      [[ -z $sha256 && -z $spec ]] || die "--neuron-env-source ami takes no sha256 or spec"
      ;;
    pypi)
      [[ -n $spec ]] || die "--neuron-env-source pypi needs --neuron-env-spec (e.g. neuron-env==0.1.0)"
      ;;
    https://* | http://* | s3://*)
      [[ -n $sha256 ]] || die "--neuron-env-source $source needs --neuron-env-sha256"
      [[ -z $spec ]] || die "--neuron-env-spec goes with --neuron-env-source pypi only"
      [[ $(source_file_name) =~ ^[A-Za-z0-9][A-Za-z0-9._+-]*\.(whl|tar\.gz|tgz)$ ]] ||
        die "--neuron-env-source must name a wheel (.whl) or a wheelhouse (.tar.gz)"
      ;;
    '') die "--neuron-env-source is required (a URL or s3:// object with --neuron-env-sha256, ami or pypi)" ;;
    *) die "--neuron-env-source must be an http(s):// or s3:// file, ami or pypi" ;;
  esac
}

# The source's file name: the last segment of its path, without a query or fragment.
source_file_name() {
  local name=${source%%[?#]*}
  printf '%s' "${name##*/}"
}

# stage NAME KEY FUNCTION: run FUNCTION unless NAME already ran with the same KEY.
stage() {
  local name=$1 key=$2 marker=$STATE_DIR/stages/$1.done
  if [[ -f $marker && $(<"$marker") == "$key" ]]; then
    log "$name: already done ($key)"
    return 0
  fi
  log "$name: starting"
  "$3"
  printf '%s\n' "$key" >"$marker.tmp"
  mv "$marker.tmp" "$marker"
  log "$name: done"
}

# wanted MODE NAME PRESENT_PATH: whether an optional stage should run.
wanted() {
  case $1 in
    never) log "$2: skipped (never)"; return 1 ;;
    always) return 0 ;;
  esac
  if [[ -e $3 ]]; then
    log "$2: skipped, already on this image (${3#"$ROOT"})"
    return 1
  fi
}

install_prerequisites() {
  export DEBIAN_FRONTEND=noninteractive
  run apt-get update
  run apt-get install -y --no-install-recommends python3-venv ca-certificates curl gnupg
}

install_tool() {
  local work=$STATE_DIR/tool-download
  if [[ $source == ami ]]; then
    if [[ ! -x $NEURON_ENV ]]; then
      log "tool: --neuron-env-source ami, but this image has no ${NEURON_ENV#"$ROOT"}"
      return 1
    fi
  elif [[ $source == pypi && -z $sha256 ]]; then
    run python3 -m venv "$TOOL_VENV"
    run "$TOOL_VENV/bin/pip" install --upgrade "$spec"
  else
    rm -rf "$work"
    mkdir -m 0700 "$work"
    run python3 -m venv "$TOOL_VENV"
    fetch_tool "$work"
    verify_sha256 "$fetched" || return 1
    if [[ $fetched == *.whl ]]; then
      run "$TOOL_VENV/bin/pip" install --upgrade "$fetched"
    else
      mkdir "$work/wheels"
      run tar -xzf "$fetched" -C "$work/wheels"
      run "$TOOL_VENV/bin/pip" install --upgrade --no-index --find-links "$work/wheels" neuron-env
    fi
    rm -rf "$work"
  fi
  mkdir -p "$ROOT/usr/local/bin"
  ln -sfn "$NEURON_ENV" "$ROOT/usr/local/bin/neuron-env"
}

# fetch_tool DIR: download the source into DIR; its path is left in $fetched.
fetch_tool() {
  case $source in
    pypi)
      run "$TOOL_VENV/bin/pip" download --no-deps --only-binary=:all: --dest "$1/dist" "$spec"
      fetched=$(find "$1/dist" -maxdepth 1 -type f -name '*.whl' -print -quit)
      ;;
    s3://*)
      fetched=$1/$(source_file_name)
      run aws s3 cp --only-show-errors "$source" "$fetched"
      ;;
    *)
      fetched=$1/$(source_file_name)
      run curl -fsSL --retry 3 --proto '=https,http' -o "$fetched" "$source"
      ;;
  esac
  if [[ -z $fetched || ! -f $fetched ]]; then
    log "tool: nothing was downloaded from $source"
    return 1
  fi
}

# verify_sha256 FILE: the file is exactly the one the user named, or it is deleted unused.
verify_sha256() {
  local actual
  actual=$(sha256sum "$1")
  actual=${actual%% *}
  if [[ $actual != "$sha256" ]]; then
    log "tool: ${1##*/} has sha256 $actual, not the expected $sha256; not installing it"
    rm -f "$1"
    return 1
  fi
  log "tool: ${1##*/} matches sha256 $sha256"
}

install_system() {
  run "$NEURON_ENV" install --system --torch "$torch" --release "$release" --execute
}

install_efa() {
  local work
  work=$(mktemp -d "$STATE_DIR/efa.XXXXXX")
  run curl -fsSL --retry 3 -o "$work/installer.tar.gz" "$efa_url"
  run curl -fsSL --retry 3 -o "$work/installer.tar.gz.sig" "$efa_url.sig"
  run curl -fsSL --retry 3 -o "$work/installer.key" "${efa_url%/*}/aws-efa-installer.key"
  mkdir -m 0700 "$work/gnupg"
  run gpg --batch --homedir "$work/gnupg" --import "$work/installer.key"
  if ! run gpg --batch --homedir "$work/gnupg" --verify "$work/installer.tar.gz.sig" \
    "$work/installer.tar.gz"; then
    log "efa: the installer's signature does not verify; not running it"
    return 1
  fi
  run tar -xzf "$work/installer.tar.gz" -C "$work"
  (cd "$work/aws-efa-installer" && run bash ./efa_installer.sh --yes)
  rm -rf "$work"
}

install_python_env() {
  run "$NEURON_ENV" install --torch "$torch" --release "$release" --venv "$ROOT$venv" --yes --quiet
}

validate() {
  local code=0 status=error stamp
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  log "validate: neuron-env doctor --level $level"
  run "$NEURON_ENV" doctor --release "$release" --torch "$torch" --level "$level" \
    --python "$ROOT$venv/bin/python" --format json --output "$REPORT.tmp" || code=$?
  if [[ -s $REPORT.tmp ]]; then
    mv "$REPORT.tmp" "$REPORT"
    cp "$REPORT" "$LOG_DIR/doctor-$stamp.json"
    # The envelope's top-level "status" (indented once; the findings' are deeper).
    status=$(sed -n 's/^  "status": "\([a-z]*\)",\{0,1\}$/\1/p' "$REPORT" | head -n 1)
  fi
  [[ $status =~ ^(ok|warn|fail|error)$ && $code =~ ^[01]$ ]] || status=error
  validated=yes
  publish "$status"
  log "validate: $status (neuron-env doctor exit $code; report ${REPORT#"$ROOT"})"
  ((code == 0))
}

# publish STATUS: the marker files and the instance tag.
publish() {
  printf '%s\n' "$1" >"$STATUS_FILE.tmp"
  mv "$STATUS_FILE.tmp" "$STATUS_FILE"
  if [[ $1 == ok || $1 == warn ]]; then : >"$READY_FILE"; else rm -f "$READY_FILE"; fi
  if [[ $tag == yes ]]; then tag_instance "$1"; fi
}

imds_get() {
  curl -fsS --max-time 2 -H "X-aws-ec2-metadata-token: $1" "${IMDS%/}/latest/meta-data/$2"
}

tag_instance() {
  local token instance region
  if ! command -v aws >/dev/null 2>&1; then
    log "tag: the aws CLI is not installed; $STATUS_TAG not published"
    return 0
  fi
  if ! token=$(curl -fsS --max-time 2 -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 300' \
    "${IMDS%/}/latest/api/token" 2>>"$LOG"); then
    log "tag: instance metadata (IMDSv2) not reachable; $STATUS_TAG not published"
    return 0
  fi
  if ! instance=$(imds_get "$token" instance-id) ||
    ! region=$(imds_get "$token" placement/region); then
    log "tag: instance metadata incomplete; $STATUS_TAG not published"
    return 0
  fi
  if run aws --region "$region" ec2 create-tags --resources "$instance" \
    --tags "Key=$STATUS_TAG,Value=$1"; then
    log "tag: $STATUS_TAG=$1 on $instance"
  else
    log "tag: not permitted or failed; the instance profile needs ec2:CreateTags" \
      "('neuron-env launch-template policy --for instance')"
  fi
}

# An AMI must not carry the build host's verdict: keep the report, drop the markers.
forget_build_results() {
  mv "$REPORT" "$LOG_DIR/image-build-doctor.json"
  rm -f "$STATUS_FILE" "$READY_FILE" "$LOG_DIR"/doctor-*.json
  log "image build: validation results kept in ${LOG_DIR#"$ROOT"}/image-build-doctor.json"
}

on_exit() {
  local code=$?
  if ((code != 0)) && [[ $validated == no ]]; then
    log "failed (exit $code) before validation; see ${LOG#"$ROOT"}"
    publish error
    tail -n 20 "$LOG" >&2 || true
  fi
}

main() {
  parse_args "$@"
  if [[ -z $ROOT && $EUID -ne 0 ]]; then die "run as root"; fi
  mkdir -p "$LOG_DIR" "$STATE_DIR/stages"
  chmod 0755 "$LOG_DIR" "$STATE_DIR"
  exec 9>"$STATE_DIR/bootstrap.lock"
  flock -n 9 || die "another neuron-env-bootstrap is running"
  trap on_exit EXIT
  [[ $image_build == no ]] || tag=no
  log "start: Neuron $release, PyTorch $torch, venv $venv, doctor level $level"
  printf 'running\n' >"$STATUS_FILE"
  rm -f "$READY_FILE"
  stage prerequisites "python3-venv ca-certificates curl gnupg" install_prerequisites
  stage tool "$source${sha256:+ sha256:$sha256}${spec:+ $spec}" install_tool
  if wanted "$system_mode" system "$ROOT/opt/aws/neuron/bin/neuron-ls"; then
    stage system "$release $torch" install_system
  fi
  if wanted "$efa_mode" efa "$ROOT/opt/amazon/efa"; then
    stage efa "$efa_url" install_efa
  fi
  if wanted "$python_mode" python-env "$ROOT$venv/bin/python"; then
    stage python-env "$release $torch $venv" install_python_env
  fi
  local code=0
  validate || code=$?
  if [[ $image_build == yes ]]; then forget_build_results; fi
  return "$code" # not exit: after an exit here shellcheck 0.11 sees the stages as unused (SC2329)
}

main "$@"
