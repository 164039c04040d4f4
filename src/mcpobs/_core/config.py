"""The options `instrument()` takes, checked once so a bad value fails with a clear message."""

from __future__ import annotations

import difflib
import inspect
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal, TypedDict, cast

from mcpobs import semconv
from mcpobs._core.guard import logger
from mcpobs._core.methods import KNOWN_METHODS
from mcpobs._core.text import for_log

_CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_CAPTURE_ON = frozenset({"true", "span_only", "span_and_event"})
_CAPTURE_OFF = frozenset({"", "false", "no_content", "event_only"})
_EXCLUDED_ENV = "OTEL_PYTHON_MCP_EXCLUDED_METHODS"
SHUTDOWN_TIMEOUT_ENV = "OTEL_PYTHON_MCP_SHUTDOWN_TIMEOUT"
TERMINATION_GRACE_ENV = "OTEL_PYTHON_MCP_TERMINATION_GRACE"
GONE_STOP_GRACE_ENV = "OTEL_PYTHON_MCP_STOP_GRACE"
"""No longer read (issue 50: it guessed when the calls in flight were abandoned); set, it costs one line."""
_SHAPES_ENV = "OTEL_PYTHON_MCP_RECORD_SHAPES"
_CALLER_CONTEXT_ENV = "OTEL_PYTHON_MCP_CALLER_CONTEXT"
CALLER_CONTEXTS = ("join", "trust", "link")
"""What a server makes of a caller's trace context (`_server/incoming.py`); the first is the default."""
DEFAULT_SHUTDOWN_TIMEOUT = 3.0
"""Seconds the flush at exit (and on SIGTERM) may take: inside the 4 s an MCP SDK host gives a
stdio server between closing its stdin and SIGKILL."""

Redactor = Callable[[Any], Any]
Hook = Callable[[Any, Any], None]
"""A user hook: called with the span and the request (or the result)."""
_HOOKS = ("server_request_hook", "server_response_hook", "client_request_hook", "client_response_hook")


if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import Span, TracerProvider

    SpanHook = Callable[[Span, Any], None]
else:
    SpanHook = Hook


class ConfigurationError(ValueError):
    """An `instrument()` option has a value mcpobs cannot use; the message says how to fix it."""


@dataclass(frozen=True, slots=True)
class Settings:
    max_attribute_length: int = semconv.DEFAULT_MAX_ATTRIBUTE_LENGTH
    max_progress_spans: int = semconv.DEFAULT_MAX_PROGRESS_SPANS
    capture_content: bool = False
    max_content_length: int = semconv.DEFAULT_MAX_CONTENT_LENGTH
    redact: Redactor | None = None
    record_user: bool = False
    record_session_id: bool = True
    """Record the transport's session id as `mcp.session.id`, as the conventions recommend."""
    session_id_key: bytes | None = field(default=None, repr=False)  # a secret: never in a repr
    """When set, `mcp.session.id` is a keyed hash of the id (HMAC-SHA256), not the id itself."""
    record_shapes: bool = False
    """Record each tools/call's argument and result shapes (value-free) for `mcpobs contract replay`.
    Off by default: about 47k instructions (2%) on a trivial in-memory call (docs/benchmarks.md)."""
    clients: bool = True
    """Instrument the SDK's `Client` too; False leaves outbound calls to the SDK."""
    send_verdict: bool = True
    """A server tells an instrumented client how it classified a failed tool call (outcome,
    boundary, error type; in the result's `_meta`). False for a server facing third-party clients."""
    excluded_methods: frozenset[str] = frozenset()
    """Methods that get no span (their metrics are still recorded), e.g. `server/discover`."""
    server_request_hook: Hook | None = None
    server_response_hook: Hook | None = None
    client_request_hook: Hook | None = None
    client_response_hook: Hook | None = None
    record_error_messages: bool = False
    """Record exception messages, JSON-RPC error messages, status descriptions from them and a peer's
    cancellation reason (through `redact`); off, an error is recorded by its type, code, boundary and
    traceback frames only."""
    raw_resource_uris: bool = False
    """Record `mcp.resource.uri` as sent (through `redact`); off, its userinfo, query values and fragment are
    `REDACTED`."""
    record_progress_messages: bool = False
    """Record a progress report's message (text a tool wrote: content, through `redact`) as
    `mcpobs.progress.message`; off, a report is its value, total and percentage."""
    send_baggage: bool = False
    """Send the host's W3C baggage to servers (and clients) in `_meta` and the HTTP headers; off, only
    `traceparent`/`tracestate` go."""
    shutdown_timeout: float | None = None
    """Seconds the flush at exit may take (providers mcpobs configures); None: the variable, else 3."""
    caller_context: str = "join"
    """A caller's `traceparent`: `join` its trace, the server's sampler deciding; `trust` its sampled flag,
    `tracestate` and baggage too (a trusted mesh); `link` it from a new trace (`_server/incoming.py`)."""
    termination_grace: float | None = None
    """Seconds from SIGTERM to the orchestrator's SIGKILL (Kubernetes' `terminationGracePeriodSeconds`):
    calls still running just before it are recorded `stopped` and exported; None: the variable, else
    no kill is assumed (`_core/stop.py`)."""
    omit_attributes: frozenset[str] = frozenset()
    """Names of `semconv.ATTRIBUTE_GROUPS` left off request spans: each is bytes on every exported call, and
    a team that reads them elsewhere (the handshake span, the metrics) need not pay for them per call."""


class Options(TypedDict, total=False):
    """The options of `instrument()` beside the providers, named and typed for IDEs and type checkers.

    One key per `Settings` field (`tests/test_mistakes.py` pins that they agree); what each
    means is on the field. A value is checked when `instrument()` runs (`settings_from`).
    """

    max_attribute_length: int
    max_progress_spans: int
    capture_content: bool | None
    """None (or left out): `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`, else False."""
    max_content_length: int
    redact: Redactor | None
    record_user: bool
    record_session_id: bool
    session_id_key: str | bytes | None
    record_shapes: bool | None
    """None (or left out): `OTEL_PYTHON_MCP_RECORD_SHAPES`, else False."""
    clients: bool
    send_verdict: bool
    excluded_methods: Iterable[str] | str | None
    """None (or left out): `OTEL_PYTHON_MCP_EXCLUDED_METHODS`; a string is comma-separated."""
    server_request_hook: SpanHook | None
    server_response_hook: SpanHook | None
    client_request_hook: SpanHook | None
    client_response_hook: SpanHook | None
    record_error_messages: bool
    raw_resource_uris: bool
    record_progress_messages: bool
    send_baggage: bool
    shutdown_timeout: float | None
    caller_context: Literal["join", "trust", "link"] | None
    """None (or left out): `OTEL_PYTHON_MCP_CALLER_CONTEXT`, else "join"."""
    termination_grace: float | None
    """None (or left out): `OTEL_PYTHON_MCP_TERMINATION_GRACE`, else no kill is assumed."""
    omit_attributes: Iterable[str] | str | None
    """None (or left out): `OTEL_PYTHON_MCP_OMIT_ATTRIBUTES`; a string is comma-separated."""


class InstrumentOptions(Options, total=False):
    """`Options` and where the telemetry goes: the global providers when left out or None."""

    tracer_provider: TracerProvider | None
    meter_provider: MeterProvider | None


_FROM_ENVIRONMENT = frozenset(
    {
        "capture_content",
        "record_shapes",
        "excluded_methods",
        "shutdown_timeout",
        "termination_grace",
        "caller_context",
        "omit_attributes",
    }
)
"""Options whose absence means "read the environment": None in the signature, not `Settings`' value."""


def signature(*leading: inspect.Parameter, providers: bool = True) -> inspect.Signature:
    """The keyword-only signature of a function taking `**options` (`help()`, notebooks, runtime IDEs).

    Built from `Settings`, so the names, order and defaults shown are those `settings_from` applies.
    """
    hints = (InstrumentOptions if providers else Options).__annotations__
    defaults = {
        f.name: None if f.name in _FROM_ENVIRONMENT or f.default is MISSING else f.default for f in fields(Settings)
    }
    names = [*(("tracer_provider", "meter_provider") if providers else ()), *defaults]
    keyword = inspect.Parameter.KEYWORD_ONLY
    # TypedDict keeps postponed annotations as ForwardRefs: shown as the text they were written as.
    shown = {n: getattr(hint, "__forward_arg__", hint) for n, hint in hints.items()}
    named = [inspect.Parameter(n, keyword, default=defaults.get(n), annotation=shown[n]) for n in names]
    return inspect.Signature([*leading, *named], return_annotation=None)


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(f"instrument({name}={value!r}): expected a whole number of at least 1.")
    return value


def _seconds(name: str, value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ConfigurationError(f"instrument({name}={value!r}): expected a number of seconds above 0, e.g. 3.")
    return float(value)


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ConfigurationError(f"instrument({name}={value!r}): expected True or False, not a {type(value).__name__}.")
    return value


def _key(value: object) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = value.encode()
    if not isinstance(value, bytes) or len(value) < 16:
        given = f"{len(value)} bytes" if isinstance(value, bytes) else f"a {type(value).__name__}"
        raise ConfigurationError(  # what it is, never the value: it is meant to be a secret
            f"instrument(session_id_key=...): expected a secret of at least 16 bytes (str or bytes), got {given}; "
            f"{semconv.MCP_SESSION_ID} is then recorded as its keyed hash."
        )
    return value


def _shapes_option(value: object, environ: Mapping[str, str]) -> bool:
    if value is not None:
        return _flag("record_shapes", value)
    raw = environ.get(_SHAPES_ENV, "").strip().lower()
    if raw in ("", "false"):
        return False
    if raw == "true":
        return True
    raise ConfigurationError(
        f"{_SHAPES_ENV}={raw!r} is not understood: use 'true' to record each tool call's argument and result "
        "shapes (docs/contract.md), or 'false' (the default)."
    )


def _caller_context(value: object, environ: Mapping[str, str]) -> str:
    shown = f"instrument(caller_context={value!r})"
    if value is None:
        value = environ.get(_CALLER_CONTEXT_ENV, "").strip().lower() or CALLER_CONTEXTS[0]
        shown = f"{_CALLER_CONTEXT_ENV}={for_log(repr(value))}"
    if value not in CALLER_CONTEXTS:
        raise ConfigurationError(
            f"{shown} is not understood: use 'join' (the default: the caller's trace, the server's sampler "
            "deciding), 'trust' (a trusted mesh: the caller's sampled flag, tracestate and baggage too) or 'link' "
            "(a new trace linked to the caller's)."
        )
    return cast(str, value)


def _capture_from_env(environ: Mapping[str, str]) -> bool:
    raw = environ.get(_CAPTURE_ENV, "").strip().lower()
    if raw in _CAPTURE_ON:
        return True
    if raw not in _CAPTURE_OFF:
        raise ConfigurationError(
            f"{_CAPTURE_ENV}={raw!r} is not understood: use 'true' (or SPAN_ONLY, SPAN_AND_EVENT) to "
            "record tool arguments and results, or 'false' (the default) to keep them out."
        )
    return False


def _excluded(value: object, environ: Mapping[str, str]) -> frozenset[str]:
    source = "excluded_methods"
    if value is None:
        value, source = environ.get(_EXCLUDED_ENV, ""), _EXCLUDED_ENV
    names: list[object] = [value]  # refused below unless it is a string or an iterable of them
    if isinstance(value, str):
        names = [part.strip() for part in value.split(",") if part.strip()]
    elif isinstance(value, Iterable) and not isinstance(value, bytes | Mapping):
        names = list(cast(Iterable[object], value))
    if not all(isinstance(name, str) for name in names):
        raise ConfigurationError(
            f"instrument(excluded_methods={value!r}): expected method names, e.g. ['server/discover'] or "
            "'server/discover,tools/list'."
        )
    methods = frozenset(cast(list[str], names))
    for method in sorted(methods - KNOWN_METHODS):
        _warn_once(("excluded", source, method), _unknown_method(method, source))
    return methods


def _omitted(value: object, environ: Mapping[str, str], record_shapes: bool) -> frozenset[str]:
    """The attribute groups to leave off request spans; an unknown name is refused (a typo would omit nothing)."""
    shown = f"instrument(omit_attributes={value!r})"
    if value is None:
        value = environ.get(semconv.OMIT_ATTRIBUTES_ENV, "")
        shown = f"{semconv.OMIT_ATTRIBUTES_ENV}={for_log(repr(value))}"
    names: list[object] = [value]
    if isinstance(value, str):
        names = [part.strip() for part in value.split(",") if part.strip()]
    elif isinstance(value, Iterable) and not isinstance(value, bytes | Mapping):
        names = list(cast(Iterable[object], value))
    groups = sorted(semconv.ATTRIBUTE_GROUPS)
    unknown = [name for name in names if name not in semconv.ATTRIBUTE_GROUPS]
    if unknown:
        raise ConfigurationError(
            f"{shown}: {', '.join(for_log(repr(n)) for n in unknown)} is not an attribute group; "
            f"name some of: {', '.join(groups)} (e.g. 'peer,contract')."
        )
    omitted = frozenset(cast(list[str], names))
    needed = sorted(omitted & {semconv.CONTRACT, semconv.PEER}) if record_shapes else []
    if needed:
        raise ConfigurationError(
            f"{shown} leaves out {' and '.join(repr(n) for n in needed)}, which record_shapes=True needs (the corpus "
            "is keyed on the schema fingerprint and split by client): keep them, or turn record_shapes off (and "
            f"{_SHAPES_ENV})."
        )
    return omitted


def _unknown_method(method: str, source: str) -> str:
    near = difflib.get_close_matches(method.lower(), sorted(KNOWN_METHODS), n=1, cutoff=0.6)
    guess = f" Did you mean {near[0]!r}?" if near else ""
    return (
        f"mcpobs: {source} names {for_log(repr(method))}, which is not an MCP method, so it excludes nothing unless a server "
        f"of yours registers it.{guess} The MCP methods: {', '.join(sorted(KNOWN_METHODS))}."
    )


_warned: set[tuple[str, ...]] = set()
_warned_lock = threading.Lock()


def _warn_once(key: tuple[str, ...], message: str) -> None:
    """Log `message` as a warning the first time `key` is seen in this process (values in it are the
    application's own, each shown through `text.for_log`)."""
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    logger.warning("%s", message)


def _provider(name: str, value: object, method: str) -> None:
    if value is not None and not callable(getattr(value, method, None)):
        raise ConfigurationError(
            f"instrument({name}={value!r}): expected an OpenTelemetry {name.replace('_', ' ')} (with {method}()), "
            "or None for the global one."
        )


def _unknown_option(name: str, known: Iterable[str]) -> str:
    near = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    near = near or [option for option in sorted(known) if option.startswith(name)][:1]  # tracer -> tracer_provider
    return f"{name} (did you mean {near[0]}?)" if near else name


def _hook(name: str, value: object) -> Hook | None:
    if value is not None and not callable(value):
        raise ConfigurationError(f"instrument({name}={value!r}): expected a function (span, request_or_result).")
    return value  # type: ignore[return-value]


def settings_from(kwargs: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> Settings:
    """Build `Settings` from `instrument()` keyword arguments, then the environment."""
    environ = os.environ if environ is None else environ
    known = set(Settings.__slots__) | {"tracer_provider", "meter_provider"}
    unknown = sorted(set(kwargs) - known)
    if unknown:
        named = ", ".join(_unknown_option(name, known) for name in unknown)
        raise ConfigurationError(
            f"instrument() got unknown option(s) {named}; the options are: {', '.join(sorted(known))}."
        )
    _provider("tracer_provider", kwargs.get("tracer_provider"), "get_tracer")
    _provider("meter_provider", kwargs.get("meter_provider"), "get_meter")
    capture = kwargs.get("capture_content")
    if capture is None:
        capture = _capture_from_env(environ)
    elif not isinstance(capture, bool):
        raise ConfigurationError(f"instrument(capture_content={capture!r}): expected True or False.")
    redact = kwargs.get("redact")
    if redact is not None and not callable(redact):
        raise ConfigurationError(
            f"instrument(redact={redact!r}): expected a function that takes what would be recorded (captured "
            "arguments or results, or a string: an error message, a resource URI, a progress message) and "
            "returns what may be recorded (None: nothing)."
        )
    record_shapes = _shapes_option(kwargs.get("record_shapes"), environ)
    return Settings(
        max_attribute_length=_positive_int(
            "max_attribute_length", kwargs.get("max_attribute_length", semconv.DEFAULT_MAX_ATTRIBUTE_LENGTH)
        ),
        max_progress_spans=_positive_int(
            "max_progress_spans", kwargs.get("max_progress_spans", semconv.DEFAULT_MAX_PROGRESS_SPANS)
        ),
        capture_content=capture,
        max_content_length=_positive_int(
            "max_content_length", kwargs.get("max_content_length", semconv.DEFAULT_MAX_CONTENT_LENGTH)
        ),
        redact=redact,
        record_user=_flag("record_user", kwargs.get("record_user", False)),
        record_session_id=_flag("record_session_id", kwargs.get("record_session_id", True)),
        session_id_key=_key(kwargs.get("session_id_key")),
        record_shapes=record_shapes,
        clients=_flag("clients", kwargs.get("clients", True)),
        record_error_messages=_flag("record_error_messages", kwargs.get("record_error_messages", False)),
        raw_resource_uris=_flag("raw_resource_uris", kwargs.get("raw_resource_uris", False)),
        record_progress_messages=_flag("record_progress_messages", kwargs.get("record_progress_messages", False)),
        send_baggage=_flag("send_baggage", kwargs.get("send_baggage", False)),
        send_verdict=_flag("send_verdict", kwargs.get("send_verdict", True)),
        excluded_methods=_excluded(kwargs.get("excluded_methods"), environ),
        shutdown_timeout=_seconds("shutdown_timeout", kwargs.get("shutdown_timeout")),
        caller_context=_caller_context(kwargs.get("caller_context"), environ),
        termination_grace=_seconds("termination_grace", kwargs.get("termination_grace")),
        omit_attributes=_omitted(kwargs.get("omit_attributes"), environ, record_shapes),
        **{name: _hook(name, kwargs.get(name)) for name in _HOOKS},
    )


@dataclass(frozen=True, slots=True)
class InEffect:
    """What an instrumentation was made with: its settings and the providers passed (None: the global ones)."""

    settings: Settings
    tracer_provider: Any = None
    meter_provider: Any = None


_SECRETS = frozenset({"session_id_key"})
"""Options whose values are secrets: a log line says they differ, never what they are."""
_SHOWN = 200
"""Characters of an option's value shown in a log line."""


def warn_if_ignored(in_effect: InEffect | None, options: Mapping[str, Any]) -> None:
    """`instrument()` called again: say once which of its options differ from those in effect, and are ignored."""
    if in_effect is None:
        return
    asked = settings_from(options)  # a bad option is refused here too
    changed = [
        f"{name} (another value than the one in effect; neither is shown)"
        if name in _SECRETS
        else f"{name}={for_log(repr(getattr(asked, name)), _SHOWN)} "
        f"(in effect: {for_log(repr(getattr(in_effect.settings, name)), _SHOWN)})"
        for name in Settings.__slots__
        if getattr(asked, name) != getattr(in_effect.settings, name)
    ]
    for name in ("tracer_provider", "meter_provider"):  # one left out asks for nothing in particular
        if options.get(name) is not None and options.get(name) is not getattr(in_effect, name):
            changed.append(f"{name}={options.get(name)!r} (in effect: {getattr(in_effect, name)!r})")
    if changed:
        _warn_once(
            ("again", *changed),
            f"mcpobs: instrument() was already called, so these options are ignored: {'; '.join(changed)}. "
            "Call mcpobs.uninstrument() first to instrument with other options.",
        )
