#!/usr/bin/env python3
"""Checks the user documentation: every relative link in README.md and docs/*.md names a file
that exists (and, with #anchor, a heading of that file, slugged as GitHub slugs it), and the
README stays at most 300 lines. Prints what is broken and exits 1; exits 0 when all is well.

Usage: scripts/check-docs.py [SOURCE_ROOT]   (default: the directory above this script)
Standard library only, so Debian's /usr/bin/python3 runs it as it is.
"""
import os
import re
import sys

README_MAX_LINES = 300

# [text](target) and [text](target "title"); images too. Reference-style links are not used here.
INLINE_LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")


def slug(heading):
    """GitHub's anchor for a heading: lower case; markup and punctuation dropped except '-' and
    '_'; each space a '-'. (Duplicates get -1, -2, ... in anchors_of.)"""
    text = INLINE_CODE.sub(lambda m: m.group(2), heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def prose_lines(text):
    """The lines outside fenced code blocks, with their numbers."""
    in_fence = None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            if in_fence is None:
                in_fence = m.group(1)
            elif m.group(1) == in_fence:
                in_fence = None
            continue
        if in_fence is None:
            yield number, line


def anchors_of(path, cache={}):
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        seen = {}
        anchors = set()
        for _, line in prose_lines(text):
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            anchors.add(base if n == 0 else f"{base}-{n}")
        cache[path] = anchors
    return cache[path]


def check_file(root, path):
    problems = []
    with open(path, encoding="utf-8") as f:
        text = f.read()
    rel = os.path.relpath(path, root)
    for number, line in prose_lines(text):
        # Links inside inline code are examples, not links.
        for target in INLINE_LINK.findall(INLINE_CODE.sub("", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:, ...
                continue
            file_part, _, anchor = target.partition("#")
            dest = path if not file_part else os.path.normpath(os.path.join(os.path.dirname(path), file_part))
            if not os.path.exists(dest):
                problems.append(f"{rel}:{number}: link to {target}: {os.path.relpath(dest, root)} does not exist")
                continue
            if not anchor:
                continue
            if os.path.isdir(dest) or not dest.endswith(".md"):
                problems.append(f"{rel}:{number}: link to {target}: an anchor into something that is not Markdown")
            elif anchor not in anchors_of(dest):
                problems.append(f"{rel}:{number}: link to {target}: {os.path.relpath(dest, root)} has no heading #{anchor}")
    return problems


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    readme = os.path.join(root, "README.md")
    docs = os.path.join(root, "docs")
    files = [readme] + sorted(
        os.path.join(docs, name) for name in os.listdir(docs) if name.endswith(".md")
    )
    problems = []
    for path in files:
        problems += check_file(root, path)
    with open(readme, encoding="utf-8") as f:
        lines = len(f.read().splitlines())
    if lines > README_MAX_LINES:
        problems.append(f"README.md: {lines} lines, more than {README_MAX_LINES}: move the detail to docs/")
    for p in problems:
        print(p)
    if problems:
        print(f"check-docs: {len(problems)} problem(s) in {len(files)} file(s)")
        return 1
    print(f"check-docs: {len(files)} file(s) checked, README.md {lines} lines, every link resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
