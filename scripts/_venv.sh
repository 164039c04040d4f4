# Sourced by the scripts: create .venv if needed and install the package with its dev extras
# and the benchmark's pinned peer (so the test suite checks the benchmark's Sentry row too).
# Re-installs only when pyproject.toml changed since the last install.
VENV=${MCPOBS_VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
PY="$VENV/bin/python"
stamp="$VENV/.mcpobs-installed"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  venv_start=$SECONDS
  "$PY" -m pip install -q --upgrade pip >/dev/null
  # This checkout was once installed as `mcpobs`, the name of an unrelated project on PyPI;
  # a venv from then holds both distributions (and their entry points) until this removes it.
  if "$PY" -m pip show -q mcpobs >/dev/null 2>&1; then
    "$PY" -m pip uninstall -q -y mcpobs >/dev/null
  fi
  "$PY" -m pip install -q -e ".[dev,bench]"
  touch "$stamp"
  echo "scripts/_venv.sh: $VENV (Python $("$PY" -c 'import platform; print(platform.python_version())')) installed in $((SECONDS - venv_start)) s" >&2
fi
