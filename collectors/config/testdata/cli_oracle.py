# oslo.config's reading of a command line for the options of
# config_test.go's values.set() (declared the same way here), one case a
# line: {"args": [...]} in; {"values": {"DEFAULT.name": ...}} or {"error":
# kind} out. No configuration file is read.
import contextlib
import io
import json
import sys

from oslo_config import cfg

for line in sys.stdin:
    args = json.loads(line)["args"]
    conf = cfg.ConfigOpts()
    conf.register_cli_opts([
        cfg.StrOpt("name", short="n", default="anon"),
        cfg.StrOpt("key", secret=True),
        cfg.MultiStrOpt("list", default=["a"]),
        cfg.FloatOpt("rate", default=1.5),
        cfg.IntOpt("count", default=3),
        cfg.BoolOpt("on", default=False),
        cfg.MultiStrOpt("any", positional=True, required=False),
    ])
    conf.register_cli_opts([cfg.StrOpt("group-id")], group="grp")
    try:
        # Help and version go to stdout, which is the answers'.
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            conf(args=args, prog="prog", default_config_files=[], default_config_dirs=[])
        values = {
            "DEFAULT.name": conf.name, "DEFAULT.key": conf.key, "DEFAULT.list": conf.list,
            "DEFAULT.rate": conf.rate, "DEFAULT.count": conf.count, "DEFAULT.on": conf.on,
            "DEFAULT.any": conf.any, "grp.group_id": conf.grp.group_id,
        }
        answer = {"values": values}
    except SystemExit as e:
        answer = {"error": "exit %s" % e.code}
    except Exception as e:
        answer = {"error": type(e).__name__}
    print(json.dumps(answer), flush=True)
