# Python's json module as the reference reads a file (the text decoded
# as UTF-8, then json.loads), one case a line: {"text": s} in; {"dumps":
# json.dumps(value)} or {"error": str(JSONDecodeError)} out, or {"skip":
# why} for a known difference: a lone surrogate (U+FFFD in ours), nesting
# beyond the recursion limit, an integer beyond 4300 digits (tracebacks
# in the reference).
import json
import sys

for line in sys.stdin:
    s = json.loads(line)["text"]
    try:
        v = json.loads(s)
        try:
            json.dumps(v, ensure_ascii=False).encode("utf-8")
            answer = {"dumps": json.dumps(v)}
        except UnicodeEncodeError:
            answer = {"skip": "lone surrogate"}
    except json.JSONDecodeError as e:
        answer = {"error": str(e)}
    except (RecursionError, ValueError) as e:
        answer = {"skip": type(e).__name__}
    print(json.dumps(answer), flush=True)
