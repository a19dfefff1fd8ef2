# oslo.config's reading of an INI file (oslo_config.cfg.ConfigParser, as
# the reference os-collect-config reads os-collect-config.conf), one case
# a line: {"ini": base64} in; {"sections": [[name, [[key, [value, ...]],
# ...]], ...]} (sections without assignments left out) or {"error":
# kind} out.
import base64
import json
import os
import sys
import tempfile

from oslo_config import cfg

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "oslo.conf")
    for line in sys.stdin:
        case = json.loads(line)
        with open(path, "wb") as f:
            f.write(base64.b64decode(case["ini"]))
        sections = {}
        try:
            cfg.ConfigParser(path, sections).parse()
            answer = {"sections": [[name, [[k, v] for k, v in keys.items()]] for name, keys in sections.items() if keys]}
        except Exception as e:
            answer = {"error": type(e).__name__}
        print(json.dumps(answer), flush=True)
