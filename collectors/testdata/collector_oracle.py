# Runs the reference's local or heat_local collector (python3-os-collect-
# config 12.0.0) with the paths given and prints its result as JSON, or
# "unavailable". argv: collector name, then paths. Used by the Go tests.
import json
import sys

from oslo_config import cfg
from os_collect_config import collect, exc, heat_local, local

collect.setup_conf()
name, paths = sys.argv[1], sys.argv[2:]
args = []
for p in paths:
    args += ['--%s-path' % name, p]
cfg.CONF(args=args, prog='os-collect-config')
module = {'local': local, 'heat_local': heat_local}[name]
try:
    print(json.dumps(module.Collector().collect()))
except exc.SourceNotAvailable:
    print(json.dumps('unavailable'))
