# hunk — build, test, benchmark, fuzz, lint, install.
GO        ?= go
BIN       ?= bin/hunk
PREFIX    ?= /usr/local
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# Static and stripped: no dynamic loader at start-up (hunk is spawned once per tool call).
export CGO_ENABLED = 0
LDFLAGS   := -s -w -X github.com/hunk-dev/hunk/cmd.Version=$(VERSION)
FUZZTIME  ?= 30s
BENCH     ?= .
BENCHTIME ?= 1x

.PHONY: build test test-race bench fuzz lint install clean

build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) .

SKIPLOG   ?= $(CURDIR)/bin/skipped.txt

# The test command of the README and of CI: vet, then every test, the race
# detector on (the engines' concurrency tests need it; it needs cgo). Tests
# that need a tool this machine lacks (a driver, the Docker engine, node)
# skip; the last lines name each skip and its reason.
test:
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	@mkdir -p $(dir $(SKIPLOG)) && rm -f $(SKIPLOG)
	@HUNK_SKIP_LOG=$(SKIPLOG) CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 60m ./...; rc=$$?; \
	if [ -s $(SKIPLOG) ]; then \
	  echo "make test: $$(sort -u $(SKIPLOG) | wc -l) skipped for a tool missing here (see README, 'Run the tests'):"; \
	  sort -u $(SKIPLOG) | sed 's/^/  /'; \
	else echo "make test: nothing skipped"; fi; exit $$rc

bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -timeout 60m ./...

# Every fuzz target for FUZZTIME each (go test -fuzz takes one target at a time).
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

# gofmt, vet (for linux and darwin), staticcheck (fetched through the module
# proxy the first time), and the size budget: no file over 600 lines, no
# function over 100 (tools/budget says why any is allowed).
lint:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo 'gofmt: the files above need formatting'; exit 1; }
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) run ./tools/budget

install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/hunk
	ln -sf hunk $(DESTDIR)$(PREFIX)/bin/apply_patch

clean:
	rm -rf bin
