# The team's Heat lab helper (heatlab_zaqar_server.py), the lab's original
# code, no OpenStack code in it; only this header was added.
"""heat-lab launcher for zaqar-server: works around two bugs of Debian
bookworm's zaqar 15.0.0 at run time (zaqar itself and every system file stay
unmodified).

1. zaqar 15's websocket transport starts its server with
   ``asyncio.wait([coro, task])`` where ``coro`` is a bare coroutine, which
   Python 3.11 rejects ("TypeError: Passing coroutines is forbidden, use
   tasks explicitly."). Coroutines are wrapped into tasks for asyncio.wait.
2. The swift message store's ``pop`` returns its internal message dicts,
   which carry an extra ``client_uuid`` key, and the API hands them out
   unformatted (``DELETE .../messages?pop=N``). zaqarclient builds
   ``Message(**msg)`` from them and fails with "Message.__init__() got an
   unexpected keyword argument 'client_uuid'" (os-collect-config's zaqar
   collector: "Source [zaqar] Unavailable."). The key is dropped, which
   gives what the other stores return (id, age, ttl, body, claim_id,
   claim_count).

Usage: same arguments as zaqar-server.
"""
import asyncio
import sys

from zaqar.storage.swift import messages as swift_messages

_asyncio_wait = asyncio.wait


def _wait(fs, *args, **kwargs):
    fs = [asyncio.ensure_future(f) if asyncio.iscoroutine(f) else f
          for f in fs]
    return _asyncio_wait(fs, *args, **kwargs)


asyncio.wait = _wait

_swift_pop = swift_messages.MessageController.pop


def _pop(self, *args, **kwargs):
    msgs = _swift_pop(self, *args, **kwargs)
    for m in msgs or ():
        m.pop('client_uuid', None)
    return msgs


swift_messages.MessageController.pop = _pop

from zaqar.cmd.server import run  # noqa: E402

if __name__ == '__main__':
    sys.argv[0] = 'zaqar-server'
    sys.exit(run())
