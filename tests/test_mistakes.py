"""The mistakes a newcomer makes with `instrument()` each get one line saying what is wrong and how to fix it.

A wrong type or an unknown option is refused (`ConfigurationError`); a setting that is
allowed but probably not meant (a second `instrument()` with other options, an excluded
method no MCP revision has) is used as given and warned about once.
"""

from __future__ import annotations

import inspect
import logging
import subprocess
import sys

import pytest
from opentelemetry.sdk.trace import TracerProvider

import mcpobs
from mcpobs._core import config
from mcpobs._core.methods import KNOWN_METHODS
from mcpobs.testing import capture


@pytest.fixture(autouse=True)
def fresh_warnings():
    config._warned.clear()  # "once" is per process: each test counts afresh
    yield
    mcpobs.uninstrument()


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "mcpobs" and r.levelno == logging.WARNING]


def test_a_second_instrument_with_other_options_warns_once_that_they_are_ignored(caplog):
    telemetry = capture()
    with caplog.at_level(logging.WARNING, logger="mcpobs"):
        mcpobs.instrument()  # the same options: nothing to say
        assert warnings_of(caplog) == []
        for _ in range(3):
            mcpobs.instrument(record_user=True, max_progress_spans=5)
    (line,) = warnings_of(caplog)
    assert "\n" not in line
    assert line.startswith("mcpobs: instrument() was already called, so these options are ignored: ")
    assert "max_progress_spans=5 (in effect: 200)" in line and "record_user=True (in effect: False)" in line
    assert line.endswith("Call mcpobs.uninstrument() first to instrument with other options.")
    assert mcpobs.MCPInstrumentor().in_effect.settings.record_user is False  # really ignored
    other = TracerProvider()
    with caplog.at_level(logging.WARNING, logger="mcpobs"):
        mcpobs.instrument(tracer_provider=other)
    assert f"tracer_provider={other!r} (in effect: {telemetry.tracer_provider!r})" in warnings_of(caplog)[-1]


def test_a_second_instrument_still_refuses_a_bad_option():
    capture()
    with pytest.raises(mcpobs.ConfigurationError, match=r"record_user='no'"):
        mcpobs.instrument(record_user="no")


@pytest.mark.parametrize("how", ["environment", "option"])
def test_a_misspelt_excluded_method_warns_once_with_the_near_miss_and_the_known_methods(how, caplog, monkeypatch):
    wrong = "tools/lsit, Tools/List, server/discover"
    if how == "environment":
        monkeypatch.setenv("OTEL_PYTHON_MCP_EXCLUDED_METHODS", wrong)
        options = {}
        source = "OTEL_PYTHON_MCP_EXCLUDED_METHODS"
    else:
        options = {"excluded_methods": [part.strip() for part in wrong.split(",")]}
        source = "excluded_methods"
    with caplog.at_level(logging.WARNING, logger="mcpobs"):
        for _ in range(2):
            mcpobs.uninstrument()
            telemetry = capture(**options)
    lines = warnings_of(caplog)
    assert len(lines) == 2, lines  # one per unknown name, not per instrument()
    for line, name in zip(sorted(lines), ("Tools/List", "tools/lsit"), strict=True):
        assert "\n" not in line
        assert line.startswith(f"mcpobs: {source} names {name!r}, which is not an MCP method, so it excludes nothing")
        assert "Did you mean 'tools/list'?" in line
        assert line.endswith(f"The MCP methods: {', '.join(sorted(KNOWN_METHODS))}.")
    assert "server/discover" in telemetry_settings(telemetry).excluded_methods  # the known one works


def telemetry_settings(_telemetry: object) -> config.Settings:
    in_effect = mcpobs.MCPInstrumentor().in_effect
    assert in_effect is not None
    return in_effect.settings


def test_known_excluded_methods_warn_nothing(caplog):
    with caplog.at_level(logging.WARNING, logger="mcpobs"):
        capture(excluded_methods=["tools/list", "server/discover"])
    assert warnings_of(caplog) == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"record_user": "no"}, "instrument(record_user='no'): expected True or False, not a str."),
        ({"record_session_id": 0}, "instrument(record_session_id=0): expected True or False, not a int."),
        ({"clients": "yes"}, "instrument(clients='yes'): expected True or False, not a str."),
        ({"capture_content": 1}, "instrument(capture_content=1): expected True or False."),
        ({"max_attribute_length": "4096"}, "instrument(max_attribute_length='4096'): expected a whole number"),
        ({"excluded_methods": b"tools/list"}, "instrument(excluded_methods=b'tools/list'): expected method names"),
        ({"excluded_methods": [1]}, "instrument(excluded_methods=[1]): expected method names"),
        ({"redact": "***"}, "instrument(redact='***'): expected a function"),
        ({"server_request_hook": 1}, "instrument(server_request_hook=1): expected a function"),
        ({"tracer_provider": "jaeger"}, "instrument(tracer_provider='jaeger'): expected an OpenTelemetry tracer"),
        ({"meter_provider": object}, "expected an OpenTelemetry meter provider (with get_meter())"),
    ],
)
def test_a_wrong_type_is_refused_with_what_was_expected(options, message):
    for call in (mcpobs.instrument, lambda **o: mcpobs.instrument_server(object(), **o)):
        with pytest.raises(mcpobs.ConfigurationError) as refused:
            call(**options)
        assert message in str(refused.value) and "\n" not in str(refused.value)
    assert mcpobs.MCPInstrumentor().in_effect is None  # nothing was instrumented


@pytest.mark.parametrize(
    ("option", "near"),
    [("recrd_user", "record_user"), ("exclude_methods", "excluded_methods"), ("tracer", "tracer_provider")],
)
def test_an_unknown_option_names_the_near_miss(option, near):
    with pytest.raises(mcpobs.ConfigurationError) as refused:
        mcpobs.instrument(**{option: True})
    message = str(refused.value)
    assert message.startswith(f"instrument() got unknown option(s) {option} (did you mean {near}?); the options are: ")
    assert "\n" not in message


def test_an_unknown_option_far_from_any_says_no_guess():
    with pytest.raises(mcpobs.ConfigurationError, match=r"unknown option\(s\) colour; the options are"):
        mcpobs.instrument(colour="blue")


def test_every_option_is_named_and_typed_in_the_signature():
    """IDEs and `help()` show each option by name, with the default `settings_from` applies."""
    from dataclasses import fields

    from mcpobs._core.config import InstrumentOptions, Settings, settings_from

    settings = {f.name for f in fields(Settings)}
    assert set(InstrumentOptions.__annotations__) == settings | {"tracer_provider", "meter_provider"}
    for function, leading in ((mcpobs.instrument, []), (mcpobs.instrument_server, ["server"])):
        parameters = inspect.signature(function).parameters
        assert list(parameters)[: len(leading)] == leading
        options = {n: p for n, p in parameters.items() if n not in leading}
        assert set(options) == set(InstrumentOptions.__annotations__)
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY and p.annotation for p in options.values())
        # the defaults shown are the settings an empty call gets (in an empty environment)
        shown = {n: p.default for n, p in options.items() if n not in ("tracer_provider", "meter_provider")}
        assert settings_from(shown, {}) == settings_from({}, {})


def test_a_type_checker_sees_a_misspelt_or_mistyped_option(tmp_path):
    """pyright, as a user's IDE runs it: the options are checked where `instrument()` is called."""
    user = tmp_path / "app.py"
    user.write_text(
        "import mcpobs\n"
        "mcpobs.instrument(record_user=True, max_attribute_length=100)\n"
        "mcpobs.instrument(recrd_user=True)\n"
        "mcpobs.instrument(max_attribute_length='100')\n"
        "mcpobs.instrument_server(object(), clients='no')\n"
    )
    checked = subprocess.run(
        [sys.executable, "-m", "pyright", "--pythonpath", sys.executable, str(user)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    errors = [line for line in checked.stdout.splitlines() if " - error: " in line]
    assert [line.split(":")[1] for line in errors] == ["3", "4", "5"], checked.stdout
    assert "recrd_user" in errors[0]
