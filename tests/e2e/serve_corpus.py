"""The server release of the corpus test (tests/corpus_release.py) over Streamable HTTP, instrumented by
`mcpobs.instrument()` alone: ``serve_corpus.py PORT``, with only standard OTEL_* variables set."""

import sys

import uvicorn
from corpus_release import release

import mcpobs

mcpobs.instrument()
uvicorn.run(release().streamable_http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
