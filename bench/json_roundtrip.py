# SPDX-License-Identifier: MIT
# Allocation-heavy Python for the benchmarks (run with PYTHONMALLOC=malloc so
# every object is a heap call): a JSON round trip of N small records.
# usage: python3 json_roundtrip.py [N]   (default 20000)
import json
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
rows = [{"id": i, "name": "n%d" % i, "tags": [str(j) for j in range(i % 7)]} for i in range(n)]
print(len(json.loads(json.dumps(rows))))
