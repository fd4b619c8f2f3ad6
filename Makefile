# The two set-up commands of the README: `make run` and `make test`.
VENV := .venv/bin
PACKAGES := regua tasks checks sandbox render judges service
# xdist workers of the parallel step on CI's 2 cores (tests/README.md says how 4 was chosen)
TEST_WORKERS ?= 4
PYTEST := $(VENV)/python -m pytest

.PHONY: setup run test lint typecheck imports demo lock

setup:
	@bash scripts/setup.sh

run: setup
	$(VENV)/regua run

demo: setup
	$(VENV)/regua demo

lint: setup
	$(VENV)/ruff check .
	$(VENV)/ruff format --check .

typecheck: setup
	$(VENV)/mypy $(PACKAGES) tests

imports: setup
	$(VENV)/lint-imports

# The whole suite: every test but the `serial` ones on TEST_WORKERS xdist workers, then the
# `serial` ones alone, then the branch-coverage floor (pyproject's fail_under) over both steps.
# Both steps run even when the first fails, so one run shows every failure (exit 5 of the
# serial step, no test marked serial, is not a failure). The serial step collects only the modules
# the parallel step found serial tests in (tests/helpers/xdist.py writes them to
# REGUA_SERIAL_MODULES), the whole suite when it found none or never wrote the list.
# `make test COVERAGE=0` skips the measurement (CI always measures); the 30 slowest tests of the
# parallel step are printed at its end. The project's bytecode is compiled first, and pytest may
# keep its assertion-rewritten test modules: with PYTHONDONTWRITEBYTECODE set (as on the CI
# machines) every process the tests start (servers, fleet workers, CLI runs, sandboxed render
# workers) would compile again what it imports of the project, and every pytest process would
# rewrite every test module again (about half of a collection's CPU).
# mypy (the `typecheck` target, about 45 CPU s from a cold cache) runs beside the tests at the
# lowest priority: it takes only the CPU the tests leave idle (their waits, the tail of the
# parallel step, the serial step), its report is printed after them, and it fails `make test`
# as before when it finds an error.
COVERAGE ?= 1
test: setup lint imports
	@rm -f .coverage .coverage.*
	@typelog=$$(mktemp); nice -n 19 $(VENV)/mypy $(PACKAGES) tests >"$$typelog" 2>&1 & typing=$$!; \
	status=0; cov=""; [ "$(COVERAGE)" = 0 ] || cov="--cov --cov-report="; \
	$(VENV)/python -m compileall -q -j 0 $(PACKAGES) tests >/dev/null || status=$$?; \
	export PYTHONDONTWRITEBYTECODE=; \
	serial=$$(mktemp); \
	REGUA_SERIAL_MODULES=$$serial $(PYTEST) -n $(TEST_WORKERS) --dist loadgroup -m "not serial" \
		--durations=30 $$cov || status=$$?; \
	$(PYTEST) -m serial $${cov:+$$cov --cov-append} $$(cat "$$serial") \
		|| { rc=$$?; [ $$rc -eq 5 ] || status=$$rc; }; \
	rm -f "$$serial"; \
	[ -z "$$cov" ] || $(VENV)/coverage report || status=$$?; \
	echo "== mypy $(PACKAGES) tests (ran beside the tests)"; \
	wait $$typing || status=$$((status ? status : 1)); cat "$$typelog"; rm -f "$$typelog"; \
	exit $$status

# Refresh requirements.lock (the exact versions setup.sh installs) from pyproject.toml
lock: setup
	@bash scripts/lock.sh
