#!/usr/bin/python3
"""Memory of `trench serve` with 100 server-sent-event clients open.

Starts a real daemon (a fresh target repository whose "build" only points
at this checkout's binaries, continuous fuzzing off), and reads its
resident memory (VmRSS, /proc/PID/status) side by side for:

  baseline:   no client connected;
  keep-alive: N idle keep-alive connections (each sent one GET /healthz),
              the peer: what any connection costs the server;
  streams:    N GET /api/v1/events/stream clients open at once;
  delivered:  after E reports are filed through the API, once every one of
              the N streams has received all E creation events.

It prints the RSS of each phase, the bytes per stream client, and the ratio
of a stream client's cost to a keep-alive connection's (lower is better;
1.0 means a stream costs no more than an idle connection).

Usage: /usr/bin/python3 bench/sse_memory.py [--build build] [--clients 100]
       [--events 20]
"""
import argparse
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from api_latency import make_repo  # noqa: E402  (the same target repo)


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def settled_rss(pid):
    """The median of a few readings, a moment apart."""
    readings = []
    for _ in range(5):
        time.sleep(0.2)
        readings.append(rss_bytes(pid))
    return sorted(readings)[2]


def open_keepalive(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n")
    buf = b""
    while b'"ok"' not in buf:
        chunk = s.recv(4096)
        if not chunk:
            raise RuntimeError("keep-alive connection closed")
        buf += chunk
    return s


class StreamClient:
    """One SSE client on a raw socket; counts the bug events it gets."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall(b"GET /api/v1/events/stream HTTP/1.1\r\n"
                          b"Host: bench\r\nAccept: text/event-stream\r\n\r\n")
        self.buf = b""
        while b": events after" not in self.buf:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise RuntimeError("stream closed before its preamble")
            self.buf += chunk
        if not self.buf.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(self.buf[:200].decode(errors="replace"))
        self.events = 0
        self.buf = self.buf[self.buf.index(b": events after"):]

    def read_events(self, want, deadline):
        self.sock.settimeout(1)
        while self.events < want and time.time() < deadline:
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                break
            self.buf += chunk
            self.events = self.buf.count(b"\nevent: bug\n")


def post_report(port, token, i):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("POST", "/api/v1/reports",
                 json.dumps({"title": f"sse bench {i}",
                             "text": f"report {i}"}),
                 {"Authorization": "Bearer " + token,
                  "Content-Type": "application/json"})
    r = conn.getresponse()
    r.read()
    conn.close()
    if r.status != 201:
        raise RuntimeError(f"report {i}: HTTP {r.status}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--clients", type=int, default=100)
    ap.add_argument("--events", type=int, default=20)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    root = tempfile.mkdtemp(prefix="trench-sse-bench-")
    os.chmod(root, 0o755)
    token = "bench-token"
    daemon = None
    try:
        repo = make_repo(root)
        config = {
            "var_dir": os.path.join(root, "var"), "repo": repo,
            "tools_dir": build,
            "build_command": f"REAL_BIN='{build}' sh ./build.sh",
            "fuzz": {"budget_seconds": 30, "jobs": 1, "continuous": False},
            "http": {"port": 0, "token_env": "BENCH_TOKEN"},
            "log": {"format": "json", "level": "warn"},
        }
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
        port = json.load(open(info_path))["port"]
        time.sleep(2)
        pid = daemon.pid
        base = settled_rss(pid)
        keep = [open_keepalive(port) for _ in range(args.clients)]
        with_keep = settled_rss(pid)
        for s in keep:
            s.close()
        time.sleep(1)
        after_keep = settled_rss(pid)
        streams = [StreamClient(port) for _ in range(args.clients)]
        with_streams = settled_rss(pid)
        for i in range(args.events):
            post_report(port, token, i)
        deadline = time.time() + 120
        threads = [threading.Thread(target=c.read_events,
                                    args=(args.events, deadline))
                   for c in streams]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        got = sorted(c.events for c in streams)
        delivered = settled_rss(pid)
        per_keep = (with_keep - base) / args.clients
        per_stream = (with_streams - after_keep) / args.clients
        print(f"clients: {args.clients}, events: {args.events}")
        print(f"rss baseline          {base / 2**20:8.1f} MiB")
        print(f"rss {args.clients} keep-alive   {with_keep / 2**20:8.1f} MiB"
              f"  ({per_keep / 1024:.1f} KiB per connection)")
        print(f"rss {args.clients} streams      {with_streams / 2**20:8.1f} MiB"
              f"  ({per_stream / 1024:.1f} KiB per stream)")
        print(f"rss after delivery    {delivered / 2**20:8.1f} MiB")
        print(f"events received per stream: min {got[0]}, max {got[-1]}"
              f" (want {args.events})")
        if per_keep > 0:
            print(f"stream / keep-alive cost ratio: {per_stream / per_keep:.2f}")
        if got[0] != args.events:
            print("FAIL: a stream missed events", file=sys.stderr)
            return 1
        return 0
    finally:
        if daemon is not None:
            daemon.terminate()
            try:
                daemon.wait(timeout=60)
            except subprocess.TimeoutExpired:
                daemon.kill()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
