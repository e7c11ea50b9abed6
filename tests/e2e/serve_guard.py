#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""memscribe serve against other local users and rough clients (docs/serve.md,
"Other users"): half-open connections of another user leave the owner's
page answering; the address file and the processes do not show the token;
concurrent queries wait their turn instead of being refused; a request
with a body is answered at once. Run by tests/e2e/serve_guard.sh.

usage: serve_guard.py MEMSCRIBE TRACE WORK [OTHER_USER]
OTHER_USER (as root only): the user the flood and the reads run as.
LARGE_TRACE in the environment: a large finished trace, asked the extreme
queries too."""
import concurrent.futures
import json
import os
import pwd
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

FLOOD = 200       # half-open connections of the other user
# The owner's request during the flood: answered while the flood holds
# every connection (it lets go only when told), within this. Starved, it
# would wait for the flood's end, which never comes before the answer: a
# condition that load cannot move, only slow (1.44 s under a load of 10,
# where a bound of 1 s failed a flake check).
ANSWER_TIMEOUT_S = 20
QUERIES = 60      # concurrent queries, each a different one (no kept answer)


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def get(url, timeout=30):
    """(status, body) of a GET."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def address(url_file, who):
    """The address who writes into url_file, once it is whole (60 s at most)."""
    for _ in range(600):
        if os.path.exists(url_file) and open(url_file).read().endswith("\n"):
            return open(url_file).read().strip()
        time.sleep(0.1)
    fail("%s wrote no address in 60 s" % who)


def as_user(user, code, stdin, *args):
    """Run python code as user (setpriv; None: as this one), its output
    returned."""
    cmd = [sys.executable, "-c", code] + list(args)
    if user:
        cmd = ["setpriv", "--reuid=" + user, "--regid=" + str(pwd.getpwnam(user).pw_gid), "--clear-groups"] + cmd
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=120)


FLOOD_CODE = r"""
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
socks, refused = [], 0
for i in range(n):
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", port))
        s.send(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and never the end of the headers
        socks.append(s)
    except OSError:
        refused += 1
print("open", len(socks), "refused", refused, flush=True)
sys.stdin.read()  # held until the test is done: it closes our stdin
"""

READ_CODE = r"""
import os, sys
token = sys.stdin.read().strip()  # not in this process's argv
try:
    open(sys.argv[1]).read()
    print("url file readable")
except OSError:
    pass
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    for what in ("cmdline", "environ"):
        try:
            with open("/proc/%s/%s" % (pid, what), "rb") as f:
                if token.encode() in f.read():
                    print("token in /proc/%s/%s" % (pid, what))
        except OSError:
            pass
"""


# Extreme parameters: each answered 400 (a count out of its bounds) or 200
# within its caps: at most the points asked (1000 unasked, 4000 at most)
# a process, and at most CAP_BYTES of JSON a process (docs/serve.md,
# "Bounded answers": rows and points are per process).
EXTREMES = ["timeline?interval=1ns", "timeline?interval=1ns&sites=32&points=4000",
            "timeline?sites=1000000000", "timeline?sites=9999999", "timeline?points=9999999",
            "timeline?points=0", "timeline?from=5s&to=1s", "timeline?from=99999999s&to=999999999s",
            "timeline?interval=1ns&from=0ns&to=999999999s", "leaks?top=0", "leaks?at=999999999s",
            "window?from=5s&to=1s", "window?from=1ns&to=999999999s&top=200", "tree?depth=9999999",
            "report?top=200", "vmem?top=0"]
CAP_BYTES = 8 << 20


def extremes(api, where):
    """Every EXTREMES query of the server at api, within its caps."""
    for q in EXTREMES:
        t0 = time.monotonic()
        status, body = get(api(q), timeout=300)
        took = time.monotonic() - t0
        if status == 400:
            print("ok: %s: %s refused: %s" % (where, q, body.decode(errors="replace").strip()))
            continue
        if status != 200:
            fail("%s: %s answered %d: %r" % (where, q, status, body[:200]))
        t = json.loads(body)
        procs = max(1, len(t.get("processes", [])))
        if len(body) > CAP_BYTES * procs:
            fail("%s: %s answered %d bytes for %d processes, more than %d each"
                 % (where, q, len(body), procs, CAP_BYTES))
        if q.startswith("timeline"):
            m = re.search(r"points=(\d+)", q)
            cap = int(m.group(1)) if m else 1000
            most = max([len(p["rows"]) for p in t["processes"]] + [len(t.get("site_times_ns", []))])
            if most > cap:
                fail("%s: %s: %d rows in a process, more than %d" % (where, q, most, cap))
        print("ok: %s: %s: %d bytes (%d processes) in %.2f s" % (where, q, len(body), procs, took))


def growing(ms, work):
    """record --live of a program growing for 12 s: the extreme queries of
    its server while the trace grows."""
    url_file = os.path.join(work, "grow.url")
    prog = ("import time\nx = []\nfor i in range(120):\n"
            "    x.append(bytearray(100000))\n    time.sleep(0.1)\n")
    rec = subprocess.Popen([ms, "record", "--live", "--live-url-file", url_file, "-o",
                            os.path.join(work, "grow.mscr"), "--", "/usr/bin/python3", "-c", prog],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base, token = address(url_file, "record --live").split("/?token=")
        time.sleep(2)
        extremes(lambda q: "%s/api/%s%stoken=%s" % (base, q, "&" if "?" in q else "?", token),
                 "a growing trace")
        if rec.poll() is not None:
            fail("the program ended before the queries did: the trace did not grow meanwhile")
    finally:
        rec.wait(timeout=120)


def large(ms, trace, work):
    """The extreme queries of a server of a large finished trace."""
    url_file = os.path.join(work, "large.url")
    srv = subprocess.Popen([ms, "serve", "--url-file", url_file, trace],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base, token = address(url_file, "serve").split("/?token=")
        extremes(lambda q: "%s/api/%s%stoken=%s" % (base, q, "&" if "?" in q else "?", token),
                 "a large finished trace")
    finally:
        srv.terminate()
        srv.wait(timeout=60)


def flood_of(other, port, url, api):
    """other's FLOOD half-open connections, held; the owner's page and
    status answered meanwhile."""
    flood = subprocess.Popen(["setpriv", "--reuid=" + other, "--regid=" + str(pwd.getpwnam(other).pw_gid),
                              "--clear-groups", sys.executable, "-c", FLOOD_CODE, str(port),
                              str(FLOOD)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = flood.stdout.readline().strip()
    if not re.match(r"open (\d+) refused (\d+)", line):
        fail("the flood said: " + line)
    time.sleep(0.5)
    for what in ("", "status"):
        t0 = time.monotonic()
        try:
            status, _ = get(api(what) if what else url, timeout=ANSWER_TIMEOUT_S)
        except OSError as e:
            fail("during %s's flood (%s), /%s was not answered while the flood held its "
                 "connections (%s after %.1f s)" % (other, line, what, e, time.monotonic() - t0))
        took = time.monotonic() - t0
        if status != 200 or flood.poll() is not None:
            fail("during %s's flood (%s), /%s answered %d in %.2f s%s"
                 % (other, line, what, status, took, "" if flood.poll() is None else ", after the flood ended"))
        print("ok: during %s's %d half-open connections (%s), /%s answered in %.3f s"
              % (other, FLOOD, line, what, took))
    flood.stdin.close()
    flood.wait()
    time.sleep(0.5)


def main():
    ms, trace, work = sys.argv[1:4]
    other = sys.argv[4] if len(sys.argv) > 4 else None
    url_file = os.path.join(work, "url")
    err = open(os.path.join(work, "serve.err"), "w")
    srv = subprocess.Popen([ms, "serve", "--url-file", url_file, trace],
                           stdout=subprocess.DEVNULL, stderr=err)
    try:
        url = address(url_file, "serve")
        base, token = url.split("/?token=")
        port = int(base.rsplit(":", 1)[1])
        api = lambda q: "%s/api/%s%stoken=%s" % (base, q, "&" if "?" in q else "?", token)

        mode = os.stat(url_file).st_mode & 0o777
        if mode != 0o600:
            fail("the address file is mode %o, not 600" % mode)
        print("ok: the address file is 0600")

        # Another user's reads: neither the file nor any process shows the token.
        if other:
            r = as_user(other, READ_CODE, token, url_file)
            if r.returncode or r.stdout.strip():
                fail("as %s: %s%s" % (other, r.stdout, r.stderr))
            print("ok: as %s, the token is in no file and no process" % other)
        r = as_user(None, READ_CODE, token, "/nonexistent")
        leaks = [l for l in r.stdout.splitlines() if "/environ" in l or "/cmdline" in l]
        if leaks:
            fail("the token shows in a process: " + "; ".join(leaks))
        print("ok: no process's argv or environment holds the token")

        # The flood: another user's half-open connections, held (the
        # owner's own flood would take the owner's share: not a test).
        if other:
            flood_of(other, port, url, api)
        else:
            print("skip: the flood of another user needs root (to run as one)")

        # Concurrent queries: each a different one, all answered.
        qs = ["timeline?interval=%dms" % (i + 1) for i in range(QUERIES)]
        with concurrent.futures.ThreadPoolExecutor(QUERIES) as ex:
            got = list(ex.map(lambda q: get(api(q), timeout=120)[0], qs))
        bad = [(q, s) for q, s in zip(qs, got) if s != 200]
        if bad:
            fail("%d of %d concurrent queries not answered 200: %s" % (len(bad), QUERIES, bad[:5]))
        print("ok: %d concurrent queries all answered" % QUERIES)

        extremes(api, "a finished trace")

        # A GET with a body, its client waiting for "100 Continue" and never
        # sending the body: a 413 at all is an answer at its headers (a
        # server waiting for the body would say nothing until its 30 s idle
        # timeout, past this one).
        s = socket.create_connection(("127.0.0.1", port), timeout=ANSWER_TIMEOUT_S)
        path = "/api/status?token=" + token
        s.send(("GET %s HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n"
                "Expect: 100-continue\r\n\r\n" % path).encode())
        t0 = time.monotonic()
        try:
            reply = s.recv(200).decode(errors="replace")
        except socket.timeout:
            fail("a GET with a body and Expect: 100-continue had no answer in %d s" % ANSWER_TIMEOUT_S)
        took = time.monotonic() - t0
        if not reply.startswith("HTTP/1.1 413"):
            fail("a GET with a body: %r after %.2f s" % (reply[:40], took))
        print("ok: a GET with a body was refused at once (413, %.3f s)" % took)
    finally:
        srv.terminate()
        srv.wait(timeout=30)
        err.close()
    growing(ms, work)
    if os.environ.get("LARGE_TRACE"):
        large(ms, os.environ["LARGE_TRACE"], work)
    lines = open(os.path.join(work, "serve.err")).read().splitlines()
    if len(lines) > 6:
        fail("serve wrote %d lines to stderr:\n%s" % (len(lines), "\n".join(lines[:10])))
    print("ok: serve's stderr holds %d lines:" % len(lines))
    for l in lines:
        print("    " + l)


main()
