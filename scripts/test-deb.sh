#!/usr/bin/env bash
# The Debian package on this machine, end to end: build it from an already built binary, install
# it, run its service (with systemctl where systemd is PID 1, else the unit's own ExecStart line
# as the unit's user with the unit's environment), ask a question, purge it, and check that no
# file is left outside /var/lib/shiori (which purge keeps, as docs/operations.md says).
#   scripts/test-deb.sh BINARY
# Needs root and dpkg; the models come from $SHIORI_HOME (else ~/.cache/shiori), where
# `shiori models fetch` put them. Run by crates/shiori/tests/package.rs. Any failure exits 1.
set -euo pipefail

binary=$(realpath "${1:?usage: scripts/test-deb.sh BINARY}")
root=$(cd "$(dirname "$0")/.." && pwd)
models=${SHIORI_HOME:-$HOME/.cache/shiori}
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "installing a package needs root"
command -v dpkg >/dev/null || fail "dpkg is missing: this test needs a Debian system"
dpkg -s shiori >/dev/null 2>&1 && fail "a shiori package is already installed"
[ -e /var/lib/shiori ] && fail "/var/lib/shiori exists (data of an earlier install?); not touching it"
[ -f "$models/models/multilingual-e5-small/e5-small-q4.bin" ] || fail "no models in $models: shiori models fetch"

work=$(mktemp -d)
server=
stop_server() {
    local child
    child=$(pgrep -P "$server" || true)
    kill $server $child 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    server=
}
cleanup() {
    [ -n "$server" ] && stop_server
    dpkg --purge shiori >/dev/null 2>&1 || true
    rm -rf /var/lib/shiori "$work"
    userdel shiori 2>/dev/null || true
}
trap cleanup EXIT

# Every path under the system's folders, except package-manager and log state and the data
# folder; the shadow utilities' own backups of the account files are not the package's.
snapshot() {
    find /etc /usr /lib /opt /var -xdev \( -path /var/lib/shiori -o -path /var/lib/dpkg \
        -o -path /var/cache -o -path /var/log -o -path /var/tmp -o -path /var/lib/apt \
        -o -path /var/backups -o -path /var/lib/systemd \) -prune -o -print 2>/dev/null \
        | grep -Ev '^/etc/(passwd|group|shadow|gshadow|subuid|subgid)-?$' | sort
}
snapshot >"$work/before"

deb=$("$root/scripts/build-deb.sh" "$binary" "$work/deb")
echo "== built $(basename "$deb"): $(du -h "$deb" | cut -f1)"
dpkg -i "$deb" >/dev/null
dpkg -L shiori >"$work/files"

unit=/lib/systemd/system/shiori.service
getent passwd shiori >/dev/null || fail "no shiori user"
[ "$(stat -c '%U:%G %a' /etc/shiori/shiori.env)" = "root:shiori 640" ] || fail "shiori.env is readable by others"
[ "$(readlink /var/lib/shiori/data/shiori.toml)" = /etc/shiori/shiori.toml ] || fail "config not linked"
[ -f /usr/share/man/man1/shiori.1.gz ] && [ -f /usr/share/man/man1/shiori-backup.1.gz ] || fail "man pages"
grep -q "shiori" /usr/share/bash-completion/completions/shiori || fail "bash completion"
man -l /usr/share/man/man1/shiori-doctor.1.gz 2>/dev/null | grep -q doctor \
    || zcat /usr/share/man/man1/shiori-doctor.1.gz | grep -q doctor || fail "doctor's man page"

# The models as `shiori models fetch` run by the service's user would leave them.
install -d -o shiori -g shiori /var/lib/shiori/home/models /var/lib/shiori/home/dict /var/lib/shiori/docs
cp -a "$models/models/multilingual-e5-small" /var/lib/shiori/home/models/
cp -a "$models/dict/ipadic.vibrato" /var/lib/shiori/home/dict/
key=deb-test-key-$RANDOM$RANDOM
echo "SHIORI_API_KEY=$key" >>/etc/shiori/shiori.env
printf '# Parking\n\nThe visitor car park is behind building C and opens at 7:30.\n' >/var/lib/shiori/docs/parking.md
chown -R shiori:shiori /var/lib/shiori/home /var/lib/shiori/docs

# The unit's environment, user and command line, as systemd would run them.
unit_env=$(sed -n 's/^Environment=//p' "$unit")
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
user=$(sed -n 's/^User=//p' "$unit")
as_unit() { runuser -u "$user" -- env -i PATH=/usr/bin:/bin $unit_env $(grep -v '^#' /etc/shiori/shiori.env) "$@"; }
as_unit /usr/bin/shiori doctor >"$work/doctor" || { cat "$work/doctor"; fail "doctor failed as the service's user"; }
as_unit /usr/bin/shiori --json index /var/lib/shiori/docs >/dev/null 2>&1

addr=127.0.0.1:8000
if [ -d /run/systemd/system ]; then
    systemctl start shiori
    echo "== started with systemctl"
else
    if (exec 3<>/dev/tcp/127.0.0.1/8000) 2>/dev/null; then
        addr=127.0.0.1:$((20000 + RANDOM % 20000))
        exec_start=${exec_start/127.0.0.1:8000/$addr}
        echo "== port 8000 is taken here: the same line on $addr"
    fi
    echo "== no systemd as PID 1: running the unit's ExecStart as $user: $exec_start"
    # exec: the background job is runuser itself, so its id is the one to stop; its output goes
    # to a file, so no pipe of the caller's stays open behind it.
    (exec runuser -u "$user" -- env -i PATH=/usr/bin:/bin $unit_env \
        $(grep -v '^#' /etc/shiori/shiori.env) $exec_start >"$work/serve.log" 2>&1) &
    server=$!
fi
for _ in $(seq 1 100); do
    curl -fsS "http://$addr/healthz" >/dev/null 2>&1 && break
    sleep 0.2
done
curl -fsS "http://$addr/healthz" >/dev/null || { cat "$work/serve.log" 2>/dev/null; fail "the service did not come up"; }
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    -d '{"question": "When does the visitor car park open?"}' "http://$addr/api/query")
[ "$code" = 401 ] || fail "a query without the key from the environment file got $code"
answer=$(curl -fsS -X POST -H 'Content-Type: application/json' -H "Authorization: Bearer $key" \
    -d '{"question": "When does the visitor car park open?"}' "http://$addr/api/query")
grep -q '7:30' <<<"$answer" || fail "the answer does not say 7:30: $answer"
echo "== the service answered: $(sed 's/.*"answer":"\([^"]*\)".*/\1/' <<<"$answer")"

if [ -n "$server" ]; then stop_server; else systemctl stop shiori; fi
dpkg --purge shiori >/dev/null
while read -r path; do
    [ -d "$path" ] && continue
    [ -e "$path" ] || [ -L "$path" ] && fail "$path is still there after purge"
done <"$work/files"
[ -e /etc/shiori ] && fail "/etc/shiori is still there after purge"
[ -d /var/lib/shiori/data ] || fail "purge removed the data in /var/lib/shiori, which it keeps"
snapshot >"$work/after"
if ! diff "$work/before" "$work/after" >"$work/diff"; then
    cat "$work/diff" >&2
    fail "files outside /var/lib/shiori changed after install and purge"
fi
echo "== purged: nothing left outside /var/lib/shiori"
