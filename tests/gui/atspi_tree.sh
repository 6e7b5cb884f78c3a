#!/bin/sh
# The app's tree on the real AT-SPI bus (tests/gui/atspi_tree.py), under its own virtual X
# server and a private D-Bus session with a keyring; the app's --sandbox needs both.
#   sh tests/gui/atspi_tree.sh BIN_DIR
# Needs xvfb, dbus, gnome-keyring, at-spi2-core, python3-pyatspi and kubectl (scripts/lib/deps.sh).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# pyatspi is Debian's python3-pyatspi: the system interpreter has it, a python3 earlier on PATH
# (a virtualenv, pyenv) may not.
py=
for candidate in /usr/bin/python3 python3; do
    if "$candidate" -c 'import gi; gi.require_version("Atspi", "2.0"); import pyatspi' >/dev/null 2>&1; then
        py=$candidate
        break
    fi
done
if [ -z "$py" ]; then
    echo "atspi_tree: no python3 with pyatspi (apt-get install python3-pyatspi gir1.2-atspi-2.0 at-spi2-core)" >&2
    exit 1
fi
exec xvfb-run -a -s "-screen 0 1280x800x24" sh "$root/scripts/lib/with-secret-service.sh" "$py" "$here/atspi_tree.py" "$@"
