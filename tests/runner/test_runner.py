"""The in-container runner (src/runner), run by CTest as tst_runner: the pex is reproducible,
the Capsule check refuses what was changed (manifest.json against the RayJob's digest, then every
file against the manifest), NeMo-RL gets the config, overrides and cluster
shape, its banners become progress lines, and a whole run against a stand-in NeMo-RL works.
RUNNER_PEX names the built runner.pex; SOURCE_DIR the checkout."""

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE_DIR = os.environ["SOURCE_DIR"]
RUNNER_PEX = os.environ["RUNNER_PEX"]
sys.path.insert(0, os.path.join(SOURCE_DIR, "src", "runner"))

from starforge_runner import runner  # noqa: E402

SPEC = {
    "version": 1, "name": "demo", "code": ".", "recipe": {"algorithm": "grpo", "config": "configs/run.yaml",
                                                         "overrides": ["grpo.max_num_steps=3"]},
    "env": {}, "pools": [{"name": "train", "series": "h200", "nodes": 2, "gpusPerNode": 8}],
    "storage": True, "corpus": False,
}

# A stand-in for NeMo-RL's examples/run_grpo.py: prints what NeMo-RL prints and its argv.
FAKE_NEMO_RL = r'''
import json, os, sys
print("ARGV " + json.dumps(sys.argv[1:]))
ckpt = [a.split("=", 1)[1] for a in sys.argv if a.startswith("++checkpointing.checkpoint_dir=")][0]
print("========================= Epoch 1/1 =========================")
for step in (1, 2, 3):
    print("========================= Step %d/3 =========================" % step)
    print("\u25b6 Training policy...")
    print("  \u2022 Loss: 0.%d123" % step)
    print("  \u2022 Avg Reward: 0.4375")
print("Saving checkpoint for step 3...")
for name in ("config.json", "model-00001-of-00001.safetensors"):
    os.makedirs(os.path.join(ckpt, "step_3", "policy", "weights", "model", "consolidated"), exist_ok=True)
    open(os.path.join(ckpt, "step_3", "policy", "weights", "model", "consolidated", name), "w").close()
os.makedirs(os.path.join(ckpt, "step_3", "policy", "tokenizer"))
open(os.path.join(ckpt, "step_3", "policy", "tokenizer", "tokenizer_config.json"), "w").close()
print("Max number of steps has been reached, stopping training early")
sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
'''


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def make_capsule(root, spec=SPEC):
    write(os.path.join(root, "jobspec.json"), json.dumps(spec, sort_keys=True))
    write(os.path.join(root, "configs", "run.yaml"), "defaults: /opt/nemo-rl/examples/configs/grpo_math_1B.yaml\n")
    files = []
    for dirpath, _, names in os.walk(root):
        for name in names:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            with open(full, "rb") as f:
                data = f.read()
            files.append({"path": rel, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    write(os.path.join(root, "manifest.json"), json.dumps({"format": "starforge-capsule/1", "files": sorted(files, key=lambda e: e["path"])}))


def manifest_sha256(root):
    with open(os.path.join(root, "manifest.json"), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class RunnerTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = os.path.join(self.tmp.name, "capsule")
        make_capsule(self.root)

    def tearDown(self):
        self.tmp.cleanup()

    def test_pex_is_reproducible(self):
        again = os.path.join(self.tmp.name, "again.pex")
        subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "src", "runner", "build_pex.py"),
                        os.path.join(SOURCE_DIR, "src", "runner"), again], check=True)
        with open(again, "rb") as a, open(RUNNER_PEX, "rb") as b:
            self.assertEqual(a.read(), b.read())

    def test_manifest_is_checked(self):
        self.assertEqual(runner.verify_manifest(self.root), 2)
        write(os.path.join(self.root, "configs", "run.yaml"), "changed\n")
        with self.assertRaisesRegex(runner.RunnerError, "configs/run.yaml has 8 bytes"):
            runner.verify_manifest(self.root)
        write(os.path.join(self.root, "configs", "run.yaml"), "defaults: /opt/nemo-rl/examples/configs/grpo_math_1B.yaml\n"[::-1])
        with self.assertRaisesRegex(runner.RunnerError, "does not match its SHA-256"):
            runner.verify_manifest(self.root)
        write(os.path.join(self.root, "configs", "run.yaml"), "defaults: /opt/nemo-rl/examples/configs/grpo_math_1B.yaml\n")
        os.remove(os.path.join(self.root, "jobspec.json"))
        with self.assertRaisesRegex(runner.RunnerError, "jobspec.json is listed in the manifest but missing"):
            runner.verify_manifest(self.root)
        write(os.path.join(self.root, "manifest.json"), json.dumps({"format": "starforge-capsule/1", "files": [{"path": "../etc/passwd"}]}))
        with self.assertRaisesRegex(runner.RunnerError, "unsafe path"):
            runner.verify_manifest(self.root)
        write(os.path.join(self.root, "manifest.json"), "{")
        with self.assertRaisesRegex(runner.RunnerError, "not valid JSON"):
            runner.verify_manifest(self.root)

    def test_manifest_digest_is_checked(self):
        digest = manifest_sha256(self.root)
        self.assertEqual(runner.verify_manifest_digest(self.root, digest), digest)
        # Another Capsule of the same tree shape, consistent in itself: its files match its own
        # manifest, so only the digest the job was submitted with refuses it.
        other = os.path.join(self.tmp.name, "other")
        make_capsule(other, dict(SPEC, name="other"))
        self.assertEqual(runner.verify_manifest(other), 2)
        with self.assertRaisesRegex(runner.RunnerError, "manifest.json has SHA-256 %s, but the job was submitted with %s"
                                    % (manifest_sha256(other), digest)):
            runner.verify_manifest_digest(other, digest)
        for missing in ("", "0" * 63, digest.upper()):
            with self.assertRaisesRegex(runner.RunnerError, "FORGE_MANIFEST_SHA256 .* is not a SHA-256"):
                runner.verify_manifest_digest(self.root, missing)
        os.remove(os.path.join(self.root, "manifest.json"))
        with self.assertRaisesRegex(runner.RunnerError, "manifest.json is missing"):
            runner.verify_manifest_digest(self.root, digest)

    def test_command_for_one_pool(self):
        dirs = runner.job_dirs("/starforge", "x7k2pq")
        argv = runner.build_command(SPEC, "/work", "/opt/nemo-rl", dirs, python="python")
        self.assertEqual(argv[:4], ["python", "/opt/nemo-rl/examples/run_grpo.py", "--config", "/work/configs/run.yaml"])
        # The JobSpec's overrides first; the shape and paths last, so they win.
        self.assertEqual(argv[4], "grpo.max_num_steps=3")
        self.assertIn("++cluster.num_nodes=2", argv)
        self.assertIn("++cluster.gpus_per_node=8", argv)
        self.assertIn("++checkpointing.checkpoint_dir=/starforge/jobs/x7k2pq/checkpoints", argv)
        self.assertIn("++logger.log_dir=/starforge/jobs/x7k2pq/logs", argv)
        self.assertIn("++checkpointing.save_consolidated=true", argv)
        self.assertFalse(any("colocated" in a for a in argv))

    def test_second_pool_is_dedicated_generation(self):
        spec = dict(SPEC, pools=[{"name": "train", "series": "h200", "nodes": 2, "gpusPerNode": 8},
                                 {"name": "gen", "series": "h100", "nodes": 1, "gpusPerNode": 8}])
        argv = runner.build_command(spec, "/work", "/opt/nemo-rl", runner.job_dirs("/s", "x7k2pq"), python="python")
        self.assertIn("++cluster.num_nodes=3", argv)   # every GPU node, generation included
        self.assertIn("++policy.generation.colocated.enabled=false", argv)
        self.assertIn("++policy.generation.colocated.resources.num_nodes=1", argv)
        self.assertIn("++policy.generation.colocated.resources.gpus_per_node=8", argv)

    def test_script_from_the_capsule(self):
        spec = dict(SPEC, recipe={"script": "train.py", "config": "configs/run.yaml"})
        write(os.path.join(self.root, "train.py"), "print('hi')\n")
        argv = runner.build_command(spec, self.root, "/opt/nemo-rl", runner.job_dirs("/s", "x7k2pq"), python="python")
        self.assertEqual(argv[1], os.path.join(self.root, "train.py"))

    def test_progress_lines(self):
        self.assertEqual(runner.progress("========================= Step 3/100 ========================="),
                         {"kind": "step", "step": 3, "total": 100})
        self.assertEqual(runner.progress("========================= Epoch 1/2 ========================="),
                         {"kind": "epoch", "epoch": 1, "total": 2})
        self.assertEqual(runner.progress("Saving checkpoint for step 50..."), {"kind": "checkpoint", "step": 50})
        self.assertEqual(runner.progress("  \u2022 Loss: 0.0123"), {"kind": "metric", "name": "Loss", "value": 0.0123})
        self.assertEqual(runner.progress("  \u2022 Total step time: 41.27s"), {"kind": "metric", "name": "Total step time", "value": 41.27})
        self.assertEqual(runner.progress("Max number of steps has been reached, stopping training early")["kind"], "done")
        self.assertIsNone(runner.progress("(PolicyWorker pid=12) Step 3/100"))
        self.assertIsNone(runner.progress("\u25b6 Training policy..."))
        self.assertIsNone(runner.progress("\u25b6 Step 1/4..."))   # ppo's inner PPO epochs, not a Step banner

    def test_metric_names_and_values(self):
        cases = [
            ("  \u2022 loss: 0.6931", "Loss", 0.6931),                        # dpo, rm: field names, lower case
            ("  \u2022 accuracy: 0.5000", "Accuracy", 0.5),
            ("  \u2022 Policy Loss: 0.012345678901234", "Loss", 0.012345678901234),   # ppo, unformatted
            ("  \u2022 Critic Loss: 0.25", "Critic Loss", 0.25),
            ("    \u2022 Validation loss: 1.0742", "Validation Loss", 1.0742),  # sft, dpo, rm
            ("    \u2022 Validation accuracy: 0.6094", "Validation Accuracy", 0.6094),
            ("    \u2022 Accuracy: 0.5312", "Accuracy", 0.5312),               # without its block (below)
            ("  \u2022 Avg Filtered Reward: 0.4375", "Avg Filtered Reward", 0.4375),   # grpo with dynamic sampling
            ("  \u2022 Avg Total Reward: 0.3125", "Avg Total Reward", 0.3125),
            ("  \u2022 Avg Reward: 1e-05", "Avg Reward", 1e-05),
            ("  \u2022 Mean Generation Length: 298.2500", "Mean Generation Length", 298.25),
            ("  \u2022 loss: nan", "Loss", "nan"),
            ("  \u2022 Policy Loss: NaN", "Loss", "nan"),
            ("  \u2022 Loss: inf", "Loss", "inf"),
            ("  \u2022 Loss: -inf", "Loss", "-inf"),
        ]
        for line, name, value in cases:
            self.assertEqual(runner.progress(line), {"kind": "metric", "name": name, "value": value}, line)
        # Valid JSON for the app's parser: no NaN or Infinity literals.
        self.assertEqual(json.dumps(runner.progress("  \u2022 loss: nan")), '{"kind": "metric", "name": "Loss", "value": "nan"}')
        for line in ("  \u2022 Critic Loss: N/A", "  \u2022 num valid samples: 128", "  \u2022 rewards_chosen_mean: 0.1",
                     "  \u2022 generation: 20.50s (49.7%)", "    \u2022 Total validation time: 2.50s", "    \u2022 Validation sft_loss: 0.0",
                     "  \u2022 Loss: 1.2.3", "  \u2022 Loss: .", "  \u2022 Loss: 0.5 (smoothed)"):
            self.assertIsNone(runner.progress(line), line)

    def test_validation_accuracy_by_its_block(self):
        # grpo, distillation and ppo print their validation accuracy with the bullet dpo and rm
        # use for training accuracy; the `📊 … Results:` header before it decides, until a banner.
        block = runner.ResultsBlock()
        lines = ["\U0001F4CA Training Results:", "  \u2022 accuracy: 0.5500",
                 "\U0001F4CA Validation Results:", "    \u2022 Accuracy: 0.5312", "    \u2022 Average response length: 301.2 tokens",
                 "  \u23f1\ufe0f  Validation Timing:", "    \u2022 Total validation time: 2.50s", "    \u2022 Accuracy: 0.6",
                 "========================= Step 2/3 =========================", "  \u2022 Accuracy: 0.7",
                 "\U0001F4CA Validation Results for `validation` set:", "    \u2022 Accuracy: 0.8",
                 "\U0001F4CA Rewards stats: min=0.0000, max=1.0000, mean=0.5000, std=0.5000", "    \u2022 Accuracy: 0.9",
                 "\U0001F4CA Training Results:", "  \u2022 Accuracy: 0.4"]
        names = [(r["name"], r["value"]) for r in (runner.progress(line, block) for line in lines) if r and r["kind"] == "metric"]
        self.assertEqual(names, [("Accuracy", 0.55), ("Validation Accuracy", 0.5312), ("Validation Accuracy", 0.6),
                                 ("Accuracy", 0.7), ("Validation Accuracy", 0.8), ("Validation Accuracy", 0.9), ("Accuracy", 0.4)])

    def test_log_directory_line(self):
        self.assertEqual(runner.progress("\U0001F4CA Using log directory: /starforge/jobs/x7k2pq/logs/exp_002"),
                         {"kind": "log_dir", "path": "/starforge/jobs/x7k2pq/logs/exp_002"})
        self.assertIsNone(runner.progress("\U0001F4CA Using checkpoint directory: /starforge/jobs/x7k2pq/checkpoints"))

    def test_algorithm_logs(self):
        # tests/data/nemo-rl: a driver log per algorithm, from NeMo-RL v0.7.0's print() calls,
        # and the runner's output for it, which tst_progress reads with the app's parser.
        data = os.path.join(SOURCE_DIR, "tests", "data", "nemo-rl")
        records = {}
        for algorithm in ("grpo", "sft", "dpo", "rm", "distillation", "ppo"):
            with open(os.path.join(data, algorithm + ".log"), encoding="utf-8") as f:
                lines = f.read().splitlines()
            out = io.StringIO()
            block = runner.ResultsBlock()
            for line in lines:
                runner.annotate(line, out, block=block)
            runner.emit(out, {"kind": "exit", "code": 0})
            expected = os.path.join(data, algorithm + ".runner.log")
            if os.environ.get("STARFORGE_UPDATE_FIXTURES"):
                with open(expected, "w", encoding="utf-8") as f:
                    f.write(out.getvalue())
            with open(expected, encoding="utf-8") as f:
                self.assertEqual(out.getvalue(), f.read(), algorithm + ": the runner's output changed; STARFORGE_UPDATE_FIXTURES=1 rewrites it")
            records[algorithm] = [json.loads(l[len(runner.PROGRESS_PREFIX):]) for l in out.getvalue().splitlines()
                                  if l.startswith(runner.PROGRESS_PREFIX)]

        def of(algorithm, kind, key):
            return [r[key] for r in records[algorithm] if r["kind"] == kind]

        def metric(algorithm, name):
            return [r["value"] for r in records[algorithm] if r["kind"] == "metric" and r["name"] == name]

        for algorithm in records:
            self.assertEqual(of(algorithm, "log_dir", "path"), ["/starforge/jobs/k2x7pq/logs/exp_003"], algorithm)
        self.assertEqual(of("grpo", "step", "step"), [1, 2])
        self.assertEqual(metric("grpo", "Loss"), [0.0123, 0.0098])
        self.assertEqual(metric("grpo", "Avg Reward"), [0.4375, 0.5156])
        self.assertEqual(metric("grpo", "Validation Accuracy"), [0.5312])   # `• Accuracy:` under `📊 Validation Results:`
        self.assertEqual(metric("grpo", "Accuracy"), [])
        # sft: two epochs, the Step count restarts and its total is per epoch; the checkpoint lines
        # carry the global step; no end line, the epochs ran out.
        self.assertEqual(of("sft", "epoch", "epoch"), [1, 2])
        self.assertEqual(of("sft", "step", "step"), [1, 2, 1, 2])
        self.assertEqual(of("sft", "step", "total"), [2, 2, 2, 2])
        self.assertEqual(of("sft", "checkpoint", "step"), [3, 4])
        self.assertEqual(of("sft", "done", "reason"), [])
        self.assertEqual(metric("sft", "Validation Loss"), [1.0742])
        self.assertEqual(metric("dpo", "Loss"), [0.6731, 0.6531])
        self.assertEqual(metric("dpo", "Accuracy"), [0.55, 0.6])
        self.assertEqual(metric("dpo", "Validation Loss"), [0.6521])
        self.assertEqual(metric("dpo", "Validation Accuracy"), [0.6094])
        self.assertEqual(metric("rm", "Loss"), [0.693, "nan", 0.6012])
        self.assertEqual(of("rm", "done", "reason"), [])
        self.assertEqual(metric("distillation", "Mean Generation Length"), [290.5, 290.5])
        self.assertEqual(metric("distillation", "Validation Accuracy"), [0.4219])
        self.assertEqual(metric("distillation", "Accuracy"), [])
        self.assertEqual(metric("ppo", "Loss")[-1], 0.009876543210987)   # the Training Results line, after the inner ones
        self.assertEqual(of("ppo", "step", "step"), [1, 2])
        self.assertEqual(metric("ppo", "Critic Loss"), [0.25, 0.25])
        for algorithm in ("grpo", "dpo", "distillation", "ppo"):
            self.assertEqual(len(of(algorithm, "done", "reason")), 1, algorithm)

    def make_step(self, ckpt, step, layout):
        base = os.path.join(ckpt, "step_%d" % step, "policy")
        if layout != "megatron":   # v0.7's Megatron worker writes no tokenizer
            write(os.path.join(base, "tokenizer", "tokenizer_config.json"), "{}")
        files = {
            "consolidated": ["weights/model/shard-00001-model-00001-of-00001.safetensors", "weights/model/consolidated/config.json",
                             "weights/model/consolidated/model-00001-of-00001.safetensors",
                             "weights/model/consolidated/model.safetensors.index.json"],
            "sharded": ["weights/model/shard-00001-model-00001-of-00001.safetensors", "weights/model/.hf_metadata/config.json"],
            "torch_save": ["weights/model/__0_0.distcp", "weights/model/.metadata"],
            "v1": ["weights/__0_0.distcp", "weights/.metadata", "optimizer/__0_0.distcp"],
            "megatron": ["weights/iter_0000000/__0_0.distcp", "weights/iter_0000000/.metadata", "weights/iter_0000000/common.pt"],
            "empty": [],
        }[layout]
        for name in files:
            write(os.path.join(base, name), b"x")
        os.makedirs(os.path.join(base, "weights"), exist_ok=True)

    def test_servable_layouts(self):
        ckpt = os.path.join(self.tmp.name, "ckpt")
        expect = {
            "consolidated": ("dtensor_v2", True, "policy/weights/model/consolidated", ""),
            "sharded": ("dtensor_v2", False, "policy/weights/model", ""),
            "torch_save": ("dtensor_v2", False, "policy/weights", "examples/converters/convert_dcp_to_hf.py"),
            "v1": ("dtensor_v1", False, "policy/weights", "examples/converters/convert_dcp_to_hf.py"),
            "megatron": ("megatron", False, "policy/weights/iter_0000000", "examples/converters/convert_megatron_to_hf.py"),
            "empty": ("unknown", False, "policy/weights", ""),
        }
        for step, (layout, (backend, consolidated, path, converter)) in enumerate(sorted(expect.items()), 1):
            self.make_step(ckpt, step, layout)
            step_dir = os.path.join(ckpt, "step_%d" % step)
            tokenizer = "" if layout == "megatron" else os.path.join(step_dir, "policy", "tokenizer")
            self.assertEqual(runner.servable(ckpt, step), {
                "kind": "servable", "step": step, "path": os.path.join(step_dir, path), "tokenizer": tokenizer,
                "backend": backend, "consolidated": consolidated, "converter": converter}, layout)

    def test_checkpoint_watcher(self):
        ckpt = os.path.join(self.tmp.name, "ckpt")
        now = [0.0]
        watcher = runner.CheckpointWatcher(ckpt, interval=1.0, clock=lambda: now[0])
        self.assertEqual(watcher.poll(), [])                  # no directory yet
        os.makedirs(os.path.join(ckpt, "tmp_step_2"))         # a save in progress is not a checkpoint
        now[0] += 2
        self.assertEqual(watcher.poll(), [])
        os.rename(os.path.join(ckpt, "tmp_step_2"), os.path.join(ckpt, "step_2"))
        self.make_step(ckpt, 2, "consolidated")
        self.assertEqual(watcher.poll(), [])                  # within the interval: not read
        self.assertEqual(watcher.poll(force=True), [{"kind": "checkpoint_saved", "step": 2, "path": os.path.join(ckpt, "step_2")}])
        now[0] += 2
        self.assertEqual(watcher.poll(), [])                  # the newest step is not safe yet
        # A started save is looked for on every line until its step_N/ is there.
        watcher.started(3)
        self.assertEqual(watcher.poll(), [])
        self.make_step(ckpt, 3, "torch_save")
        self.assertEqual([(r["kind"], r["step"]) for r in watcher.poll()], [("checkpoint_saved", 3), ("servable", 2)])
        self.assertEqual(watcher.poll(), [])                  # found: back to the interval
        shutil.rmtree(os.path.join(ckpt, "step_3"))
        now[0] += 2
        self.assertEqual(watcher.poll(), [{"kind": "checkpoint_removed", "step": 3}])
        self.make_step(ckpt, 4, "consolidated")
        self.make_step(ckpt, 10, "consolidated")              # numeric order, not by name
        now[0] += 2
        records = watcher.poll()
        self.assertEqual([(r["kind"], r["step"]) for r in records],
                         [("checkpoint_saved", 4), ("checkpoint_saved", 10), ("servable", 4)])
        self.assertTrue(records[2]["consolidated"])
        self.assertEqual(records[2]["path"], os.path.join(ckpt, "step_4", "policy", "weights", "model", "consolidated"))
        # keep_top_k removed step 2, then the training process exited: the last step is safe now.
        shutil.rmtree(os.path.join(ckpt, "step_2"))
        records = watcher.poll(exited=True)
        self.assertEqual([(r["kind"], r["step"]) for r in records], [("checkpoint_removed", 2), ("servable", 10)])
        self.assertEqual(watcher.poll(exited=True), [])       # each step once
        # The whole list for a log whose servable records were rotated away: every step reported
        # servable and still there, step 2 (servable, then removed) left out.
        final = watcher.servable_list()
        self.assertEqual(final["kind"], "servable_checkpoints")
        self.assertEqual([c["step"] for c in final["checkpoints"]], [4, 10])
        for entry in final["checkpoints"]:
            expected = runner.servable(ckpt, entry["step"])
            del expected["kind"]
            self.assertEqual(entry, expected)
        shutil.rmtree(os.path.join(ckpt, "step_10"))
        self.assertEqual(watcher.poll(exited=True), [{"kind": "checkpoint_removed", "step": 10}])
        self.assertEqual([c["step"] for c in watcher.servable_list()["checkpoints"]], [4])

    def test_the_training_process_is_unbuffered(self):
        # A child that prints without flushing and waits until the runner has passed its first
        # line on: only with PYTHONUNBUFFERED=1 in its environment does that line leave it early.
        gate = os.path.join(self.tmp.name, "gate")
        child = os.path.join(self.tmp.name, "child.py")
        write(child, "import os, sys, time\n"
                     "gate = " + repr(gate) + "\n"
                     "print('PYTHONUNBUFFERED=' + str(os.environ.get('PYTHONUNBUFFERED')))\n"
                     "deadline = time.monotonic() + 20\n"
                     "while not os.path.exists(gate) and time.monotonic() < deadline:\n"
                     "    time.sleep(0.02)\n"
                     "print('gate seen' if os.path.exists(gate) else 'gate never opened')\n"
                     "sys.exit(0 if os.path.exists(gate) else 3)\n")

        class Out(io.StringIO):
            def write(self, text):
                if text.startswith("PYTHONUNBUFFERED="):
                    open(gate, "w").close()
                return super().write(text)

        out = Out()
        env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
        self.assertEqual(runner.run([sys.executable, child], out=out, env=env), 0, out.getvalue())
        self.assertEqual(out.getvalue().splitlines(), ["PYTHONUNBUFFERED=1", "gate seen"])
        self.assertNotIn("PYTHONUNBUFFERED", env)   # the caller's mapping is left alone
        self.assertEqual(runner.child_env({"A": "b"}), {"A": "b", "PYTHONUNBUFFERED": "1"})

    def test_job_id_is_checked(self):
        with self.assertRaisesRegex(runner.RunnerError, "FORGE_JOB_ID"):
            runner.prepare_job_dir(self.tmp.name, "../../x", SPEC)

    def run_pex(self, extra_env=None):
        nemo = os.path.join(self.tmp.name, "nemo-rl")
        write(os.path.join(nemo, "examples", "run_grpo.py"), FAKE_NEMO_RL)
        storage = os.path.join(self.tmp.name, "storage")
        env = dict(os.environ, FORGE_JOB_ID="x7k2pq", FORGE_NEMO_RL_DIR=nemo, FORGE_STORAGE_ROOT=storage, PYTHONIOENCODING="utf-8",
                   FORGE_MANIFEST_SHA256=manifest_sha256(self.root))
        env.update(extra_env or {})
        done = subprocess.run([sys.executable, RUNNER_PEX], cwd=self.root, env=env, capture_output=True)
        return done, storage

    def test_whole_run(self):
        done, storage = self.run_pex()
        out = done.stdout.decode("utf-8")
        self.assertEqual(done.returncode, 0, out + done.stderr.decode())
        records = [json.loads(l[len(runner.PROGRESS_PREFIX):]) for l in out.splitlines() if l.startswith(runner.PROGRESS_PREFIX)]
        self.assertEqual(records[0]["kind"], "start")
        self.assertEqual(records[0]["files"], 2)
        steps = [r["step"] for r in records if r["kind"] == "step"]
        self.assertEqual(steps, [1, 2, 3])
        self.assertIn({"kind": "checkpoint", "step": 3}, records)
        step_3 = os.path.join(storage, "jobs", "x7k2pq", "checkpoints", "step_3")
        # The save once step_3/ is there, then (the process has exited) the step as vLLM can serve
        # it, then the whole list of servable steps, before the exit.
        later = [r for r in records if r["kind"] in ("checkpoint_saved", "servable")]
        self.assertEqual(records.index(later[-1]), len(records) - 3)
        step_3_servable = {"kind": "servable", "step": 3, "path": os.path.join(step_3, "policy", "weights", "model", "consolidated"),
                           "tokenizer": os.path.join(step_3, "policy", "tokenizer"), "backend": "dtensor_v2", "consolidated": True,
                           "converter": ""}
        self.assertEqual(later, [{"kind": "checkpoint_saved", "step": 3, "path": step_3}, step_3_servable])
        self.assertEqual(records[-2], {"kind": "servable_checkpoints",
                                       "checkpoints": [{k: v for k, v in step_3_servable.items() if k != "kind"}]})
        self.assertEqual([r["value"] for r in records if r["kind"] == "metric" and r["name"] == "Loss"], [0.1123, 0.2123, 0.3123])
        self.assertEqual(records[-1], {"kind": "exit", "code": 0})
        # NeMo-RL's own lines pass through untouched, and it got the config from the Capsule.
        self.assertIn("  \u2022 Avg Reward: 0.4375", out)
        argv = json.loads([l for l in out.splitlines() if l.startswith("ARGV ")][0][5:])
        self.assertEqual(argv[:2], ["--config", os.path.join(self.root, "configs", "run.yaml")])
        self.assertTrue(os.path.isdir(os.path.join(storage, "jobs", "x7k2pq", "checkpoints", "step_3")))
        self.assertTrue(os.path.isdir(os.path.join(storage, "jobs", "x7k2pq", "logs")))
        with open(os.path.join(storage, "jobs", "x7k2pq", "jobspec.json")) as f:
            self.assertEqual(json.load(f)["name"], "demo")

    def test_failures_are_reported(self):
        done, _ = self.run_pex({"FAKE_EXIT": "3"})
        self.assertEqual(done.returncode, 3)
        self.assertTrue(done.stdout.decode().rstrip().endswith(runner.PROGRESS_PREFIX + '{"code": 3, "kind": "exit"}'))
        write(os.path.join(self.root, "configs", "run.yaml"), "tampered\n")
        done, _ = self.run_pex()
        self.assertEqual(done.returncode, 2)
        self.assertIn("starforge-runner: configs/run.yaml has 9 bytes", done.stdout.decode())

    def test_a_swapped_capsule_runs_nothing(self):
        # The job was submitted with this Capsule's manifest; the working directory holds another,
        # whole and consistent. The runner stops before NeMo-RL starts, with the reason.
        submitted = manifest_sha256(self.root)
        os.remove(os.path.join(self.root, "manifest.json"))
        make_capsule(self.root, dict(SPEC, name="swapped"))
        self.assertEqual(runner.verify_manifest(self.root), 2)
        done, storage = self.run_pex({"FORGE_MANIFEST_SHA256": submitted})
        out = done.stdout.decode()
        self.assertEqual(done.returncode, 2, out)
        self.assertIn("starforge-runner: manifest.json has SHA-256 %s, but the job was submitted with %s"
                      % (manifest_sha256(self.root), submitted), out)
        self.assertNotIn("ARGV ", out)
        self.assertFalse(os.path.exists(os.path.join(storage, "jobs")))
        done, _ = self.run_pex({"FORGE_MANIFEST_SHA256": ""})
        self.assertEqual(done.returncode, 2)
        self.assertIn("starforge-runner: FORGE_MANIFEST_SHA256 '' is not a SHA-256", done.stdout.decode())


if __name__ == "__main__":
    unittest.main()
