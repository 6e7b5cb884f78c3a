"""The in-container runner (src/runner), run by CTest as tst_runner: the pex is reproducible,
the Capsule check refuses what was changed (manifest.json against the RayJob's digest, then every
file against the manifest), NeMo-RL gets the config, overrides and cluster
shape, its banners become progress lines, and a whole run against a stand-in NeMo-RL works.
RUNNER_PEX names the built runner.pex; SOURCE_DIR the checkout."""

import hashlib
import io
import json
import os
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
os.makedirs(os.path.join(ckpt, "step_3"), exist_ok=True)
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
