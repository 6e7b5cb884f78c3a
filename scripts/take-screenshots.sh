#!/bin/sh
# Regenerates docs/screenshots/*.png: the app under Xvfb with a throw-away configuration and
# keychain, so that the pictures show what a user sees. Needs a build in build/ (with
# runner.pex, for the jobs submitted to the sandbox) and the packages xvfb, imagemagick, xdotool,
# gnome-keyring and dbus (scripts/test.sh installs them).
set -eu
cd "$(dirname "$0")/.."
if [ -z "${STARFORGE_SHOTS_INNER:-}" ]; then
    STARFORGE_SHOTS_INNER=1 exec xvfb-run -a -s "-screen 0 1280x800x24" \
        sh scripts/lib/with-secret-service.sh sh "$0"
fi

out=docs/screenshots
mkdir -p "$out"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export STARFORGE_CONFIG_FILE="$scratch/profiles.ini"
cli=build/bin/starforge-cli

$cli profile set lab FORGE_K8S_API_SERVER=https://k8s.lab.example:6443 FORGE_K8S_NAMESPACE=rl-team \
    FORGE_S3_ENDPOINT=https://s3.lab.example FORGE_S3_BUCKET=rl-capsules >/dev/null
$cli profile set staging FORGE_K8S_API_SERVER=https://staging.example:6443 >/dev/null
printf '%s' 'lab-token-not-real' | $cli profile set lab FORGE_K8S_TOKEN --stdin >/dev/null
$cli profile use lab >/dev/null

shoot() { # name, seconds to wait, app arguments...
    name=$1 wait=$2
    shift 2
    build/bin/starforge "$@" &
    pid=$!
    sleep "$wait"
    import -window root "$out/$name.png"
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    echo "wrote $out/$name.png"
}
shoot main-window 3
shoot profiles-dialog 3 --profiles
shoot sandbox-session 6 --sandbox
# A first run: no profile yet, the three ways in.
STARFORGE_CONFIG_FILE="$scratch/first/profiles.ini" shoot first-run 3


# The Jobs panel on the sandbox with jobs in several states: archived Succeeded and Failed, one
# Running (the example as it is, 200 steps) and one stuck Pending (a GPU series the sandbox has
# none of). Jobs are submitted with the CLI on the window's own sandbox; the window's tracker
# archives them.
json() { # FILE EXPR: a Python expression over the JSON in FILE, bound to d
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
wait_for() { # SECONDS DESCRIPTION COMMAND...: until COMMAND succeeds
    limit=$1 what=$2
    shift 2
    i=0
    until "$@" >/dev/null 2>&1; do
        i=$((i + 1))
        [ "$i" -le $((limit * 2)) ] || { echo "take-screenshots: timed out waiting for $what" >&2; exit 1; }
        sleep 0.5
    done
}
# On the window's own sandbox: the profiles dialog (Ctrl+Shift+P) with its grouped settings,
# Test connection (Alt+T) once every part has answered.
build/bin/starforge --sandbox 2>"$scratch/test.log" &
app=$!
wait_for 60 "the app's sandbox" grep -q 'KUBECONFIG=' "$scratch/test.log"
sleep 3
window=$(xdotool search --onlyvisible --name 'Starforge' | tail -n 1)
xdotool windowfocus --sync "$window" key --clearmodifiers ctrl+shift+p
wait_for 20 "the profiles dialog" xdotool search --name 'Connection Profiles'
sleep 1
profiles=$(xdotool search --name 'Connection Profiles' | head -n 1)
import -window "$profiles" "$out/profiles-dialog-grouped.png"
echo "wrote $out/profiles-dialog-grouped.png"
xdotool windowfocus --sync "$profiles" key --clearmodifiers alt+t
wait_for 20 "the test window" xdotool search --name 'Test Connection'
sleep 3
tested=$(xdotool search --name 'Test Connection' | head -n 1)
import -window "$tested" "$out/test-connection.png"
echo "wrote $out/test-connection.png"
kill "$app" 2>/dev/null || true
wait "$app" 2>/dev/null || true
# The dark scheme, as a desktop that prefers dark gets it (here fixed with --color-scheme).
shoot sandbox-session-dark 6 --sandbox --color-scheme dark
shoot profiles-dialog-dark 3 --profiles --color-scheme dark
# In German and Chinese (View › Language keeps a choice; STARFORGE_LANGUAGE sets one per run).
STARFORGE_LANGUAGE=de shoot sandbox-session-de 6 --sandbox
STARFORGE_LANGUAGE=zh_CN shoot profiles-dialog-zh_CN 3 --profiles

jobs_dir="$scratch/grpo-math"
cp -r examples/grpo-math "$jobs_dir"
spec() { # NAME SERIES OVERRIDES...: a copy of the example's JobSpec, written to $jobs_dir/NAME.json
    python3 - "$jobs_dir" "$@" <<'PY'
import json, sys
folder, name, series, overrides = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
spec = json.load(open(folder + "/jobspec.json"))
spec["name"] = name
spec["pools"][0]["series"] = series
spec["recipe"]["overrides"] = overrides
json.dump(spec, open("%s/%s.json" % (folder, name), "w"), indent=2)
PY
}
spec grpo-math-short h200 grpo.max_num_steps=3
spec grpo-math-nan h200 grpo.max_num_steps=5 +starforge.fake_fail_at_step=2
spec grpo-math-b200 b200 grpo.max_num_steps=200

build/bin/starforge --sandbox 2>"$scratch/app.log" &
app=$!
wait_for 60 "the app's sandbox" grep -q 'KUBECONFIG=' "$scratch/app.log"
kubeconfig=$(sed -n 's/.*KUBECONFIG=//p' "$scratch/app.log" | head -n 1)
conn=${kubeconfig%.kubeconfig}
sub() { # SPEC: submits it (--force: the b200 one can never fit, on purpose), prints the job id
    $cli --connection-file "$conn" submit "$1" --force --json | head -n 1 > "$scratch/submitted.json"
    json "$scratch/submitted.json" 'd["id"]'
}
archived() { # ID [STATE]
    $cli --connection-file "$conn" status "$1" --json >"$scratch/status.json" || return 1
    [ "$(json "$scratch/status.json" 'd.get("archived", False)')" = True ]
}
running() { # ID
    $cli --connection-file "$conn" jobs --json >"$scratch/jobs.json" || return 1
    [ "$(json "$scratch/jobs.json" "[j['state'] for j in d if j['id'] == '$1']")" = "['Running']" ]
}
short=$(sub "$jobs_dir/grpo-math-short.json")
wait_for 120 "job $short to be archived" archived "$short"
nan=$(sub "$jobs_dir/grpo-math-nan.json")
wait_for 120 "job $nan to be archived" archived "$nan"
example=$(sub examples/grpo-math/jobspec.json)
sleep 1   # creation times have whole seconds: a second apart, the picture's order is certain
stuck=$(sub "$jobs_dir/grpo-math-b200.json")
wait_for 120 "job $example to run" running "$example"
# The Job dock on the running job (its pods and progress plot), then on the stuck one (its
# diagnosis banner), chosen as a person would from the keyboard: Ctrl+1 is the Jobs table (its
# cursor on the first row, the stuck job), Down selects the running one, Up the stuck one.
window=$(xdotool search --onlyvisible --name 'Starforge' | tail -n 1)
xdotool windowfocus --sync "$window" key --clearmodifiers ctrl+1
sleep 0.5
xdotool key --clearmodifiers Down
sleep 8
import -window root "$out/jobs-panel.png"
echo "wrote $out/jobs-panel.png"
xdotool key --clearmodifiers Up
sleep 4
import -window root "$out/job-detail-pending.png"
echo "wrote $out/job-detail-pending.png"
# The Events dock (Ctrl+4) on the stuck job: its lanes, the diagnosis banner and the evidence
# ringed; End selects the last event in both the timeline and the list. Then back to the Jobs
# table (Ctrl+1) for the keys that follow.
xdotool key --clearmodifiers ctrl+4
sleep 6
xdotool key --clearmodifiers End
sleep 1
import -window root "$out/events-pending.png"
echo "wrote $out/events-pending.png"
xdotool key --clearmodifiers ctrl+1
sleep 0.5
# The Logs dock on the running job (Ctrl+5), searching its driver's log for the reward lines.
xdotool key --clearmodifiers Down
sleep 1
xdotool key --clearmodifiers ctrl+5
sleep 5
xdotool key --clearmodifiers ctrl+f
xdotool type --delay 20 'Avg Reward'
sleep 2
xdotool key --clearmodifiers F3
sleep 1
import -window root "$out/logs-panel.png"
echo "wrote $out/logs-panel.png"
# Compare runs (Ctrl+Shift+M) on the running job and the two archived ones, selected from the
# keyboard: Ctrl+1 is the Jobs table, Ctrl+Home its first row (the stuck job), Down the running
# one, Shift+Down twice the two archived ones.
xdotool key --clearmodifiers ctrl+1
sleep 0.5
xdotool key --clearmodifiers ctrl+Home Down shift+Down shift+Down
sleep 0.5
xdotool key --clearmodifiers ctrl+shift+m
wait_for 30 "the compare window" xdotool search --name 'Compare 3 run'
sleep 6   # the archived driver logs read from the bucket
import -window "$(xdotool search --name 'Compare 3 run' | head -n 1)" "$out/compare-runs.png"
kill "$app" 2>/dev/null || true
wait "$app" 2>/dev/null || true
echo "wrote $out/compare-runs.png"

# The submission wizard on the window's own sandbox, one picture per page, reached with the
# keys a person presses (xdotool): `starforge --sandbox JOBSPEC` opens it prefilled, Alt+N is
# Next. The example's pool asks for h200; the sandbox's default fleet has them.
build/bin/starforge --sandbox "$jobs_dir/jobspec.json" 2>"$scratch/wizard.log" &
app=$!
wait_for 60 "the app's sandbox" grep -q 'KUBECONFIG=' "$scratch/wizard.log"
wait_for 30 "the wizard" xdotool search --name 'New Job'
wizard=$(xdotool search --name 'New Job' | head -n 1)
wizard_shot() { # NAME SECONDS: waits, then takes the wizard's window
    sleep "$2"
    import -window "$wizard" "$out/$1.png"
    echo "wrote $out/$1.png"
}
next_page() {
    xdotool windowfocus --sync "$wizard" key --clearmodifiers alt+n
}
wizard_shot wizard-code 4
next_page
wizard_shot wizard-recipe 2
next_page
wizard_shot wizard-resources 3
next_page
wizard_shot wizard-review 6
kill "$app" 2>/dev/null || true
wait "$app" 2>/dev/null || true
# The GPU Capacity dock on a sandbox of 84 nodes in three GPU series: pods bound to nodes with
# 0 to 8 GPUs each (in two namespaces), two nodes cordoned and one tainted (hatched), and pods
# waiting for more than an h200 node has (the series' pending demand). Written with kubectl on
# the sandbox's kubeconfig (JSON bodies: kubectl create NAMESPACE would send protobuf); the
# window connects through an imported profile.
build/bin/starforge-sandbox --connection-file "$scratch/capacity/connection.json" \
    --fleet h200:40x8,h100:24x8,a100:16x4,cpu:4x0 2>"$scratch/capacity-sandbox.log" &
sandbox=$!
wait_for 60 "the capacity sandbox" test -s "$scratch/capacity/connection.json"
kc="kubectl --kubeconfig $scratch/capacity/connection.json.kubeconfig"
$kc get nodes -o json >"$scratch/nodes.json"
python3 - "$scratch/nodes.json" "$scratch/pods.json" <<'PY'
import json, sys
nodes = json.load(open(sys.argv[1]))["items"]
image = "nvcr.io/nvidia/nemo-rl:v0.7.0"
def pod(name, ns, gpus, node=None, series=None):
    spec = {"restartPolicy": "Never", "containers": [{"name": "main", "image": image, "command": ["sleep", "3600"],
            "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}
    if node: spec["nodeName"] = node
    if series: spec["nodeSelector"] = {"starforge/gpu-series": series}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}, "spec": spec}
# A day's mix: busy blocks, half-used nodes, idle ones.
pattern = [8, 8, 8, 6, 4, 8, 2, 0, 8, 5, 1, 0, 8, 7, 3, 8, 0, 4, 8, 6]
items = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-vision"}}]
for i, n in enumerate(sorted(nodes, key=lambda n: n["metadata"]["name"])):
    gpus = int(n["status"].get("allocatable", {}).get("nvidia.com/gpu", "0"))
    want = min(gpus, pattern[(i * 7) % len(pattern)] * gpus // 8)
    name = n["metadata"]["name"]
    if want >= 2 and i % 3 == 0:
        items.append(pod(name + "-train", "starforge", want // 2, node=name))
        items.append(pod(name + "-eval", "team-vision", want - want // 2, node=name))
    elif want > 0:
        items.append(pod(name + "-grpo", "starforge" if i % 2 else "team-vision", want, node=name))
items.append(pod("llama-405b-worker-0", "starforge", 16, series="h200"))
items.append(pod("llama-405b-worker-1", "starforge", 16, series="h200"))
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(sys.argv[2], "w"))
PY
# --validate=false: the sandbox serves no OpenAPI document for kubectl to validate against.
$kc create --validate=false -f "$scratch/pods.json" >/dev/null
nodes=$($kc get nodes -o name | sort)
$kc cordon "$(echo "$nodes" | grep h100 | sed -n 3p)" >/dev/null
$kc cordon "$(echo "$nodes" | grep h200 | sed -n 12p)" >/dev/null
$kc taint nodes "$(echo "$nodes" | grep a100 | sed -n 5p)" dedicated=infra:NoSchedule >/dev/null
# The profile takes every setting the sandbox wrote (object storage too, so the window's other
# panels have what they need and its status line stays short); the secrets go in with --stdin.
forge() { python3 -c 'import json, sys; f = json.load(open(sys.argv[1]))["forge"]; print(f[sys.argv[2]] if len(sys.argv) > 2 else
    " ".join("%s=%s" % kv for kv in f.items() if kv[0] not in ("FORGE_K8S_TOKEN", "FORGE_S3_ACCESS_KEY", "FORGE_S3_SECRET_KEY")))' \
    "$scratch/capacity/connection.json" "$@"; }
# shellcheck disable=SC2046
$cli profile set capacity $(forge) >/dev/null
for secret in FORGE_K8S_TOKEN FORGE_S3_ACCESS_KEY FORGE_S3_SECRET_KEY; do
    forge "$secret" | tr -d '\n' | $cli profile set capacity "$secret" --stdin >/dev/null
done
$cli profile use capacity >/dev/null
shoot capacity-heatmap 8
kill "$sandbox" 2>/dev/null || true
wait "$sandbox" 2>/dev/null || true

# Signing in with an exec plugin that needs a person (a device-code login, as cloud CLIs run
# one): the sign-in dialog shows the plugin's words live. The sandbox's own plugin plays that
# login and waits for a file that never appears here.
build/bin/starforge-sandbox --connection-file "$scratch/signin/connection.json" --fleet h100:1x8 2>"$scratch/sandbox.log" &
sandbox=$!
wait_for 60 "the sandbox" test -s "$scratch/signin/connection.json"
$cli profile import-kubeconfig "$scratch/signin/connection.json.kubeconfig" --context starforge-sandbox-exec --name sso >/dev/null
$cli profile use sso >/dev/null
STARFORGE_CREDENTIAL_INTERACTIVE=1 STARFORGE_CREDENTIAL_APPROVE_FILE="$scratch/never-approved" shoot sign-in-dialog 4
kill "$sandbox" 2>/dev/null || true
wait "$sandbox" 2>/dev/null || true

# The Playground dock (Ctrl+6) on the app's own sandbox: two models launched with the CLI, a
# question sent to the first from the keyboard (Ctrl+Return), its reply streamed with its
# timings, the pods' countdown above.
build/bin/starforge --sandbox 2>"$scratch/playground.log" &
app=$!
wait_for 60 "the app's sandbox" grep -q 'KUBECONFIG=' "$scratch/playground.log"
kubeconfig=$(sed -n 's/.*KUBECONFIG=//p' "$scratch/playground.log" | head -n 1)
conn=${kubeconfig%.kubeconfig}
$cli --connection-file "$conn" playground launch --model Qwen/Qwen3-0.6B --series h200 --wait >/dev/null
$cli --connection-file "$conn" playground launch --model Qwen/Qwen2.5-7B-Instruct --series h200 --gpus 2 --ttl 20m --wait >/dev/null
window=$(xdotool search --onlyvisible --name 'Starforge' | tail -n 1)
xdotool windowfocus --sync "$window" key --clearmodifiers ctrl+6
sleep 6   # the pods listed, the first chosen
xdotool type --delay 15 'How does GRPO differ from PPO?'
xdotool key --clearmodifiers ctrl+Return
sleep 4
import -window root "$out/playground-panel.png"
kill "$app" 2>/dev/null || true
wait "$app" 2>/dev/null || true
echo "wrote $out/playground-panel.png"
