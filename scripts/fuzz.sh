#!/bin/sh
# Builds the libFuzzer targets (tests/fuzz) with clang into their own build folder and runs each
# for SECONDS (default 60) on a copy of its seed corpus, so the committed corpus never changes.
# Fails when a target finds a crash, a sanitizer report or a broken invariant; the input that
# caused it is kept in <build>/artifacts/. docs/fuzzing.md has the longer runs.
#   scripts/fuzz.sh [SECONDS] [TARGET...]      e.g. scripts/fuzz.sh 600 fuzz_sse_parser
# Environment: STARFORGE_FUZZ_BUILD_DIR (default build/fuzz), STARFORGE_FUZZ_CXX (default clang++),
# STARFORGE_FUZZ_KEEP=1 keeps the grown corpora (printed at the end) instead of deleting them.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-"fuzz_kube_views fuzz_watch_decoder fuzz_sse_parser fuzz_s3_xml"}
build=${STARFORGE_FUZZ_BUILD_DIR:-$root/build/fuzz}

case "$seconds" in
    ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, not '$seconds'" >&2; exit 2 ;;
esac
cxx=${STARFORGE_FUZZ_CXX:-}
if [ -z "$cxx" ]; then
    for candidate in clang++ clang++-14; do
        if command -v "$candidate" >/dev/null; then cxx=$candidate; break; fi
    done
fi
if [ -z "$cxx" ]; then
    echo "fuzz.sh: clang++ is not installed (apt-get install clang libclang-rt-14-dev; scripts/lib/deps.sh lists it)" >&2
    exit 2
fi

launcher=""
if command -v ccache >/dev/null; then
    launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
fi
echo "==> building the fuzz targets with $cxx into $build"
mkdir -p "$build"
# shellcheck disable=SC2086
cmake -S "$root/tests/fuzz" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER="$cxx" $launcher >"$build/configure.log" 2>&1 \
    || { cat "$build/configure.log" >&2; exit 2; }
# shellcheck disable=SC2086
cmake --build "$build" --target $targets

work=$(mktemp -d "${TMPDIR:-/tmp}/starforge-fuzz.XXXXXX")
if [ "${STARFORGE_FUZZ_KEEP:-0}" != 1 ]; then
    trap 'rm -rf "$work"' EXIT INT TERM
fi
mkdir -p "$build/artifacts"
# Every sanitizer report is fatal and symbolised; leaks are findings too.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:symbolize=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

status=0
summary=""
for target in $targets; do
    name=${target#fuzz_}
    seeds="$root/tests/fuzz/corpus/$name"
    if [ ! -d "$seeds" ]; then
        echo "fuzz.sh: no seed corpus $seeds for $target" >&2
        exit 2
    fi
    mkdir -p "$work/$name"
    cp "$seeds"/* "$work/$name/"
    log="$work/$name.log"
    echo "==> $target: ${seconds} s on $(ls "$seeds" | wc -l) seeds"
    rc=0
    if [ "$seconds" -eq 0 ]; then
        # Replay only: each seed once, the regression check.
        "$build/$target" "$seeds"/* >"$log" 2>&1 || rc=$?
    else
        # A dictionary of the format's tokens, where there is one, guides mutations into fields
        # the uninstrumented Qt parsers (JSON, XML) give no coverage feedback for.
        dict=""
        if [ -f "$root/tests/fuzz/dict/$name.dict" ]; then
            dict="-dict=$root/tests/fuzz/dict/$name.dict"
        fi
        # shellcheck disable=SC2086
        "$build/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 $dict \
            -artifact_prefix="$build/artifacts/$target-" "$work/$name" >"$log" 2>&1 || rc=$?
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    units=$(ls "$work/$name" | wc -l)
    if [ "$rc" -ne 0 ]; then
        status=1
        echo "==> $target FAILED (exit $rc); the last lines of its log:"
        tail -n 60 "$log"
        summary="$summary
$target	FAILED	artifacts: $(ls "$build/artifacts" | grep "^$target-" | tr '\n' ' ')"
    elif [ "$seconds" -eq 0 ]; then
        summary="$summary
$target	ok	replayed $units seeds"
    else
        summary="$summary
$target	ok	$execs executions, corpus grew to $units inputs"
    fi
done
echo "==> summary (${seconds} s per target)$summary"
if [ "${STARFORGE_FUZZ_KEEP:-0}" = 1 ]; then
    echo "==> grown corpora kept in $work"
fi
exit "$status"
