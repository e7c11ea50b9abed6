# SPDX-License-Identifier: MIT
"""The page's source panel against `memscribe source` (run by
tests/e2e/serve_source.sh): python3 serve_source.py URL MEMSCRIBE TRACE
SHOT CASE.

source: the first site clicked shows the lines around its frame of
interest, its line marked, as the command's JSON has them; a caller's
frame clicked in the stack shows its own. source-crafted: each site's
frame names a file the trace's owner may not read, a link or a path
through '..': the panel says why, as the command does, and shows no line.
"""
import json
import subprocess
import sys

from selenium.webdriver.common.by import By

import page_check as pc

case = sys.argv[5]
d = pc.start()
pc.wait(d, "return document.body.dataset.loaded >= 1", "the page's first load")


def source(frame):
    """`memscribe source --context 6 --format=json TRACE FRAME`: its JSON,
    or its message when it refuses."""
    p = subprocess.run([pc.memscribe, "source", "--format=json", "--context", "6", pc.trace, frame],
                       capture_output=True, text=True)
    return json.loads(p.stdout) if p.returncode == 0 else p.stderr.strip()


def shown(frame):
    """What the panel shows once it has answered for frame."""
    # data-answered: the answer drawn is this frame's (the last frame's
    # reason or lines stay until then: waiting on them passed at once)
    pc.wait(d, "return document.getElementById('source').dataset.answered === arguments[0]",
            "the source of " + frame, 60, frame)
    return d.execute_script(
        "const lines = [...document.querySelectorAll('#source-lines span')];"
        "const here = document.querySelector('#source-lines .here');"
        "return {file: document.getElementById('source-file').textContent,"
        " numbers: lines.map(l => Number(l.dataset.line)),"
        " texts: lines.map(l => l.textContent.replace(/^ *\\d+  /, '').replace(/\\n$/, '')),"
        " here: here ? Number(here.dataset.line) : null}")


def check_frame(frame):
    want, got = source(frame), shown(frame)
    if isinstance(want, str):
        why = want.split(": ")[-1]
        pc.check(frame + ": the reason", got["file"].endswith(why), True)
        pc.check(frame + ": no lines", got["numbers"], [])
        return
    changed = " (the file changed after the trace was written: its lines may have moved)"
    pc.check(frame + ": file and line", got["file"],
             "%s, line %d%s" % (want["source"], want["line"], changed if want["changed"] else ""))
    pc.check(frame + ": line numbers", got["numbers"],
             list(range(want["first_line"], want["first_line"] + len(want["lines"]))))
    pc.check(frame + ": lines", got["texts"], want["lines"])
    pc.check(frame + ": the marked line", got["here"], want["line"])


rows = d.find_elements(By.CSS_SELECTOR, "#sites tbody tr")
pc.check("sites shown", len(rows) > 0, True)
for i in range(len(rows) if case == "source-crafted" else 1):
    d.find_elements(By.CSS_SELECTOR, "#sites tbody tr")[i].click()
    pc.wait(d, "return document.querySelectorAll('#stack .frame').length > 0", "the clicked site's stack")
    frames = d.execute_script("return [...document.querySelectorAll('#stack .frame')]"
                              ".map(s => [s.dataset.frame, s.classList.contains('has-source')])")
    interest = d.execute_script("return document.getElementById('source').dataset.frame")
    check_frame(interest)
    if case == "source":
        # a caller: main, whose own line the panel then shows
        caller = [f for f, has in frames if has and f.startswith("main (")][0]
        d.find_element(By.CSS_SELECTOR, "#stack .frame[data-frame='%s']" % caller).click()
        check_frame(caller)
        pc.check("the picked frame marked", d.execute_script(
            "return document.querySelector('#stack .frame.on').dataset.frame"), caller)
sys.exit(pc.finish(d, expected=("/api/source",) if case == "source-crafted" else ()))
