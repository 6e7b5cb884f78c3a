#!/bin/sh
# tst_desktop_real with real desktop services: a virtual X server (xvfb-run), a private session
# bus, dunst as the notification daemon and trayer as the system tray, each stopped afterwards.
#   sh tests/gui/desktop_real.sh TEST_BINARY
# Needs xvfb, dbus, dunst and trayer (scripts/lib/deps.sh).
set -eu
if [ -z "${STARFORGE_DESKTOP_INNER:-}" ]; then
    STARFORGE_DESKTOP_INNER=1 exec xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- sh "$0" "$@"
fi
for tool in dunst dunstctl trayer; do
    command -v "$tool" >/dev/null || { echo "desktop_real: $tool is missing (apt-get install dunst trayer)" >&2; exit 1; }
done
scratch=$(mktemp -d)
dunst >"$scratch/dunst.log" 2>&1 &
daemon=$!
trayer --expand false --width 10 >"$scratch/trayer.log" 2>&1 &
tray=$!
trap 'kill $daemon $tray 2>/dev/null || true; rm -rf "$scratch"' EXIT
# Wait until dunst owns org.freedesktop.Notifications, asking the bus (not dunst: a call to the
# name would have the bus start a second dunst from its activation file).
owned() {
    dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner \
        string:org.freedesktop.Notifications 2>/dev/null | grep -q true
}
i=0
until owned; do
    i=$((i + 1))
    [ "$i" -le 50 ] || { echo "desktop_real: dunst did not start" >&2; cat "$scratch/dunst.log" >&2; exit 1; }
    sleep 0.1
done
QT_QPA_PLATFORM=xcb "$@"
