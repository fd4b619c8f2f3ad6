#!/usr/bin/env bash
# Install what regua needs on a fresh Debian machine (run as root for the apt part):
# Debian's chromium and bubblewrap, fonts, and a virtual environment with the exact versions of
# requirements.lock.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need_apt+=(fonts-dejavu-core)
if [ ${#need_apt[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup: missing Debian packages: ${need_apt[*]} (run as root or install them)" >&2
        exit 1
    fi
    echo "setup: installing Debian packages: ${need_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}"
fi

PY=${PYTHON:-python3}
# the exact versions of requirements.lock (every file's sha256 checked), then regua itself
# (editable, built by the locked setuptools); refresh the lock with `make lock`
stamp=.venv/.installed-$(cat pyproject.toml requirements.lock | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ]; then
    [ -x .venv/bin/python ] || "$PY" -m venv .venv
    pip=(.venv/bin/python -m pip --quiet --disable-pip-version-check)
    # uv installs the lock several times faster than pip: it is bootstrapped with pip from the
    # lock's own pin (version and sha256), and pip does the whole work where uv cannot. Like pip,
    # it compiles the bytecode at install: with PYTHONDONTWRITEBYTECODE (set on these machines,
    # and always inside the sandbox) every process would otherwise compile what it imports
    uv_req=$(mktemp)
    awk '/^uv==/{p=1} p{print} p&&!/\\$/{exit}' requirements.lock >"$uv_req"
    if [ -s "$uv_req" ] && "${pip[@]}" install --require-hashes --no-deps -r "$uv_req" \
        && UV_PYTHON=.venv/bin/python .venv/bin/uv pip install --quiet --require-hashes \
            --no-deps --compile-bytecode -r requirements.lock \
        && UV_PYTHON=.venv/bin/python .venv/bin/uv pip install --quiet --no-deps \
            --no-build-isolation -e . --config-settings editable_mode=compat; then
        :
    else
        echo "setup: installing with pip (uv did not work here)" >&2
        "${pip[@]}" install --require-hashes --no-deps -r requirements.lock
        "${pip[@]}" install --no-deps --no-build-isolation -e . --config-settings editable_mode=compat
    fi
    rm -f "$uv_req"
    if ! "${pip[@]}" check >/dev/null; then
        "${pip[@]}" check >&2 || true
        echo "setup: requirements.lock no longer satisfies pyproject.toml; run \`make lock\`" >&2
        exit 1
    fi
    rm -f .venv/.installed-*
    touch "$stamp"
fi

# The static checks' optional compiled walk (checks/_walkc.pyx, C against the lxml of .venv):
# rebuilt when it is missing or older than its source or the last install. Without gcc and the
# Python headers regua still works (the Python walk, slower); as root they are installed.
so=checks/_walkc$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
if [ ! -f "$so" ] || [ checks/_walkc.pyx -nt "$so" ] || [ "$stamp" -nt "$so" ]; then
    pyinc=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
    compiler() { command -v gcc >/dev/null 2>&1 && [ -f "$pyinc/Python.h" ]; }
    if ! compiler && [ "$(id -u)" -eq 0 ]; then
        echo "setup: installing gcc and python3-dev (for the static checks' compiled walk)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            gcc python3-dev
    fi
    if compiler; then
        echo "setup: building the static checks' compiled walk ($so)"
        mkdir -p build/walkc
        .venv/bin/cython -3 --fast-fail -o build/walkc/_walkc.c checks/_walkc.pyx
        mapfile -t lxml_inc < <(.venv/bin/python -c \
            'import lxml; print("\n".join("-I" + p for p in lxml.get_include()))')
        gcc -shared -fPIC -O2 -I"$pyinc" "${lxml_inc[@]}" build/walkc/_walkc.c -o "$so.tmp"
        mv "$so.tmp" "$so"
    else
        echo "setup: no gcc or no $pyinc/Python.h: the static checks run without their" \
            "compiled walk (slower); install gcc and python3-dev (as root) and run setup again" >&2
    fi
fi
