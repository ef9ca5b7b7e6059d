#!/usr/bin/env bash
# `make lint`: buf breaking against main (or, on main itself, against the
# previous commit). The old snapshot is compiled with today's third_party/
# imports, which git does not hold. Wire changes that break clients on
# purpose are listed in buf.yaml (breaking.ignore_only) with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."
against=main
if ! git rev-parse -q --verify main >/dev/null || [ "$(git rev-parse HEAD)" = "$(git rev-parse main)" ]; then
  against=HEAD~1
fi
if ! git rev-parse -q --verify "$against^{commit}" >/dev/null; then
  echo "buf breaking: no $against in this clone (shallow?): not checked"
  exit 0
fi
old=$(mktemp -d)
trap 'rm -rf "$old"' EXIT
git archive "$against" proto buf.yaml | tar -x -C "$old"
cp -r third_party "$old/"
# Compared as a workspace, module by module: buf needs that once buf.yaml
# sets per-file exceptions.
buf breaking --against "$old"
echo "buf breaking: no breaking change against $against"
