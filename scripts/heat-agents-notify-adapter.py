"""Stands in for heat-agents' tests/heat_config_notify.py (a link to the
Python heat-config-notify, which test_heat_config_notify imports and whose
requests, keystoneclient and heatclient it replaces with mocks).

main(argv, stdin) runs our heat-config-notify binary instead, with every
"mock://host/path" input value of the config file pointed at a local HTTP
server. The server answers as Keystone v3 and heat-api would, and records
what arrived; after the binary exits, each request is replayed as the call
the Python program makes on the module's mocks for it:
  POST/PUT to a deploy_signal_id URL  -> requests.Session().post/put(url,
                                         data=body, headers=content-type)
  POST .../auth/tokens                -> ksclient.Client(auth_url=...,
                                         user_id=..., password=...,
                                         project_id=...)
  POST {heat}/stacks/.../signal       -> ks.service_catalog.url_for(...),
                                         heatclient.Client('1', url, token=),
                                         resources.signal(stack, resource,
                                                          data=...)
so the module's assertions check what our binary sent. heat-api's rules are
kept: a POST to /stacks/<one segment>/resources/... is a 404, and GET
/stacks/<id> redirects to /stacks/<name>/<id> (heatclient's own lookup,
not replayed: the mocked resources.signal hides it).

The binary is HEAT_AGENTS_NOTIFY (else heat-config-notify from PATH); its
retry budget is HEAT_CONFIG_NOTIFY_RETRY_TIMEOUT, 2 s unless set, so a
refused signal fails in seconds.
"""

import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.parse

# The attributes the test module replaces.
requests = None
Retry = None
HTTPAdapter = None
ksclient = None
heatclient = None


def init_logging():
    pass


# The catalog: the first endpoint is not in the region the tests name, so
# a signal that reaches it was sent with no region ("the first one").
REGIONS = ['RegionZero', 'RegionOne']
STACK_NAME = 'the_stack'


class _Recorder(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _answer(self, code, body=None, headers=None):
        data = json.dumps(body).encode() if body is not None else b''
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _serve(self):
        n = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(n).decode('utf-8') if n else ''
        path = urllib.parse.unquote(self.path.split('?')[0])
        self.server.seen.append((self.command, self.path, dict(
            (k.lower(), v) for k, v in self.headers.items()), body))
        base = 'http://127.0.0.1:%d' % self.server.server_port
        parts = path.strip('/').split('/')
        if self.command == 'POST' and path.endswith('/auth/tokens'):
            catalog = [{'type': 'orchestration', 'name': 'heat',
                        'endpoints': [{'interface': 'public',
                                       'region': r, 'region_id': r,
                                       'url': '%s/heat/%s' % (base, r)}
                                      for r in REGIONS]}]
            return self._answer(201, {'token': {
                'expires_at': '2099-01-01T00:00:00.000000Z',
                'catalog': catalog,
                'methods': ['password'],
                'user': {'id': 'u', 'domain': {'id': 'default'}},
                'project': {'id': 'p', 'domain': {'id': 'default'}}}},
                {'X-Subject-Token': 'the-token'})
        if parts and parts[0] == 'heat':
            rest = parts[2:]  # after heat/<region>
            if self.command == 'GET' and len(rest) == 2 \
                    and rest[0] == 'stacks':
                loc = '%s/heat/%s/stacks/%s/%s' % (
                    base, parts[1], STACK_NAME, rest[1])
                return self._answer(302, {}, {'Location': loc})
            if self.command == 'POST' and len(rest) == 6 \
                    and rest[0] == 'stacks' and rest[5] == 'signal':
                return self._answer(200, None)
            return self._answer(404, {'error': 'not found'})
        if parts and parts[0] == 'mock':
            return self._answer(200, {})
        # Anything else (version discovery of the auth URL): not here.
        return self._answer(404, {'error': 'not found'})

    do_GET = do_POST = do_PUT = _serve


def _pointed(obj, base):
    """obj, each mock://host/path string in it made base/mock/host/path."""
    if isinstance(obj, dict):
        return {k: _pointed(v, base) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_pointed(v, base) for v in obj]
    if isinstance(obj, str) and obj.startswith('mock://'):
        return base + '/mock/' + obj[len('mock://'):]
    return obj


def _replay(seen):
    ks = None
    for method, raw_path, headers, body in seen:
        path = urllib.parse.unquote(raw_path.split('?')[0])
        parts = path.strip('/').split('/')
        if path.endswith('/auth/tokens') and method == 'POST':
            # The auth URL the binary was given, as it used it.
            auth_url = 'mock://' + path[len('/mock/'):-len('/auth/tokens')]
            if auth_url.endswith('/v3'):
                auth_url = auth_url[:-len('/v3')]
            auth = json.loads(body)['auth']
            user = auth['identity']['password']['user']
            ks = ksclient.Client(
                auth_url=auth_url,
                user_id=user.get('id'),
                password=user.get('password'),
                project_id=auth.get('scope', {}).get('project', {}).get('id'))
        elif parts[0] == 'mock' and method in ('POST', 'PUT'):
            url = 'mock://' + '/'.join(parts[1:])
            session = requests.Session()
            send = session.put if method == 'PUT' else session.post
            send(url, data=body,
                 headers={'content-type': headers.get('content-type')})
        elif parts[0] == 'heat' and method == 'POST' and len(parts) == 8:
            # The first endpoint is what "no region" picks.
            used = None if parts[1] == REGIONS[0] else parts[1]
            url = ks.service_catalog.url_for(
                service_type='orchestration', endpoint_type='publicURL',
                region_name=used)
            heat = heatclient.Client('1', url, token=ks.auth_token)
            stack = '/'.join(parts[3:5])
            if parts[3] == STACK_NAME:  # the name our lookup answered
                stack = parts[4]
            heat.resources.signal(stack, parts[6], data=json.loads(body))


def main(argv, stdin):
    binary = os.environ.get('HEAT_AGENTS_NOTIFY') or shutil.which(
        'heat-config-notify')
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), _Recorder)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = 'http://127.0.0.1:%d' % server.server_port
    args = list(argv[1:])
    tmp = None
    try:
        if args and os.path.exists(args[0]):
            with open(args[0]) as f:
                data = json.load(f)
            tmp = tempfile.NamedTemporaryFile('w', suffix='.json',
                                              delete=False)
            json.dump(_pointed(data, base), tmp)
            tmp.close()
            args[0] = tmp.name
        env = dict(os.environ)
        env.setdefault('HEAT_CONFIG_NOTIFY_RETRY_TIMEOUT', '2')
        # Each row authenticates, as the reference's tests expect, and
        # nothing is kept under the host's /var/cache.
        env.setdefault('HEAT_CONFIG_NOTIFY_TOKEN_CACHE', 'off')
        proc = subprocess.run([binary] + args, input=stdin.read(),
                              capture_output=True, text=True, env=env,
                              timeout=120)
        if proc.stderr:
            sys.stderr.write(proc.stderr)
    finally:
        server.shutdown()
        server.server_close()
        if tmp:
            os.unlink(tmp.name)
    _replay(server.seen)
    return proc.returncode
