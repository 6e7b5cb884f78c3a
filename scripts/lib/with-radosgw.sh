#!/bin/sh
# Runs a command against a throw-away single-node Ceph radosgw (mon + memstore OSD + rgw) on
# 127.0.0.1, in a temporary directory, on free ports, with a user whose keys it exports:
#   sh scripts/lib/with-radosgw.sh COMMAND [ARGS...]
# The command sees STARFORGE_TEST_S3_ENDPOINT, _REGION, _ACCESS_KEY and _SECRET_KEY. Every
# daemon is stopped by its PID afterwards (ceph-osd takes a few seconds) and the directory
# removed. The exit status is the command's; 1 with the daemons' logs when Ceph cannot start.
# radosgw is the test server because it verifies SigV4, x-amz-content-sha256 and Content-MD5
# and implements multipart as S3 does (docs/s3.md, "Why radosgw").
# STARFORGE_RADOSGW_MEMSTORE_BYTES caps the OSD's RAM store (default 4 GiB: the benchmark's
# 1 GiB object plus boto3's copy); memory is only used for what is stored.
set -eu

for tool in ceph-mon ceph-osd radosgw radosgw-admin ceph ceph-authtool monmaptool curl python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "with-radosgw: needs $tool (apt-get install radosgw ceph-mon ceph-osd ceph-common curl python3)" >&2
        exit 1
    fi
done
if [ $# -eq 0 ]; then
    echo "usage: with-radosgw.sh COMMAND [ARGS...]" >&2
    exit 2
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/starforge-rgw.XXXXXX")
mon_pid=""
osd_pid=""
rgw_pid=""

stop() {
    # Reverse order: rgw first so it does not log the OSD going away; then wait for each, the
    # OSD flushing memstore can take 5-9 s after SIGTERM.
    for pid in $rgw_pid $osd_pid $mon_pid; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in $rgw_pid $osd_pid $mon_pid; do
        i=0
        while kill -0 "$pid" 2>/dev/null; do
            i=$((i + 1))
            if [ $i -gt 300 ]; then
                echo "with-radosgw: process $pid did not stop after 30 s, killing it" >&2
                kill -9 "$pid" 2>/dev/null || true
                break
            fi
            sleep 0.1
        done
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$dir"
}
trap stop EXIT
trap 'exit 130' INT TERM

fail() {
    echo "with-radosgw: $*" >&2
    for log in "$dir"/log/*; do
        [ -f "$log" ] || continue
        echo "---- last lines of $log" >&2
        tail -n 15 "$log" >&2
    done
    exit 1
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

mon_port=$(free_port)
rgw_port=$(free_port)
memstore_bytes=${STARFORGE_RADOSGW_MEMSTORE_BYTES:-4294967296}
mkdir -p "$dir/mon/a" "$dir/osd/0" "$dir/run" "$dir/log"
fsid=$(cat /proc/sys/kernel/random/uuid)
# Authentication between the daemons is off (nothing leaves 127.0.0.1); the "crc" modes are
# needed then, or radosgw waits 300 s for a secure session. The mon's free-space checks are off
# because a nearly full /tmp must not shut it down; rgw's garbage collection runs at once so a
# deleted object's memory is returned between benchmark runs.
cat >"$dir/ceph.conf" <<EOF
[global]
fsid = $fsid
mon initial members = a
mon host = v2:127.0.0.1:$mon_port
public addr = 127.0.0.1
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc
ms client mode = crc
ms mon service mode = crc secure
ms service mode = crc secure
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon warn on pool no redundancy = false
mon data avail warn = 1
mon data avail crit = 0
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = $memstore_bytes
rgw gc obj min wait = 0
rgw gc processor period = 5
run dir = $dir/run
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
keyring = $dir/keyring
[mon.a]
mon data = $dir/mon/a
[osd.0]
osd data = $dir/osd/0
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$rgw_port
rgw data = $dir/rgw
EOF
conf="$dir/ceph.conf"

ceph-authtool --create-keyring "$dir/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null \
    || fail "ceph-authtool failed"
monmaptool --create --addv a "[v2:127.0.0.1:$mon_port]" --fsid "$fsid" "$dir/monmap" >/dev/null \
    || fail "monmaptool failed"
ceph-mon -c "$conf" -i a --mkfs --monmap "$dir/monmap" --keyring "$dir/keyring" >"$dir/log/mkfs-mon.out" 2>&1 \
    || fail "ceph-mon --mkfs failed"
# Foreground daemons (-f) in the background: their PIDs are ours to stop.
ceph-mon -c "$conf" -i a -f >"$dir/log/mon.out" 2>&1 &
mon_pid=$!
timeout 60 ceph -c "$conf" --connect-timeout 30 osd create >/dev/null 2>&1 || fail "the monitor did not answer"
ceph-osd -c "$conf" -i 0 --mkfs >"$dir/log/mkfs-osd.out" 2>&1 || fail "ceph-osd --mkfs failed"
timeout 60 ceph -c "$conf" osd crush add osd.0 1.0 host=localhost root=default >/dev/null 2>&1 \
    || fail "adding the OSD to the CRUSH map failed"
ceph-osd -c "$conf" -i 0 -f >"$dir/log/osd.out" 2>&1 &
osd_pid=$!
i=0
until timeout 20 ceph -c "$conf" osd stat 2>/dev/null | grep -q "1 up"; do
    i=$((i + 1))
    [ $i -lt 240 ] || fail "the OSD did not come up within 60 s"
    kill -0 "$osd_pid" 2>/dev/null || fail "ceph-osd exited"
    sleep 0.25
done
radosgw -c "$conf" -n client.rgw.a -f >"$dir/log/rgw.out" 2>&1 &
rgw_pid=$!
i=0
until curl -s -o /dev/null "http://127.0.0.1:$rgw_port/"; do
    i=$((i + 1))
    [ $i -lt 480 ] || fail "radosgw did not answer within 120 s"
    kill -0 "$rgw_pid" 2>/dev/null || fail "radosgw exited"
    sleep 0.25
done
access_key=STARFORGETESTKEY
secret_key=starforge-test-secret-key
timeout 60 radosgw-admin -c "$conf" user create --uid=starforge --display-name=starforge \
    --access-key="$access_key" --secret-key="$secret_key" >/dev/null 2>"$dir/log/user.out" \
    || fail "radosgw-admin user create failed"

export STARFORGE_TEST_S3_ENDPOINT="http://127.0.0.1:$rgw_port"
export STARFORGE_TEST_S3_REGION=us-east-1
export STARFORGE_TEST_S3_ACCESS_KEY="$access_key"
export STARFORGE_TEST_S3_SECRET_KEY="$secret_key"
echo "with-radosgw: radosgw on $STARFORGE_TEST_S3_ENDPOINT (pids mon $mon_pid, osd $osd_pid, rgw $rgw_pid)" >&2
status=0
"$@" || status=$?
exit $status
