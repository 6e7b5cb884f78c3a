#!/usr/bin/env python3
"""What a screen reader sees of `starforge --sandbox`: the app's tree on the real AT-SPI bus.

Run by tests/gui/atspi_tree.sh, which puts it under xvfb-run and a private D-Bus session with a
keyring (scripts/lib/with-secret-service.sh). This script starts the AT-SPI bus, starts the app
on the xcb platform with Qt's AT-SPI bridge on, finds the app on the AT-SPI desktop with pyatspi
and checks:
  - the main window's frame, its menu bar, and the File menu's New Job... and Open JobSpec...;
  - every control in the main window (buttons, check boxes, combo boxes, text fields, tables,
    lists, tabs, ...) has a non-empty accessible name or a named label (a combo box: a label);
    the ones without are listed by role and path, and the tree is printed;
  - the GPU capacity heatmap exposes one child per GPU node of the sandbox (read with kubectl),
    named after the node with its GPU counts (waiting for the capacity to arrive);
  - the submission wizard, opened through the New Job... menu item's AT-SPI action, names its
    controls too.
Usage: atspi_tree.py BIN_DIR    (ATSPI_TREE_DUMP=1 prints the main window's tree)
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

DEADLINE_S = 50          # the whole run, the app's start included (about 2 s when idle); CTest's is 90 s
START = time.monotonic()

# The roles a person operates, which must each have a name (as pyatspi's getRoleName() gives them).
CONTROL_ROLES = {
    "push button", "toggle button", "check box", "radio button", "combo box", "text", "entry",
    "password text", "spin button", "slider", "table", "tree table", "tree", "list",
    "page tab", "menu item", "check menu item", "radio menu item", "menu", "link",
}
# Containers whose children are items (cells, rows, popup lists), not separate controls: their
# own name is checked, their content is not walked (a table's cells are the model's text).
LEAF_CONTAINERS = {"table", "tree table", "tree", "list", "combo box", "text", "entry", "password text", "spin button"}
MAX_NODES = 4000


def elapsed():
    return time.monotonic() - START


def log(msg):
    print("[%5.1f s] %s" % (elapsed(), msg), flush=True)


def fail(msg):
    print("FAIL: " + msg, flush=True)
    raise SystemExit(1)


def remaining():
    return DEADLINE_S - elapsed()


def wait_for(what, predicate, timeout, interval=0.1):
    """predicate() until it returns something truthy; fails saying what did not happen."""
    end = time.monotonic() + min(timeout, max(remaining(), 0))
    last_error = None
    while True:
        try:
            value = predicate()
            if value:
                return value
        except Exception as e:  # an object that went away while we looked at it: ask again
            last_error = e
        if time.monotonic() >= end:
            fail("timed out after %.0f s waiting for %s%s" % (timeout, what, "" if last_error is None else " (last error: %r)" % last_error))
        time.sleep(interval)


class StderrReader:
    """Collects the app's stderr on a thread, so the pipe never fills."""

    def __init__(self, stream):
        self.lines = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, args=(stream,), daemon=True)
        self._thread.start()

    def _run(self, stream):
        for raw in iter(stream.readline, b""):
            with self._lock:
                self.lines.append(raw.decode("utf-8", "replace").rstrip("\n"))

    def text(self):
        with self._lock:
            return "\n".join(self.lines)


def start_bus():
    """The AT-SPI bus of this D-Bus session; its registry daemon is started by D-Bus activation."""
    launcher = next((p for p in ("/usr/libexec/at-spi-bus-launcher", "/usr/lib/at-spi2-core/at-spi-bus-launcher") if os.path.exists(p)), None)
    if launcher is None:
        fail("at-spi-bus-launcher not found (apt-get install at-spi2-core)")
    proc = subprocess.Popen([launcher, "--launch-immediately"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    from gi.repository import Gio, GLib
    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)

    def has_owner():
        reply = bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                              GLib.Variant("(s)", ("org.a11y.Bus",)), GLib.VariantType("(b)"), Gio.DBusCallFlags.NONE, 2000, None)
        return reply.unpack()[0]

    wait_for("the AT-SPI bus launcher to own org.a11y.Bus", has_owner, 10)
    return proc


def role(acc):
    return acc.getRoleName()


def describe(acc):
    name = acc.name or ""
    return "%s %r" % (role(acc), name) if name else role(acc)


def children(acc):
    out = []
    for i in range(acc.childCount):
        child = acc.getChildAtIndex(i)
        if child is not None:
            out.append(child)
    return out


def walk(root, path=""):
    """Every accessible under root, with its path, not descending into item containers."""
    found = []
    stack = [(root, path or describe(root))]
    while stack:
        acc, where = stack.pop()
        found.append((acc, where))
        if len(found) > MAX_NODES:
            fail("more than %d accessibles under %s: the walk stops here" % (MAX_NODES, path or describe(root)))
        if role(acc) in LEAF_CONTAINERS:
            continue
        kids = children(acc)
        for i in reversed(range(len(kids))):
            stack.append((kids[i], "%s / %s" % (where, describe(kids[i]))))
    return found


def labels_of(acc):
    """The names of the accessibles acc is labelled by (a buddy label, a form row's label)."""
    import pyatspi
    names = []
    for relation in acc.getRelationSet():
        if relation.getRelationType() == pyatspi.RELATION_LABELLED_BY:
            names += [relation.getTarget(i).name or "" for i in range(relation.getNTargets())]
    return [n for n in names if n.strip()]


def unnamed_controls(found):
    """Controls a screen reader would announce without saying what they are, with why."""
    import pyatspi
    offenders = []
    for acc, where in found:
        r = role(acc)
        if r not in CONTROL_ROLES:
            continue
        shown = "showing" if acc.getState().contains(pyatspi.STATE_SHOWING) else "not showing"
        if r == "combo box":
            # On Linux Qt 6.4 gives a combo box its current text as its name, whatever
            # setAccessibleName says: what it is for comes from its label, through the
            # labelled-by relation. A combo box needs a buddy label.
            if not labels_of(acc):
                offenders.append("%s (%s) named only by its current text %r, labelled by nothing, at %s" % (r, shown, acc.name, where))
        elif not (acc.name or "").strip() and not labels_of(acc):
            offenders.append("%s (%s) without a name or a label, at %s" % (r, shown, where))
    return offenders


def dump(found):
    """The walked tree, one accessible a line: path, description and labelled-by."""
    for acc, where in found:
        labels = labels_of(acc)
        print("    %s%s%s" % (where, " (description %r)" % acc.description if acc.description else "",
                               " (labelled by %r)" % labels if labels else ""), flush=True)


def role_counts(found):
    counts = {}
    for acc, _ in found:
        counts[role(acc)] = counts.get(role(acc), 0) + 1
    return ", ".join("%s %d" % kv for kv in sorted(counts.items()))


def gpu_nodes(kubeconfig, scratch):
    """The sandbox's nodes carrying the GPU series label the app's profile uses."""
    connection = kubeconfig[: -len(".kubeconfig")] if kubeconfig.endswith(".kubeconfig") else None
    label = "starforge/gpu-series"
    if connection and os.path.exists(connection):
        with open(connection) as f:
            label = json.load(f).get("forge", {}).get("FORGE_K8S_GPU_NODE_LABEL", label)
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        fail("kubectl not found: the test reads the sandbox's nodes with it")
    out = subprocess.run([kubectl, "--kubeconfig", kubeconfig, "--cache-dir", os.path.join(scratch, "kube-cache"), "get", "nodes", "-o", "json"],
                         capture_output=True, timeout=max(5, min(20, remaining())))
    if out.returncode != 0:
        fail("kubectl get nodes failed: " + out.stderr.decode(errors="replace"))
    nodes = json.loads(out.stdout)["items"]
    return label, {n["metadata"]["name"]: int(n.get("status", {}).get("allocatable", {}).get("nvidia.com/gpu", "0"))
                   for n in nodes if n["metadata"].get("labels", {}).get(label)}


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    bin_dir = os.path.abspath(sys.argv[1])
    app_path = os.path.join(bin_dir, "starforge")
    if not os.access(app_path, os.X_OK):
        fail("no app at " + app_path + " (build the starforge target)")
    if not os.environ.get("DISPLAY") or not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        fail("needs an X display and a private D-Bus session: run through tests/gui/atspi_tree.sh")

    scratch = tempfile.mkdtemp(prefix="starforge-atspi.")
    bus = None
    app = None
    try:
        bus = start_bus()
        log("AT-SPI bus up")

        env = dict(os.environ)
        env.update({
            "QT_QPA_PLATFORM": "xcb",                    # offscreen has no AT-SPI bridge
            "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1",     # register without a screen reader running
            "QT_ACCESSIBILITY": "1",
            "STARFORGE_CONFIG_FILE": os.path.join(scratch, "profiles.ini"),
            "QT_LOGGING_RULES": "starforge.core.session.info=true",
        })
        env.pop("NO_AT_BRIDGE", None)
        app = subprocess.Popen([app_path, "--sandbox"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=scratch)
        err = StderrReader(app.stderr)

        def app_log(pattern):
            if app.poll() is not None:
                fail("the app exited with %s; its stderr:\n%s" % (app.returncode, err.text()))
            return re.search(pattern, err.text())

        kube = wait_for("the app's sandbox (\"sandbox ready\" on stderr)", lambda: app_log(r"KUBECONFIG=(\S+)"), 30)
        kubeconfig = kube.group(1)
        wait_for("the app's session to connect", lambda: app_log(r"starforge\.core\.session: connected: Connected"), 30)
        log("app connected to its sandbox")

        import pyatspi

        def find_app():
            desktop = pyatspi.Registry.getDesktop(0)
            for candidate in children(desktop):
                if candidate.get_process_id() == app.pid:
                    return candidate
            return None

        app_acc = wait_for("the app on the AT-SPI desktop", find_app, 15)
        problems = []
        if app_acc.name != "starforge":
            problems.append("the application is named %r on the desktop, not 'starforge'" % app_acc.name)

        def main_frame():
            app_acc.clear_cache()
            return next((w for w in children(app_acc) if role(w) == "frame" and "Starforge" in (w.name or "")), None)

        frame = wait_for("the main window's frame named Starforge", main_frame, 10)
        log("found %s in %s (pid %d)" % (describe(frame), describe(app_acc), app.pid))

        found = walk(frame)
        log("walked %d accessibles in the main window: %s" % (len(found), role_counts(found)))
        if os.environ.get("ATSPI_TREE_DUMP"):
            dump(found)
        # The menu bar and the File menu's items, with their names.
        menu_bars = [acc for acc, _ in found if role(acc) == "menu bar"]
        if len(menu_bars) != 1:
            problems.append("expected one menu bar in the main window, found %d" % len(menu_bars))
        new_job_item = None
        if menu_bars:
            top = children(menu_bars[0])
            top_names = [t.name for t in top]
            file_menu = next((t for t in top if re.sub("&", "", t.name or "") == "File"), None)
            if file_menu is None:
                problems.append("the menu bar has no File menu; it has %r" % top_names)
            else:
                items = [acc for acc, _ in walk(file_menu) if role(acc) in ("menu item", "check menu item", "radio menu item") and acc != file_menu]
                item_names = [i.name for i in items]
                for wanted in ("New Job…", "Open JobSpec…"):
                    if wanted not in item_names:
                        problems.append("File menu has no item %r; its items are %r" % (wanted, item_names))
                new_job_item = next((i for i in items if i.name == "New Job…"), None)
            log("menu bar: %r; File menu: %r" % (top_names, [i.name for i, _ in walk(file_menu)][1:] if file_menu else None))

        offenders = unnamed_controls(found)
        if offenders:
            problems.append("%d controls in the main window have no accessible name:\n    %s" % (len(offenders), "\n    ".join(offenders)))
            print("The main window's tree as AT-SPI shows it:")
            dump(found)

        # The heatmap: one child per GPU node, named with the node and its GPU counts.
        heatmaps = [acc for acc, _ in found if role(acc) == "list" and acc.name == "GPU capacity heatmap"]
        if len(heatmaps) != 1:
            problems.append("expected one list named 'GPU capacity heatmap', found %d; lists: %r"
                            % (len(heatmaps), [w for a, w in found if role(a) == "list"]))
        else:
            heatmap = heatmaps[0]
            label, nodes = gpu_nodes(kubeconfig, scratch)
            if not nodes:
                problems.append("the sandbox has no node labelled %s: nothing to compare the heatmap with" % label)
            cell = re.compile(r"^(\S+): (\d+) of (\d+) GPUs in use(, blocked: .+)?$")

            def cells():
                heatmap.clear_cache()
                kids = children(heatmap)
                return kids if len(kids) == len(nodes) and all(cell.match(k.name or "") for k in kids) else None

            try:
                wait_for("the heatmap to show %d cells" % len(nodes), cells, 20)
            except SystemExit:
                heatmap.clear_cache()
                kids = children(heatmap)
                problems.append("the heatmap has %d children, expected one per GPU node (%d: %s); its children: %r"
                                % (len(kids), len(nodes), ", ".join(sorted(nodes)), [(role(k), k.name) for k in kids[:20]]))
            else:
                kids = children(heatmap)
                names = [k.name for k in kids]
                log("heatmap cells: %r" % names)
                shown = sorted(cell.match(n).group(1) for n in names)
                if shown != sorted(nodes):
                    problems.append("the heatmap's cells name the nodes %r, the sandbox's GPU nodes are %r" % (shown, sorted(nodes)))
                for k in kids:
                    m = cell.match(k.name)
                    if role(k) != "list item":
                        problems.append("heatmap cell %r has role %s, not list item" % (k.name, role(k)))
                    if m.group(1) in nodes and int(m.group(3)) != nodes[m.group(1)]:
                        problems.append("heatmap cell %r: the node has %d allocatable GPUs in the sandbox" % (k.name, nodes[m.group(1)]))
                    if m.group(1) not in (k.description or ""):
                        problems.append("heatmap cell %r: its description (the tooltip) does not name the node: %r" % (k.name, k.description))

        # The wizard, opened as an assistive technology would: the menu item's action.
        if new_job_item is not None:
            action = new_job_item.queryAction()
            names = [action.getName(i) for i in range(action.nActions)]
            if not names:
                problems.append("the New Job… menu item offers no AT-SPI action")
            else:
                action.doAction(0)

                def wizard():
                    app_acc.clear_cache()
                    return next((w for w in children(app_acc) if w != frame and role(w) in ("dialog", "frame", "window")
                                 and "job" in (w.name or "").lower()), None)

                try:
                    dialog = wait_for("the submission wizard's window after the New Job… action %r" % names[0], wizard, 10)
                except SystemExit:
                    problems.append("no wizard window appeared after New Job…'s action; the app's windows: %r"
                                    % [describe(w) for w in children(app_acc)])
                else:
                    wfound = walk(dialog)
                    log("walked %d accessibles in %s: %s" % (len(wfound), describe(dialog), role_counts(wfound)))
                    woffenders = unnamed_controls(wfound)
                    if woffenders:
                        problems.append("%d controls in the wizard have no accessible name:\n    %s" % (len(woffenders), "\n    ".join(woffenders)))
                        print("The wizard's tree as AT-SPI shows it:")
                        dump(wfound)

        if problems:
            print("\n".join("FAIL: " + p for p in problems), flush=True)
            return 1
        log("all checks passed")
        return 0
    finally:
        if app is not None and app.poll() is None:
            app.send_signal(signal.SIGTERM)
            try:
                app.wait(15)
            except subprocess.TimeoutExpired:
                app.kill()
                app.wait()
        if bus is not None:
            bus.terminate()
            try:
                bus.wait(5)
            except subprocess.TimeoutExpired:
                bus.kill()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
