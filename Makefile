# gpubroker -- GNU make.  `make help` lists the targets.
#
# Everything is built under $(BUILD) in the same layout as an install:
#   $(BUILD)/bin/gpubroker, $(BUILD)/bin/cloudsim, $(BUILD)/bin/gpuprobe
#   $(BUILD)/lib/gpubroker/drivers/<name>.so
#   $(BUILD)/share/gpubroker/{drivers/<name>/,policies/}
# so the binary finds its drivers and data relative to itself, and
#   $(BUILD)/stage/{include/gpubroker,lib/pkgconfig,lib/libgpubroker-driver-sdk.a}
# the driver header and SDK that external drivers (EXT_DRIVERS) build on.

.DEFAULT_GOAL := all

PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc
WERROR  ?= 1

ifeq ($(SANITIZE),1)
BUILD ?= build/asan
else ifeq ($(TSAN),1)
BUILD ?= build/tsan
else ifeq ($(FUZZ),1)
BUILD ?= build/fuzz
CC := clang
else
BUILD ?= build
endif

DRIVERS := aws azure gcp onprem
# External drivers: drivers/<name>/ with its own Makefile (a copy of the
# template drivers/lambda/Makefile), built against the staged SDK
# ($(BUILD)/stage) through pkg-config only, as a third party builds one.
# A name in both lists is built as an external driver.
EXT_DRIVERS ?= lambda
DRIVERS := $(filter-out $(EXT_DRIVERS),$(DRIVERS))

# `make V=1` shows full command lines.
ifeq ($(V),1)
Q :=
say = @true
else
Q := @
say = @printf '  %-6s %s\n' $(1) $(2)
endif

# ---------------------------------------------------------------- flags
WARN := -Wall -Wextra -Wpedantic -Wshadow -Wformat=2 -Wstrict-prototypes \
        -Wmissing-prototypes -Wvla -Wno-format-nonliteral
ifeq ($(WERROR),1)
WARN += -Werror
endif
OPT := -O2 -g -fstack-protector-strong -D_FORTIFY_SOURCE=2
SAN :=
ifeq ($(SANITIZE),1)
OPT := -O1 -g -fno-omit-frame-pointer
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
endif
ifeq ($(TSAN),1)
OPT := -O1 -g -fno-omit-frame-pointer
SAN := -fsanitize=thread
endif
ifeq ($(FUZZ),1)
OPT := -O1 -g -fno-omit-frame-pointer
SAN := -fsanitize=fuzzer-no-link,address,undefined
endif

# core/ is in layers, lowest first.  A layer's files are compiled with
# the include paths of its own folder and the folders below it only, so an
# include of a higher layer fails the build (HACKING.md, "Layers").
CORE_LAYERS := base model host store plan engine app wire daemon cli
layers_upto = $(wordlist 1,$(call layer_pos,$(1)),$(CORE_LAYERS))
layer_pos = $(strip $(foreach i,$(shell seq 1 $(words $(CORE_LAYERS))),$(if $(filter $(1),$(word $(i),$(CORE_LAYERS))),$(i))))
layer_inc = $(foreach l,$(call layers_upto,$(1)),-Icore/$(l))
CPPFLAGS_BASE := -D_GNU_SOURCE -Icore/include -DGB_PREFIX='"$(PREFIX)"'
# tests, benchmarks and cloudsim see every layer
CPPFLAGS_ALL := $(CPPFLAGS_BASE) $(foreach l,$(CORE_LAYERS),-Icore/$(l)) -Idrivers/common
# drivers see only the public header and the driver SDK (drivers/common)
CPPFLAGS_DRV := -D_GNU_SOURCE -Icore/include -Idrivers/common
CFLAGS_ALL = -std=c11 $(WARN) $(OPT) $(SAN) -MMD -MP $(PKG_CFLAGS) $(CFLAGS)
LDFLAGS_ALL = $(SAN) $(LDFLAGS)
# Drivers: hidden visibility (only the entry symbol is exported), and
# -z defs proves they resolve only against their own libraries and the
# host table -- never against core symbols.
DRV_CFLAGS = -fPIC -fvisibility=hidden
DRV_LDFLAGS = -shared $(if $(SAN),,-Wl,-z,defs)

# ---------------------------------------------------------------- config
CONFIG_MK := $(BUILD)/config.mk
# `make probe` alone needs only nvcc (a GPU node without the Debian
# build dependencies can build the probe)
NO_CONFIG_GOALS := clean help distclean probe $(BUILD)/bin/gpuprobe
ifneq ($(filter-out $(NO_CONFIG_GOALS),$(or $(MAKECMDGOALS),all)),)
include $(CONFIG_MK)
endif
NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))

$(CONFIG_MK): scripts/configure.sh scripts/deps.sh
	@scripts/configure.sh $@

# ---------------------------------------------------------------- sources
CORE_SRCS := $(filter-out core/cli/main.c,$(foreach l,$(CORE_LAYERS),$(wildcard core/$(l)/*.c)))
CORE_OBJS := $(CORE_SRCS:%.c=$(BUILD)/obj/%.o)
# The API's description, built into the daemon (GET /v1/openapi.json) and
# installed beside the manual page's documentation (share/doc/gpubroker).
OPENAPI := docs/openapi.json
OPENAPI_OBJ := $(BUILD)/obj/gen/openapi_doc.o
CORE_OBJS += $(OPENAPI_OBJ)
CORE_LIB  := $(BUILD)/obj/libgbcore.a

# The driver SDK: drivers/common, linked into every shipped driver and
# installed (headers, static library, gpubroker-driver-sdk.pc) for
# third-party drivers.  Compiled -fPIC -fvisibility=hidden (DRV_CFLAGS):
# it goes into shared objects and exports nothing from them.
DRVC_SRCS := $(wildcard drivers/common/*.c)
DRVC_OBJS := $(DRVC_SRCS:%.c=$(BUILD)/obj/%.o)
DRVC_LIB  := $(BUILD)/obj/libgpubroker-driver-sdk.a
SDK_HDRS  := $(wildcard drivers/common/*.h)

# drivers/<d>/*.c -> $(BUILD)/obj/drivers/<d>/*.o -> lib<d>.a and <d>.so
drv_srcs = $(wildcard drivers/$(1)/*.c)
drv_objs = $(patsubst %.c,$(BUILD)/obj/%.o,$(call drv_srcs,$(1)))
DRV_SOS  := $(DRIVERS:%=$(BUILD)/lib/gpubroker/drivers/%.so)
# Every driver's objects as an archive, for the unit tests of its
# internals only (tests/unit/test_<d>.c): an external driver's shared
# object never comes from these -- its own Makefile builds it from the
# staged SDK.
DRV_LIBS_A := $(DRIVERS:%=$(BUILD)/obj/drivers/lib%.a) \
              $(EXT_DRIVERS:%=$(BUILD)/obj/drivers/lib%.a)

BIN      := $(BUILD)/bin/gpubroker
CLOUDSIM := $(BUILD)/bin/cloudsim
# gpubroker-agent: a separate program (agent/), its own objects; it
# includes nothing of core/ (libcurl and jansson only; NVML by dlopen).
# jansson is linked in statically (libjansson-dev's libjansson.a): a
# stock Ubuntu/Debian GPU image has libcurl but not libjansson, and the
# agent's package depends on what the image has only (AGENT_JANSSON=-ljansson
# links it dynamically).
AGENT_JANSSON ?= -Wl,-Bstatic -ljansson -Wl,-Bdynamic
AGENT     := $(BUILD)/bin/gpubroker-agent
AGENT_SRCS := $(wildcard agent/*.c)
AGENT_OBJS := $(AGENT_SRCS:%.c=$(BUILD)/obj/%.o)
# the tests' stand-in for the NVIDIA driver's NVML (tests/agent/)
FAKE_NVML := $(BUILD)/tests/libnvidia-ml.so.1
SIM_SRCS := $(wildcard tests/cloudsim/*.c)
SIM_OBJS := $(SIM_SRCS:%.c=$(BUILD)/obj/%.o)

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
TESTLIB_SRCS := $(wildcard tests/lib/*.c)
TESTLIB_OBJS := $(TESTLIB_SRCS:%.c=$(BUILD)/obj/%.o)
DTEST_SRCS := $(wildcard tests/drivers/test_*.c)
# Deliberately broken / fake driver .so files used by the tests.
FAKEDRV_SRCS := $(wildcard tests/drivers/fake/*.c)
FAKEDRV_SOS := $(FAKEDRV_SRCS:tests/drivers/fake/%.c=$(BUILD)/tests/fakedrv/%.so)

BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)

FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/fuzz/%)

PROBE_SRC := drivers/onprem/probe/gpuprobe.cu
PROBE_SRCS := $(PROBE_SRC) $(filter-out $(PROBE_SRC),$(wildcard drivers/onprem/probe/*.cu)) \
              $(wildcard drivers/onprem/probe/*.cpp)
PROBE_BIN := $(BUILD)/bin/gpuprobe
# SASS for T4 (sm_75), A100 (sm_80), A10/A10G/A40 (sm_86), L4/L40S (sm_89),
# H100/H200 (sm_90), plus compute_90 PTX that the driver JIT-compiles on
# newer GPUs (Blackwell).  Every toolkit from CUDA 11.8 to 13.x accepts this
# list; override with `make PROBE_GENCODE=...`.
PROBE_GENCODE ?= -gencode arch=compute_75,code=sm_75 \
                 -gencode arch=compute_80,code=sm_80 \
                 -gencode arch=compute_86,code=sm_86 \
                 -gencode arch=compute_89,code=sm_89 \
                 -gencode arch=compute_90,code=sm_90 \
                 -gencode arch=compute_90,code=compute_90

SHARE := $(BUILD)/share/gpubroker
# (external drivers copy their own data)
DATA_SRCS := $(foreach d,$(DRIVERS),$(wildcard drivers/$(d)/data/*))
DATA_OUT := $(DATA_SRCS:drivers/%=$(SHARE)/drivers/%)
POLICY_SRCS := $(wildcard policies/*.lua)
POLICY_OUT := $(POLICY_SRCS:policies/%=$(SHARE)/policies/%)
# the web console's files (served by the daemon; core/daemon/api_console.c)
CONSOLE_SRCS := $(wildcard console/*.html console/*.css console/*.js console/*.svg)
CONSOLE_OUT := $(CONSOLE_SRCS:console/%=$(SHARE)/console/%)

ALL_LINK_LIBS = $(CORE_LIB) $(CORE_LIBS)

# Written by the binary from its own help and command tables: the manual
# page and the shell completions (installed under PREFIX/share).
MAN_OUT := $(BUILD)/share/man/man1/gpubroker.1
COMPLETION_OUT := $(BUILD)/share/bash-completion/completions/gpubroker \
                  $(BUILD)/share/zsh/site-functions/_gpubroker \
                  $(BUILD)/share/fish/vendor_completions.d/gpubroker.fish

# The staging install: driver.h, the SDK and both pkg-config files under
# $(STAGE) (prefix=$(STAGE)), what external drivers are built against.
STAGE := $(abspath $(BUILD)/stage)
STAGE_PC := $(STAGE)/lib/pkgconfig/gpubroker-driver-sdk.pc
EXT_SOS := $(EXT_DRIVERS:%=$(BUILD)/lib/gpubroker/drivers/%.so)

.PHONY: all deps stage FORCE test test-unit test-drivers test-integration test-reliability \
        run bench fuzz fuzz-build install uninstall clean help probe readme-policy \
        docs-config deb

all: $(BIN) $(DRV_SOS) $(STAGE_PC) $(EXT_SOS) $(CLOUDSIM) $(DATA_OUT) $(POLICY_OUT) \
     $(CONSOLE_OUT) $(MAN_OUT) $(COMPLETION_OUT) $(AGENT) probe

deps:
	@scripts/deps.sh && echo "deps: all present"

# ---------------------------------------------------------------- compile
define LAYER_RULE
$(BUILD)/obj/core/$(1)/%.o: core/$(1)/%.c $(CONFIG_MK)
	@mkdir -p $$(@D)
	$$(call say,CC,$$<)
	$$(Q)$$(CC) $$(CPPFLAGS_BASE) $(call layer_inc,$(1)) $$(CFLAGS_ALL) -c $$< -o $$@
endef
$(foreach l,$(CORE_LAYERS),$(eval $(call LAYER_RULE,$(l))))

$(BUILD)/obj/gen/openapi_doc.c: $(OPENAPI) scripts/embed.sh
	@mkdir -p $(@D)
	$(call say,GEN,$@)
	$(Q)scripts/embed.sh gb_openapi_json $(OPENAPI) $@

$(OPENAPI_OBJ): $(BUILD)/obj/gen/openapi_doc.c
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/obj/drivers/%.o: drivers/%.c $(CONFIG_MK)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(CPPFLAGS_DRV) $(CFLAGS_ALL) $(DRV_CFLAGS) -c $< -o $@

$(BUILD)/obj/tests/%.o: tests/%.c $(CONFIG_MK)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(CPPFLAGS_ALL) -Itests/lib $(CFLAGS_ALL) $(CMOCKA_CFLAGS) -c $< -o $@

$(BUILD)/obj/bench/%.o: bench/%.c $(CONFIG_MK)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(CPPFLAGS_ALL) -Itests/lib $(CFLAGS_ALL) -c $< -o $@

# relative includes would get round the include paths: refused too
LAYER_STAMP := $(BUILD)/obj/core/layers.ok
$(LAYER_STAMP): scripts/check_layers.sh $(CORE_SRCS) $(wildcard core/*/*.h drivers/*/*.c drivers/*/*.h)
	@mkdir -p $(@D)
	$(Q)scripts/check_layers.sh
	@touch $@

$(CORE_LIB): $(CORE_OBJS) $(LAYER_STAMP)
	@mkdir -p $(@D)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)$(AR) rcs $@ $(CORE_OBJS)

$(DRVC_LIB): $(DRVC_OBJS)
	@mkdir -p $(@D)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)$(AR) rcs $@ $^

$(BIN): $(BUILD)/obj/core/cli/main.o $(CORE_LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS_ALL) -rdynamic -o $@ $< $(ALL_LINK_LIBS)

$(MAN_OUT): $(BIN)
	@mkdir -p $(@D)
	$(call say,GEN,$@)
	$(Q)$(BIN) help --man >$@.tmp && mv $@.tmp $@

# $(call gen_completion,SHELL): $(BIN) completion SHELL into $@
define gen_completion
	@mkdir -p $(@D)
	$(call say,GEN,$@)
	$(Q)$(BIN) completion $(1) >$@.tmp && mv $@.tmp $@
endef
$(BUILD)/share/bash-completion/completions/gpubroker: $(BIN)
	$(call gen_completion,bash)
$(BUILD)/share/zsh/site-functions/_gpubroker: $(BIN)
	$(call gen_completion,zsh)
$(BUILD)/share/fish/vendor_completions.d/gpubroker.fish: $(BIN)
	$(call gen_completion,fish)

# A driver and the build folders above it, writable by their owner only:
# the loader refuses anything else (README, 'Security rules'), and a
# umask of 002 would make them group-writable.
drv_modes = chmod go-w $(1) $(dir $(1)) $(BUILD) $(BUILD)/lib $(BUILD)/lib/gpubroker $(BUILD)/tests 2>/dev/null || true

define DRIVER_RULES
$(BUILD)/obj/drivers/lib$(1).a: $(call drv_objs,$(1))
	@mkdir -p $$(@D)
	@rm -f $$@
	$$(Q)$$(AR) rcs $$@ $$^
$(BUILD)/lib/gpubroker/drivers/$(1).so: $(call drv_objs,$(1)) $(DRVC_LIB)
	@mkdir -p $$(@D)
	$$(call say,LD,$$@)
	$$(Q)$$(CC) $$(LDFLAGS_ALL) $$(DRV_LDFLAGS) -o $$@ $(call drv_objs,$(1)) $(DRVC_LIB) $$(DRV_LIBS_$(1)) $$(DRV_LIBS)
	@$$(call drv_modes,$$@)
endef
$(foreach d,$(DRIVERS),$(eval $(call DRIVER_RULES,$(d))))
define EXT_TEST_ARCHIVE
$(BUILD)/obj/drivers/lib$(1).a: $(call drv_objs,$(1))
	@mkdir -p $$(@D)
	@rm -f $$@
	$$(Q)$$(AR) rcs $$@ $$^
endef
$(foreach d,$(EXT_DRIVERS),$(eval $(call EXT_TEST_ARCHIVE,$(d))))

# ---------------------------------------------------------------- SDK
GB_VERSION_STR = $(shell sed -n 's/.*GB_VERSION "\(.*\)"/\1/p' core/base/util.h)
GB_ABI_MAJOR = $(shell sed -n 's/^\#define GB_DRIVER_ABI_MAJOR \([0-9]*\).*/\1/p' core/include/gpubroker/driver.h)
# $(call pc_file,NAME,PREFIX,DIR): scripts/NAME.pc.in -> DIR/NAME.pc
pc_file = sed -e 's|@PREFIX@|$(2)|g' -e 's|@VERSION@|$(GB_VERSION_STR)|g' \
	    -e 's|@ABI_MAJOR@|$(GB_ABI_MAJOR)|g' scripts/$(1).pc.in > $(3)/$(1).pc
# $(call install_dev,ROOT,PREFIX): the driver header, the SDK (headers,
# library) and both pkg-config files (saying prefix=PREFIX) under ROOT
define install_dev
	install -d $(1)/include/gpubroker/sdk $(1)/lib/pkgconfig && \
	install -m 0644 core/include/gpubroker/driver.h $(1)/include/gpubroker/ && \
	install -m 0644 $(SDK_HDRS) $(1)/include/gpubroker/sdk/ && \
	install -m 0644 $(DRVC_LIB) $(1)/lib/libgpubroker-driver-sdk.a && \
	$(call pc_file,gpubroker-driver,$(2),$(1)/lib/pkgconfig) && \
	$(call pc_file,gpubroker-driver-sdk,$(2),$(1)/lib/pkgconfig)
endef

stage: $(STAGE_PC)

$(STAGE_PC): $(DRVC_LIB) $(SDK_HDRS) core/include/gpubroker/driver.h core/base/util.h \
             scripts/gpubroker-driver.pc.in scripts/gpubroker-driver-sdk.pc.in
	$(call say,STAGE,$(STAGE))
	$(Q)rm -rf $(STAGE)/include/gpubroker/sdk
	$(Q)$(call install_dev,$(STAGE),$(STAGE))

# An external driver: its own Makefile, the staged SDK through pkg-config
# and nothing else (no -I into core/ or drivers/common).  Its make decides
# whether anything is out of date.  -z defs is the template's, off under
# a sanitizer (as for the shipped drivers).
EXT_CFLAGS = -std=c11 $(WARN) $(OPT) $(SAN) $(CFLAGS)
$(EXT_SOS): $(BUILD)/lib/gpubroker/drivers/%.so: $(STAGE_PC) FORCE
	$(Q)PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig $(MAKE) --no-print-directory $(if $(filter 1,$(V)),,-s) -C drivers/$* \
	    NAME=$* PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig CC="$(CC)" V="$(V)" \
	    CFLAGS="$(EXT_CFLAGS)" LDFLAGS="$(LDFLAGS_ALL)" \
	    OUT=$(abspath $(BUILD)/lib/gpubroker/drivers) OBJ=$(abspath $(BUILD)/obj/ext/$*) \
	    DATA_OUT=$(abspath $(SHARE)/drivers/$*/data)
	@$(call drv_modes,$@)

FORCE:

$(CLOUDSIM): $(SIM_OBJS) $(CORE_LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $(SIM_OBJS) $(ALL_LINK_LIBS)

$(BUILD)/obj/agent/%.o: agent/%.c $(CONFIG_MK)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) -D_GNU_SOURCE $(CFLAGS_ALL) -c $< -o $@

$(AGENT): $(AGENT_OBJS)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $(AGENT_OBJS) -lcurl $(AGENT_JANSSON) -ldl

$(FAKE_NVML): tests/agent/fake_nvml.c $(CONFIG_MK)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) -D_GNU_SOURCE $(CFLAGS_ALL) -fPIC -shared -o $@ $<

$(SHARE)/drivers/%: drivers/%
	@mkdir -p $(@D)
	@cp $< $@

$(SHARE)/policies/%: policies/%
	@mkdir -p $(@D)
	@cp $< $@

$(SHARE)/console/%: console/%
	@mkdir -p $(@D)
	@cp $< $@

# The CUDA probe: built when nvcc exists, skipped with one line otherwise.
probe:
ifneq ($(NVCC),)
	@$(MAKE) --no-print-directory $(PROBE_BIN)
else
	@echo "probe: nvcc not found (PATH or /usr/local/cuda/bin); skipping the CUDA probe"
endif

$(PROBE_BIN): $(PROBE_SRCS) $(wildcard drivers/onprem/probe/*.h)
	@mkdir -p $(@D)
	$(call say,NVCC,$<)
	$(Q)$(NVCC) -O2 -std=c++17 $(PROBE_GENCODE) -Xcompiler -Wall,-Wextra \
	    -o $@ $(PROBE_SRCS) -ldl

# ---------------------------------------------------------------- tests
TEST_LINK = $(TESTLIB_OBJS) $(DRV_LIBS_A) $(DRVC_LIB) $(CORE_LIB) $(CMOCKA_LIBS) $(CORE_LIBS) $(DRV_ALL_LIBS)

$(BUILD)/tests/test_%: $(BUILD)/obj/tests/unit/test_%.o $(TESTLIB_OBJS) $(CORE_LIB) $(DRV_LIBS_A) $(DRVC_LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS_ALL) -rdynamic -o $@ $< $(TEST_LINK)

$(BUILD)/tests/dtest_%: $(BUILD)/obj/tests/drivers/test_%.o $(TESTLIB_OBJS) $(CORE_LIB) $(DRV_LIBS_A) $(DRVC_LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS_ALL) -rdynamic -o $@ $< $(TEST_LINK)

$(BUILD)/tests/fakedrv/%.so: tests/drivers/fake/%.c core/include/gpubroker/driver.h $(CONFIG_MK)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(CPPFLAGS_DRV) $(CFLAGS_ALL) $(DRV_CFLAGS) $(LDFLAGS_ALL) -shared -o $@ $<
	@$(call drv_modes,$@)

DTEST_RUN := $(DTEST_SRCS:tests/drivers/test_%.c=$(BUILD)/tests/dtest_%)

TEST_DEPS := all $(UNIT_BINS) $(DTEST_RUN) $(FAKEDRV_SOS) $(FAKE_NVML)

test: $(TEST_DEPS)
	@BUILD=$(BUILD) SANITIZE=$(SANITIZE) tests/run.sh all

test-unit: all $(UNIT_BINS) $(FAKEDRV_SOS)
	@BUILD=$(BUILD) SANITIZE=$(SANITIZE) tests/run.sh unit

test-drivers: all $(DTEST_RUN)
	@BUILD=$(BUILD) SANITIZE=$(SANITIZE) tests/run.sh drivers

test-integration: all $(FAKE_NVML)
	@BUILD=$(BUILD) SANITIZE=$(SANITIZE) tests/run.sh integration

test-reliability: all $(BENCH_BINS)
	@BUILD=$(BUILD) SANITIZE=$(SANITIZE) tests/run.sh reliability

# ---------------------------------------------------------------- run/bench
run: all
	@BUILD=$(BUILD) KEEP_RUNNING=$(KEEP_RUNNING) scripts/demo.sh

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(CORE_LIB) $(DRV_LIBS_A) $(DRVC_LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS_ALL) -rdynamic -o $@ $< $(DRV_LIBS_A) $(DRVC_LIB) $(CORE_LIB) $(CORE_LIBS) $(DRV_ALL_LIBS)

bench: all $(BENCH_BINS)
	@BUILD=$(BUILD) bench/run.sh

# README.md's table of the fields policies see, from `gpubroker help
# policy` (core/plan/policy_fields.h); tests/integration/
# policy_documented.sh fails while it is stale.
readme-policy: $(BIN)
	scripts/policy_fields_md.sh $(BIN) README.md

docs-config: $(BIN)
	scripts/config_md.sh $(BIN) docs/config.md

# ---------------------------------------------------------------- fuzz
# `make fuzz` builds every libFuzzer target with clang and runs each for
# FUZZ_SECONDS (default 60) over its corpus in tests/fuzz/corpus/<name>/.
FUZZ_SECONDS ?= 60
fuzz:
	@$(MAKE) --no-print-directory FUZZ=1 fuzz-build
	@BUILD=build/fuzz FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh

fuzz-build: $(FUZZ_BINS)

$(BUILD)/fuzz/%: tests/fuzz/%.c $(CORE_LIB) $(DRV_LIBS_A) $(DRVC_LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -fsanitize=fuzzer -o $@ $< $(DRV_LIBS_A) $(DRVC_LIB) $(CORE_LIB) $(CORE_LIBS) $(DRV_ALL_LIBS)

# ---------------------------------------------------------------- install
LIBDIR := $(PREFIX)/lib
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(LIBDIR)/gpubroker/drivers \
	    $(DESTDIR)$(PREFIX)/share/gpubroker/policies
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/gpubroker
	install -m 0755 $(AGENT) $(DESTDIR)$(PREFIX)/bin/gpubroker-agent
	install -d $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 0644 agent/gpubroker-agent.8 $(DESTDIR)$(PREFIX)/share/man/man8/
	install -m 0755 $(DRV_SOS) $(EXT_SOS) $(DESTDIR)$(LIBDIR)/gpubroker/drivers/
	install -m 0644 $(POLICY_SRCS) $(DESTDIR)$(PREFIX)/share/gpubroker/policies/
	install -d $(DESTDIR)$(PREFIX)/share/gpubroker/console
	install -m 0644 $(CONSOLE_SRCS) $(DESTDIR)$(PREFIX)/share/gpubroker/console/
	for f in $(DATA_SRCS); do \
	    d=$(DESTDIR)$(PREFIX)/share/gpubroker/drivers/$$(dirname $${f#drivers/}); \
	    install -d $$d && install -m 0644 $$f $$d/; done
	for x in $(EXT_DRIVERS); do [ -d $(SHARE)/drivers/$$x/data ] || continue; \
	    d=$(DESTDIR)$(PREFIX)/share/gpubroker/drivers/$$x/data; \
	    install -d $$d && install -m 0644 $(SHARE)/drivers/$$x/data/* $$d/; done
	$(call install_dev,$(DESTDIR)$(PREFIX),$(PREFIX))
	if [ -x $(PROBE_BIN) ]; then install -m 0755 $(PROBE_BIN) $(DESTDIR)$(PREFIX)/bin/gpuprobe; fi
	install -d $(DESTDIR)$(PREFIX)/share/doc/gpubroker
	install -m 0644 $(OPENAPI) $(DESTDIR)$(PREFIX)/share/doc/gpubroker/openapi.json
	for f in $(MAN_OUT) $(COMPLETION_OUT); do \
	    d=$(DESTDIR)$(PREFIX)/share/$$(dirname $${f#$(BUILD)/share/}); \
	    install -d $$d && install -m 0644 $$f $$d/; done

# Debian packages of this build (scripts/mkdeb.sh): gpubroker,
# gpubroker-agent, gpubroker-dev and gpubroker-driver-<name>, into $(BUILD)/deb.
deb: all
	@BUILD=$(BUILD) scripts/mkdeb.sh

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/gpubroker $(DESTDIR)$(PREFIX)/bin/gpuprobe \
	    $(DESTDIR)$(PREFIX)/bin/gpubroker-agent \
	    $(DESTDIR)$(PREFIX)/share/man/man8/gpubroker-agent.8 \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/gpubroker-driver.pc \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/gpubroker-driver-sdk.pc \
	    $(DESTDIR)$(LIBDIR)/libgpubroker-driver-sdk.a \
	    $(DESTDIR)$(PREFIX)/include/gpubroker/driver.h \
	    $(DESTDIR)$(PREFIX)/share/man/man1/gpubroker.1 \
	    $(DESTDIR)$(PREFIX)/share/doc/gpubroker/openapi.json \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions/gpubroker \
	    $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_gpubroker \
	    $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/gpubroker.fish
	rm -rf $(DESTDIR)$(LIBDIR)/gpubroker $(DESTDIR)$(PREFIX)/share/gpubroker \
	    $(DESTDIR)$(PREFIX)/include/gpubroker/sdk
	rmdir $(DESTDIR)$(PREFIX)/include/gpubroker $(DESTDIR)$(PREFIX)/share/doc/gpubroker 2>/dev/null || true

clean:
	rm -rf build

help:
	@echo "gpubroker make targets:"
	@echo "  make            build gpubroker, drivers, cloudsim (and the CUDA probe when nvcc exists)"
	@echo "  make deps       install missing Debian packages (apt-get; sudo when not root)"
	@echo "  make run        the demo: cloudsim + daemon + a real apply/status/destroy cycle"
	@echo "  make test       build with -Werror and run every test"
	@echo "  make SANITIZE=1 test   the same under ASan+UBSan (build/asan)"
	@echo "  make TSAN=1 test-reliability   ThreadSanitizer build (build/tsan)"
	@echo "  make test-unit | test-drivers | test-integration | test-reliability"
	@echo "  make bench      benchmarks with targets (see BENCHMARKS.md)"
	@echo "  make fuzz       libFuzzer targets, FUZZ_SECONDS each (default 60)"
	@echo "  make install PREFIX=/usr/local DESTDIR=   |  make uninstall  |  make clean"
	@echo "  make deb        Debian packages (gpubroker, gpubroker-agent, gpubroker-dev, gpubroker-driver-*) in BUILD/deb"
	@echo "          (installs driver.h, the driver SDK and their pkg-config files too)"
	@echo "  make stage      driver.h + SDK + .pc files into BUILD/stage (make all does it)"
	@echo "  make readme-policy   README.md's policy fields from core/plan/policy_fields.h"
	@echo "  make docs-config     docs/config.md from core/model/config.c's key table"
	@echo "  make EXT_DRIVERS='name ...'   also build drivers/<name> with its own Makefile"
	@echo "                  against the staged SDK (drivers/README.md)"

# (not the external drivers' own: their make reads them)
-include $(shell find $(BUILD)/obj -path $(BUILD)/obj/ext -prune -o -name '*.d' -print 2>/dev/null)
