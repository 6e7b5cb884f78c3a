#!/bin/sh
# Regenerates docs/screenshots/*.png: the app under Xvfb with a throw-away configuration and
# keychain, so that the pictures show what a user sees. Needs a build in build/ and the
# packages xvfb, imagemagick, gnome-keyring and dbus (scripts/test.sh installs them).
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
