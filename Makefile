# rsbloom: build, run and test plumbing.
#
#   make run     build the module and start redis-server with it (foreground)
#   make test    install deps, build, run the whole test suite
#   make check   cargo fmt --check, clippy with -D warnings, the unit tests (CI runs it first)
#   make test-cluster   Redis Cluster tests (tests/cluster/: 6 nodes, failover, resharding)
#   make test-big       the >2^32-bit filter (tests/big.rs); skipped, saying why, without the memory
#   make bench   rsbloom against RedisBloom 2.8.2 (bench/bench.py); writes bench/RESULTS.md;
#                then window filters against plain and rotating ones (bench/window.py, WINDOW.md),
#                then cuckoo filters against RedisBloom's (bench/cuckoo.py, CUCKOO.md), then a
#                valkey-bloom key against a native one (bench/valkey.py, VALKEY.md), the bulk
#                commands against one argument per item (bench/bulk.py, BULK.md)
#   make bench-core   criterion micro-benchmarks of the core (core/benches/core.rs)
#   make fuzz    cargo-fuzz targets (fuzz/), FUZZ_SECONDS each (default 60); make test runs the
#                valkey target for 60 s (test-fuzz)
#   make deb       a Debian package of the built module (scripts/deb): target/debian/rsbloom_*.deb
#   make install   the built module to $(DESTDIR)$(PREFIX)/lib/redis/modules/rsbloom.so
#                  (PREFIX default /usr/local); make uninstall removes it
#   make test-matrix    the command, persistence, replication, window, ACL, migration, valkey-bloom, memory, cluster and Python
#                       client tests on Redis 7.4, Debian 13's Redis 8.0 and Valkey 8.1, and Valkey 9.1
#                       (scripts/servers fetches them)
#
# Variables: PORT (default 6379), MODULE_ARGS (default empty), CARGO (default cargo),
# PREFIX (default /usr/local) and DESTDIR (default empty) for make install.

SHELL := /bin/bash

PORT        ?= 6379
MODULE_ARGS ?=
CARGO       ?= cargo
MODULE      := $(CURDIR)/target/release/librsbloom.so
APT_PKGS    := libclang-dev clang redis-server redis-tools

# sudo only when we are not root (and only if sudo exists).
SUDO := $(shell [ "$$(id -u)" = 0 ] || { command -v sudo >/dev/null 2>&1 && echo sudo; })

PREFIX      ?= /usr/local
DESTDIR     ?=
MODULE_DIR  := $(DESTDIR)$(PREFIX)/lib/redis/modules
BIN_DIR     := $(DESTDIR)$(PREFIX)/bin
CLI         := $(CURDIR)/target/release/rsbloom

.PHONY: all deps build run check test pytest test-py fmt clippy clean install uninstall deb

all: build

# Idempotent: does nothing (quickly) when redis-server, redis-cli and libclang are present.
deps:
	@missing=""; \
	command -v redis-server >/dev/null 2>&1 || missing="$$missing redis-server"; \
	command -v redis-cli >/dev/null 2>&1 || missing="$$missing redis-cli"; \
	if ! ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 && \
	   ! dpkg -s libclang-dev >/dev/null 2>&1; then missing="$$missing libclang"; fi; \
	if [ -n "$$missing" ]; then \
	  echo "deps: missing:$$missing; installing $(APT_PKGS)"; \
	  $(SUDO) apt-get update && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y $(APT_PKGS); \
	else \
	  echo "deps: redis-server, redis-cli and libclang present"; \
	fi
	@command -v $(CARGO) >/dev/null 2>&1 || { \
	  echo "deps: '$(CARGO)' not found; install Rust first (https://rustup.rs), e.g." >&2; \
	  echo "  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y && . \"\$$HOME/.cargo/env\"" >&2; \
	  exit 1; }

build: deps
	$(CARGO) build --release -p rsbloom -p rsbloom-cli

# The module where servers' configs usually point (loadmodule <dir>/rsbloom.so), mode 0755:
# Redis refuses to load a module file without execute permission.
install: build
	install -d $(MODULE_DIR)
	install -m 0755 $(MODULE) $(MODULE_DIR)/rsbloom.so
	install -d $(BIN_DIR)
	install -m 0755 $(CLI) $(BIN_DIR)/rsbloom
	@echo "rsbloom: installed $(MODULE_DIR)/rsbloom.so; load it with"
	@echo "  loadmodule $(PREFIX)/lib/redis/modules/rsbloom.so   (redis.conf / valkey.conf)"
	@echo "  MODULE LOAD $(PREFIX)/lib/redis/modules/rsbloom.so  (redis-cli, a running server)"
	@echo "rsbloom: installed $(BIN_DIR)/rsbloom, the loader (rsbloom load --help)"

uninstall:
	rm -f $(MODULE_DIR)/rsbloom.so $(BIN_DIR)/rsbloom

deb: build
	scripts/deb

run: build
	@mkdir -p data
	@echo "rsbloom: starting redis-server on 127.0.0.1:$(PORT), data in ./data, module $(MODULE) $(MODULE_ARGS)"
	@echo "rsbloom: connect with:   redis-cli -p $(PORT)"
	@echo "rsbloom: then try:       BF.ADD urls https://example.com"
	@echo "rsbloom: stop with ctrl-c"
	exec redis-server --bind 127.0.0.1 --port $(PORT) --dir ./data \
	  --loadmodule $(MODULE) $(MODULE_ARGS) \
	  --save 60 1000 --appendonly no \
	  --enable-debug-command local

# The habits CI enforces, before any test: formatting, clippy (the [lints] of Cargo.toml with
# -D warnings), the docs (every public item of the core documented, no broken link) and the
# unit tests of both crates (one package at a time, as `make test` runs them: the same
# selection builds the same units, so CI compiles them once).
check: deps
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --document-private-items
	$(CARGO) test --release -p rsbloom-tests --test architecture
	$(CARGO) test --release -p rsbloom-core --lib
	$(CARGO) test --release -p rsbloom --lib

# The integration tests (tests/, the package rsbloom-tests: its client crates never change the
# module's build) load the librsbloom.so of their own profile (the harness builds it as `make
# build` does, a no-op after it) and spawn their own server ($$RSBLOOM_TEST_SERVER, default
# Debian's redis-server). tests/cluster/ and tests/big.rs run once each, in their own targets
# below (one test at a time, figures printed). The main run names every other test target (one
# --test per tests/*.rs and tests/*/main.rs; tests/architecture.rs checks that tests/Cargo.toml
# declares each): `--skip` filters by test name in every binary, not by file.
SCALE_TESTS := cluster big
ALL_TESTS   := $(basename $(notdir $(wildcard tests/*.rs))) \
               $(notdir $(patsubst %/main.rs,%,$(wildcard tests/*/main.rs)))
MAIN_TESTS  := $(filter-out $(SCALE_TESTS),$(ALL_TESTS))

test: build
	$(CARGO) test --release -p rsbloom-core
	$(CARGO) test --release -p rsbloom --lib
	$(CARGO) test --release -p rsbloom-tests $(addprefix --test ,$(MAIN_TESTS)) -- --test-threads=2
	$(MAKE) --no-print-directory test-cluster
	$(MAKE) --no-print-directory test-big
	$(MAKE) --no-print-directory pytest
	$(MAKE) --no-print-directory test-fuzz
	$(MAKE) --no-print-directory test-matrix

.PHONY: test-cluster test-big
test-cluster: build
	$(CARGO) test --release -p rsbloom-tests --test cluster -- --test-threads=1 --nocapture

# tests/big.rs holds a 585 MiB filter on up to three servers at once, and DUMP/RESTORE briefly
# needs two more copies on the source and one on the target: about 3.5 GB together at peak
# (the test prints it). Asking for 6 GB of MemAvailable leaves room for the rest of the machine.
BIG_TEST_KB := 6000000

test-big: build
	@avail=$$(awk '/^MemAvailable:/ {print $$2}' /proc/meminfo); \
	if [ "$$avail" -lt $(BIG_TEST_KB) ]; then \
	  echo "test-big: SKIPPED tests/big.rs (the >2^32-bit filter): it needs $(BIG_TEST_KB) kB of MemAvailable, this machine has $$avail kB"; \
	else \
	  echo "test-big: MemAvailable $$avail kB >= $(BIG_TEST_KB) kB, running tests/big.rs"; \
	  $(CARGO) test --release -p rsbloom-tests --test big -- --test-threads=1 --nocapture; \
	fi

# Python tests (tests/py): redis-py's r.bf() API against rsbloom, and a differential run against
# RedisBloom 2.8.2 (scripts/redisbloom-so). The venv (.venv, created once) holds PY_PKGS, for
# these tests, the matrix lane and the benchmarks.
VENV        := $(CURDIR)/.venv
PY_PKGS     := redis==8.1.0 pytest==8.4.2

venv:
	@if [ ! -x $(VENV)/bin/python ]; then \
	  python3 -m venv $(VENV) 2>/dev/null || { \
	    rm -rf $(VENV); \
	    echo "venv: python3 -m venv failed; installing python3-venv"; \
	    $(SUDO) apt-get update && \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv && \
	    python3 -m venv $(VENV); }; \
	fi
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check $(PY_PKGS)

pytest: build venv
	$(VENV)/bin/python -m pytest -q tests/py

test-py: pytest

# The matrix lane: the suites that touch what differs between servers, on each server besides
# Debian's Redis 7.0 (which the main run uses). Each server's own behaviour is asserted where
# it differs (tests/common: flavor()). Not the >2^32-bit test, nor the hostile, fuzz-like and
# durability ones, which exercise the module rather than the server.
.PHONY: test-matrix
MATRIX_SERVERS := redis-7.4 redis-8.0 valkey-8.1 valkey-9.1
MATRIX_TESTS   := acl bloom bulk config cuckoo growing memory migration persistence replication valkey_bloom window
test-matrix: build venv
	@set -e; for s in $(MATRIX_SERVERS); do \
	  server=$$(scripts/servers $$s); \
	  echo "test-matrix: $$s: $$($$server --version)"; \
	  RSBLOOM_TEST_SERVER=$$server $(CARGO) test --release -p rsbloom-tests $(addprefix --test ,$(MATRIX_TESTS)) \
	    -- --test-threads=2; \
	  RSBLOOM_TEST_SERVER=$$server $(CARGO) test --release -p rsbloom-tests --test cluster -- --test-threads=1 --nocapture; \
	  RSBLOOM_TEST_SERVER=$$server $(VENV)/bin/python -m pytest -q tests/py/test_client.py \
	    tests/py/test_package.py; \
	done

# Benchmarks: they measure and assert nothing, and make test does not run them. bench.py's
# settings are BENCH_* environment variables (see README, Benchmarks).
.PHONY: venv bench bench-core bench-ab
BENCH_PY_PKGS := $(PY_PKGS) matplotlib==3.10.8

bench: build venv
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check $(BENCH_PY_PKGS)
	so=$$(scripts/redisbloom-so) && REDISBLOOM_SO=$$so $(VENV)/bin/python bench/bench.py
	$(CARGO) build --release -p rsbloom-core --examples
	$(VENV)/bin/python bench/window.py
	$(CARGO) run --release -p rsbloom-core --example window_bursts > bench/BURSTS.md
	so=$$(scripts/redisbloom-so) && REDISBLOOM_SO=$$so $(VENV)/bin/python bench/cuckoo.py
	$(VENV)/bin/python bench/valkey.py
	so=$$(scripts/redisbloom-so) && REDISBLOOM_SO=$$so $(VENV)/bin/python bench/bulk.py
	so=$$(scripts/redisbloom-so) && REDISBLOOM_SO=$$so $(VENV)/bin/python bench/growing.py

# This build against an earlier commit (BASE=<commit>), alternating, with paired ratios:
# bench/ab.py, written to bench/AB.md.
bench-ab: build venv
	@test -n "$(BASE)" || { echo "usage: make bench-ab BASE=<commit>"; exit 2; }
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check $(BENCH_PY_PKGS)
	$(VENV)/bin/python bench/ab.py $(BASE)

bench-core: deps
	$(CARGO) bench -p rsbloom-core --bench core

# Fuzzing (fuzz/, its own crate): each target runs FUZZ_SECONDS from the committed corpus
# (fuzz/corpus/<target>) and seeds generated afresh (fuzz/examples/seeds.rs); the inputs it
# finds go to fuzz/target/corpus, a crashing one to fuzz/artifacts. cargo-fuzz passes
# nightly-only flags (-Zsanitizer=address); RUSTC_BOOTSTRAP=1 lets the stable toolchain take
# them. make test runs the newest format's target (test-fuzz: valkey-bloom's values, 60 s);
# `make fuzz` runs them all.
.PHONY: fuzz test-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= args chunks rdb cuckoo valkey bulk lines

fuzz: deps
	@$(CARGO) fuzz --version >/dev/null 2>&1 || $(CARGO) install cargo-fuzz --locked
	cd fuzz && for t in $(FUZZ_TARGETS); do RUSTC_BOOTSTRAP=1 $(CARGO) fuzz build $$t || exit 1; done
	cd fuzz && $(CARGO) run --example seeds -- target/seeds
	@cd fuzz && for t in $(FUZZ_TARGETS); do \
	  mkdir -p target/corpus/$$t; \
	  RUSTC_BOOTSTRAP=1 $(CARGO) fuzz run $$t target/corpus/$$t corpus/$$t target/seeds/$$t -- \
	    -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 > target/fuzz-$$t.log 2>&1 || { \
	    tail -n 40 target/fuzz-$$t.log; \
	    echo "fuzz: $$t FAILED, see fuzz/target/fuzz-$$t.log and fuzz/artifacts/$$t"; exit 1; }; \
	  echo "fuzz: $$t: $$(sed -n 's/^stat::number_of_executed_units: *//p' target/fuzz-$$t.log) executions in $(FUZZ_SECONDS) s, corpus $$(ls corpus/$$t | wc -l) committed + $$(ls target/corpus/$$t | wc -l) found"; \
	done

test-fuzz:
	$(MAKE) --no-print-directory fuzz FUZZ_TARGETS=valkey FUZZ_SECONDS=60

fmt:
	$(CARGO) fmt --all

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

clean:
	$(CARGO) clean
