#!/bin/sh
# Runs a command inside a private D-Bus session with gnome-keyring's Secret Service started and
# its login collection unlocked, in a throw-away HOME so no real keyring is touched.
#   sh scripts/lib/with-secret-service.sh COMMAND [ARGS...]
set -eu
if ! command -v dbus-run-session >/dev/null || ! command -v gnome-keyring-daemon >/dev/null; then
    echo "with-secret-service: needs dbus-run-session and gnome-keyring-daemon (apt-get install dbus gnome-keyring)" >&2
    exit 1
fi
keyring_home=$(mktemp -d "${TMPDIR:-/tmp}/starforge-keyring.XXXXXX")
trap 'rm -rf "$keyring_home"' EXIT
HOME="$keyring_home" XDG_DATA_HOME="$keyring_home/.local/share" XDG_RUNTIME_DIR="$keyring_home" \
    dbus-run-session -- sh -c '
        # gnome-keyring creates and unlocks the login collection from the password on stdin.
        eval "$(printf %s starforge-test | gnome-keyring-daemon --unlock --components=secrets)"
        export GNOME_KEYRING_CONTROL
        "$@"
        status=$?
        kill "$GNOME_KEYRING_PID" 2>/dev/null || true
        exit $status
    ' with-secret-service "$@"
