# Reference server implementations: one contract, every stack proven byte-identical, then benchmarked.
# Stacks are discovered (every */stack.toml); nothing here lists them.

SHELL := /bin/bash
.DEFAULT_GOAL := help

STACK ?=
VENV := $(CURDIR)/.venv
PY := PYTHONPATH=$(CURDIR)/loadtest $(VENV)/bin/python
HARNESS := $(PY) -m harness

.PHONY: unit publish docs help setup services-up services-down services-status list build verify run test bench-all bench bench-args report ab ab-args soak compare sim-hosts-up sim-hosts-down new-stack clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
	@echo "  (STACK=name[,name] limits setup/build/verify/list to some stacks; run needs one)"

$(VENV)/.installed: loadtest/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r loadtest/requirements.txt
	touch $@

setup: $(VENV)/.installed ## install Debian packages, the harness venv, and each stack's own setup step (STACK=x: only x's)
	$(HARNESS) setup --stack "$(STACK)"

services-up: setup ## start Redis, MariaDB, memcached on loopback and seed them (no-op when up)
	$(HARNESS) services-up

services-down: $(VENV)/.installed ## stop the services this project started
	$(HARNESS) services-down

services-status: $(VENV)/.installed ## show the services' state
	$(HARNESS) services-status

list: $(VENV)/.installed ## the discovered stacks, and whether each is available here (and why not)
	$(HARNESS) list --stack "$(STACK)"

build: setup ## build stacks (STACK=x for one)
	$(HARNESS) build --stack "$(STACK)"

verify: services-up ## build, start and prove stacks against the whole contract (STACK=x for one)
	$(HARNESS) verify --stack "$(STACK)"

unit: setup ## build stacks and run each one's own unit tests, the manifest's test command (STACK=x for one)
	$(HARNESS) unit --stack "$(STACK)"

run: services-up ## run one stack in the foreground: make run STACK=x
	@test -n "$(STACK)" || { echo "usage: make run STACK=<name> (see make list)"; exit 2; }
	$(HARNESS) run --stack "$(STACK)"

test: setup ## everything CI proves: services, verify every available stack, its unit tests, harness tests
	$(HARNESS) test

bench-all: setup ## build, verify and benchmark every available stack -> results/latest/report.html (QUICK=1: fast pass)
	$(HARNESS) bench

bench: bench-args setup ## one slice: make bench STACK=x [ENDPOINT=hello,redis] [PROFILE=churn,pipeline,noisy,many|all|none] [QUICK=1]
	$(HARNESS) bench

bench-args:
	@test -n "$(STACK)" || { echo "usage: make bench STACK=<name> [ENDPOINT=<endpoint>] [QUICK=1] (see make list)"; exit 2; }

RESULTS ?= results/latest
report: $(VENV)/.installed ## re-render report.md and report.html from a results.json (RESULTS=dir, default results/latest)
	$(HARNESS) report "$(RESULTS)"

RUN ?=
publish: $(VENV)/.installed ## publish a whole run: make publish RUN=results/<id> -> published/<date>-<machine>/, READMEs' figures regenerated (no RUN: regenerate only)
	$(HARNESS) publish "$(RUN)"

docs: $(VENV)/.installed ## the docs test alone: README budgets and shape, links, generated figures, tracker numbers
	$(HARNESS) docs

NAME ?=
new-stack: $(VENV)/.installed ## a new stack's skeleton: make new-stack NAME=go-nethttp (manifest on the next free port, README, placeholder server)
	$(HARNESS) new-stack --name "$(NAME)"

ab: ab-args setup ## A/B one knob: make ab STACK=x ENDPOINT=e A='VAR=value ...' B='VAR=value ...' [ROUNDS=3] [OPEN_RATE=n] [SAVE=file]
	$(HARNESS) ab

ab-args:
	@test -n "$(STACK)" -a -n "$(ENDPOINT)" || { echo "usage: make ab STACK=<name> ENDPOINT=<endpoint> A='VAR=value ...' B='VAR=value ...' (see README, make ab)"; exit 2; }

soak: setup ## one stack at a fixed rate for an hour, in 5 s windows: make soak STACK=x ENDPOINT=e [RATE=n] [DURATION=s] [WINDOW=s]
	$(HARNESS) soak

compare: $(VENV)/.installed ## two runs side by side, regressions first: make compare OLD=results/<a> NEW=results/<b> [OUT=file.html]
	$(HARNESS) compare "$(OLD)" "$(NEW)" --out "$(OUT)"

sim-hosts-up: setup ## simulated hosts for a multi-host run on this machine (network namespaces, each with sshd; root)
	$(HARNESS) sim-hosts up

sim-hosts-down: $(VENV)/.installed ## stop everything in the simulated hosts and remove them
	$(HARNESS) sim-hosts down

clean: services-down ## stop services and remove run state (.run/)
	rm -rf .run
