#!/usr/bin/env bash
# `make run`: starts the three services on their default addresses and
# embedded stores under data/, with one bootstrap credential per service
# (kept in data/<service>.token so that it survives restarts), waits for them
# to be healthy, prints how to try them, and stops them all on Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p data
declare -A http=([studio]=127.0.0.1:8080 [management]=127.0.0.1:3000 [portal]=127.0.0.1:3001)
declare -A grpc=([studio]=127.0.0.1:9080 [management]=127.0.0.1:9000 [portal]=127.0.0.1:9001)
pids=()
stop() { trap - INT TERM EXIT; kill -TERM "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; echo "stopped"; }
trap stop INT TERM EXIT
for s in studio management portal; do
  tok=data/$s.token
  [ -s "$tok" ] || (umask 077; head -c 32 /dev/urandom | base64 | tr -d '=+/\n' > "$tok")
  ./bin/$s --http-addr "${http[$s]}" --grpc-addr "${grpc[$s]}" --db "data/$s.db" --bootstrap-token "$(cat "$tok")" \
    > "data/$s.log" 2>&1 &
  pids+=($!)
done
for s in studio management portal; do
  for _ in $(seq 50); do curl -fsS "http://${http[$s]}/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
  curl -fsS "http://${http[$s]}/healthz" >/dev/null || { echo "$s did not start; see data/$s.log"; tail -5 "data/$s.log"; exit 1; }
done
st=$(cat data/studio.token) mg=$(cat data/management.token) pt=$(cat data/portal.token)
cat <<EOT
Gatehouse is running (logs in data/*.log; Ctrl-C stops all three):
  studio      http://${http[studio]}/api/v1      grpc ${grpc[studio]}      admin key: $st
  management  http://${http[management]}/api        grpc ${grpc[management]}      admin key: $mg
  portal      http://${http[portal]}/portal-api grpc ${grpc[portal]}      admin key: $pt
API descriptions: http://<addr>/openapi.json on each service.

Try it:
  curl -s -X POST http://${http[studio]}/api/v1/llm-settings -H "Authorization: Bearer $st" \\
       -d '{"data":{"type":"llm-settings","attributes":{"model_name":"gpt-4o"}}}'
  curl -s -i -X DELETE http://${http[studio]}/api/v1/llm-settings/1 -H "Authorization: Bearer $st"
  curl -s "http://${http[management]}/api/apis?p=0" -H "Authorization: $mg"
  curl -s http://${http[portal]}/portal-api/products -H "Authorization: $pt"
EOT
wait -n "${pids[@]}"
