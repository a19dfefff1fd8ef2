# Prints, as JSON, the configuration the reference os-collect-config
# (python3-os-collect-config 12.0.0, oslo.config) builds from each
# command line, or {"error": "..."} when it refuses it: stdin is a JSON
# list of {"args": [...], "home": dir}, stdout one JSON line each, in
# order. Each is parsed in a process of its own, forked after the
# imports (most of the time of a run), as a fresh run would with HOME
# set to home. Used by options_test.go.
import json
import os
import sys

from oslo_config import cfg
from os_collect_config import collect


def configuration(args):
    collect.setup_conf()
    try:
        cfg.CONF(args=args, prog='os-collect-config')
        out = {}
        for group in [None, 'ec2', 'cfn', 'heat', 'heat_local', 'local', 'request', 'keystone', 'zaqar']:
            opts = cfg.CONF._opts if group is None else cfg.CONF._groups[group]._opts
            for name, info in opts.items():
                if not info.get('cli'):
                    continue
                o = info['opt']
                v = getattr(cfg.CONF, o.dest) if group is None else getattr(getattr(cfg.CONF, group), o.dest)
                out['%s.%s' % (group or 'DEFAULT', o.dest)] = v
        out['config_file'] = list(cfg.CONF.config_file)
        return out
    except SystemExit as e:
        return {'error': 'exit %s' % e.code}
    except Exception as e:
        return {'error': type(e).__name__}


for case in json.load(sys.stdin):
    sys.stdout.flush()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.environ['HOME'] = case['home']
        try:
            data = json.dumps(configuration(case['args']), sort_keys=True)
        except BaseException as e:
            data = json.dumps({'oracle-failed': repr(e)})
        with os.fdopen(w, 'w') as f:
            f.write(data)
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        sys.exit('oracle: the run of %r ended with status %d' % (case['args'], status))
    print(data)
