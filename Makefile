# Two entry points (see README): `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: demo test test-fast test-ts lint typecheck bench generate clean dist

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

$(TEST_STAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install -q -e '.[test]'
	touch $@

demo: $(STAMP)
	$(PY) examples/demo.py

# pytest on PYTEST_WORKERS xdist workers, a test file (or an xdist_group) at a time: see
# tests/conftest.py. PYTEST_WORKERS=0 runs it in one process.
PYTEST_WORKERS ?= 2
PYTEST_PARALLEL := $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --dist loadgroup)

test: $(TEST_STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	$(PY) -m pytest $(PYTEST_PARALLEL)
	$(MAKE) --no-print-directory test-ts

# The quick loop: what runs in this process only (no `process` test spawns a daemon, the CLI or
# anything else; no `slow` one). `make test` still runs everything.
test-fast: $(TEST_STAMP)
	$(PY) -m pytest -m "not slow and not process"

# The TypeScript client's tests spawn the daemon (and `skillsd mcp`) from the venv, so it must
# be installed first, with the MCP SDK of the test extra.
test-ts: $(TEST_STAMP)
	cd clients/typescript && npm ci --no-audit --no-fund && SKILLSD_PYTHON="$(abspath $(PY))" npm test

lint: $(TEST_STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

typecheck: $(TEST_STAMP)
	$(PY) -m mypy

bench: $(STAMP)
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) bench/run.py

# Every generated artefact, from the protocol's types and the config's: the JSON Schema, the
# Python client's methods, the TypeScript types, docs/protocol.md (recorded against a real
# daemon), docs/config.md and any other docs/gen_*.py. Tests fail when one is stale.
generate: $(TEST_STAMP)
	$(PY) -m skillsd_protocol.schema > protocol/skillsd_protocol/schema.json
	$(PY) clients/python/gen_methods.py
	cd clients/typescript && node scripts/gen-types.mjs
	for gen in docs/gen_protocol.py docs/gen_config.py $(filter-out docs/gen_protocol.py docs/gen_config.py docs/gen_tui_screenshot.py,$(wildcard docs/gen_*.py)); do \
		$(PY) $$gen || exit 1; \
	done

clean:
	rm -rf $(VENV) build dist *.egg-info

# What a user installs (docs/install.md): the wheel and sdist of skillsd (with the protocol
# package and the Python client inside), and the TypeScript client as an npm tarball.
dist: $(STAMP)
	rm -rf dist build
	$(PY) -m pip install -q build
	$(PY) -m build --outdir dist .
	cd clients/typescript && npm ci --no-audit --no-fund && npm run build && \
		npm pack --silent --pack-destination ../../dist
	@ls -1 dist

# Hardening long runs (docs/security.md): fuzzers at 20x their examples, a soak of
# SKILLSD_SOAK_SECONDS (default 120) with SKILLSD_SOAK_CLIENTS (default 16) clients, RSS growth
# checked; the soak report goes to build/soak-report.json. Bounded by SOAK_TIMEOUT seconds.
SOAK_TIMEOUT ?= 1800
.PHONY: soak
soak: $(TEST_STAMP)
	mkdir -p build
	SKILLSD_LONG=1 SKILLSD_SOAK_REPORT="$(abspath build/soak-report.json)" \
		timeout $(SOAK_TIMEOUT) $(PY) -m pytest -p no:cacheprovider tests/hardening

# The terminal picker: adds the optional `tui` extra (Textual) to .venv, then runs it.
.PHONY: ui
ui: $(STAMP)
	$(PY) -m pip install -q -e '.[tui]'
	$(PY) -m skillsd ui

# The MCP Inspector's CLI against `skillsd mcp` on examples/project: SEP-2640 conformance and
# digest checks of skills/list, on both protocol eras (2025-11-25 and 2026-07-28), over stdio and
# over HTTP (four worker processes). The Inspector is a large npm install (into build/inspector),
# so this is not part of `make test`. The state (the use ledger) goes to build/inspector/state,
# never into examples/.
INSPECTOR_VERSION ?= 2.12.0
INSPECTOR := build/inspector/node_modules/.bin/mcp-inspector
.PHONY: test-mcp
test-mcp: $(TEST_STAMP)
	mkdir -p build/inspector
	npm install --prefix build/inspector --no-audit --no-fund \
		@modelcontextprotocol/inspector@$(INSPECTOR_VERSION) >/dev/null
	cd examples/project && for era in legacy modern; do \
		$(abspath $(INSPECTOR)) --cli --method skills/list --verify --protocol-era $$era \
			-e HOME=$(abspath examples/home) -e XDG_STATE_HOME=$(abspath build/inspector/state) \
			$(abspath $(PY)) -m skillsd mcp || exit 1; \
	done
	cd examples/project; port=$$($(abspath $(PY)) -c 'import socket; s = socket.socket(); \
		s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'); \
	token=inspector-$$($(abspath $(PY)) -c 'import secrets; print(secrets.token_hex(20))'); \
	HOME=$(abspath examples/home) XDG_STATE_HOME=$(abspath build/inspector/state) \
	SKILLSD_MCP_TOKEN=$$token $(abspath $(PY)) -m skillsd mcp \
		--http 127.0.0.1:$$port --workers 4 2>/dev/null & server=$$!; sleep 2; status=0; \
	for era in legacy modern; do \
		$(abspath $(INSPECTOR)) --cli http://127.0.0.1:$$port/mcp --transport http \
			--header "Authorization: Bearer $$token" --method skills/list --verify \
			--protocol-era $$era || status=1; \
	done; kill $$server; exit $$status
