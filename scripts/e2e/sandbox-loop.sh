#!/usr/bin/env bash
# The closed loop on the embedded sandbox cluster, through starforge-cli as a user runs it
# (docs/e2e.md). A NeMo-RL-shaped job (the sandbox's NeMo-RL stand-in fakes the training
# steps) is submitted, runs, and ends archived: its logs in the bucket, its RayJob gone.
# Then: a resubmit of the same tree uploads nothing; a failing job is archived Failed with its
# traceback; a job asking for a GPU series nobody has is diagnosed, stopped, and its events
# kept; the pre-running deadline fails a stuck job; Ctrl-C cancels a submission; delete
# removes an archive; and on a sandbox posing as KubeRay 1.5 (no preRunningDeadlineSeconds)
# the app enforces the deadline.
#
#   bash scripts/e2e/sandbox-loop.sh [BUILD_BIN_DIR]     (default: build/bin)
#
# kubectl, when present, checks from outside that no RayJob is left behind.
set -euo pipefail

bin_dir=$(cd "${1:-${STARFORGE_BIN_DIR:-build/bin}}" && pwd)
cli_bin="$bin_dir/starforge-cli"
sandbox_bin="$bin_dir/starforge-sandbox"
for tool in "$cli_bin" "$sandbox_bin"; do
    [ -x "$tool" ] || { echo "sandbox-loop: $tool is missing; build the project first" >&2; exit 2; }
done

work=$(mktemp -d)
sandbox_pid=""
cleanup() {
    if [ -n "$sandbox_pid" ]; then
        kill "$sandbox_pid" 2>/dev/null || true
        wait "$sandbox_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n== %s\n' "$*"; }
die() { echo "sandbox-loop: FAILED: $*" >&2; exit 1; }
# json FILE EXPR: evaluates a Python expression over the JSON document(s) in FILE (one per line
# or one indented document), bound to `d` (the last line's document) and `docs` (all of them).
json() {
    python3 - "$1" "$2" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
try:
    docs = [json.loads(text)]
except ValueError:
    docs = [json.loads(line) for line in text.splitlines() if line.strip()]
d = docs[-1]
print(eval(sys.argv[2]))
PY
}

# Every FORGE_* value comes from the connection file; nothing from the caller's environment.
for name in $(env | sed -n 's/^\(FORGE_[A-Z0-9_]*\)=.*/\1/p'); do unset "$name"; done
export STARFORGE_CONFIG_FILE="$work/profiles.json"   # never the user's own profiles

start_sandbox() {   # start_sandbox [EXTRA OPTIONS]: a fresh sandbox, its connection file in $work/conn.json
    if [ -n "$sandbox_pid" ]; then
        kill "$sandbox_pid" 2>/dev/null || true
        wait "$sandbox_pid" 2>/dev/null || true
    fi
    rm -f "$work/conn.json"
    # One h100 node of 8 GPUs and one CPU node; the stand-in trains for real in seconds.
    "$sandbox_bin" --connection-file "$work/conn.json" --fleet 'h100:1x8,cpu:1x0' "$@" >"$work/sandbox.log" 2>&1 &
    sandbox_pid=$!
    for _ in $(seq 1 200); do
        [ -s "$work/conn.json" ] && break
        kill -0 "$sandbox_pid" 2>/dev/null || { cat "$work/sandbox.log" >&2; die "starforge-sandbox stopped"; }
        sleep 0.05
    done
    [ -s "$work/conn.json" ] || die "no connection file after 10 s"
}

cli() { "$cli_bin" --connection-file "$work/conn.json" "$@"; }

# sandbox_faults JSON: changes the running sandbox's fault knobs (PATCH /sandbox/v1/faults with
# the admin token and CA from the connection file) and prints the knobs now in force.
sandbox_faults() {
    python3 - "$work/conn.json" "$1" <<'PY'
import json, ssl, sys, urllib.request
conn = json.load(open(sys.argv[1]))
context = ssl.create_default_context(cafile=conn["caFile"])
request = urllib.request.Request(conn["apiServer"] + "/sandbox/v1/faults", data=sys.argv[2].encode(), method="PATCH",
                                 headers={"Authorization": "Bearer " + conn["token"], "Content-Type": "application/json"})
print(urllib.request.urlopen(request, context=context).read().decode())
PY
}

step "start the sandbox (KubeRay 1.7)"
start_sandbox
kubeconfig=$(json "$work/conn.json" 'd["kubeconfig"]')

step "capacity"
cli capacity | tee "$work/capacity.txt"
grep -q '^h100 ' "$work/capacity.txt" || die "capacity has no h100 row"

step "a NeMo-RL-shaped job folder"
job="$work/grpo-tiny"
mkdir -p "$job/configs" "$job/src"
cat >"$job/configs/grpo.yaml" <<'YAML'
grpo:
  max_num_steps: 100
  num_prompts_per_step: 8
checkpointing:
  enabled: true
  save_period: 2
cluster:
  gpus_per_node: 1
  num_nodes: 1
YAML
printf 'def reward(x):\n    return len(x)\n' >"$job/src/reward.py"
printf '__pycache__/\n*.log\n' >"$job/.gitignore"
write_spec() {   # write_spec FILE NAME SERIES OVERRIDES_JSON
    cat >"$1" <<JSON
{
  "version": 1,
  "name": "$2",
  "code": ".",
  "recipe": {"algorithm": "grpo", "config": "configs/grpo.yaml", "overrides": $4},
  "env": {"WANDB_MODE": "offline"},
  "pools": [{"name": "train", "series": "$3", "nodes": 1, "gpusPerNode": 1}],
  "storage": true,
  "corpus": false
}
JSON
}
write_spec "$job/jobspec.json" grpo-tiny h100 '["grpo.max_num_steps=3"]'

step "the fit verdict"
cli capacity --spec "$job/jobspec.json" --json >"$work/fit.json"
[ "$(json "$work/fit.json" 'd["fit"]')" = FitsNow ] || die "a 1-GPU h100 job does not fit an idle h100 node"
write_spec "$job/huge.json" grpo-huge h100 '[]'
sed -i 's/"gpusPerNode": 1/"gpusPerNode": 16/' "$job/huge.json"
cli capacity --spec "$job/huge.json" | tee "$work/fit-huge.txt"
grep -q '^NeverFits' "$work/fit-huge.txt" || die "16 GPUs per node on 8-GPU nodes is not NeverFits"
rm "$job/huge.json"

step "manifest: the RayJob, nothing submitted"
cli manifest "$job/jobspec.json" >"$work/manifest.json"
[ "$(json "$work/manifest.json" 'd["kind"]')" = RayJob ] || die "manifest is not a RayJob"
[ "$(cli jobs --json | tr -d ' \n')" = "[]" ] || die "manifest submitted something"

step "submit --wait: the job runs and is archived"
set +e
cli submit "$job/jobspec.json" --wait --json >"$work/submit.json"
code=$?
set -e
cat "$work/submit.json"
[ "$code" = 0 ] || die "submit --wait exited $code (expected 0: Succeeded)"
id=$(json "$work/submit.json" 'docs[0]["id"]')
name=$(json "$work/submit.json" 'docs[0]["name"]')
[ "$(json "$work/submit.json" 'docs[0]["uploadedBytes"] > 0')" = True ] || die "the first submit uploaded nothing"
[ "$(json "$work/submit.json" 'd["state"]')" = Succeeded ] || die "the job did not succeed"
[ "$(json "$work/submit.json" 'd["archived"]')" = True ] || die "the job was not archived"

step "history, archived logs, no RayJob left"
cli history --json >"$work/history.json"
[ "$(json "$work/history.json" "[j['state'] for j in d if j['id'] == '$id']")" = "['Succeeded']" ] || die "history lacks $id as Succeeded"
cli logs "$id" >"$work/driver.log"
grep -q 'Step 3/3' "$work/driver.log" || { cat "$work/driver.log"; die "the archived driver log lacks Step 3/3"; }
grep -q 'STARFORGE_PROGRESS' "$work/driver.log" || die "the runner's progress lines are missing"
cli logs "$id" --pod head >"$work/head.log" || die "no archived head log"
# logs --grep (the core's index and search) against grep on the same archived log.
cli logs "$id" --grep 'STARFORGE_PROGRESS' >"$work/grep.txt" || die "logs --grep found no progress line"
grep -a 'STARFORGE_PROGRESS' "$work/driver.log" | cmp -s - "$work/grep.txt" || die "logs --grep differs from grep"
[ "$(cli logs "$id" --grep 'step [0-9]+/3' -E -i --count)" = "$(LC_ALL=C grep -a -c -E -i 'step [0-9]+/3' "$work/driver.log")" ] \
    || die "logs --grep -E -i --count differs from grep -c -E -i"
if cli logs "$id" --grep 'no such line anywhere' >/dev/null; then die "logs --grep without a match exited 0"; fi
cli status "$id" | tee "$work/status.txt"
grep -q 'Archived (Succeeded)' "$work/status.txt" || die "status does not say Archived (Succeeded)"
# The progress from the archived driver log's STARFORGE_PROGRESS lines (src/core/job/progress.h).
grep -q '^progress  step 3/3' "$work/status.txt" || die "status does not show the run's progress (step 3/3)"
cli status "$id" --json >"$work/status.json"
[ "$(json "$work/status.json" '[d["progress"]["step"], d["progress"]["totalSteps"]]')" = "[3, 3]" ] || die "status --json lacks the progress"
# Saves at steps 2 and 3 (save_period 2, the last step), each reported once the process let go of
# it; this config leaves dtensor_cfg._v2 unset, so DTensor v1: DCP files and NeMo-RL's converter.
[ "$(json "$work/status.json" '[(c["step"], c["backend"], c["consolidated"]) for c in d["progress"]["servableCheckpoints"]]')" \
    = "[(2, 'dtensor_v1', False), (3, 'dtensor_v1', False)]" ] || die "status --json lacks the servable checkpoints"
if command -v kubectl >/dev/null; then
    left=$(kubectl --kubeconfig "$kubeconfig" get rayjobs -n starforge -o name)
    [ -z "$left" ] || die "RayJobs left on the cluster: $left"
else
    [ "$(cli jobs --json | tr -d ' \n')" = "[]" ] || die "jobs left on the cluster"
fi
# The checkpoint the runner saved, where the playground's vLLM would find it.
storage=$(json "$work/conn.json" 'd["forge"]["FORGE_STORAGE_ROOT"]')
[ -d "$storage/jobs/$id" ] || die "no $storage/jobs/$id from the runner"

step "resubmit the same tree: nothing uploaded"
cli submit "$job/jobspec.json" --wait --json >"$work/resubmit.json"
[ "$(json "$work/resubmit.json" 'docs[0]["uploadedBytes"]')" = 0 ] || die "the resubmit uploaded bytes"
[ "$(json "$work/resubmit.json" 'docs[0]["capsuleSha256"]')" = "$(json "$work/submit.json" 'docs[0]["capsuleSha256"]')" ] || die "same tree, other Capsule"
[ "$(json "$work/resubmit.json" 'd["state"]')" = Succeeded ] || die "the resubmitted job did not succeed"

step "a failing job: archived Failed, traceback kept"
write_spec "$job/failing.json" grpo-fails h100 '["grpo.max_num_steps=3", "+starforge.fake_fail_at_step=2"]'
set +e
cli submit "$job/failing.json" --wait --json >"$work/fail.json"
code=$?
set -e
[ "$code" = 3 ] || die "submit --wait of a failing job exited $code (expected 3)"
fail_id=$(json "$work/fail.json" 'docs[0]["id"]')
[ "$(json "$work/fail.json" 'd["state"]')" = Failed ] || die "the failing job is not Failed"
cli logs "$fail_id" >"$work/fail.log"
grep -q 'Traceback' "$work/fail.log" || { cat "$work/fail.log"; die "no traceback in the failing job's archived log"; }

step "secretEnv: the value reaches the job from its Secret, and nowhere else"
secret_value="hf-e2e-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
python3 - "$work/conn.json" "$secret_value" <<'PY'
# The Secret, as a person makes it with kubectl: straight to the API server.
import base64, json, ssl, sys, urllib.request
forge = json.load(open(sys.argv[1]))["forge"]
body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "hf"},
        "data": {"token": base64.b64encode(sys.argv[2].encode()).decode()}}
request = urllib.request.Request(forge["FORGE_K8S_API_SERVER"] + "/api/v1/namespaces/starforge/secrets",
                                 data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": "Bearer " + forge["FORGE_K8S_TOKEN"], "Content-Type": "application/json"})
urllib.request.urlopen(request, context=ssl.create_default_context(cafile=forge["FORGE_K8S_CA_FILE"])).read()
PY
secret_job="$work/secret-job"
mkdir -p "$secret_job/configs"
cp "$job/configs/grpo.yaml" "$secret_job/configs/"
# The job's own script checks the value by its hash, so the value itself is never printed.
expected_hash=$(printf '%s' "$secret_value" | sha256sum | cut -d' ' -f1)
cat >"$secret_job/check_secret.py" <<PYTHON
import hashlib, os, sys
value = os.environ.get("HF_TOKEN", "")
if hashlib.sha256(value.encode()).hexdigest() != "$expected_hash":
    sys.exit("HF_TOKEN is not the Secret's value")
print("secret env ok", flush=True)
PYTHON
cat >"$secret_job/jobspec.json" <<'JSON'
{"version": 1, "name": "secret-env", "code": ".",
 "recipe": {"script": "check_secret.py", "config": "configs/grpo.yaml"},
 "secretEnv": {"HF_TOKEN": {"secret": "hf", "key": "token"}},
 "pools": [{"name": "train", "series": "h100", "nodes": 1, "gpusPerNode": 1}]}
JSON
cli submit "$secret_job/jobspec.json" --wait --json >"$work/secret.json" || { cat "$work/secret.json"; die "the secretEnv job did not succeed"; }
secret_id=$(json "$work/secret.json" 'docs[0]["id"]')
cli logs "$secret_id" >"$work/secret.log"
grep -q 'secret env ok' "$work/secret.log" || { cat "$work/secret.log"; die "the job did not get HF_TOKEN from its Secret"; }
cli manifest "$secret_job/jobspec.json" >"$work/secret-manifest.json"
grep -q '"secretKeyRef"' "$work/secret-manifest.json" || die "the RayJob has no secretKeyRef"
# The bucket (every archived object, the Capsule) and what the CLI printed: not one copy.
state_s3="$work/conn.json.state/s3"
[ -d "$state_s3" ] || die "no sandbox S3 folder at $state_s3"
if grep -rqF "$secret_value" "$state_s3" "$work/secret.json" "$work/secret-manifest.json" "$work/secret.log"; then
    die "the Secret's value was found outside the Secret"
fi

step "a job for a series nobody has: refused, then with --force diagnosed, stopped, events kept"
write_spec "$job/stuck.json" grpo-stuck b200 '["grpo.max_num_steps=3"]'
if cli submit "$job/stuck.json" >"$work/refused.out" 2>"$work/refused.err"; then die "a job that can never fit was submitted"; fi
grep -q 'can never run on this cluster' "$work/refused.err" || { cat "$work/refused.err"; die "the refusal does not say why"; }
cli submit "$job/stuck.json" --force --json >"$work/stuck.json"
stuck_id=$(json "$work/stuck.json" 'd["id"]')
cause=""
for _ in $(seq 1 60); do
    cli diagnose "$stuck_id" --json >"$work/diagnose.json" || true
    cause=$(json "$work/diagnose.json" 'd["cause"]' 2>/dev/null || true)
    [ "$cause" = NoNodeMatchesSelector ] && break
    sleep 0.5
done
cat "$work/diagnose.json"
[ "$cause" = NoNodeMatchesSelector ] || die "diagnosis is '$cause', expected NoNodeMatchesSelector"
grep -q 'b200' "$work/diagnose.json" || die "the diagnosis does not name the series asked for"
cli jobs | tee "$work/jobs.txt"
grep -q "$stuck_id .*Pending" "$work/jobs.txt" || die "jobs does not list $stuck_id as Pending"
cli stop "$stuck_id" | tee "$work/stop.txt"
grep -q 'Archived (Stopped)' "$work/stop.txt" || die "stop did not archive the job as Stopped"
cli events "$stuck_id" >"$work/events.txt"
grep -q 'FailedScheduling' "$work/events.txt" || die "the archived events lack FailedScheduling"

step "the pre-running deadline fails a stuck job; --wait says why while it waits"
set +e
FORGE_KUBERAY_PRERUNNING_DEADLINE_S=8 cli submit "$job/stuck.json" --force --wait --json >"$work/deadline.json"
code=$?
set -e
cat "$work/deadline.json"
[ "$code" = 3 ] || die "a job past its deadline exited $code (expected 3)"
[ "$(json "$work/deadline.json" 'd["reason"]')" = PreRunningDeadlineExceeded ] || die "not failed by the pre-running deadline"
[ "$(json "$work/deadline.json" 'd["cause"]')" = PreRunningDeadlineExceeded ] || die "the deadline's record has the wrong cause"
[ "$(json "$work/deadline.json" '"b200" in d["message"] and "No node matches" in d["message"]')" = True ] || die "the deadline's record does not say why"
# Before the deadline: one line with the diagnosis, printed once (it did not change).
[ "$(json "$work/deadline.json" '[x["diagnosis"]["cause"] for x in docs if "diagnosis" in x]')" = "['NoNodeMatchesSelector']" ] \
    || die "submit --wait did not print the diagnosis once while the job waited"

step "Ctrl-C during a submission cancels it and leaves no job"
big="$work/big-job"
mkdir -p "$big/configs"
cp "$job/configs/grpo.yaml" "$big/configs/"
head -c 1048576 /dev/urandom >"$big/weights.bin"   # new bytes: this Capsule is not in the bucket yet
write_spec "$big/jobspec.json" grpo-big h100 '["grpo.max_num_steps=3"]'
# The sandbox holds every S3 upload until the knob is switched off, so the interrupt lands while
# the Capsule is on its way whatever the machine's speed (docs/sandbox.md, the fault knobs).
sandbox_faults '{"holdS3Uploads": 1}' >/dev/null
# The binary itself in the background (a backgrounded shell function would be a subshell that
# ignores SIGINT).
"$cli_bin" --connection-file "$work/conn.json" submit "$big/jobspec.json" 2>"$work/interrupted.err" &
submit_pid=$!
for _ in $(seq 1 400); do
    grep -q 'uploading' "$work/interrupted.err" 2>/dev/null && break
    kill -0 "$submit_pid" 2>/dev/null || break
    sleep 0.05
done
grep -q 'uploading' "$work/interrupted.err" || { cat "$work/interrupted.err"; die "the submission never reached its upload"; }
kill -INT "$submit_pid"
set +e
wait "$submit_pid"
code=$?
set -e
sandbox_faults '{"holdS3Uploads": 0}' >/dev/null
cat "$work/interrupted.err"
[ "$code" = 130 ] || die "an interrupted submit exited $code (expected 130)"
grep -q 'cancelled during the upload' "$work/interrupted.err" || die "the interrupted submit did not say it was cancelled during the upload"
[ "$(cli jobs --json | tr -d ' \n')" = "[]" ] || die "an interrupted submit left a job"
rm -rf "$big"

step "delete removes an archive"
cli delete "$fail_id"
cli history --json >"$work/history2.json"
[ "$(json "$work/history2.json" "[j for j in d if j['id'] == '$fail_id']")" = "[]" ] || die "$fail_id is still in the history"
if cli status "$fail_id" >/dev/null 2>&1; then die "status still finds the deleted job"; fi

step "an older operator (KubeRay 1.5): no preRunningDeadlineSeconds, the app enforces the deadline"
start_sandbox --kuberay-version 1.5
cli manifest "$job/stuck.json" >"$work/manifest15.json"
[ "$(json "$work/manifest15.json" '"preRunningDeadlineSeconds" in d["spec"]')" = False ] || die "a RayJob for KubeRay 1.5 has preRunningDeadlineSeconds"
set +e
FORGE_KUBERAY_PRERUNNING_DEADLINE_S=3 cli submit "$job/stuck.json" --force --wait --json >"$work/deadline15.json"
code=$?
set -e
cat "$work/deadline15.json"
[ "$code" = 3 ] || die "a job past its deadline on KubeRay 1.5 exited $code (expected 3)"
[ "$(json "$work/deadline15.json" 'd["reason"]')" = PreRunningDeadlineExceeded ] || die "the app did not fail the job at its deadline"
[ "$(json "$work/deadline15.json" 'd["cause"]')" = NoNodeMatchesSelector ] || die "the app's deadline record lacks the cause"
[ "$(json "$work/deadline15.json" '"Starforge failed it" in d["message"]')" = True ] || die "the record does not say the app failed it"
echo
echo "sandbox-loop: all checks passed (job $id, RayJob $name)"
