#!/usr/bin/env python3
"""Checks that the translation catalogues are complete for the sources as they are now.

Runs lupdate (the same sources and options as translations/CMakeLists.txt) over copies of the
committed catalogues, so a message added to the code without a translation counts as unfinished,
then checks:
  - starforge_de.ts and starforge_zh_CN.ts: no unfinished or empty translation;
  - every translation keeps its source's placeholders (%1..%99, %L1, %n) and keyboard accelerator;
  - starforge_en.ts: every %n message has its English singular and plural;
  - no tr() whose context lupdate cannot tie to a class: lupdate's "lacks Q_OBJECT macro" or
    "unknown namespace/class" warnings, or a context named after a file's helper struct ("Text"),
    mean messages the running app would never find. (A QObject's context is its full class name,
    "Starforge::Gui::MainWindow", as moc names it; lupdate says the same when it can read the
    headers, hence -I src.)
Prints a table of the counts. Exits 1 on any problem.

Usage: check-translations.py LUPDATE SOURCE_ROOT
"""
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

LANGUAGES = ["de", "zh_CN"]
SOURCE_DIRS = ["src/gui", "src/models", "src/core", "src/cli", "src/app"]
PLACEHOLDER = re.compile(r"%(?:L?\d{1,2}|n)")
ACCELERATOR = re.compile(r"(?<!&)&(?![&#\w]+;)(?=\w)")


def sources(root):
    files = [p for d in SOURCE_DIRS for p in sorted((root / d).rglob("*")) if p.suffix in (".cpp", ".h")]
    return files + sorted((root / "ui").glob("*.ui"))


def run_lupdate(lupdate, root, ts, extra):
    listing = Path(ts).with_suffix(".files")
    listing.write_text("\n".join(str(p) for p in sources(root)) + "\n")
    done = subprocess.run([lupdate, "-no-obsolete", "-locations", "none", "-I", str(root / "src"), *extra, "@" + str(listing), "-ts", ts],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"lupdate failed: {done.stderr}")
    return done.stdout + done.stderr


def texts(message):
    translation = message.find("translation")
    forms = [f.text or "" for f in translation.findall("numerusform")]
    return forms if message.get("numerus") == "yes" else [translation.text or ""]


def check_catalogue(path, problems):
    counts = {"messages": 0, "unfinished": 0, "plural": 0}
    for context in ET.parse(path).getroot().iter("context"):
        name = context.findtext("name")
        if name == "Text":
            problems.append(f"{path.name}: context 'Text' is a file's helper struct, not the context it declares: "
                            f"lupdate could not find a class (is its header under src/?)")
        for message in context.iter("message"):
            counts["messages"] += 1
            source = message.findtext("source")
            translation = message.find("translation")
            numerus = message.get("numerus") == "yes"
            counts["plural"] += numerus
            forms = texts(message)
            if translation.get("type") in ("unfinished", "vanished", "obsolete") or not all(f.strip() for f in forms):
                counts["unfinished"] += 1
                problems.append(f"{path.name}: [{name}] unfinished: {source!r}")
                continue
            want = sorted(set(PLACEHOLDER.findall(source)))
            for form in forms:
                got = sorted(set(PLACEHOLDER.findall(form)))
                # a language with one form may say the count in words only where %n is the count
                if got != want:
                    problems.append(f"{path.name}: [{name}] placeholders {got} differ from the source's {want}: {source!r} -> {form!r}")
                if len(ACCELERATOR.findall(source)) != len(ACCELERATOR.findall(form)):
                    problems.append(f"{path.name}: [{name}] the keyboard accelerator (&) is lost or doubled: {source!r} -> {form!r}")
    return counts


def main():
    lupdate, root = sys.argv[1], Path(sys.argv[2]).resolve()
    problems = []
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for language in LANGUAGES + ["en"]:
            committed = root / "translations" / f"starforge_{language}.ts"
            copy = Path(scratch) / committed.name
            shutil.copy(committed, copy)
            output = run_lupdate(lupdate, root, str(copy), ["-pluralonly"] if language == "en" else [])
            for line in output.splitlines():
                if any(w in line for w in ("lacks Q_OBJECT macro", "Qualifying with unknown", "Ignoring definition of undeclared")):
                    problems.append(f"lupdate: {line.strip()} (use a Q_DECLARE_TR_FUNCTIONS struct, CONTRIBUTING.md)")
            counts = check_catalogue(copy, problems)
            if language == "en":
                for message in ET.parse(copy).getroot().iter("message"):
                    forms = texts(message)
                    if len(forms) != 2 or any("(s)" in f or "(es)" in f for f in forms):
                        problems.append(f"starforge_en.ts: {message.findtext('source')!r} needs its English singular and plural "
                                        f"(scripts/fill-english-plurals.py)")
            rows.append((language, counts))
    print(f"{'catalogue':<12}{'messages':>10}{'plural':>8}{'unfinished':>12}")
    for language, c in rows:
        print(f"{language:<12}{c['messages']:>10}{c['plural']:>8}{c['unfinished']:>12}")
    for p in sorted(set(problems)):
        print(p)
    if problems:
        print(f"{len(set(problems))} problem(s). After changing user-facing text: cmake --build build --target "
              f"update_translations, translate what is unfinished, python3 scripts/fill-english-plurals.py "
              f"translations/starforge_en.ts.", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
