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
  "$PY" -m pip install -q --upgrade pip >/dev/null
  "$PY" -m pip install -q -e ".[dev,bench]"
  touch "$stamp"
fi
