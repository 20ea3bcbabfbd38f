# RetroRapid Online. `make run` and `make test` are the two commands the README promises.
SWIFT ?= swift
# Tests run optimised (the survival property tests play 180 million steps) but with
# testing enabled; they build in their own folder so `make run`'s build is not redone.
TEST_FLAGS = -c release -Xswiftc -enable-testing --scratch-path .build/test
# End-to-end tests drive the real binary with real clients (Python websockets, urllib).
VENV = .build/venv
# The browser client's tests drive Debian's headless Chromium with its matching driver; the
# fonts let screenshots show the LCD and readable faces (the page falls back without them).
CLIENT_TEST_PACKAGES = chromium chromium-driver fonts-dseg fonts-inter
# The deploy tests run Debian's nginx (with a self-signed certificate from openssl, HTTP/2 seen
# by curl), systemd-analyze on the units in Deploy/ (nothing is started by systemd) and
# promtool on the alert rules (the Prometheus server is installed, never started). The
# container test (Tests/python/test_deploy_container.py) makes the image's runtime stage with
# debootstrap and reads the binary with objdump (binutils); it builds the binary with the static
# Swift standard library itself, which links FoundationNetworking against -lcurl
# (libcurl4-openssl-dev). About 2.5 minutes from nothing here, under 30 s once cached.
DEPLOY_TEST_PACKAGES = nginx openssl curl systemd prometheus debootstrap binutils libcurl4-openssl-dev
# The storage tests and the end-to-end tests also run against a real PostgreSQL server, started
# for them on loopback by scripts/with-test-postgres.sh (docs/TESTING.md, "PostgreSQL in the
# tests"); Debian's postgresql brings the server and psql. One server per suite; with
# RETRORAPID_REQUIRE_POSTGRES=1 a suite fails, never skips, when it has none.
POSTGRES_TEST_PACKAGES = postgresql
WITH_POSTGRES = RETRORAPID_REQUIRE_POSTGRES=1 scripts/with-test-postgres.sh
# The end-to-end files that also run against PostgreSQL (RETRORAPID_TEST_BACKEND=postgres),
# chosen for what they store (docs/TESTING.md, "Which end-to-end tests run on PostgreSQL"):
#   quota, the last play raced, an unlock code   test_ws_quota.py
#   codes redeemed and guessed, new players       test_rate_limits.py
#   the limits' counts across nodes and restarts  test_rate_limits_shared.py
#   settings stored and pushed                    test_ws_settings.py
#   a stale settings write, a code redeemed       test_client_sync.py
#   purchases: orders, webhooks, one checkout     test_payments.py
#   games saved, scores on the leaderboards       test_ws_game.py, test_client_leaderboards.py
#   players, devices, tokens, signing out         test_ws_auth.py, test_client_devices.py
#   waiting, abandoned and shutdown games         test_ws_pause_resume.py, test_ws_shutdown.py
#   restart recovery after SIGKILL                test_ws_server_crash.py
#   the console: sessions, limits, audited changes test_console.py
POSTGRES_E2E_TESTS = \
	Tests/python/test_ws_quota.py \
	Tests/python/test_rate_limits.py \
	Tests/python/test_rate_limits_shared.py \
	Tests/python/test_ws_settings.py \
	Tests/python/test_client_sync.py \
	Tests/python/test_payments.py \
	Tests/python/test_ws_game.py \
	Tests/python/test_client_leaderboards.py \
	Tests/python/test_ws_auth.py \
	Tests/python/test_client_devices.py \
	Tests/python/test_ws_pause_resume.py \
	Tests/python/test_ws_shutdown.py \
	Tests/python/test_ws_server_crash.py \
	Tests/python/test_console.py

.PHONY: all deps build run test test-postgres-e2e test-sanitizers fuzz fuzz-merge bench bench-capacity bench-cost bench-cluster bench-failover sim clean python-test-deps charts

all: build

deps:
	@scripts/install-deps.sh

# The web fonts (/fonts) come from Debian packages into data/fonts; none is committed.
build: deps
	scripts/install-fonts.sh data/fonts
	$(SWIFT) build -c release --product retrorapid

# The operator console on this machine only (127.0.0.1:8081), unless RETRORAPID_CONSOLE_PORT
# says otherwise (empty: none).
run: build
	RETRORAPID_CONSOLE_PORT=$${RETRORAPID_CONSOLE_PORT-8081} .build/release/retrorapid serve

test: deps
	scripts/check-repo-citations.sh
	scripts/check-imports.sh
	@scripts/install-deps.sh $(CLIENT_TEST_PACKAGES) $(DEPLOY_TEST_PACKAGES) $(POSTGRES_TEST_PACKAGES)
	scripts/install-fonts.sh data/fonts
	$(SWIFT) build $(TEST_FLAGS) --build-tests
	$(WITH_POSTGRES) $(SWIFT) test $(TEST_FLAGS) --skip-build
	$(SWIFT) build $(TEST_FLAGS) --product retrorapid
	.build/test/release/retrorapid sim --level all --seeds 2000 --steps 5000 --bot cues --threads 2 --expect-survival
	scripts/smoke-serve.sh .build/test/release/retrorapid
	$(MAKE) python-test-deps
	RETRORAPID_TEST_BACKEND=sqlite RETRORAPID_BINARY=$(CURDIR)/.build/test/release/retrorapid \
		$(WITH_POSTGRES) $(VENV)/bin/python -m pytest -q Tests/python
	$(MAKE) --no-print-directory test-postgres-e2e

# The POSTGRES_E2E_TESTS files again, every server on a fresh PostgreSQL database instead of a
# SQLite file. `make test` runs it after the SQLite run; alone it builds what it needs.
test-postgres-e2e: deps
	@scripts/install-deps.sh $(CLIENT_TEST_PACKAGES) $(POSTGRES_TEST_PACKAGES)
	scripts/install-fonts.sh data/fonts
	$(SWIFT) build $(TEST_FLAGS) --product retrorapid
	$(MAKE) --no-print-directory python-test-deps
	RETRORAPID_TEST_BACKEND=postgres RETRORAPID_BINARY=$(CURDIR)/.build/test/release/retrorapid \
		$(WITH_POSTGRES) $(VENV)/bin/python -m pytest -q $(POSTGRES_E2E_TESTS)

python-test-deps:
	@test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	@$(VENV)/bin/python -m pip install -q --disable-pip-version-check -r Tests/python/requirements.txt

# The Swift tests under AddressSanitizer, then under ThreadSanitizer, each followed by the
# WebSocket and HTTP end-to-end tests against a server built with that sanitizer
# (docs/FUZZING.md). Not in `make test`: about 10 minutes here from nothing (ASan build
# 3.5 min, tests 41 s, end-to-end 1.5 min; TSan build 2 min, tests 70 s, end-to-end 2 min).
test-sanitizers: deps
	@scripts/install-deps.sh $(CLIENT_TEST_PACKAGES)
	scripts/install-fonts.sh data/fonts
	scripts/test-sanitizers.sh

# Every libFuzzer target with AddressSanitizer for FUZZ_SECONDS each, one after another
# (FUZZ_TARGETS=input-log for one), then the live frame fuzzer against a running server for
# FUZZ_SECONDS; new inputs and crash files stay under .build/fuzz. `make test` replays the
# committed seed corpus (Tests/Fuzz/corpus) without the fuzzer, the saved frame findings
# (Tests/Fuzz/frames), and runs the live frame fuzzer for 20 s.
FUZZ_SECONDS ?= 60
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh run
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz-frames.sh

# Adds to the committed seed corpus the inputs from `make fuzz` that reach new code.
fuzz-merge: deps
	scripts/fuzz.sh merge

# A short version of every benchmark (under 5 minutes); the full capacity sweep behind
# docs/BENCHMARKS.md is `make bench-capacity` (33 minutes measured).
bench: deps
	scripts/bench-engine.sh
	scripts/bench-capacity.sh --quick

bench-capacity: deps
	scripts/bench-capacity.sh

# Instructions and allocations per step frame and per move answered, under callgrind, for the
# server and the direct C broadcaster (docs/BENCHMARKS.md, "Cost per frame"; ~10 minutes).
bench-cost: deps
	@scripts/install-deps.sh valgrind
	scripts/bench-cost.sh --runs 3

# The cluster's cost, through nginx and with game connections straight to the nodes, and a
# node killed under load (docs/BENCHMARKS.md, "Scale out" and "Failover at load"; each
# about 10 minutes).
bench-cluster: deps
	@scripts/install-deps.sh postgresql nginx
	scripts/bench-cluster.sh --runs 3

bench-failover: deps
	@scripts/install-deps.sh postgresql nginx
	scripts/bench-failover.sh --games 2000

sim: build
	.build/release/retrorapid sim --level all --seeds 1000 --steps 5000 --bot perfect --threads 2

clean:
	rm -rf .build

# docs/BENCHMARKS.md's two charts (docs/figures/*.svg), redrawn from the figures' CSVs beside
# them; scripts/draw-benchmark-charts.py says how to draw them from a new benchmark run.
charts:
	python3 scripts/draw-benchmark-charts.py
