# The reference's program started by forking a process that has already
# imported it (a zygote): the imports are most of a run's time (1.5 s of
# CPU for os-collect-config), and each run is a child forked from the
# state right after them, as a fresh process would reach, so that no run
# sees what another left. A client (zygote.go's shim) connects to the
# socket and sends its stdin, stdout and stderr (SCM_RIGHTS) and a JSON
# line {"args", "env", "cwd", "umask"}; the answer is "pid N" then "exit
# N" or "signal N" when the run ends.
#
# argv: socket module function argv0 [preload...]. With preload, the
# zygote imports those modules and each run imports module itself: for a
# module that reads the environment, or sets up logging, as it is
# imported (os_apply_config.apply_config).
import atexit
import importlib
import json
import os
import socket
import sys
import threading
import traceback

path, module, function, argv0 = sys.argv[1:5]
preload = sys.argv[5:]
for name in preload:
    importlib.import_module(name)
entry = None if preload else getattr(importlib.import_module(module), function)
if threading.active_count() != 1:
    sys.exit('zygote: the imports started threads; a fork would lose them')

srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(16)
print('ready', flush=True)


def run(req, fds):
    srv.close()
    for i, fd in enumerate(fds):
        os.dup2(fd, i)
        os.close(fd)
    os.chdir(req['cwd'])
    os.environ.clear()
    os.environ.update(dict(kv.split('=', 1) for kv in req['env']))
    os.umask(req['umask'])
    # In place: an entry point may hold the list (def main(argv=sys.argv)).
    sys.argv[:] = [argv0] + req['args']
    # As the interpreter ends a script that calls sys.exit(entry()).
    try:
        main = entry or getattr(importlib.import_module(module), function)
        code = main()
    except SystemExit as e:
        code = e.code
    except BaseException:
        traceback.print_exc()
        code = 1
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    try:
        threading._shutdown()
    except Exception:
        pass
    atexit._run_exitfuncs()
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            pass
    os._exit(code & 0xff)


def monitor(conn, req, fds):
    # A child of the zygote: starts the run, a child of its own, and
    # tells the client its pid, then how it ended.
    srv.close()
    pid = os.fork()
    if pid == 0:
        conn.close()
        run(req, fds)
    for fd in fds:
        os.close(fd)
    conn.sendall(b'pid %d\n' % pid)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        conn.sendall(b'signal %d\n' % os.WTERMSIG(status))
    else:
        conn.sendall(b'exit %d\n' % os.WEXITSTATUS(status))
    os._exit(0)


# Runs may overlap (a daemon in the background): each is watched by a
# child of its own, and the zygote keeps no thread, so that its forks
# copy the whole of it.
while True:
    conn, _ = srv.accept()
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break
    with conn:
        data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        while not data.endswith(b'\n'):
            more = conn.recv(1 << 20)
            if not more:
                break
            data += more
        if len(fds) == 3:
            if os.fork() == 0:
                monitor(conn, json.loads(data), fds)
        for fd in fds:
            os.close(fd)
