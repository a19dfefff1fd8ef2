# The reference's rendering of a mustache template (os_apply_config
# 12.0.0's render_template: the file read as text, pystache with its
# JsonRenderer), one case a line: {"template": base64, "metadata": JSON
# text} in; {"out": rendered} or {"error": message} out, or {"skip":
# why} on a traceback that is a known difference (fuzz_test.go).
import base64
import json
import os
import sys
import tempfile

from os_apply_config import apply_config
from os_apply_config import config_exception as exc

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "template")
    for line in sys.stdin:
        case = json.loads(line)
        with open(path, "wb") as f:
            f.write(base64.b64decode(case["template"]))
        try:
            out = apply_config.render_template(path, json.loads(case["metadata"]))
            out.encode("utf-8")
            answer = {"out": out}
        except exc.ConfigException as e:
            answer = {"error": str(e)}
        except (RecursionError, UnicodeEncodeError) as e:
            answer = {"skip": type(e).__name__}
        print(json.dumps(answer), flush=True)
