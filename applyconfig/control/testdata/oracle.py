# The reference's reading of a ".oac" control file (os_apply_config
# 12.0.0: yaml.safe_load(body) or {}, then OacFile(body, **ctrl)), one
# case a line: {"oac": base64} in; {"mode": m, "owner": u, "group": g,
# "allow_empty": b} or {"error": message} out; {"yaml_error": true} where
# PyYAML refuses the text (a traceback in the reference), with "detabbed":
# the answer for the text with tabs made spaces; {"skip": why} where the
# reference would crash or accept what we document as refused.
import base64
import json
import sys

import yaml

from os_apply_config import config_exception as exc
from os_apply_config import oac_file

KEYS = {"mode", "owner", "group", "allow_empty"}


# Sets, pairs, bytes, dates, keys that are not text: refused, or read as
# text (documented).
def known_types(v):
    if isinstance(v, dict):
        # Keys that are not text print otherwise in messages (documented).
        return all(isinstance(k, str) and known_types(x) for k, x in v.items())
    if isinstance(v, list):
        return all(known_types(x) for x in v)
    return v is None or isinstance(v, (str, int, float, bool))


def non_specific_tag(text):
    # "! text": PyYAML resolves the scalar as if plain, even quoted or a
    # block; yaml.v3 does not tell the tag apart (documented).
    try:
        return any(getattr(e, "tag", None) == "!" for e in yaml.parse(text))
    except yaml.YAMLError:
        return False


def control(text):
    # The reference's yaml.safe_load is PyYAML's own scanner. Where it and
    # libyaml read the text otherwise (a tab after a value, "[a:]"), YAML
    # parsers disagree, yaml.v3 with them (documented): not compared.
    readings = []
    for loader in (yaml.SafeLoader, yaml.CSafeLoader):
        try:
            readings.append(("ok", yaml.load(text, Loader=loader) or {}))
        except yaml.YAMLError:
            readings.append(("yaml_error", None))
        except Exception as e:
            readings.append(("skip", type(e).__name__))
    try:
        disagree = readings[0] != readings[1] or not known_types(readings[0][1])
    except RecursionError:  # a structure that holds itself
        disagree = True
    if disagree or non_specific_tag(text):
        return {"skip": "YAML scanners disagree, other types, a ! tag"}
    kind, ctrl = readings[0]
    if kind == "yaml_error":
        # Tabs where PyYAML wants spaces: yaml.v3 reads them
        # (documented); what the text means with spaces instead.
        if "\t" in text:
            return {"yaml_error": True, "detabbed": control(text.replace("\t", " "))}
        return {"yaml_error": True}
    if kind == "skip":
        return {"skip": ctrl}
    if isinstance(ctrl, dict) and not set(ctrl) <= KEYS:
        # Other keys: attributes of the reference's object (documented).
        return {"skip": "other keys"}
    try:
        if not isinstance(ctrl, dict):
            raise exc.ConfigException("header is not a dict")
        f = oac_file.OacFile("", **ctrl)
        return {"mode": f.mode, "owner": f.owner, "group": f.group, "allow_empty": f.allow_empty}
    except exc.ConfigException as e:
        return {"error": str(e)}
    except Exception as e:
        return {"skip": type(e).__name__}


for line in sys.stdin:
    case = json.loads(line)
    try:
        # open() in text mode: universal newlines.
        text = base64.b64decode(case["oac"]).decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError:
        print(json.dumps({"skip": "not UTF-8"}), flush=True)
        continue
    print(json.dumps(control(text)), flush=True)
