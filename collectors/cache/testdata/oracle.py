# Runs a sequence of cache operations through the reference's
# os_collect_config.cache (Debian's python3-os-collect-config 12.0.0) and
# prints one result line per operation. Used by cache_test.go.
# stdin: JSON list of sequences, each [cache directory, operations], the
# operations ["store", name, content] / ["commit", name] / ["meta",
# [names]]; a line "--" after each sequence's results. One process for
# all: its import is most of its time, and the module keeps no state
# but cfg.CONF.cachedir, set anew for each sequence.
import json
import sys

from oslo_config import cfg
from os_collect_config import cache, collect

collect.setup_conf()
for cachedir, ops in json.load(sys.stdin):
    cfg.CONF(['--cachedir', cachedir], project='os-collect-config')
    for op in ops:
        if op[0] == 'store':
            changed, path = cache.store(op[1], op[2])
            print('store %s %s' % (op[1], changed))
        elif op[0] == 'commit':
            cache.commit(op[1])
            print('commit %s' % op[1])
        elif op[0] == 'meta':
            cache.store_meta_list('os_config_files', op[1])
            print('meta')
    print('--')
