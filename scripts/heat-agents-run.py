#!/usr/bin/python3
"""Runs one heat-agents test module; prints its counts for
scripts/heat-agents-tests.sh.

After a line "==== heat-agents-run": "passed failed skipped known"; then
one line per failed row ("FAIL id: last line of its error"), known row
("KNOWN id: reason") and known row that passed ("NOW PASSES id").
The full output of each failure goes to stderr (the module's log).

HEAT_AGENTS_KNOWN names a file of rows that fail for a known reason
("module.Class.test<TAB>reason", # comments): they are reported apart and
not counted as failures.
"""

import os
import sys
import unittest


def known_rows(path):
    rows = {}
    if not path or not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if not line.strip() or line.lstrip().startswith('#'):
                continue
            test_id, _, reason = line.partition('\t')
            rows[test_id.strip()] = reason.strip() or 'known'
    return rows


def last_line(trace):
    lines = [ln for ln in trace.strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else ''


def main(argv):
    if len(argv) != 2:
        print('usage: heat-agents-run.py tests.<module>', file=sys.stderr)
        return 2
    name = argv[1]
    # The checkout's root (the working directory) holds the tests package.
    sys.path.insert(0, os.getcwd())
    suite = unittest.defaultTestLoader.loadTestsFromName(name)
    result = unittest.TestResult()
    suite.run(result)
    known = known_rows(os.environ.get('HEAT_AGENTS_KNOWN'))
    short = name[len('tests.'):] if name.startswith('tests.') else name

    failed, known_failed = [], []
    for test, trace in result.failures + result.errors:
        test_id = test.id()
        if test_id.startswith('tests.'):
            test_id = test_id[len('tests.'):]
        print('==== %s\n%s' % (test_id, trace), file=sys.stderr)
        if test_id in known:
            known_failed.append((test_id, known[test_id]))
        else:
            failed.append((test_id, last_line(trace)))
    stale = [test_id for test_id in known
             if test_id.startswith(short + '.')
             and test_id not in dict(known_failed)]
    skipped = len(result.skipped)
    passed = result.testsRun - skipped - len(failed) - len(known_failed)
    # What the tests print themselves went to stdout before: the summary
    # starts at its marker.
    print('==== heat-agents-run')
    print(passed, len(failed), skipped, len(known_failed))
    for test_id, msg in failed:
        print('FAIL %s: %s' % (test_id, msg))
    for test_id, reason in known_failed:
        print('KNOWN %s: %s' % (test_id, reason))
    for test_id in stale:
        print('NOW PASSES %s: remove it from the known list' % test_id)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
