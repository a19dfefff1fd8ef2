# The reference's metadata reading, merge and --key lookup
# (os_apply_config.collect_config and apply_config._extract_key 12.0.0),
# one case a line: {"docs": [base64, ...], "key": s} in; {"merged":
# json.dumps(...), "value": json.dumps(...) or null} out, {"error": true}
# when the reference refuses the files, {"skip": why} on a traceback that
# is a known difference.
import base64
import json
import os
import sys
import tempfile

from os_apply_config import apply_config, collect_config
from os_apply_config import config_exception as exc


def dumps(v):
    s = json.dumps(v)
    # A lone surrogate (kept by Python, U+FFFD in ours) is a known
    # difference.
    json.dumps(v, ensure_ascii=False).encode("utf-8")
    return s


with tempfile.TemporaryDirectory() as tmp:
    for line in sys.stdin:
        case = json.loads(line)
        paths = []
        for i, doc in enumerate(case["docs"]):
            p = os.path.join(tmp, "%d.json" % i)
            with open(p, "wb") as f:
                f.write(base64.b64decode(doc))
            paths.append(p)
        try:
            merged = dumps(collect_config.collect_config(paths))
            value = apply_config._extract_key(paths, case["key"])
            out = {"merged": merged, "value": None if value is None else dumps(value)}
        except (exc.ConfigException, UnicodeDecodeError):
            out = {"error": True}
        except (RecursionError, UnicodeEncodeError) as e:
            out = {"skip": type(e).__name__}
        print(json.dumps(out), flush=True)
