#!/usr/bin/python3
"""API latency of `trench serve` under 100 concurrent report submissions.

A load generator on loopback posts bug reports (free text with a small
inline HLO module) from 100 threads at once, and measures each request's
latency, twice, side by side against the same daemon:

  idle:    the daemon has nothing else to do (no commit watched yet);
  fuzzing: a commit has landed, and the daemon builds and fuzzes it (real
           hlo-fuzz campaigns of the real target binaries, `fuzz.jobs`
           workers) while the load runs; the reports it takes also queue
           reproduction jobs.

It prints p50/p99/max per phase and the ratio fuzzing/idle. The target
repository's "build" is a script that points at this checkout's build/
binaries (the daemon's builder and sandbox still run it), so the benchmark
measures the API, not the compiler's build.

Usage: /usr/bin/python3 bench/api_latency.py [--build build] [--clients 100]
       [--requests 10]
"""
import argparse
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

BUILD_SH = r"""#!/bin/sh
set -e
mkdir -p "$TRENCH_BUILD_DIR"
for t in hloc tpusim hlo-run; do
  printf '#!/bin/sh\nexec "%s/%s" "$@"\n' "$REAL_BIN" "$t" > "$TRENCH_BUILD_DIR/$t"
  chmod +x "$TRENCH_BUILD_DIR/$t"
done
"""

REPORT_HLO = """HloModule report
ENTRY main {
  p0 = f32[8,128] parameter(0)
  p1 = f32[8,128] parameter(1)
  ROOT s = f32[8,128] add(p0, p1)
}
"""


def git(repo, *args):
    subprocess.run(["git", "-C", repo, *args], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_repo(root):
    repo = os.path.join(root, "repo")
    os.makedirs(repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "bench@localhost")
    git(repo, "config", "user.name", "bench")
    with open(os.path.join(repo, "build.sh"), "w") as f:
        f.write(BUILD_SH)
    os.chmod(os.path.join(repo, "build.sh"), 0o755)
    git(repo, "add", "build.sh")
    git(repo, "commit", "-q", "-m", "base")
    return repo


def land(repo, n):
    with open(os.path.join(repo, "notes.txt"), "a") as f:
        f.write(f"change {n}\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-q", "-m", f"change {n}")


def start_daemon(root, repo, build, token, settings):
    """Starts `trench serve` on `repo` with var/ under `root`, the config's
    defaults for a benchmark updated by `settings`; returns (process, API
    port) once it listens."""
    config = {
        "var_dir": os.path.join(root, "var"), "repo": repo,
        "tools_dir": build,
        "build_command": f"REAL_BIN='{build}' sh ./build.sh",
        "http": {"port": 0, "token_env": "BENCH_TOKEN"},
    }
    config.update(settings)
    cfg = os.path.join(root, "config.json")
    with open(cfg, "w") as f:
        json.dump(config, f)
    env = dict(os.environ, BENCH_TOKEN=token)
    log = open(os.path.join(root, "daemon.log"), "w")
    daemon = subprocess.Popen([os.path.join(build, "trench"), "serve",
                               "--config", cfg], env=env, stdout=log,
                              stderr=log)
    info_path = os.path.join(root, "var", "daemon.json")
    for _ in range(300):
        if os.path.exists(info_path):
            break
        time.sleep(0.1)
    return daemon, json.load(open(info_path))["port"]


def percentile(values, p):
    values = sorted(values)
    k = min(len(values) - 1, max(0, int(round(p / 100 * (len(values) - 1)))))
    return values[k]


def load(port, token, clients, requests, tag):
    latencies, errors = [], []
    lock = threading.Lock()
    start_gate = threading.Barrier(clients)

    def client(i):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        start_gate.wait()
        for r in range(requests):
            body = json.dumps({
                "title": f"{tag} report {i}.{r}",
                "text": f"Wrong sums on TPU ({tag} client {i}, request {r})",
                "hlo": REPORT_HLO,
            })
            t0 = time.perf_counter()
            try:
                conn.request("POST", "/api/v1/reports", body,
                             {"Authorization": "Bearer " + token,
                              "Content-Type": "application/json"})
                resp = conn.getresponse()
                resp.read()
                ok = resp.status == 201
            except Exception as e:  # noqa: BLE001 - counted and shown
                ok = False
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                with lock:
                    errors.append(str(e))
            dt = time.perf_counter() - t0
            with lock:
                latencies.append(dt)
                if not ok and not errors:
                    errors.append("HTTP status not 201")
        conn.close()

    threads = [threading.Thread(target=client, args=(i,))
               for i in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    return latencies, errors, wall


def metrics(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics") as r:
        return r.read().decode()


def jobs_in(text, state):
    """The jobs in `state`, summed over the kinds (trench_jobs{kind,state})."""
    return sum(float(l.split()[-1]) for l in text.splitlines()
               if l.startswith("trench_jobs{")
               and f'state="{state}"' in l.split("}")[0])


def leased_jobs(port):
    return jobs_in(metrics(port), "leased")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--clients", type=int, default=100)
    ap.add_argument("--requests", type=int, default=10)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    root = tempfile.mkdtemp(prefix="trench-api-bench-")
    os.chmod(root, 0o755)
    token = "bench-token"
    daemon = None
    try:
        repo = make_repo(root)
        # No continuous fuzzing: the idle phase must be idle.
        daemon, port = start_daemon(
            root, repo, build, token,
            {"poll_seconds": 1,
             "fuzz": {"budget_seconds": 60, "jobs": 2, "continuous": False},
             "log": {"format": "json"}})
        # The base commit is built and fuzzed first: wait until that fuzz
        # campaign ends, so that the idle phase is idle.
        while True:
            m = metrics(port)
            if jobs_in(m, "done") >= 3 and jobs_in(m, "leased") == 0:
                break
            time.sleep(1)
        results = {}
        results["idle"] = load(port, token, args.clients, args.requests,
                               "idle")
        land(repo, 1)
        while leased_jobs(port) < 1:
            time.sleep(0.5)
        time.sleep(3)  # The fuzz campaign's workers are up.
        fuzzing_during = leased_jobs(port)
        results["fuzzing"] = load(port, token, args.clients, args.requests,
                                  "fuzzing")
        print(f"{args.clients} concurrent clients x {args.requests} reports "
              f"each (POST /api/v1/reports, 127.0.0.1)")
        print(f"{'phase':<10}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}"
              f"{'req/s':>9}{'errors':>8}")
        p50s = {}
        for phase, (lat, errors, wall) in results.items():
            p50, p99 = percentile(lat, 50) * 1e3, percentile(lat, 99) * 1e3
            p50s[phase] = (p50, p99)
            print(f"{phase:<10}{p50:>9.1f}{p99:>9.1f}{max(lat) * 1e3:>9.1f}"
                  f"{len(lat) / wall:>9.0f}{len(errors):>8}")
            if errors:
                print("  first error:", errors[0])
        print(f"jobs leased while fuzzing: {fuzzing_during:.0f}")
        print(f"ratio fuzzing/idle: p50 {p50s['fuzzing'][0] / p50s['idle'][0]:.2f}"
              f", p99 {p50s['fuzzing'][1] / p50s['idle'][1]:.2f}")
    finally:
        if daemon:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(timeout=60)
            except subprocess.TimeoutExpired:
                daemon.kill()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
