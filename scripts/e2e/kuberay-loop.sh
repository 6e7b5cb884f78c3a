#!/usr/bin/env bash
# The closed loop on the kind cluster of scripts/e2e/setup-kind.sh: starforge-cli submits
# NeMo-RL-shaped jobs to the real KubeRay operator and every outcome is checked from outside
# (the CLI's own JSON, the bucket's job history, the archived logs, kubectl).
#
#   bash scripts/e2e/kuberay-loop.sh [CASE...]     CASE: succeed resubmit fail stuck (default all)
#
#   succeed   a 3-step job ends Succeeded (exit 0); history says Succeeded; the archived logs
#             have "Step 3/3"; the RayJob and its pods are gone
#   resubmit  the same tree again uploads nothing ("uploadedBytes": 0, same Capsule) and runs
#   fail      +starforge.fake_fail_at_step=2 ends Failed (exit 3); history says Failed; the
#             archived logs show the failure; the RayJob is gone
#   stuck     a pool series no node has: diagnose says NoNodeMatchesSelector while it waits;
#             with FORGE_KUBERAY_PRERUNNING_DEADLINE_S=60 it ends Failed at that deadline; the
#             events that explain it are kept; the RayJob is gone
#
# Stops at the first failed check with a message naming it (exit 1); a job left behind then is
# printed with the commands to look at it. Knobs: STARFORGE_E2E_PROFILE (kind-e2e),
# KIND_CLUSTER_NAME (starforge-e2e), STARFORGE_CLI (build/bin/starforge-cli),
# STARFORGE_E2E_STATE_DIR, E2E_JOB_TIMEOUT (900 s per job), E2E_STUCK_DEADLINE (60 s),
# E2E_CMD_TIMEOUT (180 s for every other CLI call), CONTAINER_ENGINE (podman: kind's podman
# provider, as for setup-kind.sh).
# FORGE_* variables in the environment are ignored (unset), so only the profile decides.
set -euo pipefail

origin=$PWD
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"

PROFILE=${STARFORGE_E2E_PROFILE:-kind-e2e}
CLUSTER=${KIND_CLUSTER_NAME:-starforge-e2e}
STATE_DIR=${STARFORGE_E2E_STATE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/starforge-e2e/$CLUSTER}
JOB_TIMEOUT=${E2E_JOB_TIMEOUT:-900}
STUCK_DEADLINE=${E2E_STUCK_DEADLINE:-60}
NAMESPACE=starforge
SERIES=kind
if [ -n "${STARFORGE_CLI:-}" ]; then
    case $STARFORGE_CLI in
        /*) cli=$STARFORGE_CLI ;;
        *) cli=$origin/$STARFORGE_CLI ;;
    esac
else
    cli=$repo/build/bin/starforge-cli
fi

checks=0
kubeconfig=""
current_id=""     # a job that may still be in the cluster, for the failure message
current_name=""

say() { printf '==> %s\n' "$*"; }
pass() {
    checks=$((checks + 1))
    printf '    ok   %s\n' "$*"
}
fail() {
    printf '\nkuberay-loop: FAILED: %s\n' "$1" >&2
    shift
    local line
    for line in "$@"; do
        printf '%s\n' "$line" | sed 's/^/  /' >&2
    done
    if [ -n "$current_id" ]; then
        printf '  Job %s may still be in the cluster. Look at it with:\n' "$current_id" >&2
        printf '    %s --profile %s status %s\n' "$cli" "$PROFILE" "$current_id" >&2
        printf '    %s --profile %s events %s\n' "$cli" "$PROFILE" "$current_id" >&2
        printf '    kubectl --kubeconfig %s -n %s describe rayjob %s\n' "$kubeconfig" "$NAMESPACE" "$current_name" >&2
        printf '  and remove it with: %s --profile %s delete %s\n' "$cli" "$PROFILE" "$current_id" >&2
    fi
    exit 1
}
# The last lines of a file, indented, as extra lines for fail().
tail_of() {
    [ -s "$1" ] || {
        echo "($1 is empty)"
        return
    }
    tail -n "${2:-15}" "$1" | sed 's/^/| /'
}

# Every CLI call but submit --wait gets E2E_CMD_TIMEOUT seconds (180).
sf() { with_timeout "${E2E_CMD_TIMEOUT:-180}" "$cli" --profile "$PROFILE" "$@"; }
kc() { kubectl --kubeconfig "$kubeconfig" "$@"; }
with_timeout() {
    local seconds=$1
    shift
    if command -v timeout >/dev/null 2>&1; then
        timeout "$seconds" "$@"
    else
        "$@"
    fi
}

# ---- JSON, read with python3's json ----------------------------------------------------------------

write_json_helper() {
    cat >"$work/sfjson.py" <<'EOF'
"""Reads the CLI's --json output: one or more JSON values, however they are indented."""
import json
import sys


def values(text):
    decoder, i, out = json.JSONDecoder(), 0, []
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        try:
            value, i = decoder.raw_decode(text, i)
        except ValueError:
            nl = text.find("\n", i)   # not JSON (a stray line): skip it
            i = len(text) if nl < 0 else nl + 1
            continue
        out.append(value)
    return out


def text_of(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


cmd, path = sys.argv[1], sys.argv[2]
with open(path, encoding="utf-8", errors="replace") as f:
    docs = values(f.read())
if cmd == "count":                      # count FILE: how many JSON values
    print(len(docs))
elif cmd == "field":                    # field FILE N KEY: KEY of the N-th value (-1 = last)
    n, key = int(sys.argv[3]), sys.argv[4]
    doc = docs[n] if docs and -len(docs) <= n < len(docs) else {}
    print(text_of(doc.get(key) if isinstance(doc, dict) else None))
elif cmd == "history":                  # history FILE ID: the state of job ID in a history list
    jobs = docs[0] if docs else []
    if isinstance(jobs, dict):
        jobs = jobs.get("jobs") or jobs.get("items") or []
    for job in jobs:
        if isinstance(job, dict) and job.get("id") == sys.argv[3]:
            print("%s\t%s" % (text_of(job.get("state")), text_of(job.get("endedAt"))))
            break
else:
    sys.exit("json.py: unknown command " + cmd)
EOF
}
jcount() { python3 "$work/sfjson.py" count "$1"; }
jfield() { python3 "$work/sfjson.py" field "$1" "$2" "$3"; }

# ---- the job folders ---------------------------------------------------------------------------------

# make_job DIR NAME SERIES OVERRIDE...: a NeMo-RL-shaped code folder with its jobspec.json.
make_job() {
    local dir=$1 name=$2 series=$3
    shift 3
    mkdir -p "$dir/configs"
    cat >"$dir/configs/grpo_tiny.yaml" <<'EOF'
# GRPO on math problems, inheriting the image's example config as examples/grpo-math does.
# max_num_steps here is 50: the JobSpec's override makes it 3, so "Step 3/3" in the logs shows
# the override reached NeMo-RL.
defaults: /opt/nemo-rl/examples/configs/grpo_math_1B.yaml

grpo:
  max_num_steps: 50
  num_prompts_per_step: 2
  num_generations_per_prompt: 2

data:
  default:
    prompt_file: /opt/nemo-rl/examples/prompts/cot.txt
EOF
    cat >"$dir/reward.py" <<'EOF'
"""A user module that travels in the Capsule (NeMo-RL jobs usually ship a reward or data file)."""


def reward(answer, expected):
    return 1.0 if answer.strip() == expected.strip() else 0.0
EOF
    python3 - "$dir/jobspec.json" "$name" "$series" "$@" <<'EOF'
import json, sys
path, name, series, overrides = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
spec = {
    "version": 1,
    "name": name,
    "code": ".",
    "recipe": {"algorithm": "grpo", "config": "configs/grpo_tiny.yaml", "overrides": overrides},
    "env": {"WANDB_MODE": "offline"},
    "pools": [{"name": "train", "series": series, "nodes": 1, "gpusPerNode": 1}],
    "storage": True,
    "corpus": False,
}
with open(path, "w") as f:
    json.dump(spec, f, indent=2)
    f.write("\n")
EOF
}

# ---- checks used by several cases -------------------------------------------------------------------

# check_submit_output CASE OUT EXPECTED_NAME: the first JSON object of submit --json.
check_submit_output() {
    local case=$1 out=$2 name=$3
    [ "$(jcount "$out")" -ge 1 ] || fail "$case: submit printed no JSON object" "$(tail_of "$out")"
    job_id=$(jfield "$out" 0 id)
    job_name=$(jfield "$out" 0 name)
    job_sha=$(jfield "$out" 0 capsuleSha256)
    job_uploaded=$(jfield "$out" 0 uploadedBytes)
    [[ $job_id =~ ^[a-z0-9]{6}$ ]] || fail "$case: submit's id '$job_id' is not six lowercase letters or digits" "$(tail_of "$out")"
    current_id=$job_id
    current_name=$job_name
    [ "$job_name" = "$name-$job_id" ] || fail "$case: the RayJob is named '$job_name', not '$name-$job_id' (docs/jobspec.md)"
    [[ $job_sha =~ ^[0-9a-f]{64}$ ]] || fail "$case: capsuleSha256 '$job_sha' is not a SHA-256"
    [[ $job_uploaded =~ ^[0-9]+$ ]] || fail "$case: uploadedBytes '$job_uploaded' is not a byte count"
    pass "$case: submitted job $job_id (RayJob $job_name, Capsule ${job_sha:0:12}…, $job_uploaded bytes uploaded)"
}

# submit_wait CASE SPEC NAME EXPECTED_RC EXPECTED_STATE: submit --wait --json, checked.
submit_wait() {
    local case=$1 spec=$2 name=$3 want_rc=$4 want_state=$5
    local out=$work/$case.out err=$work/$case.err rc=0 started
    started=$(date +%s)
    with_timeout "$JOB_TIMEOUT" "$cli" --profile "$PROFILE" submit "$spec" --wait --json >"$out" 2>"$err" || rc=$?
    if [ "$rc" -eq 1 ] || [ "$rc" -eq 2 ]; then
        [ "$(jcount "$out")" -eq 0 ] || check_submit_output "$case" "$out" "$name"   # names the job left behind
        fail "$case: submit exited $rc before the job ended" "$(tail_of "$err")" "$(tail_of "$out")"
    fi
    check_submit_output "$case" "$out" "$name"
    [ "$rc" -ne 124 ] || fail "$case: submit --wait did not return within $JOB_TIMEOUT s (E2E_JOB_TIMEOUT)" "$(tail_of "$err")"
    [ "$(jcount "$out")" -ge 2 ] || fail "$case: submit --wait printed no final JSON line (exit $rc)" "$(tail_of "$out")" "$(tail_of "$err")"
    local final_id final_state
    final_id=$(jfield "$out" -1 id)
    final_state=$(jfield "$out" -1 state)
    [ "$final_id" = "$job_id" ] || fail "$case: the final line is about job '$final_id', not $job_id" "$(tail_of "$out")"
    [ "$final_state" = "$want_state" ] || fail "$case: job $job_id ended $final_state, expected $want_state" "$(tail_of "$out")" "$(tail_of "$err")"
    [ "$rc" -eq "$want_rc" ] || fail "$case: submit --wait exited $rc for a $final_state job, expected $want_rc"
    pass "$case: submit --wait followed job $job_id to $final_state in $(($(date +%s) - started)) s, exit $rc"
}

# check_history CASE ID STATE: history --json has the job with that state (the archive is in S3).
check_history() {
    local case=$1 id=$2 want=$3 out=$work/$1.history entry="" _
    for _ in $(seq 1 20); do
        sf history --json >"$out" 2>"$work/$case.history.err" || true
        entry=$(python3 "$work/sfjson.py" history "$out" "$id")
        [ -n "$entry" ] && break
        sleep 3
    done
    [ -n "$entry" ] || fail "$case: history --json has no job $id after 60 s (jobs/$id/status.json missing?)" \
        "$(tail_of "$out")" "$(tail_of "$work/$case.history.err")"
    local state=${entry%%$'\t'*} ended=${entry#*$'\t'}
    [ "$state" = "$want" ] || fail "$case: history says job $id is '$state', expected $want"
    [ -n "$ended" ] || fail "$case: history's entry for $id has no endedAt"
    pass "$case: history --json: $id $state, ended $ended"
}

# check_logs CASE ID TEXT...: the archived logs contain every TEXT.
check_logs() {
    local case=$1 id=$2 out=$work/$1.logs text
    shift 2
    sf logs "$id" >"$out" 2>"$work/$case.logs.err" ||
        fail "$case: starforge-cli logs $id failed" "$(tail_of "$work/$case.logs.err")"
    for text in "$@"; do
        grep -qF -- "$text" "$out" || fail "$case: the archived logs of $id have no '$text'" "$(tail_of "$out" 25)"
    done
    pass "$case: archived logs of $id ($(wc -l <"$out") lines) contain: $*"
}

# check_gone CASE ID NAME: the RayJob and the job's pods are gone from the cluster (deletion
# with the operator's finalizer and the garbage collector takes a moment).
check_gone() {
    local case=$1 id=$2 name=$3 rayjobs="" pods="" _
    for _ in $(seq 1 60); do
        rayjobs=$(kc -n "$NAMESPACE" get rayjobs -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}')
        if ! grep -qx -- "$name" <<<"$rayjobs"; then
            break
        fi
        sleep 2
    done
    if grep -qx -- "$name" <<<"$rayjobs"; then
        fail "$case: RayJob $name is still there 120 s after the job ended" "$(kc -n "$NAMESPACE" get rayjobs 2>&1)"
    fi
    pass "$case: kubectl get rayjobs -n $NAMESPACE no longer has $name"
    for _ in $(seq 1 60); do
        pods=$(kc -n "$NAMESPACE" get pods -l "starforge.dev/job-id=$id" -o name)
        [ -z "$pods" ] && break
        sleep 2
    done
    [ -z "$pods" ] || fail "$case: pods of job $id are still there 120 s after its RayJob went" "$pods"
    pass "$case: no pod with starforge.dev/job-id=$id is left"
    current_id=""
    current_name=""
}

# ---- the cases -----------------------------------------------------------------------------------------

case_succeed() {
    say "succeed: a 3-step GRPO job on series $SERIES"
    submit_wait succeed "$work/ok/jobspec.json" e2e-grpo 0 Succeeded
    first_sha=$job_sha
    local id=$job_id name=$job_name
    check_history succeed "$id" Succeeded
    check_logs succeed "$id" "Step 3/3" "Max number of steps has been reached"
    check_gone succeed "$id" "$name"
}

case_resubmit() {
    say "resubmit: the same tree again"
    local before_sha=${first_sha:-}
    submit_wait resubmit "$work/ok/jobspec.json" e2e-grpo 0 Succeeded
    if [ "$job_uploaded" != 0 ]; then
        local hint="the Capsule of the first submit should already be in the bucket"
        [ -n "$before_sha" ] || hint="run the 'succeed' case first (or the whole loop): this tree may never have been submitted to this bucket"
        fail "resubmit: uploadedBytes is $job_uploaded, expected 0" "$hint"
    fi
    pass "resubmit: \"uploadedBytes\": 0"
    if [ -n "$before_sha" ]; then
        [ "$job_sha" = "$before_sha" ] || fail "resubmit: the same tree made another Capsule ($job_sha, before $before_sha)"
        pass "resubmit: same Capsule as the first submit"
    fi
    check_history resubmit "$job_id" Succeeded
    check_gone resubmit "$job_id" "$job_name"
}

case_fail() {
    say "fail: the training step 2 raises"
    submit_wait fail "$work/fail/jobspec.json" e2e-fail 3 Failed
    local id=$job_id name=$job_name
    check_history fail "$id" Failed
    # The traceback's last line: the stand-in's own failure, not any other.
    check_logs fail "$id" "Step 2/3" "RuntimeError: starforge.fake_fail_at_step=2"
    if grep -qF "Step 3/3" "$work/fail.logs"; then
        fail "fail: the logs of $id reach Step 3/3 although step 2 raised"
    fi
    check_gone fail "$id" "$name"
}

case_stuck() {
    say "stuck: a pool of series e2e-no-such-series, pre-running deadline ${STUCK_DEADLINE} s"
    local out=$work/stuck.out err=$work/stuck.err diag=$work/stuck.diagnose pid started cause="" _
    started=$(date +%s)
    # The deadline through the environment: FORGE_* variables override the profile.
    (
        export FORGE_KUBERAY_PRERUNNING_DEADLINE_S=$STUCK_DEADLINE
        with_timeout "$JOB_TIMEOUT" "$cli" --profile "$PROFILE" submit "$work/stuck/jobspec.json" --wait --json
    ) >"$out" 2>"$err" &
    pid=$!
    for _ in $(seq 1 120); do
        [ "$(jcount "$out")" -ge 1 ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.5
    done
    if [ "$(jcount "$out")" -lt 1 ]; then
        local rc=0
        wait "$pid" || rc=$?
        fail "stuck: submit printed no job (exit $rc); it must accept a pool no node has and let the deadline fail it" \
            "$(tail_of "$err")"
    fi
    check_submit_output stuck "$out" e2e-stuck
    local id=$job_id name=$job_name
    # diagnose while the job waits, before the deadline ends it.
    while kill -0 "$pid" 2>/dev/null; do
        if sf diagnose "$id" --json >"$diag" 2>/dev/null; then
            cause=$(jfield "$diag" 0 cause)
            [ "$cause" = NoNodeMatchesSelector ] && break
        fi
        sleep 3
    done
    [ "$cause" = NoNodeMatchesSelector ] ||
        fail "stuck: diagnose $id --json never said NoNodeMatchesSelector before the job ended (last cause: '${cause:-none}')" \
            "$(tail_of "$diag")"
    pass "stuck: diagnose --json: NoNodeMatchesSelector ($(jfield "$diag" 0 message))"
    local rc=0
    wait "$pid" || rc=$?
    local elapsed=$(($(date +%s) - started))
    [ "$rc" -ne 124 ] || fail "stuck: submit --wait did not return within $JOB_TIMEOUT s"
    [ "$(jcount "$out")" -ge 2 ] || fail "stuck: submit --wait printed no final JSON line (exit $rc)" "$(tail_of "$err")"
    local state
    state=$(jfield "$out" -1 state)
    [ "$state" = Failed ] || fail "stuck: job $id ended '$state', expected Failed" "$(tail_of "$out")"
    [ "$rc" -eq 3 ] || fail "stuck: submit --wait exited $rc for a Failed job, expected 3"
    [ "$elapsed" -ge $((STUCK_DEADLINE - 5)) ] ||
        fail "stuck: job $id failed after $elapsed s, before its ${STUCK_DEADLINE} s deadline: something else failed it" "$(tail_of "$out")"
    [ "$elapsed" -le $((STUCK_DEADLINE + 240)) ] ||
        fail "stuck: job $id took $elapsed s to fail; the deadline is ${STUCK_DEADLINE} s"
    pass "stuck: ended Failed after $elapsed s (deadline ${STUCK_DEADLINE} s), exit 3"
    check_history stuck "$id" Failed
    sf events "$id" >"$work/stuck.events" 2>&1 || fail "stuck: starforge-cli events $id failed" "$(tail_of "$work/stuck.events")"
    grep -qF FailedScheduling "$work/stuck.events" ||
        fail "stuck: the events kept for $id have no FailedScheduling (the reason it never ran)" "$(tail_of "$work/stuck.events")"
    pass "stuck: events $id still explain it (FailedScheduling)"
    check_gone stuck "$id" "$name"
}

# ---- main ----------------------------------------------------------------------------------------------

cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(succeed resubmit fail stuck)
for c in "${cases[@]}"; do
    case $c in
        succeed | resubmit | fail | stuck) ;;
        -h | --help)
            sed -n '2,/^set -euo pipefail$/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
            exit 0
            ;;
        *) fail "unknown case '$c'; cases: succeed resubmit fail stuck" ;;
    esac
done

# A cluster on podman: kind must be told, as setup-kind.sh tells it.
if [ "${CONTAINER_ENGINE:-}" = podman ]; then
    export KIND_EXPERIMENTAL_PROVIDER=podman
fi
for tool in kind kubectl python3; do
    command -v "$tool" >/dev/null 2>&1 || fail "$tool is not installed (docs/e2e.md, Prerequisites)"
done
[ -x "$cli" ] || fail "$cli is not built: cmake --preset dev && cmake --build build (or set STARFORGE_CLI)"
if [ "$(env | grep -c '^FORGE_')" -gt 0 ]; then
    say "ignoring FORGE_* from the environment: $(env | sed -n 's/^\(FORGE_[A-Z0-9_]*\)=.*/\1/p' | tr '\n' ' ')"
    for v in $(env | sed -n 's/^\(FORGE_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/starforge-kuberay-loop.XXXXXX")
trap 'rm -rf "$work"' EXIT
write_json_helper

say "preflight: cluster $CLUSTER, profile $PROFILE"
kind get clusters 2>/dev/null | grep -qx -- "$CLUSTER" ||
    fail "there is no kind cluster $CLUSTER: run bash scripts/e2e/setup-kind.sh first"
kubeconfig=$STATE_DIR/kubeconfig
mkdir -p "$STATE_DIR"
kind get kubeconfig --name "$CLUSTER" >"$kubeconfig.tmp" && mv "$kubeconfig.tmp" "$kubeconfig"
chmod 600 "$kubeconfig"
kc get namespace "$NAMESPACE" >/dev/null 2>&1 ||
    fail "namespace $NAMESPACE is missing on $CLUSTER: run bash scripts/e2e/setup-kind.sh"
sf profile show "$PROFILE" >"$work/profile" 2>&1 ||
    fail "profile $PROFILE cannot be read: run bash scripts/e2e/setup-kind.sh" "$(tail_of "$work/profile")"
sf capacity >"$work/capacity" 2>&1 ||
    fail "starforge-cli capacity failed: the profile cannot reach the cluster" "$(tail_of "$work/capacity")"
grep -qw "$SERIES" "$work/capacity" ||
    fail "starforge-cli capacity shows no series '$SERIES': setup-kind.sh labels the GPU nodes" "$(tail_of "$work/capacity")"
pass "connected; capacity shows series $SERIES"
sed 's/^/    | /' "$work/capacity"

make_job "$work/ok" e2e-grpo "$SERIES" "grpo.max_num_steps=3"
make_job "$work/fail" e2e-fail "$SERIES" "grpo.max_num_steps=3" "+starforge.fake_fail_at_step=2"
make_job "$work/stuck" e2e-stuck e2e-no-such-series "grpo.max_num_steps=3"

for c in "${cases[@]}"; do
    "case_$c"
done

printf '\nkuberay-loop: all %d checks passed (%s) on %s\n' "$checks" "${cases[*]}" "$CLUSTER"
