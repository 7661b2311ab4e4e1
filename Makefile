# perfhud: `make demo` and `make test` on a fresh Debian 12 machine.
SWIFT ?= swift
CONFIG ?= release
BIN := .build/$(CONFIG)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PACKAGES := libproc2-dev pkg-config tmux procps sysstat valgrind gcc python3-pip prometheus systemd
PY_PACKAGES := pyte pytest psrecord datadog

.PHONY: demo test build deps deps-apt deps-python unit e2e benchmark clean install

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
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

deps-python:
	@python3 -c "import pyte, pytest, datadog" 2>/dev/null && command -v psrecord >/dev/null || \
	  python3 -m pip install -q $(PY_PACKAGES) 2>/dev/null || \
	  python3 -m pip install -q --break-system-packages $(PY_PACKAGES)

clean:
	rm -rf .build

# Installs the binary where the units expect it, the units, and an example environment file.
PREFIX ?= /usr/local
UNITDIR ?= /etc/systemd/system
install: build
	install -D -m 0755 $(BIN)/perfhud $(DESTDIR)$(PREFIX)/bin/perfhud
	install -D -m 0755 $(BIN)/perfhud-demo $(DESTDIR)$(PREFIX)/bin/perfhud-demo
	install -D -m 0644 Systemd/perfhud.service $(DESTDIR)$(UNITDIR)/perfhud.service
	install -D -m 0644 Systemd/perfhud@.service $(DESTDIR)$(UNITDIR)/perfhud@.service
	[ -e $(DESTDIR)/etc/default/perfhud ] || install -D -m 0644 Systemd/perfhud.env $(DESTDIR)/etc/default/perfhud
	install -D -m 0644 README.md $(DESTDIR)$(PREFIX)/share/doc/perfhud/README.md
	install -D -m 0644 Dashboards/perfhud.json $(DESTDIR)$(PREFIX)/share/perfhud/grafana-dashboard.json
	install -D -m 0644 Dashboards/perfhud-alerts.yml $(DESTDIR)$(PREFIX)/share/perfhud/prometheus-alerts.yml
	@command -v systemctl >/dev/null && [ -z "$(DESTDIR)" ] && systemctl daemon-reload 2>/dev/null || true
