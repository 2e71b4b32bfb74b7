#!/bin/bash
# Stand-in for the EFA installer: records its call and leaves what the real one installs.
printf 'efa_installer.sh %s\n' "$*" >>"$STUB_LOG"
mkdir -p "$NEURON_ENV_ROOT/opt/amazon/efa/bin"
