#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""record --live followed in a real browser: tests/programs/serve_steps
grows its heap in steps of known size (step i: i more MiB) and waits for a
line before the next; the page must show each step's heap in use within
the stated delay (docs/serve.md, "Live": the trace is flushed every 250 ms,
the page asks every second, and the query replays the trace), and at the
end, the trace finished, the numbers `memscribe report` gives.

usage: serve_live.py MEMSCRIBE STEPS_PROGRAM WORKDIR SCREENSHOT
"""
import json
import os
import subprocess
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

memscribe, program, work, shot = sys.argv[1:5]
MIB = 1024 * 1024
# The bound the test holds the page to: 1.25 s of flushing and polling
# (docs/serve.md) and up to 2.75 s for the query on a loaded machine.
DELAY = 4.0
errors = []
trace = os.path.join(work, "live.mscr")
url_file = os.path.join(work, "live.url")

rec = subprocess.Popen([memscribe, "record", "--live", "--live-url-file", url_file, "-o", trace,
                        "--", program], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                       stderr=open(os.path.join(work, "record.err"), "w"), text=True)
for _ in range(200):
    if os.path.exists(url_file) and os.path.getsize(url_file):
        break
    time.sleep(0.05)
url = open(url_file).read().strip()
print("live view at", url)

o = Options()
for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1300,1500",
          "--disable-background-networking", "--no-first-run"):
    o.add_argument(a)
d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
d.get(url)


def top_heap():
    """The heap in use `memscribe top --once` reads off the trace now."""
    out = subprocess.run([memscribe, "top", "--once", trace], capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        if line.startswith("heap in use "):
            return int(line.split()[3])
    return -1


def heap_now():
    try:
        v = d.find_element(By.ID, "heap-now").get_attribute("data-value")
        return int(v) if v else -1
    except Exception:
        return -1


delays = []
if rec.stdout.readline().strip() != "ready":
    errors.append("the program did not say ready")
time.sleep(1.5)  # the stdin buffer fgets makes after "ready", flushed
# The base once the page shows what top reads off the trace: a page still
# loading (or between two renderings) shows nothing, which a loaded
# machine made the base once (-1, and every step off by the buffers).
end = time.time() + 60
base = heap_now()
while (base < 0 or base != top_heap()) and time.time() < end:
    time.sleep(0.1)
    base = heap_now()
if base < 0 or base != top_heap():
    errors.append("before the steps: the page shows %d bytes in use, top %d, after 60 s"
                  % (base, top_heap()))
print("heap before the steps: %d bytes (stdio's buffers)" % base)
rec.stdin.write("go\n")
rec.stdin.flush()
for i in range(1, 5):
    line = rec.stdout.readline().strip()
    seen_step = time.time()
    if line != "step %d" % i:
        errors.append("the program said %r, not 'step %d'" % (line, i))
        break
    want = base + i * (i + 1) // 2 * MIB
    got = heap_now()  # the value that ended the wait: a second read may catch a rendering
    while got < want and time.time() - seen_step < 30:
        time.sleep(0.02)
        got = heap_now()
    delay = time.time() - seen_step
    delays.append(delay)
    if got != want:
        errors.append("step %d: the page shows %d bytes in use, want %d" % (i, got, want))
    elif delay > DELAY:
        errors.append("step %d: shown after %.2f s, more than %.1f s" % (i, delay, DELAY))
    else:
        print("ok: step %d (%d bytes) on the page after %.2f s" % (i, want, delay))
    while top_heap() != want and time.time() - seen_step < DELAY:
        time.sleep(0.05)
    if top_heap() != want:
        errors.append("step %d: top shows %d bytes in use, want %d" % (i, top_heap(), want))
    else:
        print("ok: step %d on top after %.2f s" % (i, time.time() - seen_step))
    rec.stdin.write("go\n")
    rec.stdin.flush()
rec.stdin.close()
rc = rec.wait(timeout=60)
if rc != 0:
    errors.append("record exited with %d: %s" % (rc, open(os.path.join(work, "record.err")).read()))
err = open(os.path.join(work, "record.err")).read()
if "live view at " + url not in err:
    errors.append("record did not say the address: %r" % err)

# The recording is over and its server with it: the finished trace under a
# server of its own shows report's numbers.
srv = subprocess.Popen([memscribe, "serve", "--url-file", url_file + "2", trace],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(200):
    if os.path.exists(url_file + "2") and os.path.getsize(url_file + "2"):
        break
    time.sleep(0.05)
d.get(open(url_file + "2").read().strip())
end = time.time() + 60
while time.time() < end and not d.execute_script("return document.body.dataset.loaded >= 1"):
    time.sleep(0.1)
rep = json.loads(subprocess.run([memscribe, "report", "--format=json", trace], check=True,
                                capture_output=True, text=True).stdout)["total"]
for card, key, want in (("peak", "peak_bytes", base + 10 * MIB),
                        ("leaked", "leaked_bytes", base + 9 * MIB),
                        ("allocations", "allocations", None)):
    got = int(d.find_element(By.ID, card).get_attribute("data-value"))
    if got != rep[key] or (want is not None and got != want):
        errors.append("%s: page %d, report %d, the program made %s" % (card, got, rep[key], want))
    else:
        print("ok: %s = %d" % (card, got))
srv.terminate()
srv.wait()
d.save_screenshot(shot)
d.quit()
print("delays: " + " ".join("%.2f" % x for x in delays))
for e in errors:
    print("FAIL: " + e)
sys.exit(1 if errors else 0)
