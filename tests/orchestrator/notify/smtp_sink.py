#!/usr/bin/python3
"""A loopback SMTP sink for trench's e-mail notification tests.

Usage: smtp_sink.py DIR PORT

Listens on 127.0.0.1:PORT (aiosmtpd's Controller, Debian's python3-aiosmtpd)
and writes each message it accepts to DIR as NNNNNN.eml (the DATA as
received, dot-unstuffed), after NNNNNN.json ({"from", "to"}: the envelope).
Prints "ready" on stdout once listening. Recipients starting with
"reject@" get 550 (a permanent refusal), "busy@" get 451 (transient).
A message to a "slow@" recipient is written at once but answered 250 only
0.3 s later (a sender killed meanwhile has delivered it unknowingly).
Exits 4 when aiosmtpd is not installed, 3 when the port is taken.
"""
import asyncio
import json
import os
import signal
import sys
import threading

try:
    from aiosmtpd.controller import Controller
except ImportError:
    print("aiosmtpd missing", flush=True)
    sys.exit(4)


class Sink:
    def __init__(self, directory):
        self.directory = directory
        self.count = 0
        self.lock = threading.Lock()

    async def handle_RCPT(self, server, session, envelope, address, options):
        if address.startswith("reject@"):
            return "550 5.1.1 no such user"
        if address.startswith("busy@"):
            return "451 4.3.0 try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.count += 1
            base = os.path.join(self.directory, "%06d" % self.count)
        with open(base + ".json", "w") as f:
            json.dump({"from": envelope.mail_from, "to": envelope.rcpt_tos}, f)
        with open(base + ".tmp", "wb") as f:
            f.write(envelope.content)
        os.rename(base + ".tmp", base + ".eml")
        if any(a.startswith("slow@") for a in envelope.rcpt_tos):
            await asyncio.sleep(0.3)
        return "250 OK"


def main():
    directory, port = sys.argv[1], int(sys.argv[2])
    controller = Controller(Sink(directory), hostname="127.0.0.1", port=port)
    try:
        controller.start()
    except (OSError, RuntimeError) as e:
        print("cannot listen: %s" % e, flush=True)
        sys.exit(3)
    print("ready", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stop.wait()
    controller.stop()


if __name__ == "__main__":
    main()
