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
import time

PROGRESS_PREFIX = "STARFORGE_PROGRESS "
MANIFEST_FORMAT = "starforge-capsule/1"

# NeMo-RL's driver banners and summary lines (v0.7: nemo_rl/algorithms/{grpo,sft,dpo,rm,distillation,ppo}.py
# and examples/run_*.py). The Step banner's count restarts each epoch and its total is per epoch;
# the checkpoint line carries the global step.
_STEP = re.compile(r"^=+ Step (\d+)/(\d+) =+\s*$")
_EPOCH = re.compile(r"^=+ Epoch (\d+)/(\d+) =+\s*$")
_CHECKPOINT = re.compile(r"^Saving checkpoint for step (\d+)\.\.\.")
_METRIC = re.compile(r"^\s*\u2022 ([A-Za-z][A-Za-z _]*?): ([-+]?(?:[0-9.]+(?:[eE][-+]?[0-9]+)?|nan|inf(?:inity)?))s?\s*$",
                     re.IGNORECASE)
_DONE = re.compile(r"^(Max number of steps has been reached|Timeout has been reached), stopping training early")
_LOG_DIR = re.compile(r"^\U0001F4CA Using log directory: (.+?)\s*$")
_RESULTS = re.compile(r"^\U0001F4CA (Training|Validation) Results\b")

# NeMo-RL's metric names (any case) and the one spelling the app plots and shows. dpo and rm print
# their metrics' field names in lower case (`• loss:`, `• accuracy:`), ppo prints `Policy Loss`
# (the policy's loss, so "Loss" in the app), sft/dpo/rm validation prints `Validation loss` and
# `Validation <field>`; GRPO's, distillation's and PPO's validation accuracy is `• Accuracy:` under
# `📊 Validation Results:`, which ResultsBlock renames. Other bullets are ignored.
METRIC_NAMES = {
    "loss": "Loss",
    "policy loss": "Loss",
    "critic loss": "Critic Loss",
    "avg reward": "Avg Reward",
    "avg filtered reward": "Avg Filtered Reward",
    "avg total reward": "Avg Total Reward",
    "accuracy": "Accuracy",
    "validation loss": "Validation Loss",
    "validation accuracy": "Validation Accuracy",
    "mean generation length": "Mean Generation Length",
    "total step time": "Total step time",
}

# The scripts in NeMo-RL v0.7 that turn a checkpoint that is not an HF tree into one.
CONVERT_DCP = "examples/converters/convert_dcp_to_hf.py"
CONVERT_MEGATRON = "examples/converters/convert_megatron_to_hf.py"
_STEP_DIR = re.compile(r"^step_(\d+)$")


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


def metric_value(text):
    """A metric's value; NaN and infinities as the strings "nan", "inf", "-inf" (JSON has no
    such numbers)."""
    value = float(text)
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return value


class ResultsBlock:
    """Which of NeMo-RL's `📊 … Results` blocks the output is in. grpo, distillation and ppo print
    their validation accuracy as `• Accuracy:` under `📊 Validation Results:` (validate() in
    nemo_rl/algorithms/grpo.py), the bullet dpo and rm print their training accuracy with; only
    the block tells the two apart. A Step or Epoch banner ends a block."""

    def __init__(self):
        self.validation = False

    def see(self, line):
        m = _RESULTS.match(line)
        if m:
            self.validation = m.group(1) == "Validation"
        elif _STEP.match(line) or _EPOCH.match(line):
            self.validation = False


def progress(line, block=None):
    """A machine-readable record for a NeMo-RL output line, or None. With the run's ResultsBlock,
    a validation block's `• Accuracy:` is "Validation Accuracy"."""
    if block is not None:
        block.see(line)
    m = _STEP.match(line)
    if m:
        return {"kind": "step", "step": int(m.group(1)), "total": int(m.group(2))}
    m = _EPOCH.match(line)
    if m:
        return {"kind": "epoch", "epoch": int(m.group(1)), "total": int(m.group(2))}
    m = _CHECKPOINT.match(line)
    if m:
        # The save has started (tmp_step_N/); checkpoint_saved follows once step_N/ exists.
        return {"kind": "checkpoint", "step": int(m.group(1))}
    m = _METRIC.match(line)
    if m:
        name = METRIC_NAMES.get(" ".join(m.group(1).split()).lower())
        if name == "Accuracy" and block is not None and block.validation:
            name = "Validation Accuracy"
        try:
            return {"kind": "metric", "name": name, "value": metric_value(m.group(2))} if name else None
        except ValueError:
            return None   # "1.2.3" and the like: not a number
    if _DONE.match(line):
        return {"kind": "done", "reason": line.strip()}
    m = _LOG_DIR.match(line)
    if m:
        return {"kind": "log_dir", "path": m.group(1)}
    return None


def has_files(path, suffix):
    try:
        return any(name.endswith(suffix) for name in os.listdir(path))
    except OSError:
        return False


def servable(checkpoint_dir, step):
    """What a finished step_N/ holds for vLLM, decided from the files (NeMo-RL v0.7 layouts):
    policy/weights/model/consolidated/ is an HF tree (DTensor v2 with save_consolidated);
    *.distcp in policy/weights/model/ (DTensor v2, torch_save) or policy/weights/ (DTensor v1)
    is torch DCP for convert_dcp_to_hf.py; policy/weights/iter_*/ is a Megatron checkpoint for
    convert_megatron_to_hf.py; sharded safetensors in policy/weights/model/ without consolidated/
    (DTensor v2's default) has no converter in v0.7. The tokenizer is policy/tokenizer/, or ""
    when there is none: v0.7's Megatron worker drops save_checkpoint's tokenizer_path."""
    step_dir = os.path.join(checkpoint_dir, "step_%d" % step)
    weights = os.path.join(step_dir, "policy", "weights")
    model = os.path.join(weights, "model")
    consolidated = os.path.join(model, "consolidated")
    tokenizer = os.path.join(step_dir, "policy", "tokenizer")
    record = {"kind": "servable", "step": step, "path": weights, "tokenizer": tokenizer if os.path.isdir(tokenizer) else "",
              "backend": "unknown", "consolidated": False, "converter": ""}
    iters = sorted(n for n in (os.listdir(weights) if os.path.isdir(weights) else []) if re.fullmatch(r"iter_\d+", n))
    if os.path.isfile(os.path.join(consolidated, "config.json")) and has_files(consolidated, ".safetensors"):
        record.update(path=consolidated, backend="dtensor_v2", consolidated=True)
    elif has_files(model, ".distcp"):
        record.update(path=weights, backend="dtensor_v2", converter=CONVERT_DCP)
    elif os.path.isdir(model) and has_files(model, ".safetensors"):
        record.update(path=model, backend="dtensor_v2")
    elif has_files(weights, ".distcp"):
        record.update(path=weights, backend="dtensor_v1", converter=CONVERT_DCP)
    elif iters:
        record.update(path=os.path.join(weights, iters[-1]), backend="megatron", converter=CONVERT_MEGATRON)
    return record


class CheckpointWatcher:
    """Follows checkpointing.checkpoint_dir on the shared storage. NeMo-RL prints `Saving
    checkpoint for step N...` when a save starts and renames tmp_step_N/ to step_N/ when the
    driver is done with it (nemo_rl/utils/checkpoint.py finalize_checkpoint); DTensor v2 writes
    the weights with an asynchronous checkpointer, so files in step_N/ may still be growing then.
    A step is safe to read once a later step_M/ exists or the training process has exited.
    Records: checkpoint_saved when step_N/ appears, servable once it is safe (each step once),
    checkpoint_removed when a step reported saved is gone (keep_top_k), and at the exit
    servable_checkpoints, the whole list at once: a long run's driver log is rotated by the
    kubelet, and the early servable records may be gone from what the app reads. The directory is
    read at most every interval seconds, but on every line while a started save's step_N/ is not
    there yet, so its checkpoint_saved follows the save at once."""

    def __init__(self, checkpoint_dir, interval=1.0, clock=None):
        self.dir = checkpoint_dir
        self.interval = interval
        self.clock = clock or time.monotonic
        self.last = None
        self.saved = set()
        self.served = {}       # step -> its servable record
        self.pending = set()   # saves started whose step_N/ has not been seen

    def started(self, step):
        self.pending.add(step)

    def steps(self):
        try:
            names = os.listdir(self.dir)
        except OSError:
            return []
        return sorted(int(m.group(1)) for m in map(_STEP_DIR.match, names) if m and os.path.isdir(os.path.join(self.dir, m.group(0))))

    def poll(self, exited=False, force=False):
        """The records the checkpoint directory calls for now. Reads it at most every interval
        seconds, unless a started save is pending, forced, or at the exit."""
        now = self.clock()
        if not (exited or force or self.pending) and self.last is not None and now - self.last < self.interval:
            return []
        self.last = now
        steps = self.steps()
        self.pending -= set(steps)
        records = []
        for step in sorted(self.saved - set(steps)):
            self.saved.discard(step)
            self.served.pop(step, None)
            records.append({"kind": "checkpoint_removed", "step": step})
        for step in steps:
            if step not in self.saved:
                self.saved.add(step)
                records.append({"kind": "checkpoint_saved", "step": step, "path": os.path.join(self.dir, "step_%d" % step)})
        for i, step in enumerate(steps):
            if step not in self.served and (exited or i + 1 < len(steps)):
                if not os.path.isdir(os.path.join(self.dir, "step_%d" % step)):
                    continue   # removed since the listing: the next poll reports it
                self.served[step] = servable(self.dir, step)
                records.append(self.served[step])
        return records

    def servable_list(self):
        """Every step reported servable and not removed since, ascending, in one record (the
        entries are the servable records without their kind)."""
        entries = [{k: v for k, v in self.served[step].items() if k != "kind"} for step in sorted(self.served)]
        return {"kind": "servable_checkpoints", "checkpoints": entries}


def emit(out, record):
    out.write(PROGRESS_PREFIX + json.dumps(record, sort_keys=True) + "\n")


def child_env(env=None):
    """The training process's environment: PYTHONUNBUFFERED=1, since sft, dpo and rm print
    without flushing and, through our pipe, their lines would otherwise come in 8 KiB blocks."""
    env = dict(os.environ if env is None else env)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def annotate(line, out, watcher=None, block=None):
    """One line of NeMo-RL's output passed through, then the records it and the checkpoint
    directory call for."""
    out.write(line + "\n")
    record = progress(line, block)
    if watcher:
        for found in watcher.poll():
            emit(out, found)
        if record is not None and record["kind"] == "checkpoint":
            watcher.started(record["step"])
    if record is not None:
        emit(out, record)


def run(argv, out=sys.stdout, env=None, checkpoint_dir=None):
    """Runs NeMo-RL, passing its output through and adding a progress line after each
    banner and for each checkpoint seen on the storage; returns its exit code."""
    watcher = CheckpointWatcher(checkpoint_dir) if checkpoint_dir else None
    block = ResultsBlock()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=child_env(env))
    for raw in process.stdout:
        annotate(raw.decode("utf-8", errors="replace").rstrip("\r\n"), out, watcher, block)
        out.flush()
    process.stdout.close()
    code = process.wait()
    if watcher:
        for found in watcher.poll(exited=True):
            emit(out, found)
        emit(out, watcher.servable_list())
    out.flush()
    return code


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
    code = run(argv, out=out, env=dict(environ), checkpoint_dir=dirs["checkpoints"])
    out.write(PROGRESS_PREFIX + json.dumps({"kind": "exit", "code": code}, sort_keys=True) + "\n")
    out.flush()
    return code
