# Gatehouse: `make help` lists the targets.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

GOBIN := $(CURDIR)/.bin
export PATH := $(GOBIN):$(PATH)
SERVICES := studio management portal
MODCACHE = $(shell go env GOMODCACHE)
GOOGLEAPIS_FROM := github.com/grpc-ecosystem/grpc-gateway@v1.16.0
OPENAPIV2_FROM := github.com/grpc-ecosystem/grpc-gateway/v2@v2.32.0
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# grpcurl runs the README's gRPC example in TestREADMEExamples.
GRPCURL := github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.4
# gotestsum runs make test: go test -json underneath, one line per package as
# it ends, the failures in full, and the closing DONE line with the counts.
GOTESTSUM := gotest.tools/gotestsum@v1.13.0
BENCHSTAT := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
# Services whose part of ../shared/contract passes; `make contract` runs them.
CONTRACT_SERVICES ?= studio management portal
CONTRACT := ../shared/contract/run
# Services whose part of ../shared/contract passes with --store etcd; `make
# contract-etcd` runs them on a throwaway etcd.
CONTRACT_ETCD_SERVICES ?= studio management portal

.PHONY: help build release run run-gateway grpcurl test redis-server test-short test-long test-gateway test-hostile lint generate checkgenerate bench bench-large bench-compare contract contract-etcd etcd clean fuzz

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

# The build the binaries report (--version, gatehouse_build_info, the first
# log line): the release in the file VERSION and the commit it was built
# from, "-dirty" when the working tree had changes; deploy/Dockerfile takes
# the same two values as build arguments.
VERSION ?= $(shell cat VERSION)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
BUILDINFO := github.com/gatehouse/gatehouse/pkg/buildinfo
LDFLAGS := -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).revision=$(REVISION)

build: ## build bin/studio, bin/management and bin/portal, stamped with VERSION and REVISION (from git)
	@mkdir -p bin
	@echo "go build bin/{$$(echo $(SERVICES) | tr ' ' ,)} $(VERSION) (a first build compiles every dependency: about 130 CPU-seconds, 1-2 minutes on 2 idle cores, longer on busy ones)"
	@go build -ldflags '$(LDFLAGS)' -o bin/ $(foreach s,$(SERVICES),./services/$(s)/cmd/$(s))

RELEASE_PLATFORMS := linux/amd64 linux/arm64

release: ## static binaries of the three services for linux/amd64 and linux/arm64 in dist/, with SHA256SUMS
	@rm -rf dist && mkdir -p dist
	@for p in $(RELEASE_PLATFORMS); do os=$${p%/*}; arch=$${p#*/}; for s in $(SERVICES); do \
		echo "go build dist/$${s}_$(VERSION)_$${os}_$${arch}"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch go build -trimpath -ldflags '-s -w $(LDFLAGS)' -o dist/$${s}_$(VERSION)_$${os}_$${arch} ./services/$$s/cmd/$$s; \
	done; done
	@cp LICENSE dist/
	@cd dist && sha256sum -- * > SHA256SUMS && cat SHA256SUMS

run: build ## run all three services on their defaults; Ctrl-C stops them
	@tools/run.sh

# What the tests import, compiled before they run so that make test says what
# it does meanwhile (about 800 packages with a cold cache: minutes of silence
# otherwise); go test then finds them in the build cache. A compile error is
# shown here and again by go test for its package.
TEST_DEPS = go list -deps -test -f '{{if and (not .ForTest) (not .Standard) (ne .Name "main")}}{{.ImportPath}}{{end}}' work | grep -v '\.test$$'

test: $(GOBIN)/grpcurl $(GOBIN)/gotestsum redis-server ## go test -race over the whole workspace, a line per package as each ends (gotestsum)
	@echo "make test: compiling the packages the tests import, with -race (nothing to do when cached; cold: about 800, minutes)"
	@{ go build -race -v $$($(TEST_DEPS)) 2>&1 || true; } | awk '/ / {print; next} {n++; if (n % 50 == 0) {printf "  %d packages compiled, now %s\n", n, $$0; fflush()}} END {printf "  %d packages compiled\n", n}'
	@echo "make test: running the tests, a line per package as it ends (each waits first for its test binary to compile and link)"
	gotestsum --format pkgname-and-test-fails --format-hide-empty-pkg -- -race -count=1 work

run-gateway: build redis-server ## make run, plus a Redis for Tyk Gateways, management's gateway secrets (data/) and data/gateway/tyk.conf; prints the gateway command
	@RUN_GATEWAY=1 tools/run.sh

grpcurl: $(GOBIN)/grpcurl ## install the pinned grpcurl into .bin/ (the README's gRPC example uses it)

redis-server: ## Debian's redis-server, which the gateway tests run (apt-get install when missing; needs root)
	@command -v redis-server >/dev/null || { if [ "$$(id -u)" -eq 0 ]; then apt-get update && apt-get install -y redis-server; \
		else echo 'redis-server is missing and this is not root: run apt-get install -y redis-server' >&2; exit 1; fi; }

test-short: ## the inner loop: go test -short (unit and API tests; slow tests skip themselves), without the deploy module
	go test -short -count=1 $$(go list work | grep -v '/deploy')

test-long: $(GOBIN)/etcd ## the long runs make test skips (SIGKILL during a 3,000-API migration on etcd, ...)
	GATEHOUSE_LONG=1 go test -race -count=1 -run 'OnEtcd|Replicas' ./services/management/... ./deploy/replicas/...

TYK_GATEWAY ?=
test-gateway: ## replay classic APIs and their migrations through a real Tyk Gateway, issue keys to one through management, and run the README's make run-gateway steps with it (TYK_GATEWAY=<binary>; needs redis-server; not part of make test)
	@if [ -z "$(TYK_GATEWAY)" ] || [ ! -x "$(TYK_GATEWAY)" ]; then \
		echo 'test-gateway: no gateway binary (TYK_GATEWAY=$(TYK_GATEWAY)): nothing replayed. Build one from TykTechnologies/tyk v5.11.1 (go build at its root; ../shared/notes/toolchain.md) and run make test-gateway TYK_GATEWAY=<binary>'; \
		exit 0; \
	fi; \
	command -v redis-server >/dev/null || { echo 'test-gateway: redis-server is not installed (Debian: apt-get install -y redis-server)'; exit 1; }; \
	TYK_GATEWAY=$(abspath $(TYK_GATEWAY)) go test -count=1 -v -run 'TestReplayThroughGateway|TestKeysRealGateway' ./services/management/internal/gatewayreplay/ ./services/management/internal/app/
	TYK_GATEWAY=$(abspath $(TYK_GATEWAY)) go test -count=1 -v -run TestRunGateway ./deploy/
	TYK_GATEWAY=$(abspath $(TYK_GATEWAY)) go test -count=1 -run TestConsumerFlowRealGateway ./services/portal/internal/app/

test-hostile: $(GOBIN)/etcd ## the long hostile-client runs against the binaries (held streams, 1,000 streams, 32 × 15 MiB, etcd with auth); a few minutes
	GATEHOUSE_HOSTILE_LONG=1 GATEHOUSE_ETCD=$(GOBIN)/etcd go test -count=1 -p 1 -run 'TestHostile' ./services/studio/internal/app/ ./services/management/internal/app/ ./services/portal/internal/app/

MODULES := $(shell sed -n 's|^\t\./||p' go.work)

lint: $(GOBIN)/staticcheck $(GOBIN)/buf third_party ## gofmt, go vet, staticcheck, tidy modules that build alone, buf lint, format and breaking
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'not gofmt-formatted'; exit 1; }
	go vet work
	staticcheck work
	@for m in $(MODULES); do \
		(cd $$m && go mod tidy -diff >/dev/null) || { echo "$$m: go.mod or go.sum is not tidy: run go mod tidy in $$m"; exit 1; }; \
		(cd $$m && GOWORK=off go build ./...) || { echo "$$m: does not build alone (GOWORK=off go build ./...)"; exit 1; }; \
	done
	buf lint
	buf format proto --diff --exit-code
	@tools/buf-breaking.sh

FUZZTIME ?= 2m
fuzz: ## run every fuzz target for FUZZTIME each (default 2m; not part of make test)
	@git ls-files '*_test.go' | xargs grep -l '^func Fuzz' | while read -r f; do \
		for name in $$(grep -o '^func Fuzz[A-Za-z0-9_]*' "$$f" | cut -d' ' -f2); do \
			echo "fuzz $$(dirname $$f) $$name for $(FUZZTIME)"; \
			(cd "$$(dirname $$f)" && go test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) .) || exit 1; \
		done; \
	done

bench: ## run the benchmarks
	go test -p 1 -run '^$$' -bench . -benchmem work

bench-large: ## whole-list answers over a 1 GB store (issue 32): the heap each adds above idle, a few minutes
	GATEHOUSE_LARGE_LISTS_MIB=1024 go test -p 1 -run '^$$' -bench 'ListsLarge' -benchtime 1x -timeout 30m ./services/management/internal/app/ ./services/portal/internal/app/

bench-compare: $(GOBIN)/benchstat ## benchmarks of BASE (default main) and of the working tree, alternating, compared by benchstat (BENCH, PKGS, COUNT, BENCHTIME)
	tools/bench-compare.sh $(BASE)

contract: build ## run ../shared/contract for the services that implement their part
	$(CONTRACT) -bin ./bin -only $(shell echo $(CONTRACT_SERVICES) | tr ' ' ',')

contract-etcd: build $(GOBIN)/etcd ## run ../shared/contract with --store etcd on a throwaway single-member etcd
	@if [[ -z "$(strip $(CONTRACT_ETCD_SERVICES))" ]]; then echo "contract-etcd: no service runs on etcd yet (CONTRACT_ETCD_SERVICES is empty): nothing checked"; exit 0; fi; \
	tools/with-etcd.sh $(CONTRACT) -bin ./bin -only $(shell echo $(CONTRACT_ETCD_SERVICES) | tr ' ' ',') -etcd

etcd: $(GOBIN)/etcd ## build .bin/etcd (the etcd server, from the module proxy) for multi-process tests

$(GOBIN)/etcd: tools/etcd/go.mod tools/etcd/go.sum tools/etcd/main.go
	GOWORK=off go -C tools/etcd build -o $(GOBIN)/etcd .

generate: $(GOBIN)/buf third_party ## regenerate gen/ from proto/ (offline), then apply proto/openapi-overlay.json
	flock .bin/generate.lock buf generate
	GOWORK=off go -C tools/openapi run ./overlay ../../proto/openapi-overlay.json ../../gen/openapi/files

checkgenerate: generate ## fail when the committed generated code is stale
	@test -z "$$(git status --porcelain -- gen)" || { git status --porcelain -- gen; echo 'generated code is stale: run make generate and commit'; exit 1; }

OPENAPI_SERVICES := studio management portal

openapi-check: build $(GOBIN)/swagger ## validate the OpenAPI descriptions (go-swagger), generate Go clients from them and call every operation against bin/
	@for s in $(OPENAPI_SERVICES); do swagger validate --stop-on-error gen/openapi/files/gatehouse/$$s/v1/$$s.swagger.json; done
	@rm -rf tools/openapi/client
	@for s in $(OPENAPI_SERVICES); do mkdir -p tools/openapi/client/$$s && swagger generate client -q -f gen/openapi/files/gatehouse/$$s/v1/$$s.swagger.json -t tools/openapi/client/$$s -A $$s; done
	GOWORK=off GATEHOUSE_BIN=$(CURDIR)/bin go -C tools/openapi test -count=1 ./...

third_party: ## copy the google.api and openapiv2 protos from the module cache (ignored folder)
	@go mod download $(GOOGLEAPIS_FROM) $(OPENAPIV2_FROM)
	@rm -rf third_party && mkdir -p third_party/googleapis/google/api third_party/openapiv2/protoc-gen-openapiv2/options
	@cp $(MODCACHE)/$(GOOGLEAPIS_FROM)/third_party/googleapis/google/api/{annotations,http,httpbody}.proto third_party/googleapis/google/api/
	@cp $(MODCACHE)/$(OPENAPIV2_FROM)/protoc-gen-openapiv2/options/{annotations,openapiv2}.proto third_party/openapiv2/protoc-gen-openapiv2/options/
	@chmod -R u+w third_party

$(GOBIN)/buf: tools/go.mod tools/go.sum
	GOWORK=off go -C tools build -o $(GOBIN)/buf github.com/bufbuild/buf/cmd/buf

$(GOBIN)/swagger: tools/openapi/go.mod tools/openapi/go.sum
	GOWORK=off go -C tools/openapi build -o $(GOBIN)/swagger github.com/go-swagger/go-swagger/cmd/swagger

$(GOBIN)/staticcheck:
	GOBIN=$(GOBIN) go install $(STATICCHECK)

$(GOBIN)/grpcurl:
	GOBIN=$(GOBIN) go install $(GRPCURL)

$(GOBIN)/gotestsum:
	GOBIN=$(GOBIN) go install $(GOTESTSUM)

$(GOBIN)/benchstat:
	GOBIN=$(GOBIN) go install $(BENCHSTAT)

clean: ## remove build outputs
	rm -rf bin third_party

.PHONY: images
images: ## build images gatehouse/<svc>:IMAGE_TAG (default dev) from deploy/Dockerfile; fails without a Docker engine
	@if ! out=$$(docker info 2>&1 >/dev/null); then \
		echo "images: no Docker engine reachable, so no image was built: $$(echo "$$out" | tail -1)" >&2; \
		echo "images: start Docker (or set DOCKER_HOST); without one, go test ./deploy/... checks the binaries the images would hold." >&2; \
		exit 1; \
	fi; \
	for s in $(SERVICES); do \
		echo "docker build -f deploy/Dockerfile --target $$s --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) -t gatehouse/$$s:$(or $(IMAGE_TAG),dev) ."; \
		DOCKER_BUILDKIT=1 docker build -f deploy/Dockerfile --target $$s --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) -t gatehouse/$$s:$(or $(IMAGE_TAG),dev) .; \
	done
