"""The Ray instance of a ``--engine ray`` run: connected before the pipeline, stopped after it.

:func:`connected` is the only place the engine calls ``ray.init``. Three cases:

- The caller is connected already (its own ``ray.init``): that instance, as it is, left running.
- ``RAY_ADDRESS`` is set: ``ray.init()`` connects to that cluster; ``ray.shutdown()`` afterwards
  disconnects and leaves the cluster running (it is not ours to stop).
- Otherwise a new local instance, started here and stopped here, whatever ends the run (the end,
  an error, SIGINT, SIGTERM, even a driver that dies): see :func:`_local_instance`.
"""

from __future__ import annotations

import inspect
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from citeverify_core.batch.ray_watchdog import Process, processes

#: Ray's hook for drivers started by ``uv run`` (on unless this variable says otherwise). Ray
#: reads the variable once, when it is imported.
UV_HOOK_VARIABLE = "RAY_ENABLE_UV_RUN_RUNTIME_ENV"

#: Ray's own start-up and progress messages: warnings and worse only, and the workers' output
#: stays in the instance's log files instead of being copied to the batch's stderr.
_QUIET: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}


@contextmanager
def connected(ray: Any) -> Iterator[None]:
    """The driver connected to Ray for the run; what the run started is stopped afterwards."""
    if ray.is_initialized():
        yield
        return
    if os.environ.get("RAY_ADDRESS"):
        # Ray's uv run hook applies as Ray is configured: on a cluster, workers that run the
        # driver's `uv run` may be wanted (docs/scale.md, "On a Ray cluster").
        options = dict(_QUIET)
        host = os.environ["RAY_ADDRESS"].removeprefix("ray://").rsplit(":", 1)[0]
        if host in {"127.0.0.1", "localhost"}:
            # A cluster on loopback: this driver is on loopback too. Left to itself, Ray (2.50)
            # takes the machine's own address for the node and looks for the cluster there.
            options["_node_ip_address"] = "127.0.0.1"
        ray.init(**options)
        try:
            yield
        finally:
            ray.shutdown()  # disconnects; the cluster goes on
        return
    with _local_instance(ray):
        yield


@contextmanager
def _local_instance(ray: Any) -> Iterator[None]:
    """A new local Ray instance for the run, none of whose processes outlives it.

    - ``address="local"``: a new instance, never a ``ray start`` cluster that happens to run on
      this machine (``ray.init()``'s default would join it, and it is not ours to stop).
    - Ray's ``uv run`` hook off (:func:`_uv_run_hook_off`), no dashboard, loopback only.
    - Stopped by ``ray.shutdown()`` in a ``finally`` (Ray turns SIGTERM into ``SystemExit``,
      SIGINT is ``KeyboardInterrupt``), and then by a watchdog process
      (:mod:`citeverify_core.batch.ray_watchdog`) that stops whatever process of the instance is
      left: those ``ray.init`` started and those below them, noted while the driver runs (an
      orphan no longer says which instance it was part of). The driver waits for it, so
      nothing of the instance outlives a run that ends normally; if the driver dies first, the
      watchdog still does it (within about ten seconds). None of the instance's processes keeps
      the batch's stdout or stderr: Ray sends theirs to its log files, and the watchdog's go to
      ``/dev/null``, so a caller that captures the output is not kept waiting.
    """
    watchdog = _start_watchdog()
    os.environ.setdefault("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")  # no GPU in this job
    before = _children()
    try:
        try:
            with _uv_run_hook_off(ray):
                ray.init(
                    address="local",
                    include_dashboard=False,
                    _node_ip_address="127.0.0.1",
                    **_QUIET,
                )
        finally:  # GCS, raylet, log monitor, Ray's reaper...: the watchdog notes what is below
            _tell_watchdog(watchdog, _children() - before)
        yield
    finally:
        try:
            _shutdown(ray)
        finally:
            _end_watchdog(watchdog)


def _children() -> set[Process]:
    """This process's running children."""
    me = os.getpid()
    return {process for process, parent in processes().items() if parent == me}


@contextmanager
def _uv_run_hook_off(ray: Any) -> Iterator[None]:
    """Ray's ``uv run`` hook off for one ``ray.init`` (unless :data:`UV_HOOK_VARIABLE` is set).

    A user who set the variable keeps that choice. Why off: the hook packages the working
    folder and starts every worker with the driver's ``uv run`` options, ``py_executable="uv
    run --frozen --python X python"``, in a copy of that folder without its ``.venv``: a new
    environment, synced without the extras this one was installed with. Under the README's
    ``python -m uv run --frozen citeverify batch ... --engine ray`` there is no ``ray`` in it:
    every worker dies at start-up, Ray starts another, and the job waits at ``ray::IDLE`` for
    ever (and a working folder that is not the project is packaged, input files included). The
    workers of a local instance run on this machine: this very interpreter, Ray's default, is
    the environment they need.

    Ray reads the variable into ``ray._private.ray_constants`` when it is imported: setting the
    variable after ``import ray`` changes nothing. Hence the constant itself is switched, for
    this call only (where a Ray has no such constant, nothing is switched).
    """
    constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
    if os.environ.get(UV_HOOK_VARIABLE) is not None or not hasattr(constants, UV_HOOK_VARIABLE):
        yield
        return
    saved = getattr(constants, UV_HOOK_VARIABLE)
    setattr(constants, UV_HOOK_VARIABLE, False)
    try:
        yield
    finally:
        setattr(constants, UV_HOOK_VARIABLE, saved)


def _start_watchdog() -> subprocess.Popen[bytes] | None:
    """The watchdog of a local instance (None without ``/proc``)."""
    if not os.path.isdir("/proc"):
        return None
    script = Path(__file__).with_name("ray_watchdog.py")
    return subprocess.Popen(
        [sys.executable, "-I", str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # Its own session: a Ctrl-C of the batch's process group, or Ray's reaper (which ends
        # that group when the driver dies), leaves it to do its work.
        start_new_session=True,
    )


def _tell_watchdog(watchdog: subprocess.Popen[bytes] | None, started: set[Process]) -> None:
    """Name the processes that ``ray.init`` started to the watchdog."""
    if watchdog is None or watchdog.stdin is None:
        return
    with suppress(OSError):  # a watchdog that failed to start: ray.shutdown alone
        watchdog.stdin.write(b"".join(b"%d %d\n" % process for process in started))
        watchdog.stdin.flush()


def _end_watchdog(watchdog: subprocess.Popen[bytes] | None) -> None:
    """Let the watchdog stop what is left of the instance, and wait for it."""
    if watchdog is None:
        return
    if watchdog.stdin is not None:
        with suppress(OSError):
            watchdog.stdin.close()
    try:
        watchdog.wait(timeout=60)
    except subprocess.TimeoutExpired:  # pragma: no cover - it gives up after about 12 s
        watchdog.kill()
        watchdog.wait()


def _shutdown(ray: Any) -> None:
    """``ray.shutdown()``, waiting for the processes it stops where Ray can."""
    if "wait_for_processes" in inspect.signature(ray.shutdown).parameters:
        ray.shutdown(wait_for_processes=True)
    else:
        ray.shutdown()
