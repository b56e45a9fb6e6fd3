#!/usr/bin/python3
"""A Redis proxy that injects faults, for tests/redis_faults_test.sh.

    redis_fault_proxy.py UPSTREAM_PORT SEED RATE PORT_FILE [LOG]

Listens on a free loopback port (written to PORT_FILE) and relays each client connection to
127.0.0.1:UPSTREAM_PORT (a Redis server without cluster support: a one-node cluster, so every
redirect names this proxy again). Commands are relayed one at a time, in order. Each command,
with probability RATE (a generator seeded with SEED, so a run can be repeated), meets one fault:

  retried     an error reply in place of the command's, which is not sent on: MOVED and ASK
              (naming this proxy), TRYAGAIN, CLUSTERDOWN, LOADING, MASTERDOWN, READONLY
  fatal       the same with WRONGTYPE or OOM, which no retry cures
  drop-before the connection is closed before the command is sent on (it did not run)
  drop-after  the command runs, then the connection is closed before its reply
  garbled     the command runs, then bytes that are not the protocol come back
  slow        the command runs, and its reply comes 0.3 s late
  late        the command runs, and its reply comes 1.5 s late: past the timeout the test gives
              the client (--timeout 1), which then counts the connection as lost

The first commands of a connection (its greeting, CLUSTER SLOTS) pass untouched. Each fault
met is a line of LOG ("retried", "drop-after", ...). Stops on SIGTERM. Loopback only; every socket is closed on exit.
"""
import random
import signal
import socket
import sys
import threading
import time

RETRIED = ["MOVED {slot} 127.0.0.1:{port}", "ASK {slot} 127.0.0.1:{port}",
           "TRYAGAIN Multiple keys request during rehashing of slot",
           "CLUSTERDOWN The cluster is down", "LOADING Redis is loading the dataset in memory",
           "MASTERDOWN Link with MASTER is down",
           "READONLY You can't write against a read only replica."]
FATAL = ["WRONGTYPE Operation against a key holding the wrong kind of value",
         "OOM command not allowed when used memory > 'maxmemory'."]
# Faults the client rides out are the common ones; those that end a run (an error no retry
# cures, a reply that is not the protocol) one in eight.
FAULTS = (["retried"] * 8 + ["drop-before"] * 2 + ["drop-after"] * 2 + ["slow"] * 2 +
          ["late", "fatal", "garbled"])


class Reader:
    """Reads whole protocol values (requests or replies) from a socket, as raw bytes."""

    def __init__(self, sock):
        self.sock, self.buf = sock, b""

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError
        self.buf += data

    def _line(self, at):
        while True:
            end = self.buf.find(b"\r\n", at)
            if end >= 0:
                return end
            self._fill()

    def _value_end(self, at):
        end = self._line(at)
        kind, head = self.buf[at:at + 1], self.buf[at + 1:end]
        if kind in (b"+", b"-", b":"):
            return end + 2
        if kind == b"$":
            n = int(head)
            if n < 0:
                return end + 2
            while len(self.buf) < end + 2 + n + 2:
                self._fill()
            return end + 2 + n + 2
        if kind == b"*":
            n, at = int(head), end + 2
            for _ in range(max(n, 0)):
                at = self._value_end(at)
            return at
        raise ValueError("not the protocol: %r" % self.buf[at:at + 20])

    def value(self):
        while not self.buf:
            self._fill()
        end = self._value_end(0)
        raw, self.buf = self.buf[:end], self.buf[end:]
        return raw


LOG_LOCK = threading.Lock()


def log_fault(log, fault):
    if log:
        with LOG_LOCK, open(log, "a") as out:
            out.write(fault + "\n")


def serve(client, upstream_port, rng, rate, port, log):
    upstream = socket.create_connection(("127.0.0.1", upstream_port))
    requests, replies = Reader(client), Reader(upstream)
    seen = 0
    try:
        while True:
            request = requests.value()
            seen += 1
            fault = rng.choice(FAULTS) if seen > 2 and rng.random() < rate else None
            if fault:
                log_fault(log, fault)
            if fault in ("retried", "fatal"):
                error = rng.choice(RETRIED if fault == "retried" else FATAL)
                error = error.format(slot=rng.randrange(16384), port=port)
                client.sendall(b"-" + error.encode() + b"\r\n")
                continue
            if fault == "drop-before":
                return
            upstream.sendall(request)
            reply = replies.value()
            if fault == "drop-after":
                return
            if fault == "garbled":
                client.sendall(b"%garbled\x00\r\n")
                return
            if fault in ("slow", "late"):
                time.sleep(0.3 if fault == "slow" else 1.5)
            client.sendall(reply)
    except (EOFError, OSError, ValueError):
        pass
    finally:
        client.close()
        upstream.close()


def main():
    upstream_port, seed, rate, port_file = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    log = sys.argv[5] if len(sys.argv) > 5 else None
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    with open(port_file + ".tmp", "w") as out:
        out.write("%d\n" % port)
    import os
    os.rename(port_file + ".tmp", port_file)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    master = random.Random(seed)
    while True:
        client, _ = listener.accept()
        rng = random.Random(master.getrandbits(64))  # one stream of faults a connection
        threading.Thread(target=serve, args=(client, upstream_port, rng, rate, port, log), daemon=True).start()


if __name__ == "__main__":
    main()
