#!/usr/bin/env bash
# `make run`: starts the three services on their default addresses and
# embedded stores under data/, with one bootstrap credential per service
# (kept in data/<service>.token so that it survives restarts), waits for them
# to be healthy, prints how to try them, and stops them all on Ctrl-C (exit 0).
#
# `make run-gateway` (RUN_GATEWAY=1) also starts a Redis for Tyk Gateways
# (redis-server on RUN_REDIS, default 127.0.0.1:6380, its data under
# data/redis/), gives management the gateways' node secret and API secret
# (generated once into data/node-secret and data/gateway-secret, 0600), its
# --gateway-redis and --gateway-api-url, writes a complete tyk.conf for a Tyk
# Gateway v5 listening on RUN_GATEWAY_PORT (default 8181; studio has 8080)
# into data/gateway/, and prints the one command that starts the gateway.
#
# One instance at a time: it holds a lock on data/.run.lock while it runs and
# refuses to start, touching nothing under data/, when another one holds it or
# when one of its ports is already taken by some other program.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p data
# The defaults of the three binaries; RUN_<SVC>_HTTP, RUN_<SVC>_GRPC and
# RUN_PORTAL_SITE move them (deploy/run_test.go runs this script on free ports).
declare -A http=([studio]=${RUN_STUDIO_HTTP:-127.0.0.1:8080} [management]=${RUN_MANAGEMENT_HTTP:-127.0.0.1:3000} [portal]=${RUN_PORTAL_HTTP:-127.0.0.1:3001})
declare -A grpc=([studio]=${RUN_STUDIO_GRPC:-127.0.0.1:9080} [management]=${RUN_MANAGEMENT_GRPC:-127.0.0.1:9000} [portal]=${RUN_PORTAL_GRPC:-127.0.0.1:9001})
site=${RUN_PORTAL_SITE:-127.0.0.1:3002} # the portal's public site, a listener of its own
gateway=${RUN_GATEWAY:-}
redis_addr=${RUN_REDIS:-127.0.0.1:6380}
gateway_port=${RUN_GATEWAY_PORT:-8181}

exec 9>>data/.run.lock
if ! flock -n 9; then
  echo "make run: another Gatehouse (make run) is already running from this folder: it holds data/.run.lock." >&2
  echo "make run: stop it first (Ctrl-C in its terminal); nothing was started and its files were left alone." >&2
  exit 1
fi
in_use() { (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null; }
for s in studio management portal; do
  addrs=("${http[$s]}" "${grpc[$s]}")
  [ "$s" = portal ] && addrs+=("$site")
  [ -n "$gateway" ] && [ "$s" = management ] && addrs+=("$redis_addr" "127.0.0.1:$gateway_port")
  for a in "${addrs[@]}"; do
    if in_use "$a"; then
      echo "make run: $a ($s) is already in use by another program: stop it, or run bin/$s with other --http-addr/--grpc-addr/--site-addr." >&2
      exit 1
    fi
  done
done

pids=()
declare -A pid_of=()
stop() { trap - INT TERM EXIT; kill -TERM "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; echo "stopped"; }
# Ctrl-C is how one stops it: a clean stop, exit status 0.
trap 'stop; exit 0' INT TERM
trap stop EXIT
# failed prints a service's own last log lines, where its error is.
failed() { echo "make run: $1 $2; its last log lines (data/$1.log):" >&2; tail -n 5 "data/$1.log" | sed 's/^/  /' >&2; }
echo "starting studio, management and portal (stores and logs under data/)..."
# secret makes a secret file once and keeps it (0600).
secret() { [ -s "$1" ] || (umask 077; head -c 32 /dev/urandom | base64 | tr -d '=+/\n' > "$1"); }
gateway_args=()
if [ -n "$gateway" ]; then
  command -v redis-server >/dev/null || { echo "make run-gateway: redis-server is not installed (Debian: apt-get install -y redis-server)" >&2; exit 1; }
  mkdir -p data/redis data/gateway/templates data/gateway/apps data/gateway/policies data/gateway/middleware
  # Redis: the gateways' storage and management's reload notifications.
  redis-server --bind "${redis_addr%:*}" --port "${redis_addr##*:}" --dir "$PWD/data/redis" --save 60 1 --appendonly no \
    --logfile "$PWD/data/redis.log" &
  pids+=($!)
  pid_of[redis]=$!
  secret data/node-secret
  secret data/gateway-secret
  gateway_args=(--node-secret-file data/node-secret --gateway-redis "redis://$redis_addr"
    --gateway-api-url "http://127.0.0.1:$gateway_port" --gateway-api-secret-file data/gateway-secret)
  # The gateway's error pages (template_path): without them it cannot start.
  printf '{\n    "error": "{{.Message}}"\n}\n' > data/gateway/templates/error.json
  printf '<?xml version = "1.0" encoding = "UTF-8"?>\n<error>{{.Message}}</error>\n' > data/gateway/templates/error.xml
  (umask 077; cat > data/gateway/tyk.conf <<EOC
{
  "listen_address": "127.0.0.1",
  "listen_port": $gateway_port,
  "secret": "$(cat data/gateway-secret)",
  "node_secret": "$(cat data/node-secret)",
  "template_path": "$PWD/data/gateway/templates",
  "app_path": "$PWD/data/gateway/apps",
  "middleware_path": "$PWD/data/gateway/middleware",
  "use_db_app_configs": true,
  "db_app_conf_options": {"connection_string": "http://${http[management]}", "node_is_segmented": false},
  "policies": {"policy_source": "service", "policy_connection_string": "http://${http[management]}"},
  "disable_dashboard_zeroconf": true,
  "storage": {"type": "redis", "host": "${redis_addr%:*}", "port": ${redis_addr##*:}},
  "slave_options": {"use_rpc": false},
  "hash_keys": true,
  "enable_analytics": false,
  "enable_jsvm": false,
  "uptime_tests": {"disable": true},
  "health_check": {"enable_health_checks": false},
  "coprocess_options": {"enable_coprocess": false},
  "pid_file_location": "$PWD/data/gateway/tyk-gateway.pid"
}
EOC
  )
fi
# start runs service $1 with its defaults, the store and log under data/,
# and the extra arguments given.
start() {
  local s=$1 tok=data/$1.token
  shift
  [ -s "$tok" ] || (umask 077; head -c 32 /dev/urandom | base64 | tr -d '=+/\n' > "$tok")
  # The key goes by file, never on the command line (ps shows every argument).
  ./bin/$s --http-addr "${http[$s]}" --grpc-addr "${grpc[$s]}" "$@" --db "data/$s.db" --bootstrap-token-file "$tok" \
    > "data/$s.log" 2>&1 &
  pids+=($!)
  pid_of[$s]=$!
}
# healthy waits up to 10 s for service $1's /healthz.
healthy() {
  local s=$1
  for _ in $(seq 100); do
    kill -0 "${pid_of[$s]}" 2>/dev/null || break
    curl -fsS "http://${http[$s]}/healthz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  if ! kill -0 "${pid_of[$s]}" 2>/dev/null; then failed "$s" "exited at start"; exit 1; fi
  curl -fsS "http://${http[$s]}/healthz" >/dev/null 2>&1 || { failed "$s" "did not answer /healthz within 10 s"; exit 1; }
}
# The portal calls management over gRPC to issue developers' keys (CONTRACT §3),
# with a key of its own (data/portal-management.key, made once): management
# keeps a user holding it allowed keys: write and policy: read, nothing else.
secret data/portal-management.key
start studio
start management "${gateway_args[@]}" --portal-user-key-file data/portal-management.key
healthy management
start portal --site-addr "$site" --management-grpc-addr "${grpc[management]}" --management-key-file data/portal-management.key
for s in studio portal; do healthy "$s"; done
# banner prints where everything runs and how to try it. In a terminal the
# watcher prints it once it is the foreground job, so that a Ctrl-C typed as
# soon as it shows reaches the watcher alone (not make).
banner() {
  local st mg pt
  st=$(cat data/studio.token) mg=$(cat data/management.token) pt=$(cat data/portal.token)
cat <<EOT
Gatehouse is running (logs in data/*.log; Ctrl-C stops all three):
  studio      http://${http[studio]}/api/v1      grpc ${grpc[studio]}      admin key: $st
  management  http://${http[management]}/api        grpc ${grpc[management]}      admin key: $mg
  portal      http://${http[portal]}/portal-api grpc ${grpc[portal]}      admin key: $pt
  portal site http://${site}/          (public: tutorial pages; developers sign up, ask for access, get keys)
  the portal issues developers' keys through management's gRPC, as a user allowed keys: write and policy: read
  (its key in data/portal-management.key)
API descriptions: http://<addr>/openapi.json on each service.

Try it (paste into a shell; each block creates what it uses, so it works on any store):
  S=http://${http[studio]}/api/v1 STUDIO_KEY=$st M=http://${http[management]}/api MGMT_KEY=$mg P=http://${http[portal]}/portal-api PORTAL_KEY=$pt
  # studio: create LLM settings, then DELETE them (204, no body)
  ID=\$(curl -s -X POST \$S/llm-settings -H "Authorization: Bearer \$STUDIO_KEY" \\
       -d '{"data":{"type":"llm-settings","attributes":{"model_name":"gpt-4o"}}}' | sed -E 's/.*"id":"([0-9]+)".*/\1/')
  curl -s -i -X DELETE \$S/llm-settings/\$ID -H "Authorization: Bearer \$STUDIO_KEY"
  # management: a classic API, migrated to Tyk OAS; its categories (from #words in the name) and its export
  API=\$(curl -s -X POST \$M/apis -H "Authorization: \$MGMT_KEY" -d '{"api_definition":{"name":"Orders #shop",
       "proxy":{"listen_path":"/orders/","target_url":"http://127.0.0.1:9999/","strip_listen_path":true},
       "version_data":{"not_versioned":true,"versions":{"Default":{"name":"Default"}}},"use_keyless":true,"active":true}}' \\
       | sed -E 's/.*"ID":"([0-9a-f]+)".*/\1/')
  curl -s -X POST \$M/apis/migrate -H "Authorization: \$MGMT_KEY" -d "{\"mode\":\"direct\",\"apiIDs\":[\"\$API\"]}"
  curl -s \$M/apis/oas/\$API/categories -H "Authorization: \$MGMT_KEY"
  curl -s -i \$M/apis/oas/\$API/export -H "Authorization: \$MGMT_KEY"
  curl -s "\$M/apis?p=0" -H "Authorization: \$MGMT_KEY"
  # portal: a product and a tutorial page, then PUT a new title (the other fields stay)
  PROD=\$(curl -s -X POST \$P/products -H "Authorization: \$PORTAL_KEY" -d '{"Name":"orders"}' | sed -E 's/.*"ID":([0-9]+).*/\1/')
  DOC=\$(curl -s -X POST \$P/products/\$PROD/docs -H "Authorization: \$PORTAL_KEY" \\
       -d '{"Title":"Getting started","Content":"Hello"}' | sed -E 's/.*"ID":([0-9]+).*/\1/')
  curl -s -X PUT \$P/products/\$PROD/docs/\$DOC -H "Authorization: \$PORTAL_KEY" -d '{"Title":"Getting started with orders"}'
  # publish it as Markdown; then open http://${site}/ in a browser
  curl -s -X PUT \$P/products/\$PROD/docs/\$DOC -H "Authorization: \$PORTAL_KEY" \\
       -d '{"Status":"published","MarkdownEnabled":true,"MarkdownContent":"## Install\\n\\nRun **make run**, then read the [API description](/openapi.json)."}'
EOT
if [ -n "$gateway" ]; then
  cat <<EOT

Tyk Gateways: Redis on $redis_addr (data/redis.log); management has the node secret (data/node-secret), the
gateways' API secret (data/gateway-secret) and --gateway-api-url http://127.0.0.1:$gateway_port. Start a Tyk
Gateway v5 in another terminal (a build of TykTechnologies/tyk v5.11.1; README "Running Tyk Gateways"):
  ${TYK_GATEWAY:-tyk} --conf data/gateway/tyk.conf
It listens on http://127.0.0.1:$gateway_port and serves every active API of management.
EOT
fi
}
# watch ends when a service exits (its own failure) or on Ctrl-C.
watch() {
  while :; do
    for s in studio management portal; do kill -0 "${pid_of[$s]}" 2>/dev/null || return 0; done
    sleep 0.5
  done
}
set +e
if [ -t 0 ]; then
  # In a terminal, Ctrl-C sends SIGINT to the terminal's foreground process
  # group: make's, which would then end with an error whatever this script
  # does. With job control the watcher below is that group alone, so Ctrl-C
  # ends only the watcher; the services (background jobs, groups of their
  # own) are then stopped here with SIGTERM, and make sees exit status 0.
  set -m
  ( banner; watch )
  set +m
else
  banner
  watch & wait $!
fi
for s in studio management portal; do
  kill -0 "${pid_of[$s]}" 2>/dev/null || { failed "$s" "exited"; exit 1; }
done
stop
exit 0
