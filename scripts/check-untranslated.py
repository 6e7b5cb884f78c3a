#!/usr/bin/env python3
"""Finds text a user would read that bypasses tr().

Scans the C++ sources of the layers that talk to people (src/gui, src/models, src/cli, src/core,
src/app) for string literals that read like words ("two or more words") and are not inside a
translation call. Log lines (qCDebug/qCInfo/qCWarning/qWarning...) are for developers and stay
English; so do machine formats. A literal that is deliberately not translated carries a marker
comment on its line or one of the two lines before: `// untranslated: <why>` (e.g. a Kubernetes message the
code matches, a YAML key, an HTTP header). Exits 1 and lists file:line for each finding.

Usage: check-untranslated.py SOURCE_ROOT
"""
import re
import sys
from pathlib import Path

LAYERS = ["src/gui", "src/models", "src/cli", "src/core", "src/app"]
# Calls whose string arguments are translated or are not for users.
TRANSLATED_CALLS = re.compile(
    r"\b(tr|translate|QT_TR_NOOP|QT_TRANSLATE_NOOP|QT_TR_N_NOOP|QT_TRANSLATE_N_NOOP|qtTrId|trc|trN)\s*\(")
# Text the code matches against what it reads, or a format: patterns, comparisons, date formats.
MATCHING_CALLS = re.compile(
    r"\b(QRegularExpression(?:\s+\w+)?|setPattern|startsWith|endsWith|contains|indexOf|lastIndexOf|compare|count|toString|fromString)\s*\(")
COMPARED = re.compile(r"(==|!=)\s*(QLatin1String\s*\(|QStringLiteral\s*\(|u8?)?\s*$")
LOG_CALLS = re.compile(r"\b(qC?(Debug|Info|Warning|Critical|Fatal)|Q_LOGGING_CATEGORY|Q_DECLARE_LOGGING_CATEGORY)\b")
STRING = re.compile(r'(?:u8|u|U|L)?"((?:[^"\\\n]|\\.)*)"')
WORDS = re.compile(r"[A-Za-z][a-z']+[ ,;:]+[a-z]+[a-z']*\b")
MARKER = "untranslated:"
# Text that is markup or a machine language, not words for people: HTML tags (their text is checked
# without them), style sheets, SQL.
TAGS = re.compile(r"<[^>]*>")
STYLE_SHEET = re.compile(r"^\s*[\w#.*:-]+\s*\{")
SQL = re.compile(r"^\s*(SELECT|INSERT|CREATE|UPDATE|DELETE|PRAGMA|ALTER|DROP)\b")


def strip_comments(text):
    """Blanks out comments, keeping line numbers and string literals."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == '\\' else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif c == "'" and i + 2 < n and (text[i + 1] != '\\' and text[i + 2] == "'"):
            out.append(text[i:i + 3])
            i += 3
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i)
            out.append(re.sub(r"[^\n]", " ", text[i:end + len(m.group(1)) + 2]))
            i = end + len(m.group(1)) + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def call_spans(code, pattern, to_statement_end=False):
    """(start, end) spans of the argument lists of every call matching pattern; with
    to_statement_end, up to the end of the statement (text streamed into a log line)."""
    spans = []
    for m in pattern.finditer(code):
        i = m.end()
        if code[i - 1] != "(":
            j = code.find("(", i)
            if j < 0 or code[i:j].strip():
                continue
            i = j + 1
        depth, j = 1, i
        while j < len(code) and depth:
            ch = code[j]
            if ch == '"':
                j += 1
                while j < len(code) and code[j] != '"':
                    j += 2 if code[j] == '\\' else 1
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            j += 1
        if to_statement_end:
            while j < len(code) and code[j] != ";":
                if code[j] == '"':
                    j += 1
                    while j < len(code) and code[j] != '"':
                        j += 2 if code[j] == '\\' else 1
                j += 1
        spans.append((m.start(), j))
    return spans


def findings(path, root):
    raw = path.read_text(encoding="utf-8")
    raw_lines = raw.splitlines()
    code = strip_comments(raw)
    covered = (call_spans(code, TRANSLATED_CALLS) + call_spans(code, LOG_CALLS, to_statement_end=True)
               + call_spans(code, MATCHING_CALLS))
    covered.sort()
    result = []
    previous_end, previous_decided = -1, False
    for m in STRING.finditer(code):
        text = m.group(1)
        # Adjacent literals ("a " "b") are one string: the first one's decision holds for the rest.
        if previous_end >= 0 and not code[previous_end:m.start()].strip():
            previous_end = m.end()
            continue
        previous_end = m.end()
        if STYLE_SHEET.match(text) or SQL.match(text) or not WORDS.search(TAGS.sub(" ", text)):
            continue
        pos = m.start()
        if any(a <= pos < b for a, b in covered) or COMPARED.search(code[max(0, pos - 40):pos]):
            continue
        line = code.count("\n", 0, pos)
        near = raw_lines[max(0, line - 2):line + 1]
        if any(MARKER in l for l in near):
            continue
        # #include and static_assert/Q_ASSERT messages are not shown to users.
        current = raw_lines[line].lstrip()
        if current.startswith("#") or "static_assert" in current or "Q_ASSERT" in current:
            continue
        result.append(f"{path.relative_to(root)}:{line + 1}: \"{text[:70]}\"")
    return result


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    found = []
    for layer in LAYERS:
        for path in sorted((root / layer).rglob("*")):
            if path.suffix in (".cpp", ".h"):
                found += findings(path, root)
    for f in found:
        print(f)
    if found:
        print(f"{len(found)} user-facing literal(s) bypass tr(); translate them, or mark a deliberate one "
              f"with `// {MARKER} <why>` on its line or the line before.", file=sys.stderr)
        return 1
    print("every user-facing literal goes through tr()")
    return 0


if __name__ == "__main__":
    sys.exit(main())
