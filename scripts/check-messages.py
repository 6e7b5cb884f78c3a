#!/usr/bin/env python3
"""Checks that every message a document quotes is one the app can still print.

    python3 scripts/check-messages.py [REPO_ROOT]
    python3 scripts/check-messages.py --self-test

A document quotes a message the app prints with the marker **Message:** followed, on the same
line, by one code span: **Message:** `The host <host> was not found. Check the server address.`
Inside it, `<name>` stands for what the code fills in (`%1`, `%2`, ... in the tr() or
QStringLiteral source text); everything else must be the code's text exactly. The message may be
the whole string literal or a part of it (a sentence of a longer one).

What it reads:
  - every *.md file outside build and hidden folders, outside fenced code blocks;
  - the string literals of every *.cpp and *.h file under src/: adjacent literals are joined as
    the compiler joins them ("a " "b" is "a b"), escapes are undone (\\" is ", \\n a newline),
    comments and character literals are skipped.

Each marker without a code span right after it, and each quoted message that no literal holds,
is printed as `file:line: what is wrong`; the exit code is then 1, else 0. A run that finds no
marker at all also fails, so a renamed marker cannot turn the check into a no-op.
Python 3.11 standard library only.
"""

import os
import re
import sys
import tempfile

SKIP_DIRS = {".git", "__pycache__", "node_modules", ".cache"}
SOURCE_SUFFIXES = (".cpp", ".h")
MARKER = "**Message:**"
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
MD_FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
# A placeholder in a quoted message: <host>, <the server's words>.
PLACEHOLDER = re.compile(r"<[^<>`]+>")
# What a placeholder stands for in the code: Qt's %1..%99 (and %L1), or %n.
ARG = r"%(?:L?\d{1,2}|n)"
# The digits before a digit separator (1'000, 0xFF'FF), not an identifier ending in one (u'a').
NUMBER_BEFORE = re.compile(r"(?<![\w.])(?:0[xXbB])?[0-9][0-9a-fA-F']*$")
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "?": "?", "0": "\0", "a": "\a"}


# ---- the source side ------------------------------------------------------------------------

def unescape(body):
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt == "x":
                m = re.match(r"[0-9a-fA-F]+", body[i + 2:])
                out.append(chr(int(m.group(0), 16)) if m else "x")
                i += 2 + (len(m.group(0)) if m else 0)
                continue
            if nxt in "uU":
                width = 4 if nxt == "u" else 8
                out.append(chr(int(body[i + 2:i + 2 + width], 16)))
                i += 2 + width
                continue
            out.append(ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def string_literals(text):
    """The string literals of C++ source text, adjacent ones joined, in order."""
    literals = []
    current = None      # the literal being joined, or None
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        raw = re.match(r'(?:u8|[uUL])?R"([^()\\\s]{0,16})\(', text[i:i + 24])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            closing = ")" + raw.group(1) + '"'
            start = i + raw.end()
            end = text.find(closing, start)
            end = n if end < 0 else end
            piece = text[start:end]
            current = piece if current is None else current + piece
            i = end + len(closing)
            i = skip_suffix(text, i)
            continue
        prefix = re.match(r'(?:u8|[uUL])?"', text[i:i + 3])
        if prefix and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            j = i + prefix.end()
            start = j
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            piece = unescape(text[start:j])
            current = piece if current is None else current + piece
            i = skip_suffix(text, j + 1)
            continue
        if ch == "'":
            # A digit separator (1'000) is not a character literal.
            if NUMBER_BEFORE.search(text[max(0, i - 40):i]) and i + 1 < n and text[i + 1].isalnum():
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != "'" and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            if current is not None:
                literals.append(current)
                current = None
            continue
        if not ch.isspace() and current is not None:
            literals.append(current)
            current = None
        i += 1
    if current is not None:
        literals.append(current)
    return literals


def skip_suffix(text, i):
    """Past a user-defined literal suffix (u"..."_s, "..."_L1)."""
    m = re.match(r"_\w+", text[i:i + 16])
    return i + m.end() if m else i


def source_literals(root):
    found = []
    for top, dirs, names in os.walk(os.path.join(root, "src")):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(names):
            if name.endswith(SOURCE_SUFFIXES):
                try:
                    with open(os.path.join(top, name), encoding="utf-8") as f:
                        found.extend(string_literals(f.read()))
                except (OSError, UnicodeDecodeError):
                    continue
    return found


# ---- the document side ----------------------------------------------------------------------

def markdown_files(root):
    for top, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not skip_dir(root, top, d))
        for name in sorted(names):
            if name.endswith(".md"):
                yield os.path.join(top, name)


def skip_dir(root, top, name):
    if name in SKIP_DIRS or name.startswith("."):
        return True
    full = os.path.join(top, name)
    if os.path.realpath(top) == os.path.realpath(root) and name.startswith("build"):
        return True
    return os.path.exists(os.path.join(full, "CMakeCache.txt"))


def quoted_messages(path):
    """(line, message or None) for each marker in the file; None when no code span follows it."""
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return out
    fence = None
    for number, text in enumerate(lines, 1):
        opening = MD_FENCE.match(text)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            continue
        if opening:
            fence = opening.group(1)
            continue
        start = 0
        while True:
            at = text.find(MARKER, start)
            if at < 0:
                break
            rest = text[at + len(MARKER):]
            span = CODE_SPAN.match(rest.lstrip(" \t"))
            out.append((number, span.group(2).strip() if span else None))
            start = at + len(MARKER)
    return out


def pattern_of(message):
    """The quoted message as a regular expression over a source literal."""
    parts, last = [], 0
    for m in PLACEHOLDER.finditer(message):
        parts.append(re.escape(message[last:m.start()]))
        parts.append(ARG)
        last = m.end()
    parts.append(re.escape(message[last:]))
    return re.compile("".join(parts), re.DOTALL)


# ---- the check ------------------------------------------------------------------------------

def check(root):
    root = os.path.realpath(root)
    literals = source_literals(root)
    problems, count = [], 0
    for path in markdown_files(root):
        rel = os.path.relpath(path, root)
        for line, message in quoted_messages(path):
            count += 1
            if message is None:
                problems.append(f"{rel}:{line}: {MARKER} is not followed by the message in a `code span` on the same line")
                continue
            if not PLACEHOLDER.sub("", message).strip():
                problems.append(f"{rel}:{line}: the quoted message is only placeholders")
                continue
            pattern = pattern_of(message)
            if not any(pattern.search(text) for text in literals):
                problems.append(f"{rel}:{line}: no string in src/ reads \"{message}\" (with <...> for %1, %2, ...)")
    return count, problems


def main(argv):
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    if not os.path.isdir(root):
        print(f"check-messages.py: {root} is not a folder", file=sys.stderr)
        return 2
    count, problems = check(root)
    for problem in problems:
        print(problem)
    if count == 0:
        print(f"check-messages.py: no {MARKER} marker in any document; the check would prove nothing", file=sys.stderr)
        return 1
    if problems:
        print(f"{len(problems)} of {count} quoted message(s) are not in the code", file=sys.stderr)
        return 1
    print(f"all {count} quoted messages are in the code", file=sys.stderr)
    return 0


def self_test():
    """The checker on a small tree: a quote that matches, one that went stale, a marker without a
    quote, joined literals, escapes, placeholders and a quote inside a fenced block (ignored)."""
    source = (
        '// tr("Commented out %1") is not a literal\n'
        'auto a = tr("The host %1 was not found. "\n'
        '            "Check the server address.").arg(host);\n'
        'auto b = QStringLiteral("Unlock your login keyring (e.g. in Seahorse, \\"Passwords and Keys\\")");\n'
        "auto c = u\"The proxy%1 in front of %2 failed\"_s; char q = '\"'; int k = 1'000;\n"
        'auto e = u\'a\' + 1; auto d = QStringLiteral("after a char literal %1");\n'
    )
    cases = [
        ("**Message:** `The host <host> was not found. Check the server address.`", True),
        ("**Message:** `Check the server address.`", True),
        ('**Message:** `Unlock your login keyring (e.g. in Seahorse, "Passwords and Keys")`', True),
        ("**Message:** `The proxy<address> in front of <host> failed`", True),
        ("**Message:** `after a char literal <x>`", True),
        ("**Message:** `The host <host> could not be found.`", False),
        ("**Message:** `Commented out <x>`", False),
        ("**Message:** the host was not found", False),
        ("**Message:** `<only a placeholder>`", False),
    ]
    failures = []
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "src"))
        with open(os.path.join(root, "src", "a.cpp"), "w", encoding="utf-8") as f:
            f.write(source)
        for text, ok in cases:
            with open(os.path.join(root, "doc.md"), "w", encoding="utf-8") as f:
                f.write("# Doc\n\n" + text + "\n\n```\n**Message:** `not checked inside a fence`\n```\n")
            count, problems = check(root)
            if count != 1 or (not problems) != ok:
                failures.append(f"{text!r}: expected {'a pass' if ok else 'a problem'}, got {problems or 'none'} ({count} marker(s))")
        with open(os.path.join(root, "doc.md"), "w", encoding="utf-8") as f:
            f.write("# Doc without markers\n")
        if check(root)[0] != 0:
            failures.append("a document without markers counted one")
    for failure in failures:
        print(f"self-test: {failure}")
    if failures:
        return 1
    print(f"self-test: {len(cases) + 1} cases pass", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
