#!/bin/sh
# The app as a process, the figures bench_heatmap cannot take from inside one:
#  - process start to its main window mapped on the X server (xwininfo polled every 10 ms), with
#    an empty profiles file (nothing to connect to); the median and the worst of 5 starts. The
#    window is mapped when Qt shows it, one frame before its first paint is on screen;
#  - resident memory of the app connected to a starforge-sandbox --fleet scale:5000 process
#    (5,000 nodes and 50,000 pods in its informers and capacity tracker, the heatmap showing
#    them): VmRSS once the session has logged Connected and then idled for 20 s, and VmHWM (the
#    peak while it connected).
# Runs under xvfb-run with a private keyring (the profile's token goes to the keychain). Needs a
# build in build/, xvfb, x11-utils, gnome-keyring and dbus. Prints a table.
set -eu
cd "$(dirname "$0")/.."
if [ -z "${STARFORGE_BENCH_INNER:-}" ]; then
    STARFORGE_BENCH_INNER=1 exec xvfb-run -a -s "-screen 0 1280x800x24" \
        sh scripts/lib/with-secret-service.sh sh "$0"
fi

scratch=$(mktemp -d)
sandbox=
trap '[ -n "$sandbox" ] && kill "$sandbox" 2>/dev/null; rm -rf "$scratch"' EXIT
export STARFORGE_CONFIG_FILE="$scratch/profiles.ini"
cli=build/bin/starforge-cli
now_ms() { date +%s%3N; }
median() { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
worst() { tr ' ' '\n' | grep . | sort -n | tail -n 1; }

starts=""
for i in 1 2 3 4 5; do
    t0=$(now_ms)
    build/bin/starforge 2>/dev/null &
    app=$!
    until xwininfo -root -tree 2>/dev/null | grep -q '"Starforge"'; do sleep 0.01; done
    t1=$(now_ms)
    kill "$app" 2>/dev/null || true
    wait "$app" 2>/dev/null || true
    starts="$starts $((t1 - t0))"
done

build/bin/starforge-sandbox --connection-file "$scratch/sb/connection.json" --fleet scale:5000 2>"$scratch/sandbox.log" &
sandbox=$!
i=0
until test -s "$scratch/sb/connection.json"; do
    i=$((i + 1))
    [ "$i" -le 1200 ] || { echo "bench-app: the sandbox did not start" >&2; exit 1; }
    sleep 0.1
done
forge() { python3 -c 'import json, sys; f = json.load(open(sys.argv[1]))["forge"]; print(f[sys.argv[2]] if len(sys.argv) > 2 else
    " ".join("%s=%s" % kv for kv in f.items() if kv[0] not in ("FORGE_K8S_TOKEN", "FORGE_S3_ACCESS_KEY", "FORGE_S3_SECRET_KEY")))' \
    "$scratch/sb/connection.json" "$@"; }
# shellcheck disable=SC2046
$cli profile set scale $(forge) >/dev/null
for secret in FORGE_K8S_TOKEN FORGE_S3_ACCESS_KEY FORGE_S3_SECRET_KEY; do
    forge "$secret" | tr -d '\n' | $cli profile set scale "$secret" --stdin >/dev/null
done
$cli profile use scale >/dev/null
t0=$(now_ms)
QT_LOGGING_RULES=starforge.core.session.info=true build/bin/starforge 2>"$scratch/app.log" &
app=$!
i=0
until grep -q 'starforge.core.session: connected: Connected' "$scratch/app.log"; do
    i=$((i + 1))
    [ "$i" -le 1200 ] || { echo "bench-app: the app did not connect" >&2; cat "$scratch/app.log" >&2; exit 1; }
    sleep 0.1
done
connected=$(($(now_ms) - t0))
sleep 20
rss=$(awk '/^VmRSS/ { print int($2 / 1024) }' "/proc/$app/status")
hwm=$(awk '/^VmHWM/ { print int($2 / 1024) }' "/proc/$app/status")
kill "$app" 2>/dev/null || true
wait "$app" 2>/dev/null || true

echo "| measure | figure | target |"
echo "|---|---|---|"
echo "| process start to main window mapped (5 starts) | median $(echo "$starts" | median) ms, worst $(echo "$starts" | worst) ms | < 500 ms |"
echo "| start to session Connected, scale:5000 sandbox | $connected ms | – |"
echo "| resident memory, idle after 20 s, 5,000 nodes / 50,000 pods | $rss MB (peak $hwm MB) | < 150 MB |"
