"""The service's Prometheus metrics (``GET /metrics``): jobs, verification and decision latency.

One registry per app, so that several apps in one process (the tests) never share counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

__all__ = ["JOB_STATES", "Metrics"]

#: The job states ``citeverify_jobs`` counts.
JOB_STATES = ("waiting", "active", "completed", "failed")


class Metrics:
    """The metrics of one app: jobs by state, and the latency of verifications and decisions."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.jobs = Gauge(
            "citeverify_jobs", "Reference jobs by state", ["state"], registry=self.registry
        )
        self.latency = Histogram(
            "citeverify_verification_seconds",
            "Time to verify one reference, by outcome",
            ["state"],
            registry=self.registry,
            buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
        )
        self.decided = Counter(
            "citeverify_decisions",
            "Answers checked by the guard and the page, by source, policy pack and action "
            "(action 'unchecked': a stream passed through)",
            ["source", "policy", "action"],
            registry=self.registry,
        )
        self.decision_latency = Histogram(
            "citeverify_decision_seconds",
            "Time from request to decision (the upstream call included), by source",
            ["source"],
            registry=self.registry,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
        )
        # The labelled children, kept: .labels() validates and looks them up under a lock each
        # time, a measurable share of what a guard request costs the event loop. Bounded:
        # sources and actions are a few, policy names are the packs'.
        self._children: dict[tuple[str, str, str], tuple[Any, Any]] = {}

    def observe_job(self, state: str, seconds: float) -> None:
        """Count a job that ended in ``state`` after ``seconds`` (the job store's ``observe``)."""
        self.latency.labels(state).observe(seconds)

    def observe_decision(self, row: Mapping[str, Any]) -> None:
        """Count a logged decision (the decision log's ``observe``)."""
        labels = (str(row["source"]), str(row["policy"]), str(row["action"] or "unchecked"))
        child = self._children.get(labels)
        if child is None:
            if len(self._children) > 10_000:
                self._children.clear()
            child = self._children[labels] = (
                self.decided.labels(*labels),
                self.decision_latency.labels(labels[0]),
            )
        child[0].inc()
        child[1].observe(float(row["latency_ms"]) / 1000)

    def render(self, job_counts: Mapping[str, int]) -> bytes:
        """The Prometheus text of every metric, with the jobs counted now (``job_counts``)."""
        for state in JOB_STATES:
            self.jobs.labels(state).set(job_counts.get(state, 0))
        return generate_latest(self.registry)
