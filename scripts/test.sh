#!/bin/sh
# Installs what the tests need, builds with warnings as errors, and runs every test headless
# through CTest (labels unit, gui, integration). Services a test needs are started around that
# test by its CTest wrapper (the Secret Service: scripts/lib/with-secret-service.sh) and stopped
# when it ends. Exits non-zero on any failure; CTest's summary is the last thing printed.
#   scripts/test.sh [ctest args, e.g. -L unit]
set -eu
cd "$(dirname "$0")/.."
. scripts/lib/deps.sh
# shellcheck disable=SC2086
install_packages $STARFORGE_BUILD_PACKAGES $STARFORGE_RUN_PACKAGES $STARFORGE_TEST_PACKAGES
configure_and_build ci

# Private, empty places for whatever the tests' Qt and keyring write, so no test reads or
# changes the user's own configuration or keyring.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/starforge-test.XXXXXX")
cleanup() {
    # Anything a test left running under our scratch folder (a keyring daemon) goes too.
    pkill -f "$scratch" 2>/dev/null || true
    rm -rf "$scratch"
}
trap cleanup EXIT INT TERM
mkdir -p "$scratch/home" "$scratch/runtime"
chmod 700 "$scratch/runtime"
export HOME="$scratch/home" XDG_RUNTIME_DIR="$scratch/runtime" XDG_CONFIG_HOME="$scratch/home/.config"
export QT_QPA_PLATFORM=offscreen
unset DBUS_SESSION_BUS_ADDRESS STARFORGE_CONFIG_FILE STARFORGE_PROFILE KUBECONFIG || true
for v in $(env | sed -n 's/^\(FORGE_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done

echo "==> running tests"
status=0
ctest --test-dir build --output-on-failure --parallel "$(nproc)" --timeout 600 "$@" || status=$?
if [ "$status" -ne 0 ]; then
    echo "==> FAILED (ctest exit $status)"
else
    echo "==> all tests passed"
fi
exit "$status"
