#!/usr/bin/env python3
"""Checks that the repository stands alone: every reference in it points at something in it.

    python3 scripts/check-links.py [REPO_ROOT]

What it reads (build folders, hidden folders, __pycache__ and this script are skipped):
  - Markdown (*.md): relative links and images, [text](path#anchor) and [id]: path. A link's
    file must exist; an anchor must match a heading of that file (GitHub's heading ids), also
    for pure #anchor links into the same file. http(s):, mailto: and other schemes are skipped.
  - Source comments: // and /* */ in *.h, *.hpp, *.cpp; # comments and triple-quoted strings
    (docstrings) in *.py; # comments in *.sh, *.cmake, CMakeLists.txt, .clang-format and
    .clang-tidy. String literals and code are not read for citations.
  - In both, a cited file: a path ending in .md (`docs/jobs.md`, `crds/SOURCE.md`, a bare
    `kuberay.md`) or any path under docs/. A path is looked up beside the citing file and at
    the repository root; a bare name also in docs/. When the citation names a section right
    after it (`docs/jobs.md, "The tracker"`, `docs/kuberay.md §2`), the target must have a
    heading with that name (or starting with it) or that number.
  - Everywhere, code and data (*.json) included: any mention of the design, conventions and
    reference-notes files, or the shared folder, that sit beside a developer's checkout (the
    patterns in FORBIDDEN below) is an error. They are not in the repository; docs/ and
    CONTRIBUTING.md hold what the code relies on.

Prints each problem as `file:line: what is missing` and exits 1 if there is any, else 0.
Python 3.11 standard library only.
"""

import io
import os
import re
import sys
import tokenize
import unicodedata

SELF = os.path.join("scripts", "check-links.py")
SKIP_DIRS = {".git", "__pycache__", "node_modules", ".cache"}
CPP_SUFFIXES = (".h", ".hpp", ".cpp")
HASH_COMMENT_NAMES = {"CMakeLists.txt", ".clang-format", ".clang-tidy"}
HASH_COMMENT_SUFFIXES = (".sh", ".cmake")
DATA_SUFFIXES = (".json",)

# Citations of material outside the repository. Checked on every line of every file read,
# because a path in code (a test reading a file beside the checkout) is as much a dependency
# as a comment. The patterns are written so that this file does not name them itself.
# Each path-like word holding one of these is reported once, with where its content now lives.
FORBIDDEN = [
    (re.compile(r"\bDESIG[N]\.md\b"), "the product design is docs/design.md"),
    (re.compile(r"\bCONVENTION[S]\.md\b"), "the code conventions are in CONTRIBUTING.md"),
    (re.compile(r"reference/note[s]"), "the facts the code relies on are in docs/"),
    (re.compile(r"share[d]/reference"), "say where the upstream file came from instead"),
    (re.compile(r"\.\./share[d]\b"), "that folder is beside a checkout, not in it"),
]
PATH_WORD = re.compile(r"[\w.§/-]+")

URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://\S+")
# A path-like token ending in .md, or any file path under docs/.
CITATION = re.compile(r"(?<![\w./@-])((?:\.{1,2}/)*(?:[\w.-]+/)*[\w.-]*\w\.md|docs/(?:[\w.-]+/)*[\w.-]+\.\w+)(?![\w/-])")
# What may follow a citation to name a section: `, "Name"`, `, section "Name"`, `"Name"`,
# `, 'Name'` (single quotes only after a comma, so "docs/e2e.md's" is not read as one),
# `§3.2`, `, section 4`.
SECTION_NAME = [
    re.compile(r"""^\s*(?:,\s*(?:sections?\s+)?)?["“]([^"”\n]{2,80})["”]"""),
    re.compile(r"""^\s*,\s*(?:sections?\s+)?'([^'\n]{2,80})'"""),
]
SECTION_NUMBER = re.compile(r"^\s*,?\s*(?:§\s*|sections?\s+)(\d+(?:\.\d+)*)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")

MD_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
MD_REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
MD_ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
MD_FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
HTML_ID = re.compile(r"""<a\s+(?:name|id)=["']([^"']+)["']""")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


class Checker:
    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.problems = []
        self._headings = {}

    # ---- reporting ------------------------------------------------------------------------

    def report(self, path, line, message):
        self.problems.append((os.path.relpath(path, self.root), line, message))

    # ---- walking --------------------------------------------------------------------------

    def files(self):
        for top, dirs, names in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if not self._skip_dir(top, d))
            for name in sorted(names):
                yield os.path.join(top, name)

    def _skip_dir(self, top, name):
        if name in SKIP_DIRS or (name.startswith(".") and name != "."):
            return True
        full = os.path.join(top, name)
        # Build trees: build/, build-sandbox/, and any configured CMake binary dir.
        if top == self.root and name.startswith("build"):
            return True
        return os.path.exists(os.path.join(full, "CMakeCache.txt"))

    def run(self):
        for path in self.files():
            name = os.path.basename(path)
            if os.path.relpath(path, self.root) == SELF:
                continue  # this file names what it looks for
            if name.endswith(".md"):
                self.check_markdown(path)
            elif name.endswith(CPP_SUFFIXES):
                self.check_source(path, cpp_comments)
            elif name.endswith(".py"):
                self.check_source(path, python_comments)
            elif name in HASH_COMMENT_NAMES or name.endswith(HASH_COMMENT_SUFFIXES):
                self.check_source(path, hash_comments)
            elif name.endswith(DATA_SUFFIXES):
                self.check_forbidden(path, read_lines(path))
        self.problems.sort()
        return self.problems

    # ---- forbidden citations --------------------------------------------------------------

    def check_forbidden(self, path, lines):
        if lines is None:
            return
        for number, text in enumerate(lines, 1):
            for word in PATH_WORD.findall(text):
                for pattern, hint in FORBIDDEN:
                    if pattern.search(word):
                        self.report(path, number, f"cites {word.rstrip('.')}, which is not in the repository ({hint})")
                        break

    # ---- Markdown -------------------------------------------------------------------------

    def check_markdown(self, path):
        lines = read_lines(path)
        if lines is None:
            return
        self.check_forbidden(path, lines)
        prose = []  # (line number, text with link targets blanked), outside fenced code
        for number, text in markdown_prose(lines):
            # Brackets inside `code` are not links.
            for match in MD_LINK.finditer(CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text)):
                self.check_link(path, number, match.group(1))
            refdef = MD_REFDEF.match(text)
            if refdef:
                self.check_link(path, number, refdef.group(1))
                text = text[: refdef.start(1)] + " " * len(refdef.group(1)) + text[refdef.end(1):]
            text = MD_LINK.sub(lambda m: " " * len(m.group(0)), text)
            prose.append((number, text))
        self.check_citations(path, prose)

    def check_link(self, path, line, target):
        target = target.strip()
        if target.startswith("<") and target.endswith(">"):
            target = target[1:-1].strip()
        if not target or SCHEME.match(target) or target.startswith("//"):
            return
        file_part, _, anchor = target.partition("#")
        file_part = unquote(file_part.split("?", 1)[0])
        if not file_part:
            if anchor and anchor not in self.anchors(path):
                self.report(path, line, f"link to #{anchor}: no such heading in this file")
            return
        base = self.root if file_part.startswith("/") else os.path.dirname(path)
        resolved = os.path.normpath(os.path.join(base, file_part.lstrip("/")))
        if not self.inside(resolved):
            self.report(path, line, f"link to {target}: points outside the repository")
            return
        if not os.path.exists(resolved):
            self.report(path, line, f"link to {target}: {os.path.relpath(resolved, self.root)} does not exist")
            return
        if anchor and resolved.endswith(".md") and os.path.isfile(resolved):
            if anchor not in self.anchors(resolved):
                self.report(path, line, f"link to {target}: {os.path.relpath(resolved, self.root)} has no heading #{anchor}")

    # ---- source comments ------------------------------------------------------------------

    def check_source(self, path, extract):
        text = read_text(path)
        if text is None:
            return
        self.check_forbidden(path, text.splitlines())
        self.check_citations(path, extract(text))

    # ---- citations (Markdown prose and source comments) ----------------------------------

    def check_citations(self, path, segments):
        """segments: (line number, text) pieces, in order. They are joined with spaces so a
        section name wrapped onto the next line is still read with its citation."""
        joined, starts = [], []
        offset = 0
        for number, text in segments:
            starts.append((offset, number))
            joined.append(text)
            offset += len(text) + 1
        stream = " ".join(joined)
        stream = URL.sub(lambda m: " " * len(m.group(0)), stream)
        for match in CITATION.finditer(stream):
            token = match.group(1)
            line = line_of(starts, match.start(1))
            if any(pattern.search(token) for pattern, _ in FORBIDDEN):
                continue  # already reported as a forbidden citation
            target = self.resolve(path, token)
            if target is None:
                self.report(path, line, f"cites {token}, which is not in the repository")
                continue
            if not target.endswith(".md") or not os.path.isfile(target):
                continue
            rest = stream[match.end(1): match.end(1) + 120]
            self.check_section(path, line, token, target, rest)

    def check_section(self, path, line, token, target, rest):
        named = next((m for m in (p.match(rest) for p in SECTION_NAME) if m), None)
        if named:
            wanted = normalise(named.group(1))
            titles = [normalise(t) for t in self.heading_titles(target)]
            if not any(t == wanted or t.startswith(wanted) for t in titles):
                self.report(path, line, f"cites {token}, \"{named.group(1)}\": {os.path.relpath(target, self.root)} has no such heading")
            return
        numbered = SECTION_NUMBER.match(rest)
        if numbered:
            number = numbered.group(1)
            titles = self.heading_titles(target)
            if not any(re.match(re.escape(number) + r"(?:[.\s)]|$)", t) for t in titles):
                self.report(path, line, f"cites {token} section {number}: {os.path.relpath(target, self.root)} has no numbered heading {number}")

    def resolve(self, path, token):
        here = os.path.dirname(path)
        candidates = [os.path.join(here, token), os.path.join(self.root, token)]
        if "/" not in token:
            candidates.append(os.path.join(self.root, "docs", token))
        for candidate in candidates:
            candidate = os.path.normpath(candidate)
            if self.inside(candidate) and os.path.exists(candidate):
                return candidate
        return None

    # ---- headings -------------------------------------------------------------------------

    def heading_titles(self, path):
        return self._parse_headings(path)[0]

    def anchors(self, path):
        return self._parse_headings(path)[1]

    def _parse_headings(self, path):
        if path not in self._headings:
            titles, anchors, used = [], set(), {}
            lines = read_lines(path) or []
            previous = None
            for number, text in markdown_prose(lines, keep_blank=True):
                heading = MD_ATX.match(text)
                title = None
                if heading:
                    title = heading.group(2)
                elif previous and previous.strip() and re.match(r"^\s{0,3}(=+|-+)\s*$", text) \
                        and not MD_ATX.match(previous) and not previous.lstrip().startswith(("|", "-", "*", ">")):
                    title = previous.strip()
                if title is not None:
                    plain = strip_inline(title)
                    titles.append(plain)
                    slug = slugify(plain)
                    count = used.get(slug, 0)
                    used[slug] = count + 1
                    anchors.add(slug if count == 0 else f"{slug}-{count}")
                for html in HTML_ID.finditer(text):
                    anchors.add(html.group(1))
                previous = text
            self._headings[path] = (titles, anchors)
        return self._headings[path]

    def inside(self, path):
        return path == self.root or path.startswith(self.root + os.sep)


# ---- helpers ------------------------------------------------------------------------------

def read_text(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def read_lines(path):
    text = read_text(path)
    return None if text is None else text.splitlines()


def line_of(starts, offset):
    line = starts[0][1] if starts else 1
    for start, number in starts:
        if start > offset:
            break
        line = number
    return line


def unquote(path):
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), path)


def markdown_prose(lines, keep_blank=False):
    """(line number, text) of the lines outside fenced code blocks."""
    fence = None
    for number, text in enumerate(lines, 1):
        opening = MD_FENCE.match(text)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence) \
                    and not text.strip()[len(opening.group(1)):].strip():
                fence = None
            continue
        if opening:
            fence = opening.group(1)
            continue
        if keep_blank or text.strip():
            yield number, text


def strip_inline(title):
    title = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", title)  # links keep their text
    title = re.sub(r"<[^>]+>", "", title)                       # inline HTML
    return title.replace("`", "").strip()


def slugify(title):
    """GitHub's heading id: lower case, punctuation dropped (word characters, spaces and
    hyphens kept), each space a hyphen."""
    out = []
    for ch in title.lower():
        if ch in " -":
            out.append("-" if ch == " " else ch)
        elif ch == "_" or unicodedata.category(ch)[0] in "LN":
            out.append(ch)
    return "".join(out)


def normalise(text):
    text = strip_inline(text).casefold()
    return re.sub(r"\s+", " ", text).strip(" .:")


def cpp_comments(text):
    """(line number, comment text) of // and /* */ comments, skipping string and character
    literals (raw strings included) so a URL or a path in a string is not read as a comment."""
    out = []
    i, n, line = 0, len(text), 1
    current = []  # characters of the comment being read, flushed per line

    def flush():
        if current:
            out.append((line, "".join(current)))
            current.clear()

    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append((line, text[i + 2:end]))
            i = end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end
            for piece in text[i + 2:end].split("\n"):
                current.append(piece)
                flush()
                line += 1
            line -= 1
            i = end + 2
            continue
        raw = re.match(r'(?:u8|[uUL])?R"([^()\\\s]{0,16})\(', text[i:i + 24])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            closing = ")" + raw.group(1) + '"'
            end = text.find(closing, i + raw.end())
            end = n if end < 0 else end + len(closing)
            line += text.count("\n", i, end)
            i = end
            continue
        if ch in "\"'":
            # A digit separator (1'000) is not a character literal.
            if ch == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != ch and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        i += 1
    return out


def python_comments(text):
    """(line number, text) of # comments and of triple-quoted strings (docstrings)."""
    out = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return hash_comments(text)
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            out.append((tok.start[0], tok.string[1:]))
        elif tok.type == tokenize.STRING and re.match(r"^[rRbBuUfF]{0,2}('''|\"\"\")", tok.string):
            for k, piece in enumerate(tok.string.split("\n")):
                out.append((tok.start[0] + k, piece))
    return out


def hash_comments(text):
    """(line number, text) of # comments in shell, CMake and YAML-like files: a # at the start
    of a line or after a space, outside simple quotes."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        quote = None
        for k, ch in enumerate(line):
            if quote:
                if ch == "\\" and quote == '"':
                    continue
                if ch == quote:
                    quote = None
            elif ch in "\"'":
                quote = ch
            elif ch == "#" and (k == 0 or line[k - 1] in " \t"):
                out.append((number, line[k + 1:]))
                break
    return out


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    if not os.path.isdir(root):
        print(f"check-links.py: {root} is not a folder", file=sys.stderr)
        return 2
    problems = Checker(root).run()
    for path, line, message in problems:
        print(f"{path}:{line}: {message}")
    if problems:
        print(f"{len(problems)} broken reference(s)", file=sys.stderr)
        return 1
    print("every link and cited file resolves", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
