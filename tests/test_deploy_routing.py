"""The two-tier files for Docker users agree with the ones the tests run (deploy/compose.routing.yaml).

Docker is not on the test machines, so compose.routing.yaml cannot be started here; what it
hands each container is checked against what the configurations it mounts read, and its
images against the versions scripts/build-backends builds.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
COMPOSE = (DEPLOY / "compose.routing.yaml").read_text()


def reads(*files: str) -> set[str]:
    """The environment variables a collector configuration expands (`${env:NAME...}`)."""
    return {name for f in files for name in re.findall(r"\$\{env:(\w+)", (DEPLOY / f).read_text())}


def block(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


def test_the_router_is_given_exactly_what_routing_yaml_reads():
    router = block(COMPOSE, "\n  router:\n", "\n  sampler-1:")
    given = set(re.findall(r"^      (MCPOBS_\w+):", router, re.M))
    assert given == reads("routing.yaml")
    assert "./routing.yaml:/etc/mcpobs/routing.yaml:ro" in router
    assert '"--config", "/etc/mcpobs/routing.yaml"' in router


def test_the_samplers_are_given_what_jaeger_and_tail_sampling_read():
    samplers = block(COMPOSE, "x-sampler-env: &sampler-env\n", "\n\n")
    given = set(re.findall(r"^  (\w+):", samplers, re.M))
    assert given == reads("jaeger.yaml", "tail-sampling.yaml")
    for name in ("jaeger.yaml", "tail-sampling.yaml", "prometheus.yml", "canary-rules.yml"):
        assert f"./{name}:" in COMPOSE and (DEPLOY / name).exists()


def test_the_images_are_the_versions_scripts_build_backends_builds():
    manifest = (DEPLOY / "collector" / "builder.yaml").read_text()
    (contrib,) = set(re.findall(r"opentelemetry-collector-contrib/\S+ v([\d.]+)", manifest))
    assert f"image: otel/opentelemetry-collector-contrib:{contrib}\n" in COMPOSE
    single = (ROOT / "docker-compose.yml").read_text()
    for image in ("jaegertracing/jaeger", "prom/prometheus"):
        (tag,) = re.findall(rf"image: {image}:(\S+)", single)
        assert f"image: {image}:{tag}\n" in COMPOSE, image


def test_the_router_forwards_to_the_samplers_it_is_composed_with():
    samplers = re.findall(r"^  (sampler-\d+):$", COMPOSE, re.M)
    assert f'MCPOBS_SAMPLERS: "[{", ".join(f"{s}:4317" for s in samplers)}]"' in COMPOSE
    assert "JAEGER_OTLP_GRPC: 0.0.0.0:4317" in COMPOSE
    assert "routing_key: traceID" in (DEPLOY / "routing.yaml").read_text()
