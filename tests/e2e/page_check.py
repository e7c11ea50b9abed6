# SPDX-License-Identifier: MIT
"""What the page tests of memscribe serve share (tests/e2e/serve_page.py,
serve_trees.py): headless Chromium through Debian's chromedriver, a check
that records a difference between the screen and a command's JSON, the
command run on the trace, a wait for a condition with a stated timeout,
and the end (console messages are failures; a screenshot kept).

usage, in a test run as `python3 tests/e2e/TEST.py URL MEMSCRIBE TRACE SHOT`:
    import page_check as pc
    d = pc.start()       # the page at URL, loaded
    pc.check(what, pc.value_on_screen, pc.cmd("report")["total"]["peak_bytes"])
    sys.exit(pc.finish(d))
"""
import json
import subprocess
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

url, memscribe, trace, shot = sys.argv[1:5]
errors = []


def check(what, got, want):
    if got != want:
        errors.append("%s: on screen %r, command %r" % (what, got, want))
    else:
        text = repr(want)
        print("ok: %s = %s" % (what, text if len(text) < 200 else text[:200] + "..."))


def cmd(*args):
    """`memscribe ARGS --format=json TRACE`, parsed."""
    out = subprocess.run([memscribe, *args, "--format=json", trace], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


# The costs of report's sites and tree's nodes, in the page's column order.
COSTS = ("peak_bytes", "leaked_bytes", "allocations", "allocated_bytes", "temporary")
# The sizes' bars as the page keeps them: [min, max, count, bytes] each.
BARS = ("return [...document.querySelectorAll('#hist rect')].map(r => ['min', 'max', 'count', 'bytes']"
        ".map(k => Number(r.dataset[k])))")


def size_classes(rows):
    """histogram's rows summed over the processes, a [min, max, count,
    bytes] per class, smallest first: the page's sizes bars."""
    classes = {}
    for r in rows:
        c = classes.setdefault(r["min_size"], [r["min_size"], r["max_size"], 0, 0])
        c[2] += r["count"]
        c[3] += r["bytes"]
    return sorted(classes.values())


def start():
    """Headless Chromium with the page at URL, its console kept."""
    o = Options()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1300,1700",
              "--disable-background-networking", "--no-first-run"):
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
    d.get(url)
    return d


def wait(d, cond, what, seconds=60, *args):
    """Until the script cond (given args) is true; else the test ends, failed."""
    end = time.time() + seconds
    while time.time() < end:
        try:
            if d.execute_script(cond, *args):
                return
        except Exception:  # the page is still loading
            pass
        time.sleep(0.1)
    errors.append("timed out waiting for " + what)
    raise SystemExit(finish(d))


def finish(d, expected=()):
    """The console's warnings and errors as failures (but those holding one
    of expected: a query the test makes fail on purpose), the screenshot,
    the differences printed; 1 if there were any."""
    logs = [e for e in d.get_log("browser") if e.get("level") in ("SEVERE", "WARNING")
            and not any(x in e.get("message", "") for x in expected)]
    for e in logs:
        errors.append("console: %s" % e.get("message"))
    d.save_screenshot(shot)
    d.quit()
    for e in errors:
        print("FAIL: " + e)
    return 1 if errors else 0
