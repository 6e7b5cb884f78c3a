"""The sandbox's NeMo-RL stand-in (src/sandbox/tools/nemo-rl), run by CTest as
tst_nemo_rl_standin: its banners are what runner.py parses, Hydra's struct-mode rules and texts,
config inheritance from the image path, MasterConfig's and the algorithms' own checks of a second
pool, flushing as NeMo-RL flushes, epochs, the checkpoint layout per backend and its late finish,
the servable checkpoints the runner reports for a finished job, and a requested failure.
STANDIN_DIR names the folder the build copied (FORGE_NEMO_RL_DIR); SOURCE_DIR the checkout."""

import io
import json
import os
import random
import shutil
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

    def runner_records(self, spec, extra_env=None):
        """runner.run on the stand-in for a JobSpec: the records, the job's directories, the exit code."""
        dirs = runner.job_dirs(os.path.join(self.cwd, "storage"), "x7k2pq")
        argv = runner.build_command(spec, self.cwd, STANDIN_DIR, dirs, python=sys.executable)
        out = io.StringIO()
        env = dict(os.environ, STARFORGE_FAKE_STEP_SECONDS="0", **(extra_env or {}))
        code = runner.run(argv, out=out, env=env, checkpoint_dir=dirs["checkpoints"])
        records = [json.loads(l[len(runner.PROGRESS_PREFIX):]) for l in out.getvalue().splitlines() if l.startswith(runner.PROGRESS_PREFIX)]
        return records, dirs, code, out.getvalue()

    def test_servable_checkpoints_of_a_finished_job(self):
        # DTensor v2 with the runner's save_consolidated: every step saved becomes servable as an
        # HF tree, once, after a later step exists or the run has ended; the background merge of
        # each save (0.3 s here) has finished by then.
        spec = {"recipe": {"algorithm": "grpo", "config": "run.yaml", "overrides": ["grpo.max_num_steps=4", "++checkpointing.save_period=2"]},
                "pools": [{"name": "train", "series": "h200", "nodes": 1, "gpusPerNode": 8}]}
        records, dirs, code, out = self.runner_records(spec, {"STARFORGE_FAKE_SAVE_SECONDS": "0.3"})
        self.assertEqual(code, 0, out)
        self.assertEqual([r["step"] for r in records if r["kind"] == "checkpoint_saved"], [2, 4])
        servable = [r for r in records if r["kind"] == "servable"]
        self.assertEqual([r["step"] for r in servable], [2, 4])
        # Step 2 became servable when step_4/ appeared, before the run's end line.
        self.assertLess(records.index(servable[0]), [r["kind"] for r in records].index("done"))
        for record in servable:
            step = os.path.join(dirs["checkpoints"], "step_%d" % record["step"])
            self.assertEqual(record, {"kind": "servable", "step": record["step"], "backend": "dtensor_v2", "consolidated": True, "converter": "",
                                      "path": os.path.join(step, "policy", "weights", "model", "consolidated"),
                                      "tokenizer": os.path.join(step, "policy", "tokenizer")})
            for name in ("config.json", "generation_config.json", "model.safetensors.index.json"):
                self.assertTrue(os.path.isfile(os.path.join(record["path"], name)), name)
            with open(os.path.join(record["path"], "model-00001-of-00001.safetensors"), "rb") as f:
                blob = f.read()
            size = int.from_bytes(blob[:8], "little")
            header = json.loads(blob[8:8 + size])
            self.assertEqual(len(blob), 8 + size + max(t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"))
            self.assertTrue(os.path.isfile(os.path.join(record["tokenizer"], "tokenizer_config.json")))
        self.assertEqual([r["path"] for r in records if r["kind"] == "log_dir"], [os.path.join(dirs["logs"], "exp_001")])
        self.assertEqual(servable[-1], records[-2])   # the last step once the process had exited
        # Then the whole list, which outlives a rotated log's servable records.
        self.assertEqual(records[-1], {"kind": "servable_checkpoints",
                                       "checkpoints": [{k: v for k, v in r.items() if k != "kind"} for r in servable]})

    def test_no_hf_tree_for_megatron_or_dtensor_v1(self):
        # The Megatron config: no consolidated tree whatever save_consolidated says, and no
        # tokenizer folder (v0.7's Megatron worker writes none), so no tokenizer path; NeMo-RL's
        # converter named. dpo.yaml is DTensor v1: DCP files and the tokenizer, convert_dcp_to_hf.py.
        cases = [
            ({"algorithm": "grpo", "config": "/opt/nemo-rl/examples/configs/grpo_math_1B_megatron.yaml",
              "overrides": ["++checkpointing.enabled=true", "++data.default.prompt_file=/opt/nemo-rl/examples/prompts/cot.txt"]},
             "megatron", "policy/weights/iter_0000000", "examples/converters/convert_megatron_to_hf.py", ""),
            ({"algorithm": "dpo", "config": "/opt/nemo-rl/examples/configs/dpo.yaml", "overrides": []},
             "dtensor_v1", "policy/weights", "examples/converters/convert_dcp_to_hf.py", "policy/tokenizer"),
        ]
        for recipe, backend, path, converter, tokenizer in cases:
            recipe["config"] = os.path.join(STANDIN_DIR, recipe["config"][len("/opt/nemo-rl/"):])
            records, dirs, code, out = self.runner_records({"recipe": recipe, "pools": [{"name": "t", "series": "h200", "nodes": 1, "gpusPerNode": 8}]})
            self.assertEqual(code, 0, out)
            step = os.path.join(dirs["checkpoints"], "step_3")
            self.assertEqual([r for r in records if r["kind"] == "servable"], [
                {"kind": "servable", "step": 3, "backend": backend, "consolidated": False, "converter": converter,
                 "path": os.path.join(step, path), "tokenizer": os.path.join(step, tokenizer) if tokenizer else ""}], backend)
            self.assertEqual(os.path.isdir(os.path.join(step, "policy", "tokenizer")), bool(tokenizer), backend)
            self.assertFalse(os.path.exists(os.path.join(step, "policy", "weights", "model", "consolidated")), backend)
            shutil.rmtree(os.path.join(self.cwd, "storage"))

    def test_a_second_pool_on_algorithms_without_generation(self):
        pool = ["++policy.generation.colocated.enabled=false", "++policy.generation.colocated.resources.num_nodes=1",
                "++policy.generation.colocated.resources.gpus_per_node=8", "++logger.log_dir=%s/logs" % self.cwd]
        for algorithm in ("sft", "dpo", "rm", "vlm_sft"):
            done = self.run_script(algorithm, *pool)
            err = done.stderr.decode("utf-8")
            self.assertEqual(done.returncode, 1, algorithm)
            self.assertIn("pydantic_core._pydantic_core.ValidationError: 7 validation errors for MasterConfig\n"
                          "policy.generation.backend\n  Field required [type=missing, input_value={'colocated': {'enabled'", err)
            self.assertIn("policy.generation.max_new_tokens\n  Field required [type=missing", err)
            self.assertNotIn("Using log directory", done.stdout.decode("utf-8"))
        prompt = "++data.default.prompt_file=/opt/nemo-rl/examples/prompts/cot.txt"
        done = self.run_script("ppo", prompt, *pool)
        self.assertEqual(done.returncode, 1)
        self.assertIn("AssertionError: PPO currently requires colocated generation (vLLM / SGLang sharing GPUs with the policy worker). "
                      "Set policy.generation.colocated.enabled=true.", done.stderr.decode("utf-8"))
        done = self.run_script("distillation", prompt, "++policy.generation.backend=megatron", *pool)
        self.assertEqual(done.returncode, 1)
        self.assertIn("AssertionError: Non-colocated inference is not supported for Megatron generation backends. "
                      "Please use vLLM backend for generation.", done.stderr.decode("utf-8"))
        for algorithm in ("grpo", "distillation"):
            done = self.run_script(algorithm, prompt, *pool)
            self.assertEqual(done.returncode, 0, algorithm + done.stderr.decode("utf-8"))

    def test_output_is_flushed_as_nemo_rl_flushes_it(self):
        class Recorder(io.StringIO):
            def __init__(self):
                super().__init__()
                self.flushed = []   # the text written up to each flush
                self.at = 0

            def flush(self):
                self.flushed.append(self.getvalue()[self.at:])
                self.at = len(self.getvalue())

        for algorithm, config in (("sft", "sft.yaml"), ("dpo", "dpo.yaml"), ("rm", "rm.yaml"), ("grpo", "grpo_math_1B.yaml")):
            cfg = standin.load_config(os.path.join(STANDIN_DIR, "examples", "configs", config))
            standin.parse_hydra_overrides(cfg, ["++logger.log_dir=%s/logs" % self.cwd, "checkpointing.enabled=false"])
            out = Recorder()
            os.environ["STARFORGE_FAKE_STEP_SECONDS"] = "0"
            try:
                standin.train(algorithm, standin.resolve(cfg, cfg), out)
            finally:
                del os.environ["STARFORGE_FAKE_STEP_SECONDS"]
            if algorithm == "grpo":
                self.assertGreater(len(out.flushed), 30)
                self.assertTrue(all(chunk.count("\n") == 1 for chunk in out.flushed))
            else:
                # One flush, at the end line (flush=True there): everything before waits in the buffer.
                self.assertEqual(len(out.flushed), 1, algorithm)
                self.assertTrue(out.flushed[0].endswith("Max number of steps has been reached, stopping training early\n"))
                self.assertIn("Step 3/3", out.flushed[0])
        # And the script leaves stdout block-buffered for sft: line buffering is off.
        done = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, %r); import nemo_rl_standin as s; "
                               "sys.argv = ['x', '--config', '/nonexistent']\ntry: s.main('sft')\nexcept Exception: pass\n"
                               "print(sys.stdout.line_buffering, file=sys.stderr)" % STANDIN_DIR], capture_output=True)
        self.assertEqual(done.stderr.decode().strip(), "False")

    def test_metric_lines_per_algorithm(self):
        expect = {"dpo": ["  \u2022 loss: ", "  \u2022 accuracy: "], "rm": ["  \u2022 loss: ", "  \u2022 num valid samples: "],
                  "ppo": ["  \u2022 Policy Loss: 0."], "sft": ["  \u2022 Loss: "], "grpo": ["  \u2022 Avg Reward: "]}
        for algorithm, texts in expect.items():
            done = self.run_script(algorithm, "++logger.log_dir=%s/logs" % self.cwd, "checkpointing.enabled=false",
                                   "++data.default.prompt_file=/opt/nemo-rl/examples/prompts/cot.txt")
            out = done.stdout.decode("utf-8")
            self.assertEqual(done.returncode, 0, out + done.stderr.decode())
            for text in texts:
                self.assertIn(text, out, algorithm)
            names = [r["name"] for r in map(runner.progress, out.splitlines()) if r and r["kind"] == "metric"]
            self.assertEqual(names.count("Loss"), 3, algorithm)
        self.assertEqual(sorted(os.listdir(os.path.join(self.cwd, "logs"))), ["exp_%03d" % n for n in range(1, 6)])

    def test_epochs_and_the_end_of_a_run(self):
        # Two epochs of 2 steps under a step limit of 10: the Step count restarts, the last step
        # saves with its global number, and no end line (the epochs ran out).
        done = self.run_script("sft", "++logger.log_dir=%s/logs" % self.cwd, "++checkpointing.checkpoint_dir=%s/ckpt" % self.cwd,
                               "sft.max_num_steps=10", "sft.max_num_epochs=2", "+starforge.fake_batches_per_epoch=2",
                               "checkpointing.save_period=3")
        out = done.stdout.decode("utf-8")
        self.assertEqual(done.returncode, 0, out + done.stderr.decode())
        records = [r for r in map(runner.progress, out.splitlines()) if r]
        self.assertEqual([(r["kind"], r.get("epoch", r.get("step"))) for r in records if r["kind"] in ("epoch", "step", "checkpoint")],
                         [("epoch", 1), ("step", 1), ("step", 2), ("epoch", 2), ("step", 1), ("checkpoint", 3), ("step", 2), ("checkpoint", 4)])
        self.assertEqual([r["total"] for r in records if r["kind"] == "step"], [2, 2, 2, 2])
        self.assertNotIn("stopping training early", out)
        with open(os.path.join(self.cwd, "ckpt", "step_4", "training_info.json")) as f:
            info = json.load(f)
        self.assertEqual((info["current_epoch"], info["current_step"], info["total_steps"]), (1, 2, 4))
        # rm's -1: one epoch, the dataset's length, and no end line either.
        done = self.run_script("rm", "++logger.log_dir=%s/logs" % self.cwd, "rm.max_num_steps=-1", "+starforge.fake_batches_per_epoch=4",
                               "checkpointing.enabled=false")
        out = done.stdout.decode("utf-8")
        self.assertIn("========================= Step 4/4 =========================\n", out)
        self.assertNotIn("stopping training early", out)

    def test_checkpoint_layouts(self):
        def save(overrides, step=1):
            cfg = standin.load_config(os.path.join(self.cwd, "run.yaml"))
            standin.parse_hydra_overrides(cfg, overrides)
            ckpt = os.path.join(self.cwd, "ckpt")
            standin.write_checkpoint(standin.resolve(cfg, cfg), ckpt, step, {}, random.Random(1))
            standin.finish_pending_save()
            base = os.path.join(ckpt, "step_%d" % step, "policy")
            return sorted(os.path.relpath(os.path.join(d, n), base) for d, _, names in os.walk(base) for n in names)

        v2 = save(["++checkpointing.save_consolidated=true"], 1)
        self.assertIn("weights/model/consolidated/config.json", v2)
        self.assertIn("weights/model/.hf_metadata/fqn_to_file_index_mapping.json", v2)
        self.assertIn("optimizer/optim/.metadata", v2)
        torch_save = save(["++checkpointing.save_consolidated=true", "checkpointing.model_save_format=torch_save"], 2)
        self.assertIn("weights/model/__0_0.distcp", torch_save)
        self.assertFalse([n for n in torch_save if "consolidated" in n or n.endswith(".safetensors")])
        lora = save(["++checkpointing.save_consolidated=true", "++policy.dtensor_cfg.lora_cfg.enabled=true"], 3)
        self.assertFalse([n for n in lora if "consolidated" in n])
        v1 = save(["++checkpointing.save_consolidated=true", "policy.dtensor_cfg._v2=false"], 4)
        self.assertEqual([n for n in v1 if n.startswith("weights/")], ["weights/.metadata", "weights/__0_0.distcp"])
        megatron = save(["++checkpointing.save_consolidated=true", "policy.megatron_cfg.enabled=true"], 5)
        self.assertEqual([n for n in megatron if n.startswith("weights/")],
                         ["weights/iter_0000000/.metadata", "weights/iter_0000000/__0_0.distcp", "weights/iter_0000000/common.pt",
                          "weights/iter_0000000/metadata.json"])
        self.assertFalse([n for n in megatron if n.startswith("tokenizer/")])   # v0.7's Megatron worker drops tokenizer_path
        self.assertIn("tokenizer/tokenizer_config.json", v1)
        self.assertFalse([n for n in megatron if n.startswith("optimizer/")])   # inside the Megatron checkpoint

    def test_a_save_finishes_after_the_rename(self):
        # Automodel's asynchronous save: step_N/ is there (renamed from tmp_step_N) while the
        # consolidated tree is still being written; the next save waits for it.
        cfg = standin.load_config(os.path.join(self.cwd, "run.yaml"))
        standin.parse_hydra_overrides(cfg, ["++checkpointing.save_consolidated=true", "checkpointing.keep_top_k=null"])
        cfg = standin.resolve(cfg, cfg)
        ckpt = os.path.join(self.cwd, "ckpt")
        consolidated = os.path.join(ckpt, "step_1", "policy", "weights", "model", "consolidated")
        standin.write_checkpoint(cfg, ckpt, 1, {}, random.Random(1), save_seconds=2)
        try:
            self.assertEqual(sorted(os.listdir(ckpt)), ["step_1"])
            self.assertFalse(os.path.exists(os.path.join(consolidated, "config.json")))
            self.assertFalse(os.path.exists(os.path.join(consolidated, "model.safetensors.index.json")))
            standin.write_checkpoint(cfg, ckpt, 2, {}, random.Random(1), save_seconds=0)
            self.assertTrue(os.path.isfile(os.path.join(consolidated, "config.json")))
            self.assertTrue(os.path.isfile(os.path.join(consolidated, "model.safetensors.index.json")))
        finally:
            standin.finish_pending_save()
        self.assertEqual(sorted(os.listdir(ckpt)), ["step_1", "step_2"])

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
