# The two set-up commands of the README. Each creates or refreshes .venv, installs, and runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test test-fast bench bench-gc-lbo bench-scale fuzz venv clean

$(BIN)/.installed: pyproject.toml native/Cargo.toml $(wildcard native/src/*.rs)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@

venv: $(BIN)/.installed

demo: venv
	@for f in examples/*.perfetto-trace; do echo "== droidlag info $$f"; $(BIN)/droidlag info "$$f" || exit 1; done
	@echo "== droidlag analyze examples/ --out demo-report/"
	@$(BIN)/droidlag analyze examples/ --out demo-report/

test: venv
	$(BIN)/python -m pytest -q

test-fast: venv   # the quick tier: no corpus, no slow tests
	$(BIN)/python -m pytest -q -m "not slow and not corpus"

bench: venv
	$(BIN)/python benchmarks/bench_read_perfetto.py
	$(BIN)/python benchmarks/bench_frames.py
	$(BIN)/python benchmarks/bench_hangs.py
	$(BIN)/python benchmarks/bench_fleet.py
	$(BIN)/python -m pip install -q "simpy>=4.1"   # the baseline of the I/O lab benchmark, not a dependency
	$(BIN)/python benchmarks/bench_iolab.py
	@if command -v pypy3 >/dev/null; then pypy3 benchmarks/bench_iolab.py --engine-only --customers 1000000; \
	 else echo "(pypy3 not installed: apt-get install pypy3 to see the event core under PyPy)"; fi

# The GC LBO harness's full run (2 workloads x all collectors x 5 heaps x 5 invocations; ~15 min): separate from
# `bench` because it runs JVMs for that long.
bench-gc-lbo: venv
	$(BIN)/python benchmarks/bench_gc_lbo.py

# Coverage-guided fuzzing of every reader (atheris/libFuzzer), seeded from the corpus: each reader until FUZZ_RUNS
# executions or FUZZ_SECONDS, at nice FUZZ_NICE (the machine may be shared); a table of executions, executions per
# second (wall and CPU) and findings per reader. Inputs that crash land in fuzz/crashes/READER/ (not committed).
FUZZ_SECONDS ?= 1800
FUZZ_RUNS ?= 1000000
FUZZ_NICE ?= 19
FUZZ_READERS ?= all
fuzz: venv
	$(BIN)/python -m pip install -q -e '.[fuzz]'
	nice -n $(FUZZ_NICE) $(BIN)/python fuzz/harness.py $(FUZZ_READERS) --runs $(FUZZ_RUNS) --seconds $(FUZZ_SECONDS)

# Report plots and memory at scale: gfxinfo, thread dumps and bugreports grown from corpus files (issue 18).
bench-scale: venv
	$(BIN)/python benchmarks/bench_scale.py

clean:
	rm -rf $(VENV) build src/*.egg-info native/target src/droidlag/_native*.so
