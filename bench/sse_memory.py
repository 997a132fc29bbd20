#!/usr/bin/python3
"""Memory of `trench serve` with 100 server-sent-event clients open.

Starts two real daemons one after the other (each on a fresh target
repository whose "build" only points at this checkout's binaries,
continuous fuzzing off: a fresh process each, so that memory freed by one
phase does not hide the next one's) and reads each one's resident memory
(VmRSS from /proc/PID/status, the median of five readings):

  keep-alive: idle, then with N idle keep-alive connections (each sent one
              GET /healthz): the peer, what any connection costs;
  streams:    idle, then with N GET /api/v1/events/stream clients open,
              then after E reports were filed through the API and every
              stream has received all E creation events (checked).

It prints the RSS of each phase, the bytes per client, and the ratio of a
stream's cost to a keep-alive connection's (lower is better; 1.0: a
stream costs what an idle connection does).

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
from api_latency import make_repo, start_daemon  # noqa: E402


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


def phase(build, token, kind, clients, events):
    """A fresh daemon: its RSS before and with `clients` of `kind` open,
    and (streams) the events each stream received."""
    root = tempfile.mkdtemp(prefix="trench-sse-bench-")
    os.chmod(root, 0o755)
    daemon = None
    try:
        daemon, port = start_daemon(
            root, make_repo(root), build, token,
            {"fuzz": {"budget_seconds": 30, "jobs": 1, "continuous": False},
             "log": {"format": "json", "level": "warn"}})
        time.sleep(3)  # The base commit's build and fuzz jobs start.
        base = settled_rss(daemon.pid)
        if kind == "keep-alive":
            conns = [open_keepalive(port) for _ in range(clients)]
        else:
            conns = [StreamClient(port) for _ in range(clients)]
        held = settled_rss(daemon.pid)
        got = []
        if kind == "streams":
            for i in range(events):
                post_report(port, token, i)
            deadline = time.time() + 120
            threads = [threading.Thread(target=c.read_events,
                                        args=(events, deadline))
                       for c in conns]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            got = sorted(c.events for c in conns)
        after = settled_rss(daemon.pid)
        return base, held, after, got
    finally:
        if daemon is not None:
            daemon.terminate()
            try:
                daemon.wait(timeout=60)
            except subprocess.TimeoutExpired:
                daemon.kill()
        shutil.rmtree(root, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--clients", type=int, default=100)
    ap.add_argument("--events", type=int, default=20)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    token = "bench-token"
    kb, kh, _, _ = phase(build, token, "keep-alive", args.clients, 0)
    sb, sh, sa, got = phase(build, token, "streams", args.clients,
                            args.events)
    per_keep = (kh - kb) / args.clients
    per_stream = (sh - sb) / args.clients
    mib = 2 ** 20
    print(f"clients: {args.clients}, events: {args.events}")
    print(f"keep-alive daemon: {kb / mib:.1f} MiB idle, {kh / mib:.1f} MiB "
          f"with {args.clients} connections ({per_keep / 1024:.1f} KiB each)")
    print(f"stream daemon:     {sb / mib:.1f} MiB idle, {sh / mib:.1f} MiB "
          f"with {args.clients} streams ({per_stream / 1024:.1f} KiB each), "
          f"{sa / mib:.1f} MiB after {args.events} events to each")
    print(f"events received per stream: min {got[0]}, max {got[-1]}"
          f" (want {args.events})")
    if per_keep > 0:
        print(f"stream / keep-alive cost ratio: {per_stream / per_keep:.2f}")
    if got[0] != args.events:
        print("FAIL: a stream missed events", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
