# SPDX-License-Identifier: MIT
"""memscribe check's JUnit XML read back by a real JUnit reader
(junitparser, Debian's python3-junitparser), for tests/e2e/check_gate.sh:
prints each suite's counts as the file states them and as the reader
counts its testcases, then a line per testcase, CLASS|NAME|PASS or FAIL|
the failure's message, and the failure's text indented under it."""
import sys

from junitparser import Failure, JUnitXml, TestSuite

xml = JUnitXml.fromfile(sys.argv[1])
suites = [xml] if isinstance(xml, TestSuite) else list(xml)
print(f"suites {len(suites)} tests={xml.tests} failures={xml.failures} errors={xml.errors}")
for suite in suites:
    cases = list(suite)
    failed = [c for c in cases if any(isinstance(r, Failure) for r in c.result)]
    print(f"suite {suite.name} tests={suite.tests} failures={suite.failures} "
          f"counted={len(cases)}/{len(failed)}")
    for case in cases:
        fails = [r for r in case.result if isinstance(r, Failure)]
        print(f"case {case.classname}|{case.name}|{'FAIL' if fails else 'PASS'}|"
              f"{fails[0].message if fails else ''}")
        for f in fails:
            for line in (f.text or "").splitlines():
                print(f"  {line}")
