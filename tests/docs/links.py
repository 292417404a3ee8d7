#!/usr/bin/env python3
"""Every reference in the documentation resolves (docs/*.md and README.md, from the project root).

    python3 tests/docs/links.py

Checked:
  - Markdown links and images, [text](target) and ![alt](target): a relative target names a file
    that exists (relative to the page), and a #anchor names a heading of the target page (GitHub's
    anchors: lower case, punctuation dropped, spaces to hyphens, -1, -2 for repeats);
  - the project's written references: a repository path (docs/x.md, examples/..., tests/..., src/...,
    ...) names a file or folder that exists (a `*` matches as a glob; paths with <placeholders>,
    in build/ and those of NOT_FILES are not checked), and `docs/x.md, "Section"` or
    `docs/x.md "Section"` (also across a line break) names a heading of that page, or a paragraph's
    bold or italic run-in title (`**Warm start.** ...`), that starts with the quoted text (case,
    backticks and emphasis ignored).
Prints each broken reference as page:line: what, and exits 1 when there is one.
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOP = ("docs", "examples", "tests", "src", "include", "cli", "python", "cmake", "bench", "web")

FENCE = re.compile(r"^\s*```")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
RUN_IN = re.compile(r"^(\*\*?)([^*]+)\1")
MDLINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
PATH = re.compile(r"(?<![\w./-])((?:%s)/[\w.*/<>+-]*[\w*>/])" % "|".join(TOP))
SECTION = re.compile(r"(docs/[\w.-]+\.md),?\s+\"([^\"]+)\"")
# paths a page names without the repository having them, on purpose
NOT_FILES = {
    "web/vendor/",  # docs/report.md: the vendored copy of three.js the report does not keep
}


def pages():
    out = sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
    return out + [os.path.join(ROOT, "README.md")]


def lines_outside_fences(path):
    """(line number, text, inside a fenced block) for every line of the page"""
    inside = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if FENCE.match(line):
                inside = not inside
                yield n, line, True
                continue
            yield n, line, inside


def headings(path):
    return [m.group(2) for _, line, fenced in lines_outside_fences(path) if not fenced
            for m in [HEADING.match(line)] if m]


def slug(title):
    s = title.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)  # GitHub keeps letters, digits, _, - and spaces
    return s.replace(" ", "-")


def titles(path):
    """headings and run-in paragraph titles: what a written reference may name"""
    out = []
    for _, line, fenced in lines_outside_fences(path):
        m = None if fenced else HEADING.match(line) or RUN_IN.match(line)
        if m:
            out.append(m.group(2))
    return out


def anchors(path):
    seen, out = {}, set()
    for h in headings(path):
        base = slug(h)
        k = seen.get(base, 0)
        out.add(base if k == 0 else "%s-%d" % (base, k))
        seen[base] = k + 1
    return out


def plain(title):
    return re.sub(r"\s+", " ", title.replace("`", "").replace("*", "")).strip().lower()


def path_exists(rel):
    if rel in NOT_FILES:
        return True
    rel = rel.rstrip("/.")
    if "<" in rel or ">" in rel:
        return True
    if "*" in rel:
        return bool(glob.glob(os.path.join(ROOT, rel)))
    return os.path.exists(os.path.join(ROOT, rel))


def check(page):
    errors = []
    rel_page = os.path.relpath(page, ROOT)
    numbered = list(lines_outside_fences(page))
    for i, (n, line, fenced) in enumerate(numbered):
        following = numbered[i + 1][1] if i + 1 < len(numbered) and not numbered[i + 1][2] else ""
        where = "%s:%d" % (rel_page, n)
        if not fenced:
            for m in MDLINK.finditer(line):
                target = m.group(1)
                if re.match(r"^[a-z]+:", target):
                    continue  # http:, https:, mailto:
                file_part, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(page), file_part)) if file_part else page
                if not os.path.exists(dest):
                    errors.append("%s: link to a missing file: %s" % (where, target))
                elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    errors.append("%s: link to a missing heading: %s" % (where, target))
            joined = line.rstrip("\n") + " " + following
            for m in SECTION.finditer(joined):
                if m.start() >= len(line.rstrip("\n")):
                    continue  # the next line's own
                dest = os.path.join(ROOT, m.group(1))
                if os.path.exists(dest):
                    want = plain(m.group(2))
                    if not any(plain(h).startswith(want) for h in titles(dest)):
                        errors.append('%s: %s has no heading "%s"' % (where, m.group(1), m.group(2)))
        for m in PATH.finditer(line):
            if not path_exists(m.group(1)):
                errors.append("%s: no such path: %s" % (where, m.group(1)))
    return errors


def main():
    errors = [e for p in pages() for e in check(p)]
    for e in errors:
        print(e)
    print("docs links: %d pages, %d broken references" % (len(pages()), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
