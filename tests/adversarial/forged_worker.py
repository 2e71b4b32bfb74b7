"""A hostile stand-in for the self-test / evaluate worker, run as the target ``--python``.

neuron-env starts ``PYTHON -I WORKER_DIR`` and reads JSON lines; this script ignores its arguments,
reads the request on stdin and misbehaves as ``$FORGED_WORKER`` says:

* ``chatty-hang``   — hello, start the first case, then a garbage line every 0.5 s, forever;
* ``chatty-import`` — a garbage line every 0.5 s, never a hello;
* ``done-early``    — hello, then ``done`` without a single result;
* ``flood``         — hello, then bytes without a newline, forever;
* ``stages-only``   — evaluate: load, eager and compile pass, then ``done``, shapes left out;
* ``quit``          — hello, then exit 0 without a result or ``done``;
* ``abort``         — hello, start the first case, then abort (SIGABRT), stderr saying otherwise;
* ``stderr-flood``  — hello, start the first case, then 1 MiB on stderr every 0.1 s, forever;
* ``hang``          — hello, start, a sleeping grandchild, both pids in ``$FORGED_PIDS``, forever.

``$FORGED_PIDS`` (when set) receives ``WORKER_PID GRANDCHILD_PID`` once the worker is hung, so a
test knows when to send its signal and which processes must be gone afterwards.
"""

import json
import os
import subprocess
import sys
import time
from typing import Any

MODE = os.environ.get("FORGED_WORKER", "hang")


def emit(event: str, **fields: object) -> None:
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


def hello(request: dict[str, Any]) -> None:
    device = request.get("device", "neuron")
    info = {
        "device": device,
        "type": device.split(":")[0],
        "available": True,
        "count": 2,
        "python": "3.11.0",
        "executable": sys.executable,
        "torch": "2.13.0",
    }
    emit("hello", info=info)


def first_case(request: dict[str, Any]) -> str:
    return str((request.get("variants") or ["load"])[0])


def forever(action: object = None) -> None:
    while True:
        if callable(action):
            action()
        time.sleep(0.5)


def garbage() -> None:
    sys.stdout.write("not an event, but a line\n")
    sys.stdout.flush()


def announce_hung() -> None:
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    target = os.environ.get("FORGED_PIDS")
    if target:
        with open(target + ".tmp", "w") as handle:
            handle.write(f"{os.getpid()} {sleeper.pid}")
        os.replace(target + ".tmp", target)


def main() -> None:
    request = json.loads(sys.stdin.read() or "{}")
    if not request:  # not started as a worker (doctor's Python probe): no Python here
        sys.exit("forged-python: not an interpreter")
    if MODE == "chatty-import":
        forever(garbage)
    hello(request)
    if MODE == "done-early":
        emit("done")
        return
    if MODE == "quit":
        return
    if MODE == "stages-only":
        emit("start", name="load")
        emit("model", name="Forged")
        for stage in ["eager", "compile"] if request.get("compile") else ["eager"]:
            emit("start", name=stage)
            emit("result", name=stage, status="pass")
        emit("done")
        return
    if MODE == "flood":
        while True:
            sys.stdout.write("x" * 65536)
            sys.stdout.flush()
    emit("start", name=first_case(request))
    if MODE == "chatty-hang":
        forever(garbage)
    if MODE == "stderr-flood":
        forever_fast = "E" * (1 << 20)
        while True:
            sys.stderr.write(forever_fast)
            sys.stderr.flush()
            time.sleep(0.1)
    if MODE == "abort":
        sys.stderr.write("INFO: all is well, nothing to see here\n")
        sys.stderr.flush()
        os.abort()
    announce_hung()
    forever()


if __name__ == "__main__":
    main()
