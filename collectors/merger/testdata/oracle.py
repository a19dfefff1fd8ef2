# Prints the reference merger's result (os_collect_config.merger,
# python3-os-collect-config 12.0.0) for each JSON document on stdin (one
# per line) as a JSON list of [name, content] pairs. Used by merger_test.go.
import json
import sys

from os_collect_config import merger

for line in sys.stdin:
    doc = json.loads(line)
    try:
        out = merger.merged_list_from_content(doc, ['deployments', 'extra'], 'heat')
        print(json.dumps(out))
    except Exception as e:
        print(json.dumps('CRASH ' + type(e).__name__))
