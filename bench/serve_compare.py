#!/usr/bin/env python3
"""nexttok serve against llama-server, side by side on the same machine, GGUF and threads.

Each (model, concurrency) level starts one server at a time (never both), measures it with
`nexttok bench --url` (streamed completions, distinct token-id prompts, ignore_eos), polls its
/metrics meanwhile (latency of each scrape) and reads its peak RSS, then stops it; rounds alternate
A, B, A, B so drift on a shared machine hits both. `history` measures a chat's next turn after a
long history: cold (nothing cached) against warm (the history cached by an earlier turn).

  bench/serve_compare.py levels --llama-server /path/llama-server -m a.gguf -m b.gguf
  bench/serve_compare.py history --llama-server /path/llama-server -m a.gguf

The llama.cpp binary is yours to build; this script only runs it.
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def http(url, body=None, timeout=600):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.read()


class Server:
    """One server process: nexttok serve or llama-server, on 127.0.0.1:port."""

    def __init__(self, kind, binary, model, threads, np_, ctx, port, log, extra=()):
        self.kind, self.port = kind, port
        common = ["-m", model, "-t", str(threads), "-np", str(np_), "-c", str(ctx), "--host", "127.0.0.1",
                  "--port", str(port)]
        argv = [binary, "serve"] + common if kind == "nexttok" else [binary] + common + ["--metrics"]
        argv += list(extra)
        self.log_path = log
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(log, "w"))
        deadline = time.time() + 300
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{kind} exited early; see {log}")
            try:
                if http(self.url("/health"), timeout=2)[0] == 200:
                    return
            except Exception:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"{kind} not ready after 300 s; see {log}")

    def url(self, path=""):
        return f"http://127.0.0.1:{self.port}{path}"

    def peak_rss_bytes(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        return 0

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class MetricsPoller(threading.Thread):
    """Scrapes /metrics every `period` seconds; keeps each scrape's latency in ms."""

    def __init__(self, url, period=0.1):
        super().__init__(daemon=True)
        self.url, self.period, self.ms, self.stop_flag = url, period, [], threading.Event()

    def run(self):
        while not self.stop_flag.is_set():
            t = time.perf_counter()
            try:
                http(self.url, timeout=10)
                self.ms.append((time.perf_counter() - t) * 1000)
            except Exception:
                pass
            self.stop_flag.wait(self.period)


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    k = (len(xs) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


_next_port = [0]


def fresh_port(args):
    """A new port per server start: a just-stopped server's port may linger in TIME_WAIT."""
    _next_port[0] += 1
    return args.port + _next_port[0]


def run_level(args, kind, model, conc, port):
    binary = args.nexttok if kind == "nexttok" else args.llama_server
    log = f"/tmp/serve_compare_{kind}_{conc}.log"
    extra = args.nexttok_arg if kind == "nexttok" else args.llama_arg
    srv = Server(kind, binary, model, args.threads, conc, conc * args.ctx_per_request, port, log, extra)
    poll = MetricsPoller(srv.url("/metrics"))
    poll.start()
    try:
        out = subprocess.run([args.nexttok, "bench", "--url", srv.url(), "--concurrency", str(conc), "-p",
                              str(args.prompt), "-n", str(args.gen), "--requests", str(args.requests_per_client * conc),
                              "-o", "json"], capture_output=True, text=True, timeout=3600)
        if out.returncode != 0:
            raise RuntimeError(f"bench --url failed on {kind}: {out.stderr[-2000:]}")
        level = json.loads(out.stdout)["levels"][0]
    finally:
        poll.stop_flag.set()
        poll.join()
        rss = srv.peak_rss_bytes()
        srv.stop()
    kv = 0
    m = re.search(r"KV cache \S+ ([\d.]+) (MiB|GiB)", open(log).read())
    if m:
        kv = float(m.group(1)) * (1 << (20 if m.group(2) == "MiB" else 30))
    return {"level": level, "metrics_ms": poll.ms, "rss": rss, "kv_bytes": kv}


def summary(r):
    lv = r["level"]
    s = lv.get("summary", lv)
    return {
        "tok_s": s["output_tokens_per_s"],
        "ttft_p50": s["ttft_ms"]["p50"],
        "ttft_p99": s["ttft_ms"]["p99"],
        "itl_p50": s["itl_ms"]["p50"],
        "errors": s["errors"],
        "metrics_p99": pct(r["metrics_ms"], 99),
        "rss_mib": r["rss"] / 2**20,
        "kv_mib": r["kv_bytes"] / 2**20,
    }


def cmd_levels(args):
    rows = []
    for model in args.model:
        wbytes = os.path.getsize(model)
        for conc in args.concurrency:
            per = {"nexttok": [], "llama": []}
            for rnd in range(args.rounds):
                order = ["nexttok", "llama"] if rnd % 2 == 0 else ["llama", "nexttok"]
                for kind in order:
                    r = run_level(args, kind, model, conc, fresh_port(args))
                    per[kind].append(summary(r))
                    print(f"{os.path.basename(model)} c={conc} round {rnd + 1} {kind}: "
                          f"{per[kind][-1]}", file=sys.stderr, flush=True)
            n = {k: statistics.median(x[k] for x in per["nexttok"]) for k in per["nexttok"][0]}
            l = {k: statistics.median(x[k] for x in per["llama"]) for k in per["llama"][0]}
            ratios = [a["tok_s"] / b["tok_s"] for a, b in zip(per["nexttok"], per["llama"])]
            rows.append((os.path.basename(model), conc, n, l, statistics.median(ratios), wbytes))
    print("| model | c | nexttok tok/s | llama-server tok/s | ratio | TTFT p50 ms (n / l) | TTFT p99 ms (n / l) "
          "| ITL p50 ms (n / l) | /metrics p99 ms (n / l) | peak RSS / (weights + KV) n | errors (n / l) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for model, conc, n, l, ratio, wbytes in rows:
        budget = wbytes / 2**20 + n["kv_mib"]
        print(f"| {model} | {conc} | {n['tok_s']:.1f} | {l['tok_s']:.1f} | {ratio:.2f}x | "
              f"{n['ttft_p50']:.0f} / {l['ttft_p50']:.0f} | {n['ttft_p99']:.0f} / {l['ttft_p99']:.0f} | "
              f"{n['itl_p50']:.1f} / {l['itl_p50']:.1f} | {n['metrics_p99']:.1f} / {l['metrics_p99']:.1f} | "
              f"{n['rss_mib'] / budget:.3f} ({n['rss_mib']:.0f} / {budget:.0f} MiB) | {n['errors']:.0f} / {l['errors']:.0f} |")


def ttft_ms(url, body):
    """Time to the first streamed content of one request (ms) and its usage."""
    body = dict(body, stream=True, stream_options={"include_usage": True})
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    first, usage = None, None
    with urllib.request.urlopen(req, timeout=600) as r:
        for raw in r:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            ev = json.loads(line[6:])
            ch = ev.get("choices") or []
            if ch and first is None:
                c = ch[0]
                if c.get("text") or (c.get("delta") or {}).get("content"):
                    first = (time.perf_counter() - t0) * 1000
            if ev.get("usage"):
                usage = ev["usage"]
    return first, usage


def history_words(n_words, seed):
    words = ("river stone light garden winter market letter bridge window morning castle forest song "
             "harbor lantern meadow candle journey silver thunder").split()
    out, x = [], seed
    for _ in range(n_words):
        x = (x * 1103515245 + 12345) % (1 << 31)
        out.append(words[x % len(words)])
    return " ".join(out)


def cmd_history(args):
    for model in args.model:
        for kind in ["nexttok", "llama"]:
            binary = args.nexttok if kind == "nexttok" else args.llama_server
            srv = Server(kind, binary, model, args.threads, 1, 4096, fresh_port(args), f"/tmp/serve_compare_hist_{kind}.log")
            try:
                res = {}
                for endpoint in ["chat", "completions"]:
                    path = "/v1/chat/completions" if endpoint == "chat" else "/v1/completions"
                    base = {"max_tokens": 4, "temperature": 0, "ignore_eos": True}
                    q1 = "Please tell me more about the river and the stone in a few words now"
                    q2 = "What happened next with the lantern in the harbor that winter morning"
                    colds, warms = [], []
                    for rep in range(args.reps):  # each repetition its own history: its cold is cold
                        hist = history_words(args.history_words, (7 if endpoint == "chat" else 9) + 1000 * rep)
                        turn = lambda q: ({"messages": [{"role": "user", "content": hist},
                                                        {"role": "assistant", "content": "I see."},
                                                        {"role": "user", "content": q}]}
                                          if endpoint == "chat" else {"prompt": hist + "\n" + q})
                        cold, u1 = ttft_ms(srv.url(path), dict(base, **turn(q1)))
                        warm, u2 = ttft_ms(srv.url(path), dict(base, **turn(q2)))
                        colds.append(cold)
                        warms.append(warm)
                    cold, warm = statistics.median(colds), statistics.median(warms)
                    res[endpoint] = {"cold_ms": cold, "warm_ms": warm, "ratio": cold / warm,
                                     "cold_all": [round(x, 1) for x in colds], "warm_all": [round(x, 1) for x in warms],
                                     "prompt_tokens": u2 and u2.get("prompt_tokens"),
                                     "cached_tokens": u2 and (u2.get("prompt_tokens_details") or {}).get("cached_tokens")}
                print(json.dumps({"model": os.path.basename(model), "server": kind, **res}), flush=True)
            finally:
                srv.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["levels", "history"])
    ap.add_argument("--nexttok", default=os.path.join(ROOT, "build", "nexttok"))
    ap.add_argument("--llama-server", required=True)
    ap.add_argument("-m", "--model", action="append", required=True)
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("--concurrency", type=lambda s: [int(x) for x in s.split(",")], default=[1, 4, 16])
    ap.add_argument("-p", "--prompt", type=int, default=256)
    ap.add_argument("-n", "--gen", type=int, default=128)
    ap.add_argument("--requests-per-client", type=int, default=4)
    ap.add_argument("--ctx-per-request", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--history-words", type=int, default=1500)
    ap.add_argument("--reps", type=int, default=1, help="history: cold/warm pairs per endpoint, each with its own history")
    ap.add_argument("--port", type=int, default=18700)
    ap.add_argument("--nexttok-arg", action="append", default=[], help="extra argument for nexttok serve (repeat)")
    ap.add_argument("--llama-arg", action="append", default=[], help="extra argument for llama-server (repeat)")
    args = ap.parse_args()
    cmd_levels(args) if args.what == "levels" else cmd_history(args)


if __name__ == "__main__":
    main()
