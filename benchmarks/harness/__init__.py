"""What every benchmark under benchmarks/ does the same way, so each script holds only its scenario.

- `callgrind`: counting instructions (valgrind's client requests, a worker run under callgrind);
- `workers`: fresh worker processes and their one JSON line, clean environments, tests/'s helpers;
- `window`: the measured window (a settled heap, the counts started and dumped around the calls);
- `machine`: the line naming what the numbers were measured on;
- `floor`: telemetry written by hand with plain OpenTelemetry code, the floors' building blocks;
- `telemetry`: in-memory providers and reading back what a metric reader holds;
- `cli`: the argument patterns the scripts share; `markers`, `svg`, `docs`: the written outputs.

The package imports nothing from mcp at module level: mcp 1.x's benchmark (overhead1.py) uses it too.
"""
