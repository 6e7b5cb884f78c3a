"""The runner's steps, each a function so the tests can drive them one by one.

Environment (set by the RayJob on every Ray container): FORGE_JOB_ID, FORGE_NEMO_RL_DIR,
FORGE_STORAGE_ROOT, FORGE_MANIFEST_SHA256. The JobSpec and the manifest are read from the working
directory.
"""

import hashlib
import json
import os
import re
import subprocess
import sys

PROGRESS_PREFIX = "STARFORGE_PROGRESS "
MANIFEST_FORMAT = "starforge-capsule/1"

# NeMo-RL's driver banners and summary lines (v0.7, grpo/sft/dpo/rm/distillation alike).
_STEP = re.compile(r"^=+ Step (\d+)/(\d+) =+\s*$")
_EPOCH = re.compile(r"^=+ Epoch (\d+)/(\d+) =+\s*$")
_CHECKPOINT = re.compile(r"^Saving checkpoint for step (\d+)\.\.\.")
_METRIC = re.compile(r"^\s*\u2022 (Loss|Avg Reward|Accuracy|Mean Generation Length|Total step time): ([-+0-9.eE]+)s?\s*$")
_DONE = re.compile(r"^(Max number of steps has been reached|Timeout has been reached), stopping training early")


class RunnerError(Exception):
    """A problem the user can act on; the message says what and where."""


def load_json(path):
    try:
        with open(path, "rb") as f:
            return json.loads(f.read().decode("utf-8"))
    except FileNotFoundError:
        raise RunnerError("%s is missing from the Capsule; rebuild it with Starforge." % path)
    except (ValueError, UnicodeDecodeError) as e:
        raise RunnerError("%s is not valid JSON: %s" % (path, e))


def verify_manifest_digest(root, expected):
    """manifest.json is byte for byte the one Starforge built for this job: its SHA-256 equals
    the digest the RayJob carries. The per-file check below trusts the manifest, and a whole
    Capsule swapped for another (the object in the bucket overwritten, the wrong zip served)
    brings a manifest that agrees with its own files; only the digest from the RayJob, which the
    bucket cannot change, tells them apart (docs/capsule.md, "Code integrity")."""
    if not re.fullmatch(r"[0-9a-f]{64}", expected or ""):
        raise RunnerError("FORGE_MANIFEST_SHA256 %r is not a SHA-256; the RayJob was not made by Starforge, "
                          "submit the job again with Starforge." % (expected,))
    path = os.path.join(root, "manifest.json")
    try:
        with open(path, "rb") as f:
            actual = hashlib.sha256(f.read()).hexdigest()
    except FileNotFoundError:
        raise RunnerError("manifest.json is missing from the Capsule; rebuild it with Starforge.")
    if actual != expected:
        raise RunnerError("manifest.json has SHA-256 %s, but the job was submitted with %s: this is not the Capsule "
                          "Starforge built for the job (the object in the bucket was replaced or changed); "
                          "nothing was run. Submit the job again." % (actual, expected))
    return actual


def verify_manifest(root):
    """Every file the manifest lists is there with its size and SHA-256: a Capsule that was
    cut short or changed on the way is refused before any GPU time is spent."""
    manifest = load_json(os.path.join(root, "manifest.json"))
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise RunnerError("manifest.json is not a %s manifest" % MANIFEST_FORMAT)
    files = manifest.get("files")
    if not isinstance(files, list):
        raise RunnerError("manifest.json has no file list")
    for entry in files:
        path = entry.get("path", "") if isinstance(entry, dict) else ""
        if not path or path.startswith("/") or ".." in path.split("/"):
            raise RunnerError("manifest.json lists an unsafe path: %r" % (path,))
        full = os.path.join(root, path)
        try:
            size = os.path.getsize(full)
        except OSError:
            raise RunnerError("%s is listed in the manifest but missing from the Capsule" % path)
        if size != entry.get("size"):
            raise RunnerError("%s has %d bytes, the manifest says %s" % (path, size, entry.get("size")))
        digest = hashlib.sha256()
        with open(full, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        if digest.hexdigest() != entry.get("sha256"):
            raise RunnerError("%s does not match its SHA-256 in the manifest: the Capsule was changed" % path)
    return len(files)


def job_dirs(storage_root, job_id):
    base = os.path.join(storage_root, "jobs", job_id)
    return {"base": base, "checkpoints": os.path.join(base, "checkpoints"), "logs": os.path.join(base, "logs")}


def prepare_job_dir(storage_root, job_id, spec):
    if not re.fullmatch(r"[a-z0-9]{6}", job_id or ""):
        raise RunnerError("FORGE_JOB_ID %r is not a Starforge job id" % (job_id,))
    dirs = job_dirs(storage_root, job_id)
    for key in ("checkpoints", "logs"):
        os.makedirs(dirs[key], exist_ok=True)
    with open(os.path.join(dirs["base"], "jobspec.json"), "w", encoding="utf-8") as f:
        json.dump(spec, f, sort_keys=True, indent=2)
    return dirs


def build_command(spec, root, nemo_rl_dir, dirs, python=sys.executable):
    """The argv that runs NeMo-RL: its example script, the config from the Capsule, the
    JobSpec's overrides, then the cluster shape and output paths, which the pools and the
    job decide and so come last (Hydra applies overrides in order)."""
    recipe = spec["recipe"]
    script = recipe.get("script") or "examples/run_%s.py" % recipe["algorithm"]
    script_path = script if os.path.isabs(script) else os.path.join(nemo_rl_dir, script)
    if recipe.get("script") and os.path.exists(os.path.join(root, script)):
        script_path = os.path.join(root, script)   # a script shipped in the Capsule
    pools = spec["pools"]
    primary = pools[0]
    total_nodes = sum(p["nodes"] for p in pools)
    argv = [python, script_path, "--config", os.path.join(root, recipe["config"])]
    argv += list(recipe.get("overrides", []))
    argv += [
        "++cluster.num_nodes=%d" % total_nodes,
        "++cluster.gpus_per_node=%d" % primary["gpusPerNode"],
        "++checkpointing.checkpoint_dir=%s" % dirs["checkpoints"],
        "++logger.log_dir=%s" % dirs["logs"],
        # An HF tree beside the sharded weights, so the playground's vLLM can load a step.
        "++checkpointing.save_consolidated=true",
    ]
    if len(pools) > 1:
        generation = pools[1]
        argv += [
            "++policy.generation.colocated.enabled=false",
            "++policy.generation.colocated.resources.num_nodes=%d" % generation["nodes"],
            "++policy.generation.colocated.resources.gpus_per_node=%d" % generation["gpusPerNode"],
        ]
    return argv


def progress(line):
    """A machine-readable record for a NeMo-RL output line, or None."""
    m = _STEP.match(line)
    if m:
        return {"kind": "step", "step": int(m.group(1)), "total": int(m.group(2))}
    m = _EPOCH.match(line)
    if m:
        return {"kind": "epoch", "epoch": int(m.group(1)), "total": int(m.group(2))}
    m = _CHECKPOINT.match(line)
    if m:
        return {"kind": "checkpoint", "step": int(m.group(1))}
    m = _METRIC.match(line)
    if m:
        return {"kind": "metric", "name": m.group(1), "value": float(m.group(2))}
    if _DONE.match(line):
        return {"kind": "done", "reason": line.strip()}
    return None


def run(argv, out=sys.stdout, env=None):
    """Runs NeMo-RL, passing its output through and adding a progress line after each
    banner; returns its exit code."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    for raw in process.stdout:
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        out.write(line + "\n")
        record = progress(line)
        if record is not None:
            out.write(PROGRESS_PREFIX + json.dumps(record, sort_keys=True) + "\n")
        out.flush()
    return process.wait()


def main(args, root=None, environ=None, out=sys.stdout):
    root = root or os.getcwd()
    environ = os.environ if environ is None else environ
    try:
        verify_manifest_digest(root, environ.get("FORGE_MANIFEST_SHA256", ""))
        files = verify_manifest(root)
        spec = load_json(os.path.join(root, "jobspec.json"))
        job_id = environ.get("FORGE_JOB_ID", "")
        storage = environ.get("FORGE_STORAGE_ROOT", "/starforge")
        nemo_rl = environ.get("FORGE_NEMO_RL_DIR", "/opt/nemo-rl")
        dirs = prepare_job_dir(storage, job_id, spec)
        argv = build_command(spec, root, nemo_rl, dirs)
    except RunnerError as e:
        out.write("starforge-runner: %s\n" % e)
        out.flush()
        return 2
    out.write(PROGRESS_PREFIX + json.dumps({"kind": "start", "job": job_id, "files": files, "argv": argv}, sort_keys=True) + "\n")
    out.flush()
    code = run(argv, out=out, env=dict(environ))
    out.write(PROGRESS_PREFIX + json.dumps({"kind": "exit", "code": code}, sort_keys=True) + "\n")
    out.flush()
    return code
