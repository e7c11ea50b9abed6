#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""record --live followed in a real browser: tests/programs/serve_steps
grows its heap in steps of known size (step i: i more MiB) and waits for a
line before the next; the page must show each step's heap in use, waited
for up to WAIT seconds, and at the end, the trace finished, the numbers
`memscribe report` gives. How soon it shows each step is printed, not
held: a bound of seconds failed once at load 7 (a suite's build and tests
beside it); the page's latency is bench/serve_latency.sh's to measure
(docs/serve.md, "Live": the trace is flushed every 250 ms, the page asks
every second, and the query replays the trace).

The page is opened before the program's first allocation (it waits for a
line first). MODE: "plain" (record --live -- PROGRAM), "spinner" (the same
beside a CPU-bound process) or "attach" (record -p PID --live on the
program already running).

usage: serve_live.py MEMSCRIBE STEPS_PROGRAM WORKDIR SCREENSHOT [MODE]
"""
import json
import os
import select
import subprocess
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

memscribe, program, work, shot = sys.argv[1:5]
mode = sys.argv[5] if len(sys.argv) > 5 else "plain"
MIB = 1024 * 1024
# How long anything else is waited for: the program's lines, the servers'
# addresses, the page's load, the trace to hold the program's base. A bound
# on a hang, not a speed: beside two spinners (scripts/flake-check.sh) this
# whole test took 80 s, and its steps seconds each.
WAIT = 180.0
# serve_steps' marker block (its MARK_BYTES): its last allocation before
# "ready".
MARK = 123457
errors = []
trace = os.path.join(work, "live.mscr")
url_file = os.path.join(work, "live.url")
rec = srv = d = spin = prog = None


def give_up(what):
    """Stop at what did not come: say it (and the failures before it), end
    the programs and the browser."""
    for p in (rec, srv, spin, prog):
        if p is not None and p.poll() is None:
            p.kill()
    if d is not None:
        d.quit()
    for e in errors + [what]:
        print("FAIL: " + e)
    sys.exit(1)


def address(path, proc, what):
    """The URL a server writes to path (--url-file), once it is there."""
    end = time.time() + WAIT
    while time.time() < end and proc.poll() is None:
        if os.path.exists(path) and os.path.getsize(path):
            return open(path).read().strip()
        time.sleep(0.05)
    if os.path.exists(path) and os.path.getsize(path):
        return open(path).read().strip()
    give_up("%s wrote no address to %s in %g s (%s)" % (
        what, path, WAIT, "running" if proc.poll() is None else "exited with %d" % proc.returncode))


if mode == "spinner":
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
rec_err = open(os.path.join(work, "record.err"), "w")
live = ["--live", "--live-url-file", url_file, "-o", trace]
if mode == "attach":
    # the program runs first; record -p attaches to it, and its lines come
    # from the program itself
    prog = subprocess.Popen([program], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    rec = subprocess.Popen([memscribe, "record", "-p", str(prog.pid)] + live,
                           stdout=subprocess.DEVNULL, stderr=rec_err)
else:
    prog = rec = subprocess.Popen([memscribe, "record"] + live + ["--", program],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=rec_err,
                                  text=True)
url = address(url_file, rec, "record --live")
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


def line_of_program():
    """The program's next line (it writes whole lines and then waits for
    one), or "" if none came in WAIT seconds."""
    if not select.select([prog.stdout], [], [], WAIT)[0]:
        return ""
    return prog.stdout.readline().strip()


def marked():
    """The trace holds the program's marker block, so every allocation it
    made before it (a program's events reach the trace in their order)."""
    out = subprocess.run([memscribe, "dump", trace], capture_output=True, text=True).stdout
    return any(" malloc " in line and " size=%d " % MARK in line for line in out.splitlines())


def loaded():
    """The page has shown the trace at least once (serve.js's data-loaded:
    report, the charts, the live blocks)."""
    try:
        return bool(d.execute_script("return document.body.dataset.loaded >= 1"))
    except Exception:  # the page is still loading
        return False


def until(cond, what):
    """Wait for cond() (every 0.1 s) for up to WAIT seconds; else stop, saying what."""
    end = time.time() + WAIT
    while not cond():
        if time.time() > end:
            give_up("%s: not after %g s" % (what, WAIT))
        time.sleep(0.1)


def heap_now():
    try:
        v = d.find_element(By.ID, "heap-now").get_attribute("data-value")
        return int(v) if v else -1
    except Exception:
        return -1


def go():
    prog.stdin.write("go\n")
    prog.stdin.flush()


delays = []
# The page opened before the program's first allocation: loaded once with
# what came before main (the status, the report of a trace just begun).
if line_of_program() != "start":
    give_up("the program did not say start in %g s" % WAIT)
until(loaded, "the live page's first view, before the program's first allocation")
print("ok: the page loaded before the program's first allocation")
go()
if line_of_program() != "ready":
    give_up("the program did not say ready in %g s" % WAIT)
# The heap stays as it is until the program reads a line: the base, once
# the trace holds the marker (flushed every 250 ms, a loaded machine later)
# and the page has loaded.
until(marked, "the program's marker block (%d bytes) in the trace" % MARK)
until(loaded, "the live page's first view (data-loaded)")
# The base once the page shows what top reads off the trace: a page still
# loading (or between two renderings) shows nothing, which a loaded
# machine made the base once (-1, and every step off).
end = time.time() + WAIT
base = heap_now()
while (base < 0 or base != top_heap()) and time.time() < end:
    time.sleep(0.1)
    base = heap_now()
if base < 0 or base != top_heap():
    errors.append("before the steps: the page shows %d bytes in use, top %d, after %g s"
                  % (base, top_heap(), WAIT))
print("heap before the steps: %d bytes (the marker, %d, and what came before main)" % (base, MARK))
go()
for i in range(1, 5):
    line = line_of_program()
    seen_step = time.time()
    if line != "step %d" % i:
        errors.append("the program said %r, not 'step %d'" % (line, i))
        break
    want = base + i * (i + 1) // 2 * MIB
    got = heap_now()  # the value that ended the wait: a second read may catch a rendering
    while got < want and time.time() - seen_step < WAIT:
        time.sleep(0.02)
        got = heap_now()
    delay = time.time() - seen_step
    delays.append(delay)
    if got != want:
        errors.append("step %d: the page shows %d bytes in use, want %d (after %.2f s)"
                      % (i, got, want, delay))
    else:
        print("ok: step %d (%d bytes) on the page after %.2f s" % (i, want, delay))
    while top_heap() != want and time.time() - seen_step < WAIT:
        time.sleep(0.05)
    if top_heap() != want:
        errors.append("step %d: top shows %d bytes in use, want %d" % (i, top_heap(), want))
    else:
        print("ok: step %d on top after %.2f s" % (i, time.time() - seen_step))
    go()
prog.stdin.close()
rc = rec.wait(timeout=60)
if rc != 0:
    errors.append("record exited with %d: %s" % (rc, open(os.path.join(work, "record.err")).read()))
err = open(os.path.join(work, "record.err")).read()
if "live view at " + url not in err:
    errors.append("record did not say the address: %r" % err)

rep = json.loads(subprocess.run([memscribe, "report", "--format=json", trace], check=True,
                                capture_output=True, text=True).stdout)["total"]


def final_numbers(where):
    """The page's cards are report's numbers of the finished trace."""
    for card, key, want in (("peak", "peak_bytes", base + 10 * MIB),
                            ("leaked", "leaked_bytes", base + 9 * MIB),
                            ("allocations", "allocations", None)):
        got = int(d.find_element(By.ID, card).get_attribute("data-value"))
        if got != rep[key] or (want is not None and got != want):
            errors.append("%s: %s: page %d, report %d, the program made %s"
                          % (where, card, got, rep[key], want))
        else:
            print("ok: %s: %s = %d" % (where, card, got))


def ended():
    return d.find_element(By.ID, "status").get_attribute("data-ended")


# The recording is over: the live page, left open, says how the program
# ended and shows the final state, report's numbers; its server gone, it
# stays so, with no error and no more questions.
until(ended, "the live page saying the recording ended (data-ended)")
# record -p did not start the program: its wait status is not the recorder's.
want_end = ("the recording ended; the program's end was not seen (it may run on)"
            if mode == "attach" else "the program exited with status 0")
if ended() != want_end:
    errors.append("the live page says %r of the program's end" % ended())
else:
    print("ok: the live page says: %s" % ended())
final_numbers("the live page at the end")
time.sleep(3)
shown = d.find_element(By.ID, "error").text
if shown or not ended():
    errors.append("3 s after the end the live page shows %r (ended: %r)" % (shown, ended()))
else:
    print("ok: 3 s after the end the live page still shows the final state, no error")

# The finished trace under a server of its own shows report's numbers too.
srv = subprocess.Popen([memscribe, "serve", "--url-file", url_file + "2", trace],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
d.get(address(url_file + "2", srv, "serve"))
until(loaded, "the finished trace's page (data-loaded)")
final_numbers("the finished trace's page")
srv.terminate()
srv.wait()
if spin is not None:
    spin.kill()
d.save_screenshot(shot)
d.quit()
print("delays: " + " ".join("%.2f" % x for x in delays))
for e in errors:
    print("FAIL: " + e)
sys.exit(1 if errors else 0)
