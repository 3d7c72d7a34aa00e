# rsbloom: build, run and test plumbing.
#
#   make run     build the module and start redis-server with it (foreground)
#   make test    install deps, build, run the whole test suite
#
# Variables: PORT (default 6379), MODULE_ARGS (default empty), CARGO (default cargo).

SHELL := /bin/bash

PORT        ?= 6379
MODULE_ARGS ?=
CARGO       ?= cargo
MODULE      := $(CURDIR)/target/release/librsbloom.so
APT_PKGS    := libclang-dev clang redis-server redis-tools

# sudo only when we are not root (and only if sudo exists).
SUDO := $(shell [ "$$(id -u)" = 0 ] || { command -v sudo >/dev/null 2>&1 && echo sudo; })

.PHONY: all deps build run test pytest test-py fmt clippy clean

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
	$(CARGO) build --release

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

# The integration tests load target/release/librsbloom.so and spawn their own redis-server.
test: deps
	$(CARGO) build --release
	$(CARGO) test --release -- --test-threads=2
	$(MAKE) --no-print-directory pytest

# Python tests (tests/py): redis-py's r.bf() API against rsbloom, and a differential run against
# RedisBloom 2.8.2 (../shared/tools/redisbloom-so). The venv is created once in .venv.
VENV        := $(CURDIR)/.venv
PY_PKGS     := redis==8.1.0 pytest==8.4.2

pytest:
	@if [ ! -x $(VENV)/bin/python ]; then \
	  python3 -m venv $(VENV) 2>/dev/null || { \
	    rm -rf $(VENV); \
	    echo "pytest: python3 -m venv failed; installing python3-venv"; \
	    $(SUDO) apt-get update && \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv && \
	    python3 -m venv $(VENV); }; \
	fi
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check $(PY_PKGS)
	@[ -f $(MODULE) ] || $(CARGO) build --release
	$(VENV)/bin/python -m pytest -q tests/py

test-py: pytest

fmt:
	$(CARGO) fmt --all

clippy:
	$(CARGO) clippy --all-targets -- -D warnings

clean:
	$(CARGO) clean
