# The two set-up commands of the README: `make run` and `make test`.
VENV := .venv/bin
PACKAGES := regua tasks checks sandbox render judges service

.PHONY: setup run test lint typecheck imports demo

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

test: setup lint typecheck imports
	$(VENV)/python -m pytest
