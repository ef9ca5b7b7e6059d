#!/usr/bin/env bash
# with-etcd.sh CMD [ARGS...]: starts a throwaway single-member etcd (.bin/etcd)
# on free loopback ports with a temporary data folder, runs CMD ARGS ENDPOINT
# (the client endpoint appended as the last argument), then stops etcd and
# removes the folder, whatever CMD's outcome. Exits with CMD's status.
set -euo pipefail
cd "$(dirname "$0")/.."
etcd_bin=.bin/etcd
dir=$(mktemp -d)
pid=
cleanup() {
	if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# free_port prints a loopback port nothing listens on.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 12000)) # below the ephemeral ports (32768 and up)
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}

# health prints etcd's /health answer on port $1 (plain bash, no curl).
health() {
	{
		exec 3<>"/dev/tcp/127.0.0.1/$1" &&
			printf 'GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3 &&
			timeout 2 cat <&3
	} 2>/dev/null || true
}

for attempt in 1 2 3; do
	client=$(free_port) peer=$(free_port)
	endpoint=http://127.0.0.1:$client
	"$etcd_bin" --name throwaway --data-dir "$dir/data" \
		--listen-client-urls "$endpoint" --advertise-client-urls "$endpoint" \
		--listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
		--initial-cluster "throwaway=http://127.0.0.1:$peer" --log-level error >"$dir/etcd.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		if health "$client" | grep -q '"health":"true"'; then
			echo "with-etcd: etcd $("$etcd_bin" --version | head -1 | sed 's/.*: //') serving at $endpoint (data in a temporary folder)"
			set +e
			"$@" "$endpoint"
			rc=$?
			set -e
			exit "$rc"
		fi
		if ! kill -0 "$pid" 2>/dev/null; then break; fi
		sleep 0.1
	done
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	pid=
	rm -rf "$dir/data"
	echo "with-etcd: attempt $attempt: etcd did not become healthy; its log:" >&2
	tail -5 "$dir/etcd.log" >&2
done
exit 1
