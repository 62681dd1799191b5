GO ?= go
BIN ?= bin
PKGS = ./...

.PHONY: build test vet fmt-check lint bench demo clean

build:
	$(GO) build -o $(BIN)/odin ./cmd/odin
	$(GO) build -o $(BIN)/scripted-model ./cmd/scripted-model

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

test: fmt-check vet
	$(GO) test -race -count=1 $(PKGS)

lint: fmt-check vet

# BenchmarkLaunch (internal/sandbox) reports the sandbox's cost per command:
# ms-added over a plain `bash -c true` and x-plain, the ratio.
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

bench-sandbox:
	$(GO) test -run '^$$' -bench Launch ./internal/sandbox

demo: build
	./scripts/demo.sh

clean:
	rm -rf $(BIN)
