#!/usr/bin/env bash
# Refresh requirements.lock from pyproject.toml (its dependencies, the dev and inspect extras and
# the build backend), every file with its sha256: `make lock` keeps the pins that still fit and
# adds what is new; `bash scripts/lock.sh --upgrade` (or `--upgrade-package NAME`) moves to newer
# releases.
# Run the tests after a refresh, then commit the lock with the change that needed it.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/pip-compile ] || bash scripts/setup.sh
export CUSTOM_COMPILE_COMMAND="make lock"
.venv/bin/pip-compile --quiet --extra dev --extra inspect --all-build-deps --generate-hashes \
    --allow-unsafe --strip-extras --no-emit-index-url --no-emit-find-links \
    --output-file requirements.lock \
    "$@" pyproject.toml
echo "lock: requirements.lock written; run make test, then commit it"
