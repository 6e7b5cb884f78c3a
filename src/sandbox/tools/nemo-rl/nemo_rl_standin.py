"""The Starforge sandbox's stand-in for NeMo-RL v0.7's examples/run_<algorithm>.py.

The sandbox has no GPUs and no NeMo-RL. The connection file's FORGE_NEMO_RL_DIR points at this
folder, so runner.pex starts `python $FORGE_NEMO_RL_DIR/examples/run_grpo.py --config C
[overrides]` here and a Starforge job runs end to end. What it does as NeMo-RL does
(docs/nemo-rl.md):

  - `--config FILE` (else the script's default under examples/configs/), with `defaults:`
    inheritance (relative to the file; a missing /opt/nemo-rl/... path is read from this folder),
    `_override_: true` sections, and Hydra overrides in struct mode: `a.b=v` changes an existing
    key, `+a.b=v` adds one, `++a.b=v` adds or changes, `~a.b` deletes, each failing with Hydra's
    text wrapped in OverridesError("Failed to parse Hydra overrides: ..."); then `${a.b}`
    interpolations;
  - MasterConfig's check of policy.generation (a second pool's overrides on sft, dpo, rm and
    vlm_sft, whose configs have no generation block, fail on the missing keys as pydantic does),
    ppo's assert on colocated generation, distillation's on the vLLM backend when not colocated;
  - the driver's lines: log and checkpoint directories, the Epoch and Step banners (the step count
    restarts each epoch and its total is per epoch), the phase lines, `Saving checkpoint for step
    N...` (N global), `Training Results` with each algorithm's bullets (`  \u2022 Loss: x`; dpo and rm
    lower case `  \u2022 loss: x`; ppo `  \u2022 Policy Loss: x` unformatted), timing, validation every
    `val_period` steps, and the end line when the step limit ends the run (none when the epochs
    run out, as NeMo-RL's loops end);
  - sft, dpo and rm print without flushing (block-buffered through a pipe unless
    PYTHONUNBUFFERED is set); the GRPO family flushes;
  - checkpoints under checkpointing.checkpoint_dir every save_period steps and at the last one:
    tmp_step_N/ renamed to step_N/ with training_info.json, config.yaml, the dataloader state and
    policy/{tokenizer,weights,optimizer}/ in the layout of the backend: DTensor v2 (sharded
    safetensors, or DCP with model_save_format torch_save; model/consolidated/ only with
    save_consolidated and safetensors, finished in the background after the rename as
    Automodel's asynchronous save does), DTensor v1 (DCP; save_consolidated ignored; dpo.yaml and
    rm.yaml), Megatron (weights/iter_0000000/); small files; keep_top_k keeps the newest k;
  - logger.log_dir/exp_NNN, the next free number.

What it does not: load a model or data, use Ray or GPUs, or resume from an existing step_N.

Knobs for tests: STARFORGE_FAKE_STEP_SECONDS (default 0.2) is each step's time (starforge-sandbox
--nemo-rl-step-seconds puts it in every container);
STARFORGE_FAKE_SAVE_SECONDS (default: a step's time) how long the background part of a DTensor v2
save takes; `+starforge.fake_batches_per_epoch=N` is the dataset's length in steps (default: the
step limit, so one epoch);
`+starforge.fake_fail_at_step=N` raises in step N, so the driver exits 1 with a traceback.
Standard library only: the YAML reader below handles the block/flow subset NeMo-RL's configs use.
"""

import json
import os
import random
import re
import shutil
import struct
import sys
import threading
import time

STANDIN_ROOT = os.path.dirname(os.path.abspath(__file__))
IMAGE_ROOT = "/opt/nemo-rl"   # where the real image has NeMo-RL; configs inherit from there

# Per algorithm: the default config (next to the script, as NeMo-RL resolves it), the block
# holding max_num_steps, and whether its driver generates (GRPO family) or only trains.
ALGORITHMS = {
    "grpo": ("grpo_math_1B.yaml", "grpo", True),
    "vlm_grpo": ("vlm_grpo_3B.yaml", "grpo", True),
    "ppo": ("ppo_math_1B.yaml", "ppo", True),
    "distillation": ("distillation_math.yaml", "distillation", True),
    "sft": ("sft.yaml", "sft", False),
    "vlm_sft": ("sft.yaml", "sft", False),
    "dpo": ("dpo.yaml", "dpo", False),
    "rm": ("rm.yaml", "rm", False),
}
DEFAULT_STEPS = 3
# Whose drivers print their banners and results without flush=True (nemo_rl/algorithms/{sft,dpo,rm}.py).
UNFLUSHED = ("sft", "vlm_sft", "dpo", "rm")


class OverridesError(Exception):
    """NeMo-RL's wrapper for Hydra's override errors."""


OverridesError.__module__ = "nemo_rl.utils.config"


class ConfigError(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# YAML, the subset NeMo-RL's configs use: block mappings and sequences, flow [..] and {..},
# plain, quoted and block (| >) scalars, comments.

_INT = re.compile(r"^[-+]?(0|[1-9][0-9_]*)$")
_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$")


def scalar(text):
    """A plain or quoted scalar as YAML 1.1 / OmegaConf reads it."""
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        if t[0] == '"':
            return json.loads(t)
        return t[1:-1].replace("''", "'")
    low = t.lower()
    if low in ("", "~", "null"):
        return None
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if _INT.match(t):
        return int(t.replace("_", ""))
    if _FLOAT.match(t) and any(c.isdigit() for c in t):
        return float(t.replace("_", ""))
    if low in (".inf", "+.inf"):
        return float("inf")
    if low == "-.inf":
        return float("-inf")
    return t


def strip_comment(line):
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"" and (i == 0 or line[i - 1] in " \t[{,:"):
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
    return line.rstrip()


def split_flow(text):
    """Top-level comma-separated items of a flow collection's inside."""
    items, depth, quote, start = [], 0, None, 0
    for i, c in enumerate(text):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [s.strip() for s in items if s.strip()]


def flow_value(text):
    t = text.strip()
    if t.startswith("[") and t.endswith("]"):
        return [flow_value(item) for item in split_flow(t[1:-1])]
    if t.startswith("{") and t.endswith("}"):
        out = {}
        for item in split_flow(t[1:-1]):
            key, sep, value = item.partition(":")
            if not sep:
                raise ConfigError("flow mapping entry without ':': %r" % item)
            out[scalar(key)] = flow_value(value)
        return out
    return scalar(t)


def key_split(content):
    """(key, rest) when content is a mapping entry `key: rest`, else None."""
    if content[:1] in "'\"":
        end = content.find(content[0], 1)
        if end > 0 and content[end + 1:end + 2] == ":" and content[end + 2:end + 3] in ("", " "):
            return scalar(content[:end + 1]), content[end + 2:].strip()
        return None
    m = re.match(r"^([^\s:#\[\]{},][^:#]*?|[^\s:#\[\]{},]):(\s+(.*))?$", content)
    if not m or content.startswith("- "):
        return None
    return scalar(m.group(1)), (m.group(3) or "").strip()


class YamlReader:
    def __init__(self, text, name):
        self.name = name
        self.lines = []   # (number, indent, content, raw)
        for number, raw in enumerate(text.splitlines(), 1):
            if raw.strip() in ("---", "...") and not raw.startswith(" "):
                continue
            content = strip_comment(raw)
            if content.strip():
                self.lines.append((number, len(content) - len(content.lstrip(" ")), content.strip(), raw))
            else:
                self.lines.append((number, -1, "", raw))
        self.i = 0

    def error(self, message):
        number = self.lines[min(self.i, len(self.lines) - 1)][0] if self.lines else 0
        return ConfigError("%s, line %d: %s" % (self.name, number, message))

    def skip_blank(self):
        while self.i < len(self.lines) and self.lines[self.i][1] < 0:
            self.i += 1

    def parse(self):
        self.skip_blank()
        if self.i >= len(self.lines):
            return {}
        value = self.node(self.lines[self.i][1])
        self.skip_blank()
        if self.i < len(self.lines):
            raise self.error("unexpected indentation")
        return value

    def node(self, indent):
        self.skip_blank()
        content = self.lines[self.i][2]
        if content == "-" or content.startswith("- "):
            return self.sequence(indent)
        return self.mapping(indent)

    def value_after(self, rest, indent):
        """The value of `key: rest` or `- rest` whose own line is at indent."""
        if rest in ("|", "|-", "|+", ">", ">-", ">+"):
            return self.block_scalar(rest, indent)
        if rest:
            # A plain or quoted scalar may go on over more-indented lines, folded with spaces.
            while self.i < len(self.lines) and self.lines[self.i][1] > indent:
                rest += " " + self.lines[self.i][2]
                self.i += 1
            return flow_value(rest)
        self.skip_blank()
        if self.i < len(self.lines):
            nxt_indent, nxt = self.lines[self.i][1], self.lines[self.i][2]
            if nxt_indent > indent or (nxt_indent == indent and (nxt == "-" or nxt.startswith("- "))):
                return self.node(nxt_indent)
        return None

    def block_scalar(self, style, indent):
        parts, width = [], None
        while self.i < len(self.lines):
            raw = self.lines[self.i][3]
            if raw.strip():
                own = len(raw) - len(raw.lstrip(" "))
                if own <= indent or (width is not None and own < width):
                    break   # less indented: the block is over (a comment line too)
                width = own if width is None else width
            parts.append(raw)
            self.i += 1
        while parts and not parts[-1].strip():
            parts.pop()
        lines = [p[width or 0:] for p in parts]
        text = "\n".join(lines) if style[0] == "|" else " ".join(l.strip() for l in lines)
        return text if style.endswith("-") else text + "\n"

    def mapping(self, indent):
        out = {}
        while True:
            self.skip_blank()
            if self.i >= len(self.lines):
                return out
            number, ind, content, _ = self.lines[self.i]
            if ind < indent:
                return out
            if ind > indent:
                raise self.error("unexpected indentation")
            entry = key_split(content)
            if entry is None:
                raise self.error("expected `key: value`, found %r" % content)
            key, rest = entry
            self.i += 1
            out[key] = self.value_after(rest, indent)

    def sequence(self, indent):
        out = []
        while True:
            self.skip_blank()
            if self.i >= len(self.lines):
                return out
            number, ind, content, raw = self.lines[self.i]
            if ind < indent or not (content == "-" or content.startswith("- ")):
                return out
            if ind > indent:
                raise self.error("unexpected indentation")
            rest = content[1:].strip()
            entry = key_split(rest) if rest else None
            if entry is not None:
                # "- key: v" starts a mapping whose keys sit where the key starts.
                inner = ind + (len(content) - len(rest))
                self.lines[self.i] = (number, inner, rest, raw)
                out.append(self.mapping(inner))
            else:
                self.i += 1
                out.append(self.value_after(rest, ind))


def load_yaml(path):
    with open(path, encoding="utf-8") as f:
        value = YamlReader(f.read(), path).parse()
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError("%s: the config must be a mapping" % path)
    return value


def dump_yaml(value, indent=0):
    """YAML for config.yaml in a checkpoint; strings JSON-quoted when plain would misread."""
    pad = " " * indent

    def plain(v):
        if v is None:
            return "null"
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        s = str(v)
        if s == "" or scalar(s) != s or s != s.strip() or any(c in s for c in ":#{}[],&*!|>'\"%@`\n") or s.startswith("- "):
            return json.dumps(s, ensure_ascii=False)
        return s

    lines = []
    if isinstance(value, dict):
        if not value:
            return pad + "{}\n"
        for k, v in value.items():
            if isinstance(v, dict) and v:
                lines.append("%s%s:\n%s" % (pad, plain(k), dump_yaml(v, indent + 2)))
            elif isinstance(v, list) and v:
                lines.append("%s%s:\n%s" % (pad, plain(k), dump_yaml(v, indent)))
            else:
                lines.append("%s%s: %s\n" % (pad, plain(k), "{}" if v == {} else "[]" if v == [] else plain(v)))
        return "".join(lines)
    if isinstance(value, list):
        for v in value:
            if isinstance(v, (dict, list)) and v:
                inner = dump_yaml(v, indent + 2)
                lines.append("%s- %s" % (pad, inner[indent + 2:]))
            else:
                lines.append("%s- %s\n" % (pad, "{}" if v == {} else "[]" if v == [] else plain(v)))
        return "".join(lines)
    return pad + plain(value) + "\n"


# ---------------------------------------------------------------------------------------------
# Config: inheritance, overrides, interpolation (nemo_rl/utils/config.py and Hydra's rules).

def resolve_parent(parent, child_path):
    if os.path.isabs(parent):
        if not os.path.exists(parent) and (parent == IMAGE_ROOT or parent.startswith(IMAGE_ROOT + "/")):
            return STANDIN_ROOT + parent[len(IMAGE_ROOT):]   # the sandbox has no image
        return parent
    return os.path.join(os.path.dirname(os.path.abspath(child_path)), parent)


def merge(base, update):
    out = dict(base)
    for k, v in update.items():
        if isinstance(v, dict) and v.get("_override_"):
            out[k] = {kk: vv for kk, vv in v.items() if kk != "_override_"}
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = v
    return out


def load_config(path, seen=()):
    if path in seen:
        raise ConfigError("%s inherits from itself" % path)
    config = load_yaml(path)
    parents = config.pop("defaults", None)
    if parents is None:
        return config
    base = {}
    for parent in parents if isinstance(parents, list) else [parents]:
        base = merge(base, load_config(resolve_parent(str(parent), path), seen + (path,)))
    return merge(base, config)


def select(cfg, key):
    node = cfg
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None, False
        node = node[part]
    return node, True


def put(cfg, key, value, create):
    parts = key.split(".")
    node = cfg
    for part in parts[:-1]:
        if not isinstance(node.get(part), dict):
            if not create:
                raise KeyError(part)
            node[part] = {}
        node = node[part]
    if parts[-1] not in node and not create:
        raise KeyError(parts[-1])
    if isinstance(value, dict) and isinstance(node.get(parts[-1]), dict):
        node[parts[-1]] = merge(node[parts[-1]], value)
    else:
        node[parts[-1]] = value


def apply_override(cfg, line):
    """One Hydra override in struct mode; raises with Hydra's text."""
    text = line
    if text.startswith("~"):
        key, _, value = text[1:].partition("=")
        current, found = select(cfg, key)
        if not found or current is None:
            raise ValueError("Could not delete from config. '%s' does not exist." % key)
        if value and flow_value(value) != current:
            raise ValueError("Could not delete from config. The value of '%s' is %s and not %s." % (key, current, value))
        parent, _ = select(cfg, key.rpartition(".")[0]) if "." in key else (cfg, True)
        del parent[key.rpartition(".")[2]]
        return
    force = text.startswith("++")
    add = not force and text.startswith("+")
    body = text[2:] if force else text[1:] if add else text
    key, sep, value = body.partition("=")
    if not sep or not re.fullmatch(r"[A-Za-z0-9_\-/@]+(\.[A-Za-z0-9_\-/@]+)*", key):
        raise ValueError("Error parsing override '%s'\nmismatched input '%s' expecting EQUAL" % (line, body))
    parsed = flow_value(value)
    if add:
        current, found = select(cfg, key)
        if found and current is not None and not isinstance(parsed, (dict, list)):
            raise ValueError("Could not append to config. An item is already at '%s'.\n"
                             "Either remove + prefix: '%s'\n"
                             "Or add a second + to add or override '%s': '+%s'" % (key, line[1:], key, line))
        put(cfg, key, parsed, create=True)
    elif force:
        put(cfg, key, parsed, create=True)
    else:
        try:
            put(cfg, key, parsed, create=False)
        except KeyError:
            raise ValueError("Could not override '%s'.\nTo append to your config use +%s" % (key, line))


def parse_hydra_overrides(cfg, overrides):
    for line in overrides:
        try:
            apply_override(cfg, line)
        except ValueError as e:
            raise OverridesError("Failed to parse Hydra overrides: %s" % e) from e
    return cfg


_INTERP = re.compile(r"\$\{([A-Za-z0-9_.\-]+)\}")


def resolve(cfg, node, depth=0):
    """${a.b} interpolations against the whole config (resolver calls like ${mul:...} stay)."""
    if depth > 32:
        raise ConfigError("interpolation loop")
    if isinstance(node, dict):
        return {k: resolve(cfg, v, depth) for k, v in node.items()}
    if isinstance(node, list):
        return [resolve(cfg, v, depth) for v in node]
    if isinstance(node, str):
        whole = _INTERP.fullmatch(node)
        if whole:
            value, found = select(cfg, whole.group(1))
            if not found:
                raise ConfigError("Interpolation key '%s' not found" % whole.group(1))
            return resolve(cfg, value, depth + 1)
        return _INTERP.sub(lambda m: str(resolve(cfg, select(cfg, m.group(1))[0], depth + 1)), node)
    return node


# ---------------------------------------------------------------------------------------------
# Outputs.

def safetensors_bytes(tensors):
    """A valid, tiny safetensors file: {name: [floats]} as F32 vectors."""
    header, data = {"__metadata__": {"format": "pt"}}, b""
    for name, values in tensors.items():
        blob = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": [len(values)], "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    return struct.pack("<Q", len(head)) + head + data


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8"))


# The background save of the last DTensor v2 checkpoint (Automodel's asynchronous checkpointer):
# the next save, and the interpreter's exit, wait for it.
_pending_save = None


def finish_pending_save():
    global _pending_save
    if _pending_save is not None:
        _pending_save.join()
        _pending_save = None


def weights_backend(cfg):
    """"megatron", "dtensor_v2" or "dtensor_v1", as lm_policy picks the worker (_v2 defaults to
    false)."""
    if select(cfg, "policy.megatron_cfg.enabled")[0]:
        return "megatron"
    return "dtensor_v2" if select(cfg, "policy.dtensor_cfg._v2")[0] else "dtensor_v1"


def write_checkpoint(cfg, ckpt, step, info, rng, save_seconds=0.0):
    """tmp_step_N/ filled, then renamed to step_N/ (an existing one swapped out), as
    CheckpointManager.finalize_checkpoint does, in the layout of the policy's backend:
      DTensor v2 (Automodel): safetensors shards and .hf_metadata/ in policy/weights/model/, or
        DCP files there with model_save_format torch_save; with save_consolidated (safetensors
        only, not LoRA) an HF tree in model/consolidated/, which the asynchronous checkpointer
        finishes in the background after the rename (save_seconds later);
      DTensor v1: DCP files in policy/weights/ and policy/optimizer/ (save_consolidated ignored);
      Megatron: a dist-checkpoint in policy/weights/iter_0000000/ with the optimizer inside.
    The tokenizer goes to policy/tokenizer/ with the DTensor workers; v0.7's Megatron worker
    takes save_checkpoint's tokenizer_path into **kwargs and writes none."""
    global _pending_save
    finish_pending_save()
    model_name = str(select(cfg, "policy.model_name")[0] or "Qwen/Qwen2.5-1.5B")
    backend = weights_backend(cfg)
    tmp = os.path.join(ckpt, "tmp_step_%d" % step)
    shutil.rmtree(tmp, ignore_errors=True)
    write(os.path.join(tmp, "training_info.json"), json.dumps(info, indent=4))
    write(os.path.join(tmp, "config.yaml"), dump_yaml(cfg))
    write(os.path.join(tmp, "train_dataloader.pt"), b"starforge sandbox stand-in: dataloader state\n")
    policy = os.path.join(tmp, "policy")
    hf_config = json.dumps({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "_name_or_path": model_name,
                            "hidden_size": 4, "num_hidden_layers": 1, "torch_dtype": "bfloat16"}, indent=2)
    generation = json.dumps({"bos_token_id": 151643, "eos_token_id": 151643}, indent=2)
    if backend != "megatron":
        write(os.path.join(policy, "tokenizer", "tokenizer_config.json"), json.dumps({"name_or_path": model_name}, indent=2))
        write(os.path.join(policy, "tokenizer", "tokenizer.json"), json.dumps({"version": "1.0", "model": {"type": "BPE"}}))
    weights = {"model.embed_tokens.weight": [rng.uniform(-1, 1) for _ in range(4)],
               "lm_head.weight": [rng.uniform(-1, 1) for _ in range(4)]}
    save_optimizer = select(cfg, "checkpointing.save_optimizer")[0] is not False
    dcp = b"starforge sandbox stand-in: DCP shard\n"
    dcp_metadata = b"starforge sandbox stand-in: DCP metadata\n"
    consolidate = False
    if backend == "megatron":
        it = os.path.join(policy, "weights", "iter_0000000")
        write(os.path.join(it, "__0_0.distcp"), dcp)
        write(os.path.join(it, ".metadata"), dcp_metadata)
        write(os.path.join(it, "common.pt"), b"starforge sandbox stand-in: Megatron common state\n")
        write(os.path.join(it, "metadata.json"), json.dumps({"sharded_backend": "torch_dist"}))
    elif backend == "dtensor_v1":
        write(os.path.join(policy, "weights", "__0_0.distcp"), dcp)
        write(os.path.join(policy, "weights", ".metadata"), dcp_metadata)
    else:
        model = os.path.join(policy, "weights", "model")
        if (select(cfg, "checkpointing.model_save_format")[0] or "safetensors") == "torch_save":
            write(os.path.join(model, "__0_0.distcp"), dcp)
            write(os.path.join(model, ".metadata"), dcp_metadata)
        else:
            shard = "shard-00001-model-00001-of-00001.safetensors"
            write(os.path.join(model, shard), safetensors_bytes(weights))
            write(os.path.join(model, ".hf_metadata", "config.json"), hf_config)
            write(os.path.join(model, ".hf_metadata", "generation_config.json"), generation)
            write(os.path.join(model, ".hf_metadata", "fqn_to_file_index_mapping.json"), json.dumps({k: 1 for k in weights}, indent=2))
            consolidate = bool(select(cfg, "checkpointing.save_consolidated")[0]) and not select(cfg, "policy.dtensor_cfg.lora_cfg.enabled")[0]
    if save_optimizer and backend != "megatron":
        optim = os.path.join(policy, "optimizer", "optim" if backend == "dtensor_v2" else "")
        write(os.path.join(optim, "__0_0.distcp"), dcp)
        write(os.path.join(optim, ".metadata"), dcp_metadata)
    final = os.path.join(ckpt, "step_%d" % step)
    old = os.path.join(ckpt, "old_step_%d" % step)
    if os.path.exists(final):
        os.rename(final, old)
    os.rename(tmp, final)
    shutil.rmtree(old, ignore_errors=True)
    keep = select(cfg, "checkpointing.keep_top_k")[0]
    if isinstance(keep, int) and keep > 0:
        steps = sorted(int(n[5:]) for n in os.listdir(ckpt) if re.fullmatch(r"step_\d+", n))
        for old_step in steps[:-keep]:
            shutil.rmtree(os.path.join(ckpt, "step_%d" % old_step), ignore_errors=True)
    if consolidate:
        consolidated = os.path.join(final, "policy", "weights", "model", "consolidated")
        name = "model-00001-of-00001.safetensors"
        blob = safetensors_bytes(weights)

        def merge_in_background():
            # The shard first, cut short, as a merge in progress leaves it; the rest later.
            write(os.path.join(consolidated, name), blob[:len(blob) // 2])
            time.sleep(save_seconds)
            write(os.path.join(consolidated, name), blob)
            write(os.path.join(consolidated, "model.safetensors.index.json"),
                  json.dumps({"metadata": {"total_size": len(blob)}, "weight_map": {k: name for k in weights}}, indent=2))
            write(os.path.join(consolidated, "generation_config.json"), generation)
            write(os.path.join(consolidated, "config.json"), hf_config)

        _pending_save = threading.Thread(target=merge_in_background, name="async-save-step-%d" % step)
        _pending_save.start()


def next_experiment_dir(log_dir):
    n = 1
    if os.path.isdir(log_dir):
        taken = [int(m.group(1)) for m in (re.fullmatch(r"exp_(\d+)", d) for d in os.listdir(log_dir)) if m]
        n = max(taken, default=0) + 1
    return os.path.join(log_dir, "exp_%03d" % n)


def banner(text):
    return "=" * 25 + " " + text + " " + "=" * 25


# ---------------------------------------------------------------------------------------------

def train(algorithm, cfg, out):
    default_config, block, generates = ALGORITHMS[algorithm]
    limit, _ = select(cfg, block + ".max_num_steps")
    max_steps = limit if isinstance(limit, int) and limit > 0 else None   # rm's -1: no limit but the epochs
    batches, _ = select(cfg, "starforge.fake_batches_per_epoch")
    if not (isinstance(batches, int) and batches > 0):
        batches = max_steps or DEFAULT_STEPS   # the dataset: one epoch is the step limit unless a test says otherwise
    epochs, _ = select(cfg, block + ".max_num_epochs")
    epochs = epochs if isinstance(epochs, int) and epochs > 0 else 1
    per_epoch = min(batches, max_steps) if max_steps else batches   # the Step banner's total
    fail_at, _ = select(cfg, "starforge.fake_fail_at_step")
    step_seconds = float(os.environ.get("STARFORGE_FAKE_STEP_SECONDS", "0.2"))
    save_seconds = float(os.environ.get("STARFORGE_FAKE_SAVE_SECONDS", str(step_seconds)))
    seed = select(cfg, block + ".seed")[0]
    rng = random.Random(seed if isinstance(seed, int) else 42)
    # sft, dpo and rm print without flush=True (only their end lines flush): through a pipe their
    # lines arrive in blocks unless PYTHONUNBUFFERED is set. The GRPO family flushes its banners.
    flushes = algorithm not in UNFLUSHED

    def say(line="", flush=flushes):
        out.write(line + "\n")
        if flush:
            out.flush()

    log_dir = next_experiment_dir(str(select(cfg, "logger.log_dir")[0] or "logs"))
    os.makedirs(log_dir, exist_ok=True)
    say("\U0001F4CA Using log directory: %s" % log_dir)
    checkpointing = select(cfg, "checkpointing.enabled")[0] is not False
    ckpt = select(cfg, "checkpointing.checkpoint_dir")[0]
    if checkpointing and ckpt:
        ckpt = os.path.abspath(str(ckpt))
        os.makedirs(ckpt, exist_ok=True)
        say("\U0001F4CA Using checkpoint directory: %s" % ckpt)
    colocated = select(cfg, "policy.generation.colocated.enabled")[0] is not False
    if algorithm == "ppo":
        # nemo_rl/algorithms/ppo.py setup()
        assert colocated, ("PPO currently requires colocated generation (vLLM / SGLang sharing GPUs with the policy worker). "
                           "Set policy.generation.colocated.enabled=true. Non-colocated PPO is not yet supported.")
    if algorithm == "distillation" and not colocated:
        # nemo_rl/algorithms/distillation.py setup()
        assert select(cfg, "policy.generation.backend")[0] != "megatron", (
            "Non-colocated inference is not supported for Megatron generation backends. Please use vLLM backend for generation.")
    save_period = select(cfg, "checkpointing.save_period")[0] or 10
    val_period = select(cfg, block + ".val_period")[0] or 0
    batch = (select(cfg, block + ".num_prompts_per_step")[0] or 32) * (select(cfg, block + ".num_generations_per_prompt")[0] or 16)

    loss, reward, tokens = 0.05 + rng.uniform(0, 0.05), 0.25 + rng.uniform(0, 0.1), 0
    total_steps, epoch = 0, 0
    while epoch < epochs and (max_steps is None or total_steps < max_steps):
        say(banner("Epoch %d/%d" % (epoch + 1, epochs)))
        for current in range(batches):
            step = total_steps + 1   # the global step: checkpoints, failures and training_info count it
            started = time.monotonic()
            say(banner("Step %d/%d" % (current + 1, per_epoch)))
            say("\u25B6 Preparing batch...")
            if generates:
                phases = ["Generating responses for batch of size %d..." % batch, "Processing rewards...,", "Computing advantages...",
                          "Computing logprobs...", "Preparing for training...", "Training policy..."]
            else:
                phases = ["Taking a training step..."]
            for phase in phases:
                time.sleep(step_seconds / (len(phases) + 1))
                say("\u25B6 " + phase)
            if isinstance(fail_at, int) and step == fail_at:
                out.flush()
                raise RuntimeError("starforge.fake_fail_at_step=%d: the sandbox's NeMo-RL stand-in fails in step %d as a crashed "
                                   "training step would" % (fail_at, step))
            time.sleep(step_seconds / (len(phases) + 1))
            loss *= 0.8 + rng.uniform(0, 0.15)
            reward = min(1.0, reward + rng.uniform(0, 0.08))
            length = 300 + rng.uniform(-40, 40)
            tokens += int(batch * length)
            info = {"current_step": current + 1, "total_steps": step, "current_epoch": epoch, "total_valid_tokens": tokens,
                    "consumed_samples": step * batch}
            metric = select(cfg, "checkpointing.metric_name")[0]
            last = (max_steps is not None and step >= max_steps) or (epoch + 1 == epochs and current + 1 == batches)
            if val_period and step % val_period == 0:
                say("\u25B6 Starting validation at step %d..." % step)
                accuracy = min(1.0, reward + rng.uniform(-0.05, 0.05))
                if generates:
                    say("\U0001F4CA Validation Results:")
                    say("    \u2022 Accuracy: %.4f" % accuracy)
                    say("    \u2022 Average response length: %.1f tokens" % length)
                    info["val_reward"] = accuracy
                elif algorithm in ("sft", "vlm_sft"):
                    say("\U0001F4CA Validation Results:")
                    say("    \u2022 Validation loss: %.4f" % (loss * 1.1))
                else:
                    say("\U0001F4CA Validation Results for `validation` set:")
                    say("    \u2022 Validation loss: %.4f" % (loss * 1.1))
                    say("    \u2022 Validation accuracy: %.4f" % accuracy)
                if metric:
                    info[str(metric)] = accuracy
            if checkpointing and ckpt and (step % save_period == 0 or last):
                say("Saving checkpoint for step %d..." % step)
                write_checkpoint(cfg, ckpt, step, info, rng, save_seconds)
            total = time.monotonic() - started
            say("")
            say("\U0001F4CA Training Results:")
            if algorithm == "ppo":
                say("  \u2022 Policy Loss: %r" % loss)   # ppo prints the value as it is, unformatted
            elif algorithm in ("dpo", "rm"):
                # dpo and rm print their metric dataclass's field names, lower case
                fields = [("loss", loss), ("accuracy", min(1.0, 0.5 + reward / 2))] if algorithm == "rm" else \
                    [("loss", loss), ("sft_loss", 0.0), ("preference_loss", loss), ("accuracy", min(1.0, 0.5 + reward / 2))]
                for name, value in fields + [("rewards_chosen_mean", reward), ("rewards_rejected_mean", -reward)]:
                    say("  \u2022 %s: %.4f" % (name, value))
                say("  \u2022 num valid samples: %.0f" % batch if algorithm == "rm" else "  \u2022 num_valid_samples: %.4f" % batch)
            else:
                say("  \u2022 Loss: %.4f" % loss)
            if generates:
                if algorithm in ("grpo", "vlm_grpo"):
                    say("  \u2022 Generation KL Error: %.4f" % rng.uniform(0.0005, 0.002))
                if algorithm != "distillation":
                    say("  \u2022 Avg Reward: %.4f" % reward)
                say("  \u2022 Mean Generation Length: %.4f" % length)
            say("")
            say("\u23F1\uFE0F  Timing:")
            say("  \u2022 Total step time: %.2fs" % total)
            shares = [("generation", 0.45), ("policy_training", 0.3), ("policy_and_reference_logprobs", 0.15), ("data_processing", 0.1)] \
                if generates else [("policy_training", 0.9), ("data_processing", 0.1)]
            for name, share in shares:
                say("  \u2022 %s: %.2fs (%.1f%%)" % (name, total * share, share * 100))
            total_steps += 1
            if max_steps is not None and total_steps >= max_steps:
                say("Max number of steps has been reached, stopping training early", flush=True)
                return
        epoch += 1
    # Out of epochs: NeMo-RL's loops end without a line of their own.


# MasterConfig's pydantic check (nemo_rl/algorithms/<algorithm>.py): GenerationConfig's keys that
# are not NotRequired (nemo_rl/models/generation/interfaces.py).
GENERATION_REQUIRED = ("backend", "max_new_tokens", "temperature", "top_p", "top_k", "stop_token_ids", "stop_strings")


class ValidationError(ValueError):
    """pydantic's, as a traceback names it."""


ValidationError.__module__ = "pydantic_core._pydantic_core"


def short_repr(value):
    text = repr(value)
    return text if len(text) <= 50 else text[:24] + "..." + text[-22:]   # pydantic cuts long inputs so


def validate_master_config(cfg):
    """What MasterConfig(**config) refuses that the stand-in can tell: a policy.generation
    without the keys GenerationConfig requires (sft, dpo and rm configs have no generation
    block, so a second pool's `++policy.generation.colocated...` overrides create one)."""
    generation, found = select(cfg, "policy.generation")
    if not found or not isinstance(generation, dict):
        return
    missing = [key for key in GENERATION_REQUIRED if key not in generation]
    if missing:
        lines = ["%d validation error%s for MasterConfig" % (len(missing), "" if len(missing) == 1 else "s")]
        for key in missing:
            lines += ["policy.generation.%s" % key,
                      "  Field required [type=missing, input_value=%s, input_type=dict]" % short_repr(generation),
                      "    For further information visit https://errors.pydantic.dev/2.11/v/missing"]
        raise ValidationError("\n".join(lines))


def main(algorithm, argv=None, out=None):
    """examples/run_<algorithm>.py: returns the exit code; errors propagate as tracebacks."""
    argv = sys.argv[1:] if argv is None else argv
    out = out or sys.stdout
    if hasattr(out, "reconfigure"):
        # UTF-8 for the emoji; line buffering only where NeMo-RL flushes its lines.
        out.reconfigure(encoding="utf-8", line_buffering=algorithm not in UNFLUSHED)
    config_path, overrides, i = None, [], 0
    while i < len(argv):
        if argv[i] == "--config":
            if i + 1 >= len(argv):
                out.write("usage: run_%s.py [-h] [--config CONFIG]\nrun_%s.py: error: argument --config: expected one argument\n"
                          % (algorithm, algorithm))
                return 2
            config_path = argv[i + 1]
            i += 2
            continue
        if argv[i].startswith("--config="):
            config_path = argv[i][len("--config="):]
        else:
            overrides.append(argv[i])
        i += 1
    if config_path is None:
        config_path = os.path.join(STANDIN_ROOT, "examples", "configs", ALGORITHMS[algorithm][0])
    out.write("Loaded configuration from: %s\n" % config_path)
    cfg = load_config(config_path)
    if overrides:
        out.write("Overrides: %s\n" % overrides)
        cfg = parse_hydra_overrides(cfg, overrides)
    cfg = resolve(cfg, cfg)
    validate_master_config(cfg)
    out.write("Applied CLI overrides\n")
    # TaskDataSpec opens the prompt file relative to the driver's cwd (nemo_rl/data/interfaces.py).
    prompt, _ = select(cfg, "data.default.prompt_file")
    if prompt and not os.path.exists(resolve_parent(str(prompt), os.path.join(os.getcwd(), "config.yaml"))):
        raise FileNotFoundError("Prompt file %s not found" % prompt)
    train(algorithm, cfg, out)
    return 0
