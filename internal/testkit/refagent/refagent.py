# The reference os-collect-config (Debian's python3-os-collect-config), run
# as the fleet simulation runs its agents: imported first, then started
# when the barrier file appears, so that a "fleet started at once" is not
# spread by the Python start-up of many processes on one machine. Its
# code is not changed: the socket class counts the bytes each connection
# sends and receives, by the server's port, for the figures; on SIGUSR1
# and at SIGTERM the counts so far are appended to the counts file as one
# JSON line.
#
# usage: refagent.py BARRIER COUNTS -- os-collect-config ARGS...
import json
import os
import signal
import socket
import sys
import time

barrier, counts_path = sys.argv[1], sys.argv[2]
args = sys.argv[sys.argv.index("--") + 1:]

sent, received = {}, {}


def _port(sock):
    try:
        return str(sock.getpeername()[1])
    except OSError:
        return "?"


def _count(table, sock, n):
    if n:
        p = _port(sock)
        table[p] = table.get(p, 0) + n


_send, _sendall, _recv, _recv_into = (socket.socket.send, socket.socket.sendall,
                                      socket.socket.recv, socket.socket.recv_into)


def send(self, data, *a):
    n = _send(self, data, *a)
    _count(sent, self, n)
    return n


def sendall(self, data, *a):
    r = _sendall(self, data, *a)
    _count(sent, self, len(memoryview(data)))
    return r


def recv(self, *a):
    b = _recv(self, *a)
    _count(received, self, len(b))
    return b


def recv_into(self, buf, *a):
    n = _recv_into(self, buf, *a)
    _count(received, self, n)
    return n


socket.socket.send, socket.socket.sendall = send, sendall
socket.socket.recv, socket.socket.recv_into = recv, recv_into


def dump(*_):
    with open(counts_path, "a") as f:
        f.write(json.dumps({"at": time.time(), "sent": sent, "received": received}) + "\n")


def stop(*_):
    dump()
    os._exit(0)


signal.signal(signal.SIGUSR1, dump)
signal.signal(signal.SIGTERM, stop)

from os_collect_config import collect  # noqa: E402  (after the counting)

while not os.path.exists(barrier):
    time.sleep(0.01)
sys.exit(collect.__main__(args))
