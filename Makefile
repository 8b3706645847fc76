# lerobot_ros: `make demo` runs the main job, `make test` runs the tests. Both set up first.
VENV ?= $(CURDIR)/.venv
PY := $(VENV)/bin/python
export MUJOCO_GL ?= egl
export HF_HUB_OFFLINE ?= 1
export PYTHONUNBUFFERED := 1
# `make test` also installs these optional extras (scripts/setup.sh), so CI runs their tests;
# `make test TEST_EXTRAS=` skips them (their tests then skip, as with `make test-fast`).
TEST_EXTRAS ?= libero,docs

.PHONY: setup demo test test-fast flake-hunt lint bench docs dist clean

setup:
	@VENV=$(VENV) bash scripts/setup.sh

demo: setup
	$(VENV)/bin/lerobot-ros demo

test:
	@VENV=$(VENV) LEROBOT_ROS_EXTRAS="$${LEROBOT_ROS_EXTRAS:+$$LEROBOT_ROS_EXTRAS,}$(TEST_EXTRAS)" bash scripts/setup.sh
	$(PY) -m pytest

# the unit tier (no DDS, no processes): a couple of minutes
test-fast: setup
	$(PY) -m pytest tests/unit

# the integration tier 5 times with a busy loop per core beside it; lists every test that failed even once
flake-hunt: setup
	$(PY) -m lerobot_ros.testing.flake_hunt $(FLAKE_ARGS)

# ruff (lint + format check) over the whole tree and mypy over the library (mypy.ini); installs the lint extra
lint:
	@VENV=$(VENV) LEROBOT_ROS_EXTRAS=lint bash scripts/setup.sh
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# every bench/*.py on its defaults, then one table of figures against goals (fails when one misses or crashes)
bench: setup
	$(PY) -m lerobot_ros.testing.benches $(BENCH_ARGS)

# the documentation site, strictly (a broken link or anchor fails), into build/site; installs the docs extra
docs:
	@VENV=$(VENV) LEROBOT_ROS_EXTRAS=docs bash scripts/setup.sh
	DISABLE_MKDOCS_2_WARNING=true NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# the wheels (lerobot-ros, lerobot-ros-msgs) and the sdist into dist/, each checked: every data file and
# lib/lerobot_ros/<executable> in place, check-wheel-contents, twine check; installs the dist extra
dist:
	@VENV=$(VENV) LEROBOT_ROS_EXTRAS=dist bash scripts/setup.sh
	$(PY) -m lerobot_ros.testing.wheels build dist
	$(VENV)/bin/check-wheel-contents dist/*.whl
	$(VENV)/bin/twine check --strict dist/*

clean:
	rm -rf build install log dist .pytest_cache
