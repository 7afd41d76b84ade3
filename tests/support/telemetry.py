"""A client's spans and metrics read back in memory: a tracer provider and a meter provider
of their own (opentelemetry-sdk; import this after ``pytest.importorskip``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from asyncsports import Client
from asyncsports.emulator import Emulator
from asyncsports.telemetry import instrument


class Telemetry:
    """A tracer provider and a meter provider of their own, read back in memory."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def client(self, emu: Emulator, **kw: Any) -> Client:
        """A client of ``emu`` traced into these providers."""
        client = emu.client(**kw)
        instrument(client, tracer_provider=self.tracer_provider, meter_provider=self.meter_provider)
        return client

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        """The finished spans (of ``name``, if given)."""
        got = list(self.exporter.get_finished_spans())
        return [s for s in got if name is None or s.name == name]

    def metrics(self) -> dict[str, list[Any]]:
        """Each metric's data points, by name."""
        out: dict[str, list[Any]] = {}
        data = self.reader.get_metrics_data()
        for rm in data.resource_metrics if data is not None else ():
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    out.setdefault(m.name, []).extend(m.data.data_points)
        return out

    def texts(self) -> list[str]:
        """Every name, attribute, event, status and metric attribute, as text."""
        out = []
        for span in self.spans():
            out += [span.name, span.status.description or ""]
            out += [f"{k}={v}" for k, v in (span.attributes or {}).items()]
            for event in span.events:
                out += [f"{k}={v}" for k, v in (event.attributes or {}).items()]
        for name, points in self.metrics().items():
            out += [f"{name} {p.attributes}" for p in points]
        return out


def telemetry() -> Iterator[Telemetry]:
    """The fixture's body: a Telemetry, its providers shut down after the test."""
    t = Telemetry()
    yield t
    t.tracer_provider.shutdown()
    t.meter_provider.shutdown()
