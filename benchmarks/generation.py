"""Benchmark of generation overhead per call.

The fake model server (:mod:`regua.llm.testing`) answers every request at once with a fenced
SVG. In the same run the benchmark times, per call:

* the bare ``httpx`` round trip (one POST of the same body on a kept-alive client), in wall time
  and in the calling thread's CPU time;
* the model client's call (``regua.llm.client.call_model`` with the OpenAI provider: body,
  headers, limiter slot, retry wrapper, reply parsing, redaction), in wall and CPU time;
* ``ctx.submit`` of the same reply (the normal submit path, for reference);
* ``generate_runs`` end to end, one call at a time (``REGUA_GENERATION_CONCURRENCY=1``): the
  call plus storing the reply as a run with its generation record on SQLite (no executor, so
  nothing is rendered or judged);

and prints the medians, p95s and each one's ratio to the bare round trip.

    .venv/bin/python benchmarks/generation.py [--n 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from regua.llm.client import RetryPolicy, call_model  # noqa: E402
from regua.llm.limits import limiter_for  # noqa: E402
from regua.llm.redact import redactor_for  # noqa: E402
from regua.llm.testing import Reply, Request, serving  # noqa: E402
from regua.settings import Settings  # noqa: E402
from service.context import ServiceContext  # noqa: E402
from service.generation.request import GenerationParams  # noqa: E402
from service.generation.runner import generate_runs  # noqa: E402
from service.pipeline.submit import Submission  # noqa: E402

TASK = "pelican-bicycle-structured@1"
SVG = (REPO / "samples/outputs/structured-good.svg").read_text()
ANSWER = Reply(f"```svg\n{SVG}```", input_tokens=1200, output_tokens=900)


def answer(request: Request) -> Reply:
    """Every request gets the same fenced SVG."""
    del request
    return ANSWER


def _stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


CPU: dict[str, list[float]] = {}


def _time(n: int, fn: Any, cpu: str | None = None) -> list[float]:
    """Wall ms of ``n`` calls; with ``cpu``, also this thread's CPU ms per call under that name.

    Thread CPU is the client's own work: unlike wall time, it hardly moves with the machine's load.
    """
    out = []
    for _ in range(n):
        t0, c0 = time.perf_counter(), time.thread_time()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
        if cpu is not None:
            CPU.setdefault(cpu, []).append((time.thread_time() - c0) * 1000)
    return out


def main() -> None:
    """Run the measurements and print them with their ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="calls per measurement")
    args = parser.parse_args()
    with serving(answer) as server, tempfile.TemporaryDirectory() as tmp:
        base = f"{server.url}/v1"
        params = GenerationParams(api="openai", model="m", base_url=base, timeout_s=30)
        settings = Settings(data_dir=Path(tmp), generation_concurrency=1)
        ctx = ServiceContext.open(settings)
        prompt = ctx.registry.get(TASK).prompt
        body = {"model": "m", "messages": [{"role": "user", "content": prompt}]}
        call = params.model_call(prompt, 1, None)
        policy, limiter = RetryPolicy.from_settings(settings), limiter_for(settings)
        redact = redactor_for(settings)
        bare: list[float] = []
        provided: list[float] = []
        with httpx.Client() as http:
            _time(20, lambda: http.post(f"{base}/chat/completions", json=body))  # warm up
            _time(20, lambda: call_model(call, policy, limiter=limiter, redact=redact))
            for _ in range(args.n):  # interleaved, so both see the same machine
                bare += _time(1, lambda: http.post(f"{base}/chat/completions", json=body), "bare")
                provided += _time(
                    1, lambda: call_model(call, policy, limiter=limiter, redact=redact), "call"
                )
        reply = Submission(TASK, "m", f"```svg\n{SVG}```")
        submit_ms = statistics.mean(_time(args.n, lambda: ctx.submit([reply], None)))
        t0 = time.perf_counter()
        ids = generate_runs(ctx, TASK, params, args.n, token_id=None)
        stored_ms = (time.perf_counter() - t0) * 1000 / len(ids)
        ctx.close()
    bare_p50, bare_p95 = _stats(bare)
    call_p50, call_p95 = _stats(provided)
    print(f"calls per measurement: {args.n} (one at a time, loopback server)")
    print(f"bare httpx round trip      p50 {bare_p50:7.3f} ms  p95 {bare_p95:7.3f} ms")
    print(
        f"model client call          p50 {call_p50:7.3f} ms  p95 {call_p95:7.3f} ms  "
        f"ratio p50 {call_p50 / bare_p50:5.2f}x  overhead {call_p50 - bare_p50:6.3f} ms"
    )
    cpu_bare, cpu_call = statistics.median(CPU["bare"]), statistics.median(CPU["call"])
    print(
        f"client CPU per call        bare {cpu_bare:6.3f} ms  model call {cpu_call:6.3f} ms  "
        f"ratio {cpu_call / cpu_bare:5.2f}x  overhead {cpu_call - cpu_bare:6.3f} ms"
    )
    print(f"submit alone (reference)   mean {submit_ms:6.3f} ms per run (the normal submit path)")
    print(
        f"generate_runs + store run  mean {stored_ms:6.3f} ms per call  "
        f"ratio {stored_ms / bare_p50:5.2f}x  overhead {stored_ms - bare_p50:6.3f} ms"
    )


if __name__ == "__main__":
    main()
