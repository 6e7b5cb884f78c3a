#!/usr/bin/env python3
"""The Debian package as a user gets it: built, unpacked, validated and run.

Runs `cpack -G DEB` on a built tree (into a scratch folder, so the build folder gains nothing),
then checks the .deb:
  - its Depends were computed by dpkg-shlibdeps (libqt6core6, libc6, ...) on top of the
    hand-written list (installer/CMakeLists.txt);
  - unpacked with `dpkg -x` into a scratch root, it holds the executables, runner.pex, the
    sandbox's Ray, vLLM, python and NeMo-RL stand-ins, a .qm file per translations/*.ts, the
    desktop entry (desktop-file-validate), the AppStream metainfo (appstreamcli validate
    --no-net; its newest release is the package's version), the MIME type for jobspec.json
    (well-formed, and update-mime-database maps the literal name jobspec.json to it) and the
    icon at each hicolor size (a PNG of that size) and as SVG;
  - the installed `starforge --sandbox` comes up offscreen: it says "sandbox ready", its session
    connects, the sandbox it started is the root's starforge-sandbox, and its connection file
    and kubeconfig name the root's credential tool and NeMo-RL stand-in;
  - the installed starforge-cli builds a Capsule whose runner.pex is the root's, and runs
    examples/grpo-math (three steps) through `submit --wait` on that sandbox to Succeeded and
    archived, while every process the sandbox starts runs from the root (the shim, the `ray` and
    NeMo-RL stand-ins) and none from the build tree;
  - SIGTERM stops the app with exit 0 and its sandbox with it.
Nothing is run from the build tree: the build folder is only cpack's input.

Usage: deb_package.py CPACK BUILD_DIR SOURCE_DIR    (DEB_PACKAGE_DUMP=1 prints what the sandbox ran)
"""

import glob
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
import zipfile

MIME_TYPE = "application/x-starforge-jobspec+json"
METAINFO_ID = "dev.starforge.Starforge"
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
START = time.monotonic()


def log(msg):
    print("[%5.1f s] %s" % (time.monotonic() - START, msg), flush=True)


class Failed(Exception):
    pass


def check(condition, msg):
    if not condition:
        raise Failed(msg)


def run(args, timeout=120, **kwargs):
    """Runs a command to its end; its output as text. Fails the test when it exits non-zero."""
    result = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kwargs)
    if result.returncode != 0:
        raise Failed("%s exited %d\n%s%s" % (" ".join(args), result.returncode, result.stdout, result.stderr))
    return result.stdout + result.stderr


def wait_for(what, probe, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.1)
    raise Failed("no %s after %d s" % (what, timeout_s))


def build_deb(cpack, build_dir, out_dir):
    # -B: the package and cpack's staging tree (_CPack_Packages) go to the scratch folder.
    t0 = time.monotonic()
    run([cpack, "-G", "DEB", "--config", os.path.join(build_dir, "CPackConfig.cmake"), "-B", out_dir], timeout=240)
    debs = glob.glob(os.path.join(out_dir, "*.deb"))
    check(len(debs) == 1, "cpack made %s, not one .deb" % debs)
    log("cpack -G DEB: %s (%.1f MB) in %.1f s" % (os.path.basename(debs[0]), os.path.getsize(debs[0]) / 1e6, time.monotonic() - t0))
    return debs[0]


def check_control(deb):
    fields = {}
    for name in ("Package", "Version", "Architecture", "Depends"):
        fields[name] = run(["dpkg-deb", "-f", deb, name]).strip()
    log("Depends: " + fields["Depends"])
    depends = [alternative.strip().split(" ")[0] for part in fields["Depends"].split(",") for alternative in part.split("|")]
    # Computed by dpkg-shlibdeps: none of these is in the hand-written list.
    for computed in ("libc6", "libqt6core6", "libqt6gui6", "libqt6widgets6", "libqt6network6", "libqt6keychain1"):
        check(computed in depends, "Depends lacks %s: dpkg-shlibdeps did not run or saw nothing (%s)" % (computed, fields["Depends"]))
    # The hand-written part, which no scan can see (plugins, services, scripts).
    for written in ("qt6-qpa-plugins", "libqt6sql6-sqlite", "gnome-keyring", "python3"):
        check(written in depends, "Depends lacks the hand-written %s (%s)" % (written, fields["Depends"]))
    check(fields["Package"] == "starforge-desktop", "the package is named %s" % fields["Package"])
    return fields


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    check(head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", "%s is not a PNG" % path)
    return struct.unpack(">II", head[16:24])


def check_files(root, source_dir, version):
    usr = os.path.join(root, "usr")
    for exe in ("starforge", "starforge-cli", "starforge-sandbox", "starforge-sandbox-credential", "starforge-sandbox-shim"):
        path = os.path.join(usr, "bin", exe)
        check(os.path.isfile(path) and os.access(path, os.X_OK), "no executable usr/bin/%s" % exe)
    pex = os.path.join(usr, "share/starforge/runner.pex")
    check(zipfile.is_zipfile(pex), "usr/share/starforge/runner.pex is missing or not a zipapp")
    for tool in ("ray", "vllm", "python"):
        path = os.path.join(usr, "share/starforge-sandbox/bin", tool)
        check(os.access(path, os.X_OK), "no executable stand-in usr/share/starforge-sandbox/bin/%s" % tool)
    nemo_rl = os.path.join(usr, "share/starforge-sandbox/nemo-rl")
    for rel in ("nemo_rl_standin.py", "examples/run_grpo.py", "examples/configs/grpo_math_1B.yaml"):
        check(os.path.isfile(os.path.join(nemo_rl, rel)), "the NeMo-RL stand-in lacks %s" % rel)

    # One catalogue per translation source, each a compiled Qt catalogue (its magic number).
    sources = sorted(os.path.basename(ts)[:-3] for ts in glob.glob(os.path.join(source_dir, "translations", "*.ts")))
    check(sources, "no translations/*.ts in the source tree")
    for name in sources:
        qm = os.path.join(usr, "share/starforge/translations", name + ".qm")
        check(os.path.isfile(qm), "no usr/share/starforge/translations/%s.qm" % name)
        with open(qm, "rb") as f:
            check(f.read(16) == bytes.fromhex("3cb86418caef9c95cd211cbf60a1bddd"), "%s is not a .qm catalogue" % qm)

    desktop = os.path.join(usr, "share/applications/starforge.desktop")
    run(["desktop-file-validate", desktop])
    with open(desktop) as f:
        entry = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
    check(entry.get("Exec") == "starforge %f", "the desktop entry's Exec is %r, not 'starforge %%f'" % entry.get("Exec"))
    check(MIME_TYPE in entry.get("MimeType", "").split(";"), "the desktop entry does not take %s" % MIME_TYPE)
    check(entry.get("Icon") == "starforge", "the desktop entry's icon is %r" % entry.get("Icon"))

    metainfo = os.path.join(usr, "share/metainfo", METAINFO_ID + ".metainfo.xml")
    run(["appstreamcli", "validate", "--no-net", metainfo])
    component = ET.parse(metainfo).getroot()
    check(component.findtext("id") == METAINFO_ID, "the metainfo's id is %r" % component.findtext("id"))
    check(component.findtext("launchable") == "starforge.desktop", "the metainfo does not launch starforge.desktop")
    newest = component.find("releases/release")
    check(newest is not None and newest.get("version") == version,
          "the metainfo's newest release is %s, the package %s: add a <release>" % (None if newest is None else newest.get("version"), version))

    # The MIME package: well formed, the type globbing the literal name; then what the desktop
    # reads, shared-mime-info's compiled database, maps jobspec.json to it, under JSON.
    mime_xml = os.path.join(usr, "share/mime/packages/starforge.xml")
    ns = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}
    types = {t.get("type"): t for t in ET.parse(mime_xml).getroot().findall("m:mime-type", ns)}
    check(MIME_TYPE in types, "starforge.xml defines %s, not %s" % (list(types), MIME_TYPE))
    check("jobspec.json" in [g.get("pattern") for g in types[MIME_TYPE].findall("m:glob", ns)], "no glob jobspec.json")
    mime_dir = os.path.join(usr, "share/mime")
    run(["update-mime-database", "-V", mime_dir])
    with open(os.path.join(mime_dir, "globs2")) as f:
        globs = [line.strip().split(":") for line in f if not line.startswith("#")]
    check(any(g[1] == MIME_TYPE and g[2] == "jobspec.json" for g in globs if len(g) >= 3),
          "update-mime-database did not map jobspec.json to %s" % MIME_TYPE)
    with open(os.path.join(mime_dir, "subclasses")) as f:
        check("%s application/json\n" % MIME_TYPE in f.read(), "%s is not a sub-class of JSON" % MIME_TYPE)

    icons = os.path.join(usr, "share/icons/hicolor")
    for size in ICON_SIZES:
        png = os.path.join(icons, "%dx%d/apps/starforge.png" % (size, size))
        check(os.path.isfile(png), "no %dx%d icon" % (size, size))
        check(png_size(png) == (size, size), "the %dx%d icon is %dx%d" % ((size, size) + png_size(png)))
    svg = ET.parse(os.path.join(icons, "scalable/apps/starforge.svg")).getroot()
    check(svg.tag == "{http://www.w3.org/2000/svg}svg", "the scalable icon is not an SVG")
    log("files: executables, runner.pex, stand-ins, %d catalogue(s), desktop entry, metainfo, MIME type, %d icons" % (len(sources), len(ICON_SIZES) + 1))


def descendants(pid):
    """The processes below pid (by their parent ids in /proc)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def describe(pid):
    """What a process runs: its executable, command line and working folder."""
    parts = []
    for what in ("exe", "cwd"):
        try:
            parts.append(os.readlink("/proc/%d/%s" % (pid, what)))
        except OSError:
            pass
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            parts.append(f.read().replace(b"\0", b" ").decode(errors="replace"))
    except OSError:
        pass
    return " | ".join(parts)


class ProcessWatch(threading.Thread):
    """Notes what every process below the sandbox runs, while a job goes through it."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.seen = set()
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            for child in descendants(self.pid):
                self.seen.add(describe(child))
            time.sleep(0.05)


def clean_environment(work):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORGE_") and k != "KUBECONFIG"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    env["STARFORGE_CONFIG_FILE"] = os.path.join(work, "profiles.ini")   # never the user's own
    return env


def run_app_and_job(root, build_dir, source_dir, work):
    usr = os.path.join(root, "usr")
    env = clean_environment(work)
    # The session's log, which the app keeps quiet by default, tells whether it connected.
    env["QT_LOGGING_RULES"] = "starforge.core.session.info=true"
    app_log = os.path.join(work, "app.log")
    with open(app_log, "wb") as out:
        app = subprocess.Popen([os.path.join(usr, "bin/starforge"), "--sandbox"], stdout=out, stderr=subprocess.STDOUT, env=env, cwd=work)
    try:
        def log_text():
            with open(app_log, errors="replace") as f:
                return f.read()

        def alive_log(pattern):
            text = log_text()
            if app.poll() is not None:
                raise Failed("starforge --sandbox exited %d:\n%s" % (app.returncode, text))
            return re.search(pattern, text)

        kubeconfig = wait_for('"sandbox ready" from the installed app', lambda: alive_log(r"sandbox ready; kubectl: KUBECONFIG=(\S+)"), 60).group(1)
        wait_for("connected session", lambda: alive_log(r"starforge\.core\.session: connected: Connected to https://127\.0\.0\.1:"), 60)
        check("connect failed" not in log_text(), "the app's session failed to connect:\n" + log_text())
        log("the installed app is up on its sandbox")

        # The sandbox the app started, and what it hands out, are the root's.
        connection_file = kubeconfig[: -len(".kubeconfig")]
        with open(connection_file) as f:
            connection = json.load(f)
        sandbox_pid = int(connection["pid"])
        check(os.readlink("/proc/%d/exe" % sandbox_pid) == os.path.join(usr, "bin/starforge-sandbox"),
              "the app started %s, not the root's starforge-sandbox" % os.readlink("/proc/%d/exe" % sandbox_pid))
        check(connection["credentialTool"] == os.path.join(usr, "bin/starforge-sandbox-credential"),
              "the credential tool is %s, not the root's" % connection["credentialTool"])
        check(os.path.realpath(connection["forge"]["FORGE_NEMO_RL_DIR"]) == os.path.join(usr, "share/starforge-sandbox/nemo-rl"),
              "the NeMo-RL stand-in is %s, not the root's" % connection["forge"]["FORGE_NEMO_RL_DIR"])
        with open(kubeconfig) as f:
            check(os.path.join(usr, "bin/starforge-sandbox-credential") in f.read(), "the kubeconfig does not name the root's credential tool")
        kubectl = shutil.which("kubectl")
        check(kubectl, "kubectl is needed to check the sandbox from outside")
        nodes = run([kubectl, "--kubeconfig", kubeconfig, "--cache-dir", os.path.join(work, "kube-cache"), "get", "nodes", "-o", "name"], env=env)
        check("node/" in nodes, "kubectl lists no nodes on the app's sandbox:\n" + nodes)

        # The example JobSpec, cut to three training steps.
        job = os.path.join(work, "grpo-math")
        shutil.copytree(os.path.join(source_dir, "examples/grpo-math"), job)
        spec_path = os.path.join(job, "jobspec.json")
        with open(spec_path) as f:
            spec = json.load(f)
        spec["recipe"]["overrides"] = ["grpo.max_num_steps=3" if o.startswith("grpo.max_num_steps=") else o for o in spec["recipe"]["overrides"]]
        with open(spec_path, "w") as f:
            json.dump(spec, f, indent=2)

        cli = [os.path.join(usr, "bin/starforge-cli"), "--connection-file", connection_file]
        cli_env = dict(env, STARFORGE_CONFIG_FILE=os.path.join(work, "cli-profiles.json"))
        # The installed CLI packs the root's runner.pex (it looks only beside its executable).
        capsule = os.path.join(work, "capsule.zip")
        run(cli + ["capsule", "build", job, "--out", capsule], env=cli_env)
        with zipfile.ZipFile(capsule) as z, open(os.path.join(usr, "share/starforge/runner.pex"), "rb") as pex:
            check(z.read("capsule/runner.pex") == pex.read(), "the Capsule's runner.pex is not the root's")

        watch = ProcessWatch(sandbox_pid)
        watch.start()
        t0 = time.monotonic()
        submit = subprocess.run(cli + ["submit", spec_path, "--wait", "--json"], capture_output=True, text=True, env=cli_env, timeout=240)
        watch.done.set()
        watch.join()
        check(submit.returncode == 0, "submit --wait exited %d\n%s%s" % (submit.returncode, submit.stdout, submit.stderr))
        try:
            docs = [json.loads(line) for line in submit.stdout.splitlines() if line.strip()]   # one document a line
        except ValueError:
            raise Failed("submit --wait --json printed what is not JSON lines:\n" + submit.stdout)
        check(docs and docs[-1].get("state") == "Succeeded" and docs[-1].get("archived") is True,
              "the job did not end Succeeded and archived:\n" + submit.stdout)
        log("submit --wait: %s Succeeded and archived in %.1f s" % (docs[0].get("id"), time.monotonic() - t0))

        seen = sorted(watch.seen)
        shim = os.path.join(usr, "bin/starforge-sandbox-shim")
        check(any(s.startswith(shim + " ") for s in seen), "no container ran under the root's shim; seen:\n" + "\n".join(seen))
        check(any(os.path.join(usr, "share/starforge-sandbox/bin/ray") in s for s in seen),
              "the root's ray stand-in never ran; seen:\n" + "\n".join(seen))
        # The training step itself: the runner started the root's NeMo-RL stand-in (it lives for
        # a few 0.2 s steps, against a 50 ms poll).
        check(any(os.path.join(usr, "share/starforge-sandbox/nemo-rl/examples/run_grpo.py") in s for s in seen),
              "the root's NeMo-RL stand-in never ran; seen:\n" + "\n".join(seen))
        from_build = [s for s in seen if os.path.realpath(build_dir) in s]
        check(not from_build, "processes ran from the build tree:\n" + "\n".join(from_build))
        log("%d processes below the sandbox, all from the root" % len(seen))
        if os.environ.get("DEB_PACKAGE_DUMP"):
            print("\n".join(seen))

        # SIGTERM: the app ends cleanly and takes its sandbox with it.
        app.send_signal(signal.SIGTERM)
        code = app.wait(timeout=20)
        check(code == 0, "starforge exited %d on SIGTERM:\n%s" % (code, log_text()))
        wait_for("removed kubeconfig (the sandbox stopped with the app)", lambda: not os.path.exists(kubeconfig), 15)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    cpack, build_dir, source_dir = sys.argv[1:4]
    work = tempfile.mkdtemp(prefix="deb_package.")
    try:
        deb = build_deb(cpack, os.path.abspath(build_dir), os.path.join(work, "out"))
        fields = check_control(deb)
        root = os.path.join(work, "root")
        run(["dpkg", "-x", deb, root])
        check_files(root, source_dir, fields["Version"])
        run_app_and_job(root, build_dir, source_dir, work)
    except (Failed, subprocess.TimeoutExpired) as e:
        print("FAIL: %s" % e, flush=True)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
