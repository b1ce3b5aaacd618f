# The two commands a newcomer needs: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# the native spawner, built by the install (setup.py) where a C compiler exists
HELPER := src/pairbench/measure/pairbench-spawner
# the Python worker's Callgrind client requests, built by the install where valgrind's headers are
COUNTING := src/pairbench/worker/pairbench-counting.so

.PHONY: setup demo test test-quick docs lint calibrate clean

setup: $(STAMP)

# The environment is made without pip and given the newest pip by $(PYTHON)'s own (pip 22.3 and
# later install into another environment): one pip install, where ensurepip's then an upgrade were
# two (3-4 s); without a pip that can, ensurepip and the upgrade.
$(STAMP): pyproject.toml setup.py src/pairbench/measure/spawner.c src/pairbench/worker/counting.c
	@test -x $(BIN)/python || $(PYTHON) -m venv --without-pip $(VENV)
	$(PYTHON) -m pip --python $(BIN)/python install --quiet --upgrade pip 2>/dev/null \
		|| { $(BIN)/python -m ensurepip --upgrade --default-pip >/dev/null \
			&& $(BIN)/python -m pip install --quiet --upgrade pip; }
	$(BIN)/python -m pip install --quiet -e '.[dev,postgresql]'
	@touch $(STAMP)

demo: setup
	$(BIN)/pairbench compare --seed 1 --max-time 30s --name "spin 400k" --name "spin 480k" \
		"$(BIN)/python examples/workloads.py spin 400000" \
		"$(BIN)/python examples/workloads.py spin 480000"

# Every test. As root (CI), the permission-dependent tests run once more as an unprivileged
# user, so both branches of the environment readers run. The system packages come
# first: the install builds the native spawner with the C compiler they include
# (installed before one was there, it is built now). Bytecode (of pairbench, of the tests'
# rewritten asserts, of every pairbench a test starts) is kept in one cache for the run and the
# next, even where PYTHONDONTWRITEBYTECODE=1 would have every process compile every module.
# Three workers on two CPUs: a test waiting on its children (a server, a build, a sample's sleep)
# leaves its CPU to another worker's test; work stealing hands the last tests to whichever worker
# is idle (load scheduling left one worker a minute of tests alone; benchmarks/results/test_suite.md).
PYCACHE := $(CURDIR)/.pycache
PYTEST := env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(PYCACHE) $(BIN)/python -m pytest -n 3 --dist worksteal -q
# With a prefix Python reads bytecode only under it: pip's, and pairbench's compiled once, go there
# before the workers start, which would otherwise each compile them (scripts/seed_pycache.py).
SEED := $(BIN)/python scripts/seed_pycache.py $(PYCACHE) src
test:
	scripts/install-test-deps.sh
	@test -x $(HELPER) || rm -f $(STAMP)
	@test ! -f /usr/include/valgrind/callgrind.h || grep -q pairbench-callgrind-requests $(COUNTING) 2>/dev/null \
		|| rm -f $(STAMP)
	@$(MAKE) --no-print-directory setup
	$(SEED)
	$(PYTEST) --durations=15
	scripts/test-unprivileged.sh $(BIN)/python

# The inner loop: every test but those that start real programs or take long (e2e, slow,
# browser); make test still runs them all.
test-quick: setup
	$(SEED)
	$(PYTEST) -m "not e2e and not slow and not browser" --durations=5

# The documentation site (MkDocs with Material, installed by setup's dev extra) into site/;
# strict, as tests/docs/test_site.py builds it in make test.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --site-dir site

# The calibration study (~25 min): pairbench's A/A and A/B error rates against a
# sequential hyperfine design; figures go to benchmarks/results/calibration.md by hand.
calibrate: setup
	scripts/install-test-deps.sh --bench
	$(BIN)/python benchmarks/calibration.py --out benchmarks/out/calibration

lint: setup
	$(BIN)/ruff check src tests benchmarks scripts

clean:
	rm -rf $(VENV) build site src/*.egg-info .pytest_cache .pycache $(HELPER)
