#!/bin/sh
# Installs what Starforge needs (apt, skipping what is installed), builds it into build/ and
# starts the GUI. Arguments are passed to the app. Once the sandbox cluster exists (issue 3)
# this starts the GUI on it with --sandbox.
set -eu
cd "$(dirname "$0")/.."
. scripts/lib/deps.sh
# shellcheck disable=SC2086
install_packages $STARFORGE_BUILD_PACKAGES $STARFORGE_RUN_PACKAGES
configure_and_build dev
echo "==> starting build/bin/starforge"
exec build/bin/starforge "$@"
