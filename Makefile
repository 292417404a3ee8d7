# mblin: the commands a user types. See README.md.
#   make setup   install the Debian packages the build and the tests need (skips what is present)
#   make         build into build/
#   make test    setup, build, run the test suite, then again under two forced OpenBLAS kernels
#                (test-kernels), then again under ASan + UBSan, then a short fuzz run
#   make test-kernels  the numerical tests again under two forced OpenBLAS kernels (SkylakeX, Prescott)
#   make demo    setup, build, linearize the default example and print the report
#   make bench-setup  install the packages only the benchmarks need (BENCH_PACKAGES)
#   make fuzz    build the libFuzzer targets with clang and run each for FUZZ_SECONDS
#   make install build, then install the library, headers, CLI and the Python package mblin
#                (PREFIX, default /usr/local; DESTDIR for staging)

BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 30
# test-kernels: the OpenBLAS kernels to force, the first KERNEL_COUNT of these the CPU can run
# (tests/kernels/cores.py), and the tests it leaves out: not numerical (valgrind, startup, browser,
# python; progress lines and Ctrl-C, the JSON schema, the thread sanitizer's races, the install
# checks; the layering and docs-link checks), kernel-independent and slow (MPI, SLEPc), or forcing
# kernels themselves (kernels_agree, golden), and tests that make no OpenBLAS call (codegen_inject:
# hostile file names in generated code; expr_schedule_inplace: the expression engine's scheduler)
KERNELS      ?= SkylakeX Prescott Haswell Sandybridge
KERNEL_COUNT ?= 2
KERNEL_EXCLUDE ?= valgrind|browser|python|slepc|mpi|startup|kernels_agree|golden|layering|docs_links|progress|json_schema|tsan|install|codegen_inject|expr_schedule_inplace

# Debian 12 packages: compiler and tools, then the numerical libraries, then the reference checks.
PACKAGES = gcc libc6-dev cmake pkg-config clang libclang-rt-14-dev lld \
           libopenblas-dev liblapacke-dev libsuitesparse-dev libarpack2-dev libyaml-dev libxml2-dev \
           libsundials-dev libfftw3-dev libnlopt-dev \
           libopenmpi-dev openmpi-bin petsc-dev libslepc-real-dev \
           python3 python3-dev python3-numpy python3-scipy python3-pytest valgrind octave \
           python3-venv python3-pip python3-setuptools python3-jsonschema \
           chromium calculix-ccx gmsh
# Benchmarks only (bench/peers.py: MuJoCo, and mpmath for the closed-form check): `make bench-setup`.
BENCH_PACKAGES = libmujoco-dev python3-mpmath g++ libeigen3-dev libboost-dev liburdfdom-dev

.PHONY: bench-setup all build setup test test-fast test-kernels asan fuzz demo bench clean install

all: build

setup:
	@missing=""; \
	for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make setup: installing$$missing"; \
	  SUDO=; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	else \
	  echo "make setup: all packages present"; \
	fi

bench-setup:
	@$(MAKE) --no-print-directory setup PACKAGES="$(BENCH_PACKAGES)"

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

$(ASAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DMBLIN_SANITIZE=ON -DMBLIN_BUILD_BENCH=OFF

asan: $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS)

test-fast: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# issue 27: OpenBLAS picks its kernels by CPU, so a result that depends on the kernel would pass
# here and fail on a user's machine; forcing other kernels makes it fail here.
test-kernels: build
	@kernels=$$(python3 tests/kernels/cores.py $(BUILD)/mblin $(KERNEL_COUNT) $(KERNELS)); rc=$$?; \
	if [ $$rc -eq 77 ]; then echo "test-kernels: skipped"; exit 0; fi; \
	[ $$rc -eq 0 ] || { echo "test-kernels: fewer than $(KERNEL_COUNT) kernels to force"; exit 1; }; \
	failed=""; \
	for k in $$kernels; do \
	  echo "test-kernels: ctest under OPENBLAS_CORETYPE=$$k"; \
	  start=$$(date +%s); \
	  (cd $(BUILD) && OPENBLAS_CORETYPE=$$k ctest --output-on-failure -j $(JOBS) -E '$(KERNEL_EXCLUDE)') || failed="$$failed $$k"; \
	  echo "test-kernels: OPENBLAS_CORETYPE=$$k took $$(( $$(date +%s) - start )) s"; \
	done; \
	if [ -n "$$failed" ]; then echo "test-kernels: failed under$$failed"; exit 1; fi; \
	echo "test-kernels: passed under $$kernels"

test: setup
	$(MAKE) test-fast
	$(MAKE) test-kernels
	$(MAKE) asan
	@if command -v clang >/dev/null 2>&1; then $(MAKE) fuzz FUZZ_SECONDS=10; else echo "clang not found: fuzzing skipped"; fi

# per input: a slow but bounded input (a mutated four-bar whose continuation gives up after 500
# steps: 1.2 s in the release CLI, 3 s in the sanitized fuzz build) passed 10 s on a CI machine at
# load 6 with OpenBLAS's threads spinning for a core; a hang is still caught
FUZZ_TIMEOUT ?= 30
fuzz:
	CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DMBLIN_FUZZ=ON -DMBLIN_BUILD_TESTS=OFF -DMBLIN_BUILD_BENCH=OFF
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	@# FUZZ_SECONDS=0: build only (libFuzzer's -max_total_time=0 would run without end)
	@# the targets run JOBS at a time, each for FUZZ_SECONDS on its own core
	@[ "$(FUZZ_SECONDS)" != 0 ] || exit 0; \
	for f in $(FUZZ_BUILD)/tests/fuzz/fuzz_*; do [ -f "$$f" ] && [ -x "$$f" ] && echo "$$f"; done | \
	xargs -P $(JOBS) -I{} sh -c 'f={}; name=$$(basename $$f); mkdir -p $(FUZZ_BUILD)/corpus/$$name; \
	  OPENBLAS_NUM_THREADS=1 $$f -max_total_time=$(FUZZ_SECONDS) -timeout=$(FUZZ_TIMEOUT) -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/ \
	     $(FUZZ_BUILD)/corpus/$$name tests/fuzz/corpus/$$name 2>$(FUZZ_BUILD)/$$name.log \
	     || { echo "fuzzing $$name failed:"; tail -40 $(FUZZ_BUILD)/$$name.log; exit 1; }; \
	  echo "fuzzed $$name for $(FUZZ_SECONDS) s:"; tail -3 $(FUZZ_BUILD)/$$name.log'

install: build
	cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX))

demo: setup
	$(MAKE) build
	./$(BUILD)/mblin linearize examples/slider_pendulum.yaml --matrices

bench: build
	@echo "see bench/README.md"

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
