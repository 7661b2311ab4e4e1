# perfhud: `make demo` and `make test` on a fresh Debian 12 machine.
SWIFT ?= swift
CONFIG ?= release
BIN := .build/$(CONFIG)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PACKAGES := libproc2-dev pkg-config tmux procps sysstat valgrind gcc python3-pip
PY_PACKAGES := pyte pytest psrecord datadog

.PHONY: demo test build deps deps-apt deps-python unit e2e benchmark clean

demo: deps-apt build
	$(BIN)/perfhud demo

build:
	$(SWIFT) build -c $(CONFIG) --product perfhud
	$(SWIFT) build -c $(CONFIG) --product perfhud-demo

test: deps build unit e2e

unit:
	$(SWIFT) test

e2e:
	PERFHUD_BIN=$(abspath $(BIN)) python3 -m pytest -q Tests/EndToEnd

benchmark: deps build
	@dpkg -s collectd-core >/dev/null 2>&1 || $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq collectd-core
	PERFHUD_BIN=$(abspath $(BIN)) python3 Benchmarks/compare.py

deps: deps-apt deps-python

# Installs only what is missing, so repeated runs cost nothing.
deps-apt:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing: $$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

deps-python:
	@python3 -c "import pyte, pytest, datadog" 2>/dev/null && command -v psrecord >/dev/null || \
	  python3 -m pip install -q $(PY_PACKAGES) 2>/dev/null || \
	  python3 -m pip install -q --break-system-packages $(PY_PACKAGES)

clean:
	rm -rf .build
