# gpuopt front door. Two commands for a new user:
#   make demo    install what is missing, build, run the demo
#   make check   install what is missing, build, run every test
# Both are idempotent. Other targets: build, venv, apt, docs, clean.

BUILD_DIR ?= build
LLVM_DIR  ?= /usr/lib/llvm-22
PYTHON    := $(CURDIR)/.venv/bin/python
JOBS      ?= $(shell nproc)

.PHONY: all demo check build venv apt configure docs check-lit check-python clean

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
