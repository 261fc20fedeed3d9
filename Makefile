# Spades: everyday commands. `make run` to play, `make test` to check.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?=
# Test processes (pytest-xdist). Each test file stays in one process (its module
# fixtures start servers once); the tests of the stack pick their own Redis
# database, PostgreSQL database and ports, so two processes do not meet. Three
# on two cores: most of the suite's time is spent waiting on the servers, timers
# and browsers the tests start (the pytest processes use about 40% of their
# wall time), so a third process fills the waits (848 s with two, 762 s with
# three, on the same two-core machine under a like load; 554 s quiet).
TEST_WORKERS ?= 3
CHROMIUM := /usr/bin/chromium

.DEFAULT_GOAL := help
.PHONY: help run stack test lint bench bench-bots bench-server venv install install-dev install-train train chromium proxy clean

help:
	@echo "make run    - start the site at http://127.0.0.1:8000/ (SQLite, in-memory channel layer)"
	@echo "make test   - install dev tools and Chromium if needed, run the whole test suite"
	@echo "make lint   - ruff check"
	@echo "make bench  - engine benchmark (manage.py bench_engine)"
	@echo "make stack  - production stack locally: nginx, 2 Daphnes, Celery workers and beat on PostgreSQL and Redis"
	@echo "make bench-bots - bot decision times and tournament speed (bench_bots)"
	@echo "make bench-server - websocket load benchmark, embedded and Redis stack (bench_server)"
	@echo "make train  - install the train extra (PyTorch CPU) and train NNB, NNB-sym, SPB, SPB-score, SPB-pool(2), SPB-match, QP, QP-srp, QP-plain and QP-league"
	@echo "make venv   - create .venv only; make clean removes caches and .venv"

venv: $(BIN)/python

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Stamp files: installs re-run only when pyproject.toml is newer than the stamp.
$(VENV)/.runtime-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.runtime-installed

# The train extra (PyTorch, CPU build; docs/bots.md "Learned bots"). CI installs it
# too, so the training tests run there. Elsewhere than on a machine with a local
# wheel: TRAIN_PIP_ARGS='--extra-index-url https://download.pytorch.org/whl/cpu'.
TRAIN_PIP_ARGS ?=
$(VENV)/.train-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet $(TRAIN_PIP_ARGS) -e '.[dev,train]'
	touch $@ $(VENV)/.dev-installed $(VENV)/.runtime-installed

install: $(VENV)/.runtime-installed
install-dev: $(VENV)/.dev-installed
install-train: $(VENV)/.train-installed

run: install
	$(BIN)/python manage.py migrate --noinput
	@echo "Spades is running at http://127.0.0.1:8000/"
	@exec $(BIN)/daphne -b 127.0.0.1 -p 8000 spadesite.asgi:application

# The production stack in the foreground: migrations, STACK_DAPHNES Daphne
# processes (default 2) behind nginx, Celery workers for the queues bots and
# search and Celery beat, against DATABASE_URL and REDIS_URL (default: the
# local PostgreSQL database `spades` and Redis). Ctrl-C stops them all.
stack: install proxy
	@exec $(BIN)/python lab/stack/run.py

# Browser tests use Debian's Chromium (Playwright's own browser download is not
# available everywhere). Without it they skip locally and fail under CI=true.
# The emoji font draws the table's quick reactions as players' browsers do.
EMOJI_FONT := /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf
chromium:
	@if [ -x $(CHROMIUM) ] && [ -f $(EMOJI_FONT) ]; then \
		:; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "Installing Debian's chromium (and its emoji font) for the browser tests..."; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-color-emoji; \
	else \
		echo "note: $(CHROMIUM) is missing and cannot be installed here (needs root and apt-get);"; \
		echo "      browser tests will be skipped (and fail when CI=true)."; \
	fi

# nginx, the reverse proxy of `make stack` and of the multi-process tests
# (lab/stack/proxy.py), from Debian's package like Chromium.
proxy:
	@if command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; then \
		:; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "Installing Debian's nginx for the production stack..."; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx; \
	else \
		echo "note: nginx is missing and cannot be installed here (needs root and apt-get);"; \
		echo "      make stack and the multi-process tests need it."; \
	fi

test: install-dev chromium proxy
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --durations=20 $(PYTEST_ARGS)

lint: install-dev
	$(BIN)/ruff check .

bench: install
	$(BIN)/python manage.py bench_engine

# The shipped learned bots' weights (bots/data/nnb.npz, nnb_sym.npz, spb.npz, spb_score.npz,
# spb_pool.npz, spb_pool2.npz, spb_match.npz, qp.npz, qp_srp.npz, qp_plain.npz, qp_league.npz, qp_trick.npz,
# qp_branch.npz), with
# the settings of docs/bots.md;
# seeded and resumable. QP-srp's and QP-plain's fits take about an hour each on a loaded core, QP's
# three stages (self-play, from random weights) about an hour and a half, QP-branch's two about
# an hour and three quarters (docs/bots.md).
train: install-train
	$(BIN)/python manage.py train_nnb --rounds 68000 --seed 1 --loss asym --output bots/data/nnb.npz
	$(BIN)/python manage.py train_nnb --rounds 68000 --seed 1 --loss sym --output bots/data/nnb_sym.npz
	$(BIN)/python manage.py train_spb --iterations 20 --deals 2000 --seed 1 --output bots/data/spb.npz
	$(BIN)/python manage.py train_spb --score-inputs --iterations 60 --deals 2000 --seed 1 \
		--output bots/data/spb_score.npz
	$(BIN)/python manage.py train_spb --iterations 20 --deals 2000 --seed 1 --init bots/data/spb.npz \
		--pool-bidders BIS,SIM75 --pool-bidder-share 0.6 --sim-deals 4 --gauge-bidder BIS \
		--eval-every 5 --eval-games 400 --output bots/data/spb_pool.npz
	$(BIN)/python manage.py train_spb --iterations 20 --deals 2000 --seed 1 --init bots/data/spb_pool.npz \
		--pool-bidders BIS --pool-bidder-share 0.9 --gauge-bidder BIS --eval-every 10 \
		--eval-games 20000 --output bots/data/spb_pool2.npz
	$(BIN)/python manage.py train_spb --score-inputs --match-return --hidden 256,256 --iterations 10 \
		--deals 20000 --seed 1 --pool-bidders BIS --pool-bidder-share 0.9 --gauge-bidder BIS \
		--eval-every 2 --eval-games 20000 --output bots/data/spb_match.stage1.npz
	$(BIN)/python manage.py train_spb --score-inputs --match-return --hidden 256,256 --iterations 10 \
		--deals 20000 --seed 1 --lr 3e-4 --init bots/data/spb_match.stage1.npz --pool-bidders BIS \
		--pool-bidder-share 0.9 --gauge-bidder BIS --eval-every 2 --eval-games 20000 \
		--output bots/data/spb_match.npz
	$(BIN)/python manage.py train_qp --rounds 60000 --epochs 2 --advantage 4 --curve-games 200 \
		--points 2 --seed 1 --data bots/data/qp.npz.data --output bots/data/qp_srp.npz
	$(BIN)/python manage.py train_qp --rounds 60000 --epochs 2 --advantage 4 --features plain \
		--points 2 --seed 1 --data bots/data/qp.npz.data --output bots/data/qp_plain.npz
	$(BIN)/python manage.py train_qp_self --iterations 106 --lr 1e-3 --seed 1 \
		--data bots/data/qp_self.data --output bots/data/qp_self.stage1.npz
	$(BIN)/python manage.py train_qp_self --iterations 35 --lr 3e-4 --seed 1 \
		--init bots/data/qp_self.stage1.npz --data bots/data/qp_self.data \
		--output bots/data/qp_self.stage2.npz
	$(BIN)/python manage.py train_qp_self --iterations 53 --lr 1e-4 --seed 1 \
		--init bots/data/qp_self.stage2.npz --data bots/data/qp_self.data \
		--output bots/data/qp.npz
	$(BIN)/python manage.py train_qp_self --iterations 20 --lr 1e-4 --seed 1 --pool 20000 --match \
		--srp-share 0.5 --league-share 0.25 --league-every 5 --league bots/data/qp.npz \
		--init bots/data/qp.npz --data bots/data/qp_match.data --output bots/data/qp_league.npz
	$(BIN)/python manage.py train_qp_self --iterations 30 --lr 1e-4 --seed 1 --pool 20000 --match \
		--srp-share 0.5 --inputs 300 --init bots/data/qp.npz --data bots/data/qp_match.data \
		--output bots/data/qp_trick.npz
	$(BIN)/python manage.py train_qp_self --iterations 80 --lr 1e-4 --seed 1 --pool 20000 --match \
		--srp-share 0.5 --inputs 300 --branch 0.5 --gauge-every 4 --init bots/data/qp_trick.npz \
		--data bots/data/qp_match.data --output bots/data/qp_branch.stage1.npz
	$(BIN)/python manage.py train_qp_self --iterations 20 --lr 1e-4 --advantage 4 --seed 1 \
		--pool 20000 --match --srp-share 0.5 --inputs 300 --branch 0.5 --gauge-every 5 \
		--init bots/data/qp_branch.stage1.npz --data bots/data/qp_match.data \
		--output bots/data/qp_branch.npz

bench-bots: install
	$(BIN)/python manage.py bench_bots

# Websocket load benchmark: 100 tables of four humans against one Daphne process,
# embedded default and Redis stack. Options: make bench-server BENCH_ARGS='--seconds 10'
BENCH_ARGS ?=
bench-server: install-dev
	$(BIN)/python manage.py bench_server $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis .numba_cache *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
