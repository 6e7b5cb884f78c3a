# Sourced by run.sh and test.sh: the Debian 12 packages Starforge needs, installed when missing.
# Only apt; nothing is downloaded from anywhere else.

STARFORGE_BUILD_PACKAGES="cmake g++ ninja-build ccache pkg-config
    qt6-base-dev qt6-base-dev-tools qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools
    qt6-httpserver-dev qt6-websockets-dev qtkeychain-qt6-dev
    libarchive-dev libssl-dev libyaml-cpp-dev zlib1g-dev libsimdjson-dev libhyperscan-dev"
# At run time: the Secret Service the keychain talks to, the Qt platform plugins, and Qt's SQLite
# driver for the event journal (docs/events.md; the Qt SQL headers come with qt6-base-dev), and
# Qt's own translations (its dialogs' buttons in German and Chinese).
STARFORGE_RUN_PACKAGES="qt6-qpa-plugins libqt6sql6-sqlite gnome-keyring libsecret-1-0 dbus dbus-x11 python3 qt6-translations-l10n"
# For the tests: a private Secret Service, a virtual X server for screenshots (xdotool presses
# the wizard's keys there), clang and its
# libFuzzer runtime for the fuzz targets (scripts/fuzz.sh), a single-node Ceph radosgw for the
# S3 client's tests (scripts/lib/with-radosgw.sh), boto3 for bench_s3_multipart, zip/unzip
# for tst_capsule and bench_capsule, and for atspi_tree (what a screen reader sees of the app on
# the real AT-SPI bus): the bus launcher and registry (at-spi2-core) and pyatspi with its
# introspection data, in the system python3; dunst (a notification daemon) and trayer (a system
# tray) for tst_desktop_real; for deb_package (docs/packaging.md), dpkg-shlibdeps (dpkg-dev)
# that cpack runs for the .deb's Depends, and the validators of its desktop entry, AppStream
# metainfo and MIME type; a Chinese font for the screenshots of the Chinese interface.
STARFORGE_TEST_PACKAGES="libsecret-tools xvfb xauth imagemagick x11-utils xdotool curl procps clang libclang-rt-14-dev
    radosgw ceph-mon ceph-osd ceph-common python3-boto3 zip unzip
    at-spi2-core gir1.2-atspi-2.0 python3-pyatspi dunst trayer fonts-wqy-microhei
    dpkg-dev desktop-file-utils appstream shared-mime-info"

# install_packages PKG...: installs the packages that are not installed yet.
install_packages() {
    missing=""
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            missing="$missing $pkg"
        fi
    done
    if [ -z "$missing" ]; then
        echo "==> all $# packages already installed"
        return 0
    fi
    echo "==> installing:$missing"
    sudo_cmd=""
    if [ "$(id -u)" -ne 0 ]; then
        sudo_cmd="sudo"
    fi
    $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get update -q
    # shellcheck disable=SC2086
    $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
}

# configure_and_build PRESET [extra cmake args]: configures build/ with the preset and builds it.
configure_and_build() {
    preset="$1"
    shift
    launcher=""
    if command -v ccache >/dev/null; then
        launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
    fi
    echo "==> configuring (preset $preset)"
    cmake --preset "$preset" $launcher "$@"
    echo "==> building"
    cmake --build build --parallel "$(nproc)"
}
