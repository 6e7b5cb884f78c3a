#!/bin/sh
# Installs what Starforge needs (apt, skipping what is installed), builds it into build/ and
# starts the GUI on the embedded sandbox cluster (starforge --sandbox). Arguments are passed to
# the app.
set -eu
cd "$(dirname "$0")/.."
. scripts/lib/deps.sh
# shellcheck disable=SC2086
install_packages $STARFORGE_BUILD_PACKAGES $STARFORGE_RUN_PACKAGES
# The configuration scripts/test.sh builds (optimised, tests included): run one after the other
# and the second rebuilds nothing.
configure_and_build ci
echo "==> starting build/bin/starforge --sandbox"
exec build/bin/starforge --sandbox "$@"
