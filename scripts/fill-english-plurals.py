#!/usr/bin/env python3
"""Fills translations/starforge_en.ts: the English singular and plural of every %n message.

Source texts say "%n node(s)"; English shows "1 node" and "2 nodes", which only a catalogue can
say (Qt picks the form by the count). The rule: "(s)" goes for one and becomes "s" for many; a
message whose plural is not made that way ("%n node has") is listed in IRREGULAR. Run after
lupdate (CONTRIBUTING.md, "Translations"); tst_translations checks that every form is filled.

Usage: fill-english-plurals.py translations/starforge_en.ts
"""
import sys
import xml.etree.ElementTree as ET

IRREGULAR = {
    "%1 %2: %3; %n has %4 free now": ("%1 %2: %3; %n has %4 free now", "%1 %2: %3; %n have %4 free now"),
    ", %n more is busy": (", %n more is busy", ", %n more are busy"),
    ", %n more is cordoned, not ready or tainted": (", %n more is cordoned, not ready or tainted",
                                                    ", %n more are cordoned, not ready or tainted"),
    "%n node has": ("%n node has", "%n nodes have"),
    "archived %1 %2 %3 (%n not archived)": ("archived %1 %2 %3 (%n not archived)",) * 2,
    ", seen %n times from %1 to %2": (", seen %n time from %1 to %2", ", seen %n times from %1 to %2"),
    "Scrolls the log. %n search match(es) are marked along it; F3 and Shift+F3 go to them.": (
        "Scrolls the log. %n search match is marked along it; F3 and Shift+F3 go to them.",
        "Scrolls the log. %n search matches are marked along it; F3 and Shift+F3 go to them."),
}


def forms(source):
    if source in IRREGULAR:
        return IRREGULAR[source]
    if "(s)" not in source and "(es)" not in source:
        raise SystemExit(f"fill-english-plurals.py: no rule for the plural of {source!r}: add it to IRREGULAR")
    return (source.replace("(es)", "").replace("(s)", ""), source.replace("(es)", "es").replace("(s)", "s"))


def main():
    path = sys.argv[1]
    tree = ET.parse(path)
    for message in tree.getroot().iter("message"):
        if message.get("numerus") != "yes":
            continue
        translation = message.find("translation")
        for child in list(translation):
            translation.remove(child)
        for form in forms(message.findtext("source")):
            ET.SubElement(translation, "numerusform").text = form
        translation.attrib.pop("type", None)
    tree.write(path, encoding="utf-8", xml_declaration=True)
    text = open(path, encoding="utf-8").read().replace("?>\n<TS", "?>\n<!DOCTYPE TS>\n<TS", 1)
    open(path, "w", encoding="utf-8").write(text + ("" if text.endswith("\n") else "\n"))


if __name__ == "__main__":
    main()
