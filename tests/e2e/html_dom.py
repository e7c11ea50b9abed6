# SPDX-License-Identifier: MIT
"""The DOM a browser built, read back for the tests: `chromium --dump-dom`
writes it as HTML, and parse() turns that into a tree of Nodes with each
one's text (its own and its descendants') and the nodes by id."""
from html.parser import HTMLParser


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children, self.text = [], []

    def all_text(self):
        return "".join(self.text)

    def classes(self):
        return (self.attrs.get("class") or "").split()

    def find_all(self, pred):
        out = []
        for c in self.children:
            if pred(c):
                out.append(c)
            out.extend(c.find_all(pred))
        return out


VOID = {"meta", "link", "br", "input", "img", "hr", "col", "area", "base", "wbr", "source"}


class Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", [], None)
        self.cur = self.root
        self.by_id = {}

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if "id" in n.attrs:
            self.by_id[n.attrs["id"]] = n
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if "id" in n.attrs:
            self.by_id[n.attrs["id"]] = n

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.cur = n.parent

    def handle_data(self, data):
        n = self.cur
        while n is not None:
            n.text.append(data)
            n = n.parent


def parse(path):
    t = Tree()
    t.feed(open(path, encoding="utf-8").read())
    return t
