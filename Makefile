# The two commands a fresh machine needs are `make demo` and `make test`.
BUILD ?= build
PREFIX ?= /usr/local
CMAKE_FLAGS ?= -G Ninja -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
               -DCMAKE_INSTALL_PREFIX=$(PREFIX)
JOBS ?= $(shell nproc)

# The sanitizer build (CI runs it after `make test`): ASan, UBSan and
# libFuzzer's coverage on everything but what runs inside traced programs
# (cmake/Sanitizers.cmake), in its own directory.
SAN_BUILD ?= build-san
SAN_FLAGS ?= -DUBTRACE_FUZZ=ON -DUBTRACE_LLVM_STATIC=OFF
# Each finding fails its test; the targets of traced commands keep the
# right to dump core (ASan would set their RLIMIT_CORE to 0).
SAN_ENV ?= ASAN_OPTIONS=disable_coredump=0 \
           UBSAN_OPTIONS=print_stacktrace=1
FUZZ_SECONDS ?= 60

.PHONY: all deps configure build demo test install clean \
        sanitize-build sanitize fuzz

all: build

deps:
	@.ci/install-deps

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

configure: deps $(BUILD)/build.ninja

build: configure
	ninja -C $(BUILD) -j $(JOBS)

demo: build
	@bash examples/demo.sh $(BUILD)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) --timeout 600

$(SAN_BUILD)/build.ninja:
	cmake -S . -B $(SAN_BUILD) $(CMAKE_FLAGS) $(SAN_FLAGS)

sanitize-build: deps $(SAN_BUILD)/build.ninja
	ninja -C $(SAN_BUILD) -j $(JOBS)

# Every test the release build runs, instrumented (the few that cannot run
# so say why and skip: HACKING.md, "Sanitizers").
sanitize: sanitize-build
	$(SAN_ENV) ctest --test-dir $(SAN_BUILD) --output-on-failure -j $(JOBS) --timeout 600

# Both fuzzers, FUZZ_SECONDS each (tests/fuzz/run.sh).
fuzz: sanitize-build
	bash tests/fuzz/run.sh $(SAN_BUILD) $(FUZZ_SECONDS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)
