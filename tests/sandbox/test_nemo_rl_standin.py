"""The sandbox's NeMo-RL stand-in (src/sandbox/tools/nemo-rl), run by CTest as
tst_nemo_rl_standin: its banners are what runner.py parses, Hydra's struct-mode rules and texts,
config inheritance from the image path, the checkpoint layout, and a requested failure.
STANDIN_DIR names the folder the build copied (FORGE_NEMO_RL_DIR); SOURCE_DIR the checkout."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE_DIR = os.environ["SOURCE_DIR"]
STANDIN_DIR = os.environ["STANDIN_DIR"]
sys.path.insert(0, STANDIN_DIR)
sys.path.insert(0, os.path.join(SOURCE_DIR, "src", "runner"))
sys.dont_write_bytecode = True

import nemo_rl_standin as standin  # noqa: E402
from starforge_runner import runner  # noqa: E402


class StandInTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.cwd = self.tmp.name
        with open(os.path.join(self.cwd, "run.yaml"), "w") as f:
            f.write("defaults: /opt/nemo-rl/examples/configs/grpo_math_1B.yaml\n"
                    "data:\n  default:\n    prompt_file: /opt/nemo-rl/examples/prompts/cot.txt\n")

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, algorithm, *args, step_seconds="0"):
        env = dict(os.environ, STARFORGE_FAKE_STEP_SECONDS=step_seconds)
        return subprocess.run([sys.executable, os.path.join(STANDIN_DIR, "examples", "run_%s.py" % algorithm)] + list(args),
                              cwd=self.cwd, env=env, capture_output=True)

    def test_run_through_the_runner(self):
        # runner.py's own command for a JobSpec, then its progress records from the output.
        spec = {"recipe": {"algorithm": "grpo", "config": "run.yaml", "overrides": ["grpo.max_num_steps=4", "++checkpointing.save_period=2"]},
                "pools": [{"name": "train", "series": "h200", "nodes": 1, "gpusPerNode": 8}]}
        dirs = runner.job_dirs(os.path.join(self.cwd, "storage"), "x7k2pq")
        argv = runner.build_command(spec, self.cwd, STANDIN_DIR, dirs, python=sys.executable)
        done = subprocess.run(argv, cwd=self.cwd, capture_output=True, env=dict(os.environ, STARFORGE_FAKE_STEP_SECONDS="0"))
        out = done.stdout.decode("utf-8")
        self.assertEqual(done.returncode, 0, out + done.stderr.decode())
        records = [r for r in (runner.progress(line) for line in out.splitlines()) if r]
        self.assertEqual([r["step"] for r in records if r["kind"] == "step"], [1, 2, 3, 4])
        self.assertEqual([r["total"] for r in records if r["kind"] == "step"], [4, 4, 4, 4])
        self.assertEqual([r["epoch"] for r in records if r["kind"] == "epoch"], [1])
        self.assertEqual([r["step"] for r in records if r["kind"] == "checkpoint"], [2, 4])
        self.assertEqual(len([r for r in records if r["kind"] == "metric" and r["name"] == "Loss"]), 4)
        self.assertEqual(len([r for r in records if r["kind"] == "metric" and r["name"] == "Avg Reward"]), 4)
        self.assertEqual(len([r for r in records if r["kind"] == "metric" and r["name"] == "Total step time"]), 4)
        self.assertEqual(records[-1]["kind"], "done")
        self.assertIn("\U0001F4CA Using log directory: %s/exp_001\n" % dirs["logs"], out)
        self.assertIn("\U0001F4CA Using checkpoint directory: %s\n" % dirs["checkpoints"], out)

        # NeMo-RL's layout: step_N/ with the resolved config, and the consolidated HF tree.
        step = os.path.join(dirs["checkpoints"], "step_4")
        self.assertEqual(sorted(os.listdir(dirs["checkpoints"])), ["step_2", "step_4"])
        with open(os.path.join(step, "training_info.json")) as f:
            self.assertEqual(json.load(f)["total_steps"], 4)
        config = standin.load_yaml(os.path.join(step, "config.yaml"))
        self.assertEqual(config["grpo"]["max_num_steps"], 4)
        self.assertEqual(config["checkpointing"]["checkpoint_dir"], dirs["checkpoints"])
        self.assertEqual(config["policy"]["tokenizer"]["name"], config["policy"]["model_name"])   # interpolated
        self.assertNotIn("defaults", config)
        model = os.path.join(step, "policy", "weights", "model")
        for name in ("shard-00001-model-00001-of-00001.safetensors", ".hf_metadata/config.json",
                     "consolidated/model-00001-of-00001.safetensors", "consolidated/model.safetensors.index.json",
                     "consolidated/config.json"):
            self.assertTrue(os.path.isfile(os.path.join(model, name)), name)
        with open(os.path.join(model, "consolidated", "model-00001-of-00001.safetensors"), "rb") as f:
            blob = f.read()
        size = int.from_bytes(blob[:8], "little")
        header = json.loads(blob[8:8 + size])
        self.assertEqual(len(blob), 8 + size + max(t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"))
        self.assertTrue(os.path.isfile(os.path.join(step, "policy", "tokenizer", "tokenizer_config.json")))
        self.assertFalse(any(n.startswith("tmp_step_") for n in os.listdir(dirs["checkpoints"])))

    def test_steps_default_and_algorithms(self):
        for algorithm in ("grpo", "sft", "dpo", "rm", "distillation", "ppo", "vlm_grpo", "vlm_sft"):
            done = self.run_script(algorithm, "++logger.log_dir=%s/logs" % self.cwd, "~checkpointing.checkpoint_dir",
                                   "++data.default.prompt_file=/opt/nemo-rl/examples/prompts/cot.txt")
            out = done.stdout.decode("utf-8")
            self.assertEqual(done.returncode, 0, algorithm + out + done.stderr.decode())
            self.assertEqual([r["step"] for r in map(runner.progress, out.splitlines()) if r and r["kind"] == "step"], [1, 2, 3], algorithm)
        done = self.run_script("sft", "sft.max_num_steps=2", "++logger.log_dir=%s/logs" % self.cwd, "checkpointing.enabled=false")
        self.assertIn("========================= Step 2/2 =========================\n", done.stdout.decode("utf-8"))
        self.assertNotIn("Saving checkpoint", done.stdout.decode("utf-8"))

    def test_hydra_struct_mode(self):
        cases = [
            ("grpo.max_num_stepz=4", "OverridesError: Failed to parse Hydra overrides: Could not override 'grpo.max_num_stepz'.\n"
                                     "To append to your config use +grpo.max_num_stepz=4"),
            ("+grpo.max_num_steps=4", "Could not append to config. An item is already at 'grpo.max_num_steps'."),
            ("~grpo.nothing", "Could not delete from config. 'grpo.nothing' does not exist."),
        ]
        for override, text in cases:
            done = self.run_script("grpo", "--config", "run.yaml", override)
            self.assertEqual(done.returncode, 1, override)
            self.assertIn(text, done.stderr.decode("utf-8"), override)
            self.assertIn("Traceback (most recent call last):", done.stderr.decode("utf-8"))
        cfg = standin.load_config(os.path.join(self.cwd, "run.yaml"))
        standin.parse_hydra_overrides(cfg, ["+new.key=[1, two, 'x y']", "++grpo.seed=7", "grpo.val_period=null",
                                            "~logger.wandb", "++policy.generation.colocated.resources.num_nodes=1"])
        self.assertEqual(cfg["new"]["key"], [1, "two", "x y"])
        self.assertEqual(cfg["grpo"]["seed"], 7)
        self.assertIsNone(cfg["grpo"]["val_period"])
        self.assertNotIn("wandb", cfg["logger"])
        self.assertEqual(cfg["policy"]["generation"]["colocated"]["resources"]["num_nodes"], 1)

    def test_missing_prompt_file_and_config(self):
        with open(os.path.join(self.cwd, "bare.yaml"), "w") as f:
            f.write("defaults: /opt/nemo-rl/examples/configs/grpo_math_1B.yaml\n")   # prompt relative to cwd
        done = self.run_script("grpo", "--config", "bare.yaml")
        self.assertEqual(done.returncode, 1)
        self.assertIn("FileNotFoundError: Prompt file examples/prompts/cot.txt not found", done.stderr.decode())
        done = self.run_script("grpo", "--config", "missing.yaml")
        self.assertEqual(done.returncode, 1)
        self.assertIn("FileNotFoundError", done.stderr.decode())

    def test_fake_failure(self):
        done = self.run_script("grpo", "--config", "run.yaml", "+starforge.fake_fail_at_step=2", "++logger.log_dir=%s/logs" % self.cwd,
                               "++checkpointing.checkpoint_dir=%s/ckpt" % self.cwd, "checkpointing.save_period=1")
        out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
        self.assertEqual(done.returncode, 1)
        self.assertIn("Step 2/3", out)
        self.assertNotIn("Step 3/3", out)
        self.assertIn("RuntimeError: starforge.fake_fail_at_step=2", err)
        self.assertEqual(os.listdir(os.path.join(self.cwd, "ckpt")), ["step_1"])

    def test_yaml_reader_matches_the_subset(self):
        text = ("a: 1\nb: 'it''s'\nc: \"x\\ty\"\nd: [1, 2.5, true, null, {e: f}]\ng:\n- h\n- i: 1\n  j: 2\n"
                "k: |\n  line one\n  line two\nl: plain text\n  continued\nm: ~\nn: 1e-5\no: val:accuracy  # comment\n")
        self.assertEqual(standin.YamlReader(text, "t").parse(), {
            "a": 1, "b": "it's", "c": "x\ty", "d": [1, 2.5, True, None, {"e": "f"}], "g": ["h", {"i": 1, "j": 2}],
            "k": "line one\nline two\n", "l": "plain text continued", "m": None, "n": 1e-5, "o": "val:accuracy"})
        value = standin.YamlReader(text, "t").parse()
        self.assertEqual(standin.YamlReader(standin.dump_yaml(value), "dump").parse(), value)


if __name__ == "__main__":
    unittest.main()
