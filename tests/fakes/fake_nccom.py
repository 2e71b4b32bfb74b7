"""A stand-in for Neuron's ``nccom-test`` (aws-neuronx-tools), for ``collectives --compare-nccom``.

The tests write it, behind a ``#!`` line for this interpreter, as ``nccom-test`` into a folder put
first on PATH. It takes the documented command line (``tools/neuron-sys-tools/nccom-test.rst``:
``-r -N -b -e -f -n -w -d --non-interactive --report-to-json-file`` and the op, ``allr``, ``allg``,
``redsct``, ``alltoall``...), prints the documented table and writes the documented JSON report.
Its busbw is ``size / 1 MiB`` GiB/s (1 MiB: 1.0), over a time of 100 us.

NCCOM_FAKE_CALLS names a file where each call's arguments are appended (one JSON line);
NCCOM_FAKE_FAULT makes it fail as a broken one would:

* ``fail``: the documented neuron-bench failure, exit 1;
* ``hang``: writes its pid to NCCOM_FAKE_PID, then never finishes;
* ``garbage``: prints no table (and an ESC sequence that would retitle a terminal), exit 0;
* ``table``: the table only, no JSON report (an nccom-test that cannot write one).
"""

import argparse
import json
import os
import sys
import threading

OPS = ("all_reduce", "allr", "all_gather", "allg", "reduce_scatter", "redsct", "sendrecv",
       "alltoall", "alltoallv", "permute")  # fmt: skip
WIDTH = {"uint8": 1, "int8": 1, "fp8": 1, "uint16": 2, "int16": 2, "fp16": 2, "bf16": 2,
         "uint32": 4, "int32": 4, "fp32": 4}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(prog="nccom-test")
    parser.add_argument("op", choices=OPS)
    parser.add_argument("-r", "--nworkers", type=int, required=True)
    parser.add_argument("-N", "--nnodes", type=int, default=1)
    parser.add_argument("-b", "--minbytes", type=int, default=32 << 20)
    parser.add_argument("-e", "--maxbytes", type=int, default=32 << 20)
    parser.add_argument("-f", "--stepfactor", type=int, required=True)
    parser.add_argument("-n", "--iters", type=int, default=20)
    parser.add_argument("-w", "--warmup_iters", type=int, default=5)
    parser.add_argument("-d", "--datatype", choices=WIDTH, default="uint8")
    parser.add_argument("--non-interactive", action="store_true")
    parser.add_argument("--report-to-json-file")
    args = parser.parse_args()
    if os.environ.get("NCCOM_FAKE_CALLS"):
        with open(os.environ["NCCOM_FAKE_CALLS"], "a", encoding="utf-8") as calls:
            calls.write(json.dumps(sys.argv[1:]) + "\n")
    return run(args, os.environ.get("NCCOM_FAKE_FAULT", ""))


def run(args: argparse.Namespace, fault: str) -> int:
    header = "    size(B)    count(elems)    type    time:avg(us)    algbw(GB/s)    busbw(GB/s)"
    print(header, flush=True)
    if fault == "fail":
        print(
            f"{args.minbytes:>11}    Failure running neuron-bench - log file /tmp/nccom_test_x.log"
        )
        print("1 errors found - test failed", file=sys.stderr)
        return 1
    if fault == "hang":
        with open(os.environ["NCCOM_FAKE_PID"], "w", encoding="utf-8") as pid:
            pid.write(str(os.getpid()))
        threading.Event().wait()
    if fault == "garbage":
        print("\x1b]0;owned\x07Segmentation fault (core dumped) 12 34 x y z")
        return 0
    results = [result(args, size) for size in sizes(args)]
    for r in results:
        print(f"{r['size(B)']:>11} {r['count(elems)']:>15} {r['type']:>7} {r['time:avg(us)']:>15}"
              f" {r['algbw(GB/s)']:>14.2f} {r['busbw(GB/s)']:>14.2f}")  # fmt: skip
    average = sum(r["busbw(GB/s)"] for r in results) / len(results)
    print(f"Avg bus bandwidth:\t{average:.4f}GB/s")
    if args.report_to_json_file and fault != "table":
        with open(args.report_to_json_file, "w", encoding="utf-8") as report:
            json.dump({"results": results}, report)
    return 0


def sizes(args: argparse.Namespace) -> list[int]:
    found, size = [], args.minbytes
    while size <= args.maxbytes:
        found.append(size)
        size *= args.stepfactor
    return found


def result(args: argparse.Namespace, size: int) -> dict[str, object]:
    return {
        "size(B)": size, "count(elems)": size // WIDTH[args.datatype], "type": args.datatype,
        "algbw(GB/s)": size / 2**20, "busbw(GB/s)": size / 2**20, "time:avg(us)": 100.0,
    }  # fmt: skip


sys.exit(main())
