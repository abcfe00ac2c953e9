# gpuopt front door. Two commands for a new user:
#   make demo    install what is missing, build, run the demo
#   make check   install what is missing, build, run every test
# Both are idempotent. Other targets: build, venv, apt, docs, clean,
# fuzz and check-asan (docs/Reliability.md), check-slow and mutation-check
# (docs/Testing.md).

BUILD_DIR ?= build
LLVM_DIR  ?= /usr/lib/llvm-22
PYTHON    := $(CURDIR)/.venv/bin/python
JOBS      ?= $(shell nproc)

.PHONY: all demo check build venv apt configure docs check-lit check-python clean
.PHONY: fuzz check-asan check-slow mutation-check

all: build

apt:
	@utils/bootstrap.sh apt

venv: apt
	@utils/bootstrap.sh venv

$(BUILD_DIR)/build.ninja: CMakeLists.txt | venv
	cmake -G Ninja -S . -B $(BUILD_DIR) \
	  -DCMAKE_BUILD_TYPE=Release \
	  -DMLIR_DIR=$(LLVM_DIR)/lib/cmake/mlir \
	  -DLLVM_EXTERNAL_LIT=$(LLVM_DIR)/bin/lit \
	  -DGPUOPT_PYTHON=$(PYTHON)

configure: $(BUILD_DIR)/build.ninja

build: venv configure
	ninja -C $(BUILD_DIR) -j $(JOBS)

docs: build
	ninja -C $(BUILD_DIR) mlir-doc

demo: build
	$(PYTHON) examples/demo.py --build-dir $(BUILD_DIR)

check: build docs
	@utils/check.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)

# libFuzzer targets, built with clang in build-fuzz/; FUZZ_SECONDS per target
# (default 300). Prints executions, coverage and crashes per target.
fuzz: venv
	@fuzz/run.sh

# The tools built with ASan and UBSan in build-asan/, then the lit and pytest
# suites against them. Slow, so not part of `make check`. LibTorch is not
# instrumented; docs/Reliability.md explains the options (allow_user_poisoning=0:
# see fuzz/run.sh).
ASAN_BUILD_DIR ?= build-asan
SANITIZER_ENV := ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:allow_user_poisoning=0 \
  UBSAN_OPTIONS=abort_on_error=1:print_stacktrace=1
check-asan: venv
	cmake -G Ninja -S . -B $(ASAN_BUILD_DIR) \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUOPT_ENABLE_SANITIZERS=ON \
	  -DMLIR_DIR=$(LLVM_DIR)/lib/cmake/mlir \
	  -DLLVM_EXTERNAL_LIT=$(LLVM_DIR)/bin/lit \
	  -DGPUOPT_PYTHON=$(PYTHON)
	ninja -C $(ASAN_BUILD_DIR) -j $(JOBS)
	$(SANITIZER_ENV) $(LLVM_DIR)/bin/lit -sv $(ASAN_BUILD_DIR)/test
	# Model libraries built by an instrumented gpuopt-compile carry ASan and
	# cannot be dlopen'ed into the (uninstrumented) Python: the tests that
	# load them in-process are left out here (gpuopt-run model.so still runs).
	$(SANITIZER_ENV) GPUOPT_BUILD_DIR=$(CURDIR)/$(ASAN_BUILD_DIR) \
	  $(PYTHON) -m pytest -q test/python --ignore=test/python/test_compile_cpu.py \
	  --deselect=test/python/test_bench.py::test_real_gpuopt_and_ort_rows

# The slow tier: the tests marked @pytest.mark.slow (deselected by make check,
# test/python/conftest.py), e.g. Rolling-UNet-S at 224x224 through the
# emulated CUDA path.
check-slow: build
	GPUOPT_SLOW_TESTS=1 GPUOPT_BUILD_DIR=$(CURDIR)/$(BUILD_DIR) \
	  $(PYTHON) -m pytest -q -m slow test/python

# The mutation check: each utils/mutations/*.patch (a realistic compiler bug)
# applied in a scratch worktree of HEAD with its own build directory
# (MUTATION_DIR, default /tmp/gpuopt-mutation), the emulation tests run
# against it; prints caught/missed per patch, fails if one is missed. Slow (a
# first full build, then a rebuild per patch), so not part of make check.
mutation-check: venv
	@JOBS=$(JOBS) PYTHON=$(PYTHON) LLVM_DIR=$(LLVM_DIR) utils/mutations/run.sh
