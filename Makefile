# The two commands a newcomer needs:  make lab   and   make test
# Every target sets up what it needs first (virtual environment, system packages).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HUB    := deploy/hub
ROOT_FLAG := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)
PORT   ?= 8888
# The venv's tools first on PATH (nbgrader runs `alembic` by name, tests run `nbgrader`).
export PATH := $(CURDIR)/$(BIN):$(PATH)

.DEFAULT_GOAL := help
.PHONY: help lab test check lint typecheck unit notebooks browser exercises assign autograde report grade \
        class bench system axe clean clean-grades archive postgres

help:  ## list the targets
	@grep -E '^[a-zA-Z_.-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml constraints.txt tools/setup_venv.sh
	@bash tools/setup_venv.sh $(PYTHON) $(VENV)

lab: $(STAMP)  ## set up everything, then start JupyterLab on the course (prints the URL)
	@echo "Starting JupyterLab on the course: open the http://127.0.0.1 URL printed below."
	$(BIN)/jupyter lab --ServerApp.root_dir=$(CURDIR) --ServerApp.port=$(PORT) \
	  --ServerApp.ip=127.0.0.1 $(ROOT_FLAG) \
	  --ServerApp.default_url=/lab/tree/course/01_what_a_gradient_is.ipynb

# `make test` runs its four phases side by side (make -j), each printed whole when it ends
# (--output-sync), and fails when any of them fails (-k: the others still run to the end):
#   checks     lint, mypy and the generated-file checks
#   pytest     the suite on $(WORKERS) pytest-xdist workers (tests/conftest.py groups the
#              tests that share a fixture); the hub test apart: one sync Playwright a process
#   hub        the JupyterHub class end to end
#   notebooks  nbval over the lessons and the exercises
# two workers per core: many tests spend their time waiting on servers and kernels
WORKERS ?= $(shell echo $$(( 2 * $$(nproc 2>/dev/null || echo 2) )))
TEST_PHASES := test-checks test-pytest test-hub test-notebooks-course test-notebooks-exercises
# each phase ends with a line of what it cost: CPU (user + system) and wall time; a phase
# that stops making progress (no CPU used, nothing printed for 5 minutes) is a hang: it
# prints its processes' stacks and fails, rather than wait for CI's time limit. nbval waits
# on its kernels with no such guard of its own: a notebook run that stalls runs once more.
PHASE_COST := $(BIN)/python tools/phase_cost.py
.PHONY: $(TEST_PHASES)

test: export EVERY_TEST = 1
test: $(STAMP) system axe $(HUB)/node_modules  ## set up everything, then run every check and test
	@$(MAKE) --no-print-directory -k -j$(words $(TEST_PHASES)) --output-sync=target $(TEST_PHASES) \
	  && echo "make test: every phase passed" \
	  || { echo "make test: a phase failed (its output is above)"; exit 1; }

# `make check`, the quick tier for the edit-test loop: lint, types, the generated files and
# the in-process tests (tests/tiers.py: a test that starts a process is marked, and fails
# when it is not). `make test` is everything, and what CI runs.
QUICK_TIER := not (processes or nbgrader or sandbox or browser)
check: test-checks $(STAMP)  ## the quick tier: lint, types, generated files, the in-process tests
	$(BIN)/pytest tests --ignore=tests/hub --ignore=tests/browser -m "$(QUICK_TIER)" -q \
	  -n $(WORKERS) --dist loadgroup -p no:cacheprovider

test-checks: lint typecheck
	$(BIN)/python -m autograder.authoring.notebooks --check
	$(BIN)/python -m autograder.authoring.docs --check
	$(BIN)/python -m autograder.authoring.release --check
	$(BIN)/python -m autograder.authoring.hygiene --check course/*.ipynb solutions/*/*.ipynb exercises/*/*.ipynb

test-pytest: $(STAMP)
	@# --durations: every run prints its 30 slowest phases (setup = a shared fixture's cost)
	$(PHASE_COST) "make test-pytest" $(BIN)/pytest tests --ignore=tests/hub -n $(WORKERS) \
	  --dist loadgroup --no-loadscope-reorder --durations=30

test-hub: $(STAMP)
	@# the hub test drives its own Playwright: one sync Playwright per process; its
	@# gradebook is a private PostgreSQL server (tests/pg_server.py), as a class runs one
	$(PHASE_COST) "make test-hub" $(BIN)/pytest tests/hub

test-notebooks-course: $(STAMP)
	$(PHASE_COST) --again-if-stalled "make test-notebooks-course" \
	  $(BIN)/pytest -p no:cacheprovider --nbval course --nbval-sanitize-with tests/nbval_sanitize.cfg

test-notebooks-exercises: $(STAMP)
	$(PHASE_COST) --again-if-stalled "make test-notebooks-exercises" \
	  $(BIN)/pytest -p no:cacheprovider --nbval-lax solutions exercises

unit: $(STAMP)  ## the test suite without the browser tests
	$(BIN)/pytest tests --ignore=tests/browser --ignore=tests/hub

browser: $(STAMP) system axe $(HUB)/node_modules  ## the JupyterLab and JupyterHub tests in Debian's Chromium
	$(BIN)/pytest tests/browser -m browser
	$(BIN)/pytest tests/hub -m browser

notebooks: $(STAMP)  ## execute every notebook with nbval (lessons: outputs compared)
	$(MAKE) --no-print-directory test-notebooks-course test-notebooks-exercises

system:  ## install what the tests and the class need from Debian (bubblewrap, Chromium, PostgreSQL, npm) if missing
	@bash tools/install_system_packages.sh

axe:  ## install axe-core from npm into tools/axe (the browser suite's accessibility checks)
	@bash tools/install_axe.sh

lint: $(STAMP)  ## ruff lint and format check; the import contracts (layers, no circles)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

# mypy's cache is kept beside nbgrader's kept runs, for every clone: mypy takes a cached
# module only where its source's hash is unchanged (a fresh clone: 24 CPU-s without it, 1)
MYPY := $(BIN)/mypy --cache-dir $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/backward-course/mypy
typecheck: $(STAMP)  ## mypy --strict on the packages and the class hub's launcher
	$(MYPY)
	$(MYPY) $(filter-out $(HUB)/jupyterhub_config.py,$(wildcard $(HUB)/*.py))

exercises: $(STAMP)  ## regenerate exercises/ from solutions/ with nbgrader
	$(BIN)/python -m autograder.authoring.release

assign: $(STAMP)  ## fill the gradebook and release/ from solutions/ (exercises/ untouched)
	$(BIN)/python -m autograder.authoring.release --assign $(ASSIGNMENT)

autograde: assign system  ## release to graded: gradebook, autograde submitted/, write grades.csv
	$(BIN)/autograder grade $(ASSIGNMENT)
	$(BIN)/nbgrader export --to grades.csv
	@echo "Grades: grades.csv. Class analytics: make report"

report: $(STAMP)  ## class analytics under reports/ (HTML with plots, CSV)
	$(BIN)/autograder report $(ASSIGNMENT)

INSTRUCTOR ?= $(SUDO_USER)
# As root, what `make class` builds in the repository is built as the instructor who owns
# it, so no root-owned file is left there (`make clean` works for them afterwards).
AS_OWNER := $(shell [ "$$(id -u)" = 0 ] && [ -n "$(INSTRUCTOR)" ] && \
              [ "$$(stat -c %U .)" = "$(INSTRUCTOR)" ] && echo runuser -u $(INSTRUCTOR) --)
CHOSEN_PYTHON = $(if $(wildcard $(BIN)/python),$(BIN)/python,$(PYTHON))
class:  ## JupyterHub for the class (as root): sudo make class INSTRUCTOR=<login>
	@[ -n "$(INSTRUCTOR)" ] || { echo "usage: sudo make class INSTRUCTOR=<the instructor's login>"; exit 2; }
	@# before building anything: can every user run the chosen Python?
	@$(CHOSEN_PYTHON) tools/check_python.py --every-user
	@# the system packages first: npm builds the proxy below
	@$(MAKE) --no-print-directory system
	$(AS_OWNER) $(MAKE) --no-print-directory $(STAMP) $(HUB)/node_modules PYTHON=$(PYTHON)
	PYTHONDONTWRITEBYTECODE=1 $(BIN)/python deploy/hub/start_class.py \
	  --instructor $(INSTRUCTOR) $(CLASS_OPTIONS)

postgres:  ## a local PostgreSQL gradebook of this course (its own role, database, password): sudo make postgres INSTRUCTOR=<login>
	@[ -n "$(INSTRUCTOR)" ] || { echo "usage: sudo make postgres INSTRUCTOR=<the instructor's login>"; exit 2; }
	$(AS_OWNER) $(MAKE) --no-print-directory $(STAMP) PYTHON=$(PYTHON)
	bash tools/setup_postgres.sh $(INSTRUCTOR) $(CURDIR) $(CURDIR)/$(BIN)/python $(DATABASE)

$(HUB)/node_modules: $(HUB)/package.json $(HUB)/package-lock.json
	npm ci --prefix $(HUB) --no-audit --no-fund
	@touch $@

grade: $(STAMP) system  ## grade the sample class with the real nbgrader pipeline; print the scores
	$(BIN)/python tools/grade_sample_class.py

bench: $(STAMP) system  ## benchmarks: widget latency, and autograder grade vs nbgrader autograde
	$(BIN)/python benchmarks/widget_latency.py
	$(BIN)/python benchmarks/grading_speed.py

environment.yml: pyproject.toml  ## rewrite environment.yml from the pins in pyproject.toml
	$(BIN)/python tools/sync_environment.py

clean:  ## remove the virtual environment (keeps the gradebook and every submission)
	rm -rf $(VENV)

INSTRUCTOR_DATA := release submitted autograded feedback downloaded gradebook.db \
                   grades.csv reports
# .autograder/ holds the grader's records (deleted with the grades) and the course's secret
# (kept: it decides every learner's numbers; `autograder secret --help`). What a term
# leaves, the exchange's hand-ins and feedback included, is listed once, in
# autograder/service/term.py; without the venv only the course folder's SQLite data goes.
clean-grades:  ## DELETE the gradebook (SQLite or PostgreSQL), hand-ins (the exchange's too), feedback and manual grades (needs CONFIRM=1); keeps the course's secret
	@if [ "$(CONFIRM)" != 1 ]; then \
	  echo "This deletes the instructor's data: $(INSTRUCTOR_DATA) .autograder/"; \
	  echo "the gradebook's tables if it is in PostgreSQL (site_config.py's db_url),"; \
	  echo "what is in the exchange's inbound/, outbound/ and feedback/ of this course,"; \
	  echo "including manual grades and every submission. Run: make clean-grades CONFIRM=1"; \
	  echo "(make archive keeps a copy of it all first)."; \
	  echo "It keeps .autograder/givens_secret: every learner's numbers stay the same."; \
	  exit 1; fi
	@if [ -x $(BIN)/python ]; then $(BIN)/python -m autograder.service.clean_grades --course-dir $(CURDIR); \
	elif grep -qs postgresql site_config.py; then \
	  echo "the gradebook is in PostgreSQL: set up first (make $(STAMP)), then run this again"; exit 1; \
	else \
	  echo "no venv: the course folder's data is deleted, the exchange is left (make $(STAMP) first to clear it)"; \
	  rm -rf $(INSTRUCTOR_DATA); \
	  [ ! -d .autograder ] || find .autograder -mindepth 1 -maxdepth 1 ! -name givens_secret -exec rm -rf {} +; fi

archive: $(STAMP)  ## end of term: copy gradebook, hand-ins, feedback, the exchange's and reports into archives/; CONFIRM=1 then deletes them
	$(BIN)/python -m autograder.service.term --course-dir $(CURDIR) $(if $(filter 1,$(CONFIRM)),--confirm) $(if $(TO),--to $(TO))
