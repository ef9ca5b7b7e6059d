#!/usr/bin/env bash
# bench-compare: run benchmarks on a base revision and on the working tree,
# alternating (so that both see the same machine), and compare with benchstat.
#
#   tools/bench-compare.sh [BASE]     BASE: a git revision, default main
#
# BENCH (a -bench regex), PKGS (package patterns, relative to the repository
# root), COUNT (rounds, default 6) and BENCHTIME (default 1s) choose what
# runs. Results land in bench-compare/{old,new}.txt (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
PATH=$PWD/.bin:$PATH
command -v benchstat >/dev/null || { echo "benchstat is not in .bin: run make bench-compare, which installs it" >&2; exit 1; }
base=${1:-main}
bench=${BENCH:-.}
pkgs=${PKGS:-./services/studio/internal/app ./services/management/internal/app ./services/management/internal/convert ./services/management/internal/oasdoc ./pkg/kv/boltkv}
count=${COUNT:-6}
benchtime=${BENCHTIME:-1s}

out=bench-compare
rm -rf "$out" && mkdir -p "$out"
tree=$(mktemp -d)
trap 'git worktree remove --force "$tree" >/dev/null 2>&1 || true; rm -rf "$tree"' EXIT
git worktree add --detach "$tree" "$base" >/dev/null

run() { # dir file
	(cd "$1" && go test -p 1 -run '^$' -bench "$bench" -benchtime "$benchtime" -benchmem $pkgs) | grep -E '^(Benchmark|goos|goarch|pkg|cpu)' >>"$2"
}
for i in $(seq "$count"); do
	echo "round $i of $count: $base, then the working tree"
	run "$tree" "$out/old.txt"
	run . "$out/new.txt"
done
benchstat "$out/old.txt" "$out/new.txt"
