#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Open a viewer's page in headless Chromium through chromedriver (Debian's
chromium-driver and python3-selenium), as a person would: load the URL,
pick a file in the page's file input, click, wait until the page shows
what it should, then keep its text and a screenshot.

usage: view_page.py URL OUT [options]
  --pick CSS FILE   give FILE to the <input type=file> at CSS (dh_view's
                    "Load" button: the page reads it with its own code)
  --click CSS       click the element at CSS (after --pick); repeatable
  --click-text TEXT click the innermost element whose text ends with TEXT
  --wait TEXT       wait until the page's text contains TEXT; repeatable,
                    each after the clicks before it
  --wait-css CSS    wait until an element at CSS exists
  --size WxH        window size (default 1280x900)
  --timeout S       seconds for each wait (default 30)

Each step waits up to --timeout seconds for what it needs (the element it
picks or clicks, --wait's text, --wait-css's element); then, once the
document has loaded and a frame is painted, writes OUT.txt (the page's
text, document.body.innerText), OUT.html (its DOM) and OUT.png (a
screenshot of the window); prints the page's console messages of level
SEVERE and exits 1 on them, on a wait that times out (saying what it waited
for) or on a page that does not load. Steps run in the order given.
"""
import sys

from selenium import webdriver
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def parse(argv):
    if len(argv) < 3:
        sys.exit("usage: view_page.py URL OUT [--pick CSS FILE] [--click CSS] [--click-text TEXT] "
                 "[--wait TEXT] [--wait-css CSS] [--size WxH] [--timeout S]")
    url, out, steps, size, timeout = argv[1], argv[2], [], (1280, 900), 30.0
    i = 3
    while i < len(argv):
        a = argv[i]
        if a == "--pick":
            steps.append(("pick", argv[i + 1], argv[i + 2]))
            i += 3
            continue
        if a in ("--click", "--click-text", "--wait", "--wait-css"):
            steps.append((a[2:], argv[i + 1]))
        elif a == "--size":
            w, h = argv[i + 1].split("x")
            size = (int(w), int(h))
        elif a == "--timeout":
            timeout = float(argv[i + 1])
        else:
            sys.exit("view_page.py: unknown option %s" % a)
        i += 2
    return url, out, steps, size, timeout


def driver_for(size, timeout):
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/lib/chromium/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--hide-scrollbars",
                 "--window-size=%d,%d" % size):
        o.add_argument(flag)
    o.set_capability("goog:loggingOptions", {"browser": "ALL"})
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
    d.set_page_load_timeout(timeout)
    d.set_script_timeout(timeout)
    return d


def text_of(d):
    return d.execute_script("return document.body ? document.body.innerText : ''") or ""


def until(d, timeout, cond, what):
    """What cond(d) gives once it is true, within timeout seconds; else a
    TimeoutException saying what never came and how long it was waited for."""
    try:
        return WebDriverWait(d, timeout).until(cond)
    except TimeoutException:
        raise TimeoutException("%s: not there after %g s" % (what, timeout))


def run(d, url, steps, timeout):
    d.get(url)
    for step in steps:
        what = step[0]
        # get() returns once the document is loaded, not once the page's
        # script made what it shows (dh_view makes its file input in its
        # body's onload): every element is waited for before it is used.
        if what == "pick":
            until(d, timeout, lambda x: x.find_elements(By.CSS_SELECTOR, step[1]),
                  "the file input %s" % step[1])[0].send_keys(step[2])
        elif what == "click":
            until(d, timeout, lambda x: x.find_elements(By.CSS_SELECTOR, step[1]),
                  "the element %s to click" % step[1])[0].click()
        elif what == "click-text":
            path = "//*[substring(text(), string-length(text()) - %d) = '%s']" % (
                len(step[1]) - 1, step[1])
            until(d, timeout, lambda x: x.find_elements(By.XPATH, path),
                  "an element whose text ends with %r, to click" % step[1])[-1].click()
        elif what == "wait":
            until(d, timeout, lambda x: step[1] in text_of(x), "the text %r on the page" % step[1])
        elif what == "wait-css":
            until(d, timeout, lambda x: x.find_elements(By.CSS_SELECTOR, step[1]),
                  "an element %s" % step[1])


def painted(d, timeout):
    """The document loaded and a frame painted since the last step: two
    animation frames (the first callback runs before the frame that shows
    what the page last changed is drawn, the second after it)."""
    until(d, timeout, lambda x: x.execute_script("return document.readyState") == "complete",
          "the document's load (readyState 'complete')")
    try:  # bounded by the script timeout, set to the same timeout
        d.execute_async_script("const done = arguments[arguments.length - 1];"
                               "requestAnimationFrame(() => requestAnimationFrame(done));")
    except TimeoutException:  # chromedriver's "script timeout"
        raise TimeoutException("two animation frames (the page painted): not there after %g s"
                               % timeout)


def main():
    url, out, steps, size, timeout = parse(sys.argv)
    d = driver_for(size, timeout)
    rc = 0
    try:
        try:
            run(d, url, steps, timeout)
        except (TimeoutException, WebDriverException) as e:
            print("view_page: %s: %s" % (url, getattr(e, "msg", None) or e), file=sys.stderr)
            rc = 1
        # The last frame painted before the picture.
        try:
            painted(d, timeout)
        except (TimeoutException, WebDriverException) as e:
            print("view_page: %s: %s" % (url, getattr(e, "msg", None) or e), file=sys.stderr)
            rc = 1
        with open(out + ".txt", "w") as f:
            f.write(text_of(d))
        with open(out + ".html", "w") as f:
            f.write(d.page_source)
        d.save_screenshot(out + ".png")
        for m in d.get_log("browser"):
            if m.get("level") == "SEVERE":
                print("view_page: console: %s" % m.get("message"), file=sys.stderr)
                rc = 1
    finally:
        d.quit()
    sys.exit(rc)


if __name__ == "__main__":
    main()
