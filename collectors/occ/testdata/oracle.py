# Prints, as JSON, the configuration the reference os-collect-config
# (python3-os-collect-config 12.0.0, oslo.config) builds from the command
# line in argv[1:], or {"error": "..."} when it refuses it. Used by
# config_test.go.
import json
import sys

from oslo_config import cfg
from os_collect_config import collect

collect.setup_conf()
try:
    cfg.CONF(args=sys.argv[1:], prog='os-collect-config')
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
    print(json.dumps(out, sort_keys=True))
except SystemExit as e:
    print(json.dumps({'error': 'exit %s' % e.code}))
except Exception as e:
    print(json.dumps({'error': type(e).__name__}))
