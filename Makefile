# Programs are one multi-call binary, linked under each reference name
# (the sysctl element's helpers too: other elements call them).
PROGRAMS := os-apply-config os-config-applier os-refresh-config dib-run-parts os-collect-config \
            heat-config-notify heat-config-rebuild-deployed tripleo-agent-status \
            sysctl-set-value sysctl-write-value sysctl-append-value
# But for os-apply-config, which is also a binary of its own
# (cmd/os-apply-config: only its packages, 57 inits against 125): it runs
# on every change. os-config-applier, its legacy name, is a link to it;
# os-refresh-config's 20-os-apply-config script stays a link to the agent.
OAC_NAMES := os-apply-config os-config-applier
AGENT_PROGRAMS := $(filter-out $(OAC_NAMES),$(PROGRAMS))
# heat-config's hooks, one link per deployment group (hooks/all).
HOOKS    := script puppet ansible hiera json-file apply-config cfn-init docker-cmd docker-compose kubelet salt chef
# Elements (diskimage-builder's format) whose os-refresh-config scripts
# (links to the binary) make install lays out.
ELEMENTS := $(sort $(patsubst %/,%,$(wildcard elements/*/)))
# The node's own configure steps (TripleO's elements sysctl, os-net-config,
# network-gateway, hiera, hosts) take effect only in images built with
# those elements, as with TripleO's Python images: a node that swaps the
# Python packages for ours, or a plain Heat server, gets no new step that
# edits /etc/hosts, /etc/sysctl.d or its network. Their programs are in
# the binary; the elements' links reach it. make install lays out the
# scripts of every other element (the agent's and the hooks').
NODE_ELEMENTS := elements/sysctl elements/os-net-config elements/network-gateway elements/hiera elements/hosts
ORC_ELEMENTS  := $(filter-out $(NODE_ELEMENTS),$(ELEMENTS))
# The elements whose os-apply-config templates make install lays out: only
# templates of files the agent owns (heat-config's deployments list). The
# os-collect-config element's template of /etc/os-collect-config.conf, an
# operator's file, renders `command = os-refresh-config` alone when the
# metadata has no os-collect-config key; it takes effect only in images
# built with that element, as with the Python agent (elements/README.md).
# So do the hiera element's hiera.yaml (it would replace the hook's or
# puppet's file on every node) and os-net-config's element_config.json.
TEMPLATE_ELEMENTS := elements/heat-config
PREFIX   ?= /usr/local
DESTDIR  ?=
GO       ?= go
BIN      := bin
# Two modules joined by go.work: the agent (.) and its test bench (tools:
# the benches, fleetsim with gonum/plot, the torture tests with go-fuse).
# ./... stops at tools/go.mod, so the targets that build, vet or test
# everything name both. The agent's own build (build, install, deb) is
# GOWORK=off: its go.mod alone, nothing of the bench's.
PKGS     := ./... ./tools/...
AGENT_GO := GOWORK=off $(GO)
# Workspace mode refuses -mod=mod (readonly, its default, is what it
# does): dropped here so that a GOFLAGS=-mod=mod environment still runs.
GOFLAGS  := $(filter-out -mod=mod,$(GOFLAGS))
export GOFLAGS

.PHONY: build deps test unit race cross-test bench bench-steps bench-go bench-oac bench-orc bench-occ bench-hc heat-agents-test demo install clean fmt systemd-test e2e image-test torture deb rpm fuzz fleet fleet-short release

# Static (no cgo): no libc mapped into every node's daemon (1.7 MiB of
# RSS), and no dependency on the image's glibc. See docs/compat.md for
# what it means for user and group names.
# --version tells the build: VERSION (make deb passes the package's) and
# the commit are linked in (go version -m bin/tripleo-agent shows them).
# Go records the commit itself only in a plain clone (not a git worktree),
# so it is passed too; -buildvcs=auto overrides a GOFLAGS=-buildvcs=false.
GIT_COMMIT   := $(shell GIT_OPTIONAL_LOCKS=0 git rev-parse HEAD 2>/dev/null)
GIT_MODIFIED := $(if $(shell GIT_OPTIONAL_LOCKS=0 git status --porcelain --untracked-files=no 2>/dev/null | head -c1),true)
VERSION_PKG  := github.com/tripleo-go/agent/internal/version
LDFLAGS      := $(if $(VERSION),-X $(VERSION_PKG).Package=$(VERSION)) \
                $(if $(GIT_COMMIT),-X $(VERSION_PKG).Commit=$(GIT_COMMIT)) \
                $(if $(GIT_MODIFIED),-X $(VERSION_PKG).Modified=true)
# GOARCH=arm64 (or ppc64le) cross-builds: the packages' binaries. The
# manual pages and the completion, which the binary writes, then come from
# a native build of the same source beside it ($(BIN)/native).
# STRIP=1 links without the symbol table and DWARF (-s -w), as dh_strip
# leaves a binary (the Go runtime's own tables, which stack traces use,
# stay): the packages' builds, on every architecture without binutils.
HOST_GOARCH  := $(shell GOWORK=off $(GO) env GOHOSTARCH 2>/dev/null)
CROSS        := $(and $(GOARCH),$(filter-out $(HOST_GOARCH),$(GOARCH)))
LDFLAGS      += $(if $(STRIP),-s -w)
GEN_BIN      := $(if $(CROSS),$(BIN)/native,$(BIN))
build:
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(AGENT_GO) build -trimpath -buildvcs=auto -ldflags "$(strip $(LDFLAGS))" -o $(BIN)/tripleo-agent ./cmd/tripleo-agent
	@rm -f $(BIN)/os-apply-config # a link to the agent, from an older build
	CGO_ENABLED=0 $(AGENT_GO) build -trimpath -buildvcs=auto -ldflags "$(strip $(LDFLAGS))" -o $(BIN)/os-apply-config ./cmd/os-apply-config
	@for p in $(AGENT_PROGRAMS); do ln -sf tripleo-agent $(BIN)/$$p; done
	@ln -sf os-apply-config $(BIN)/os-config-applier
	$(if $(CROSS),@mkdir -p $(GEN_BIN) && GOARCH=$(HOST_GOARCH) CGO_ENABLED=0 $(AGENT_GO) build -trimpath -buildvcs=auto -o $(GEN_BIN)/tripleo-agent ./cmd/tripleo-agent)

# The test runs fail when they changed the machine's own agent paths
# (/run/tripleo-agent, /etc/hosts, /var/lib/heat-config...): every test
# keeps to its own root (scripts/hands-off.sh).
HANDS_OFF := bash scripts/hands-off.sh --

# Installs the reference programs and a Go toolchain if missing (root).
deps:
	bash scripts/install-deps.sh

# The whole suite: every package builds (test helpers included), vet,
# the unit tests under the race detector (renders,
# the watcher, the Keystone session and the child processes are
# concurrent), then everything; the differential tests need the reference
# installed (.ci/run installs it) and are skipped without it unless
# REQUIRE_REFERENCE=1 (30 minutes a package: test/release builds two
# releases, six cross builds, from cold caches on a fresh machine). Last,
# every fuzz target for a few seconds. Each step prints its time and
# CPU use after it (scripts/timed.sh). The short tests under the race
# detector wait more than they compute (the CPUs 63% busy at go test's
# default -p of one package per CPU, on 2 cores): RACE_P at a time.
RACE_P ?= 4
# The whole pass waits less (87% busy at one package per CPU): one
# package more than CPUs.
FULL_P ?= 3
TIMED := bash scripts/timed.sh
test: build
	$(TIMED) build $(GO) build $(PKGS)
	$(TIMED) vet $(GO) vet $(PKGS)
	$(TIMED) race-short $(HANDS_OFF) $(GO) test -count=1 -race -short -p $(RACE_P) $(PKGS)
	$(TIMED) full $(HANDS_OFF) $(GO) test -count=1 -timeout 30m -p $(FULL_P) $(PKGS)
	FUZZTIME=$(FUZZTIME_QUICK) GO="$(GO)" $(TIMED) fuzz-quick $(HANDS_OFF) bash scripts/fuzz.sh

# Every fuzz target (go test -fuzz) for FUZZTIME each, then everything
# the fuzzers kept compared with the Python reference; the executions
# per target are printed. make test runs each for FUZZTIME_QUICK.
# FUZZ_REFERENCE=1 also compares each input with the reference while
# fuzzing (slower); FUZZ_MATCH=regexp picks targets (scripts/fuzz.sh).
FUZZTIME       ?= 5m
FUZZTIME_QUICK ?= 3s
fuzz:
	FUZZTIME=$(FUZZTIME) FUZZ_COMPARE=1 GO="$(GO)" bash scripts/fuzz.sh

# The unit tests alone, in seconds: -short skips the differential suites
# and the tests that run the reference as an oracle.
unit:
	$(GO) test -count=1 -short $(PKGS)

race:
	$(GO) test -count=1 -race -short $(PKGS)

# The other architectures the release ships (arm64, ppc64le), under
# Debian's qemu-user-static, without binfmt_misc (scripts/cross-test.sh,
# docs/cross.md): the unit tests (-short) of the packages that touch the
# system, cross-built and run with go test -exec: child processes
# (internal/proc, heatconfig's hook runs), durable writes, os-apply-config
# (rendering, metadata, the writer), the cache, systemd's notifications,
# JSON, the signal body; then make demo's chain run by each cross-built
# binary, its files compared with the native run's (test/cross). A few
# minutes; .ci/run runs it.
CROSS_ARCHES ?= arm64 ppc64le
CROSS_PKGS   := ./internal/proc ./heatconfig ./internal/durable ./applyconfig ./applyconfig/render \
                ./applyconfig/metadata ./applyconfig/control ./applyconfig/writer ./collectors/cache \
                ./systemd ./internal/jsondoc ./signal ./internal/testkit/qemu
cross-test:
	CROSS_ARCHES="$(CROSS_ARCHES)" CROSS_PKGS="$(CROSS_PKGS)" GO="$(GO)" $(HANDS_OFF) bash scripts/cross-test.sh

# os-collect-config's unit under a real systemd, in a throw-away Debian 12
# container (test/systemd; root; installs systemd-container and
# debootstrap if missing and caches the rootfs in
# /var/cache/tripleo-agent-test). make test skips it unless SYSTEMD_LAB=1.
systemd-test:
	REQUIRE_SYSTEMD_LAB=1 $(HANDS_OFF) $(GO) test -count=1 -v -timeout 15m ./test/systemd/

# os-collect-config's collectors against a real Keystone, Heat, Swift and
# Zaqar on 127.0.0.1 (test/e2e; root; installs Debian's packages if
# missing, state in /var/tmp/tripleo-agent-e2e, stops what it started).
# make test skips it unless E2E=1. The tests that count the lab's
# requests run alone; the others side by side, E2E_PARALLEL at a time
# (they wait on the services more than they compute).
E2E_PARALLEL ?= 4
e2e:
	E2E=1 REQUIRE_E2E=1 $(HANDS_OFF) $(GO) test -count=1 -v -timeout 50m -parallel $(E2E_PARALLEL) ./test/e2e/

# The golden image alone (make e2e runs it too): make deb, a debootstrap
# Debian 12 rootfs (cached with test/systemd's), the elements applied with
# scripts/apply-elements, booted under systemd-nspawn against the e2e lab's
# undercloud; and the swap of a Python agent's node to the .deb. Its
# -run matches TestImageRPM too: the node with the agent's RPM (make rpm).
image-test:
	E2E=1 REQUIRE_E2E=1 $(GO) test -count=1 -v -timeout 40m -parallel $(E2E_PARALLEL) -run 'TestImage' ./test/e2e/

# The long mode of tools/torture (make test runs a quick one: a few
# trials of each fault per case, spread over the run, about 90 s on two
# idle cores; quickFaults in tools/torture/trial_test.go): the
# programs SIGKILLed, and the power cut (tools/torture/lazyfs, a FUSE
# filesystem that drops what was not synced), at random instants, then
# run again: os-apply-config (bundled example, 1000-template corpus),
# os-collect-config's pass, 55-heat-config, the whole chain; see
# docs/durability.md. Root and /dev/fuse; TORTURE_KILLS and TORTURE_CUTS
# are trials per case. test/chaos: os-collect-config and
# heat-config-notify behind hostile servers for CHAOS_MINUTES (make test:
# about one minute). test/hostile: a disk filled at 1000 levels in turn
# during a render and a pass (make test tries 24).
torture:
	REQUIRE_TORTURE=1 TORTURE_KILLS=$${TORTURE_KILLS:-400} TORTURE_CUTS=$${TORTURE_CUTS:-400} \
	  CHAOS_MINUTES=$${CHAOS_MINUTES:-10} $(GO) test -count=1 -v -timeout 120m ./tools/torture/... ./test/chaos/
	HOSTILE_DISK_STEPS=$${HOSTILE_DISK_STEPS:-1000} $(GO) test -count=1 -v -timeout 30m -run 'TestFullDiskSweep' ./test/hostile/

# What a fleet costs the undercloud (docs/scale.md), the long mode:
# tools/fleetsim runs 10,000 of our daemons in one process against a
# loopback model of the metadata endpoint (two variants, 13.5 minutes
# each), then with the zaqar collector's websocket against a model of
# Keystone and a Zaqar that pushes (zaqar-push, 23.5 minutes: a 10-minute
# idle stretch; zaqar-push-probes, 7 minutes: 50 daemons among 10,000
# subscribed sockets; their TARGET lines), and 20 of the reference's (5
# minutes); then test/e2e's TestFleet
# runs 200 of ours and 20 of the reference's against the e2e lab's real
# services, 5 idle minutes per transport and agent (root; the lab as
# make e2e starts it). Tables, results and plots land in FLEET_OUT.
FLEET_OUT ?= $(CURDIR)/.bench/fleet
fleet:
	$(GO) run ./tools/fleetsim sim -out $(FLEET_OUT)
	FLEET_LONG=1 FLEET_OUT=$(FLEET_OUT) E2E=1 REQUIRE_E2E=1 $(GO) test -count=1 -v -timeout 150m -run 'TestFleet' ./test/e2e/

# The short simulation .ci/run prints (200 agents, the timeline at a 1 s
# interval, 27 s a variant); make e2e runs TestFleet's short mode.
fleet-short:
	$(GO) run ./tools/fleetsim sim -short

# Go benchmarks, then ours against the reference. 55-heat-config's
# reference is not packaged in Debian: HEAT_AGENTS=<a checkout of
# openstack/heat-agents> adds it to hcbench's table and to occbench's 100 MB inputs.
# os-apply-config twice: on the disk under
# the checkout (.bench/, real durability costs; not /tmp, which is much
# slower for file creation on some VMs) and on tmpfs (the programs' own
# cost, without the filesystem's noise).
# Each bench prints its targets as TARGET lines (benchkit.Target); the
# whole output is kept in BENCH_OUT and tools/benchsummary ends with one
# table of every target and "N PASS, M MISS" (also in BENCH_SUMMARY).
# Logs of make e2e or make fleet given in BENCH_ALSO fill the rows
# measured there. A MISS is informational; a bench that fails (crash,
# wrong output) fails make bench, after the others ran (-k) and the
# summary was printed. One bench at a time (-j1): they time.
BENCH_DISK    ?= $(CURDIR)/.bench/disk
BENCH_TMPFS   ?= /dev/shm/oacbench
BENCH_OUT     ?= $(CURDIR)/.bench/bench.out
BENCH_SUMMARY ?= $(CURDIR)/.bench/summary.txt
BENCH_ALSO    ?=
BENCH_STEPS   := bench-go bench-oac bench-orc bench-occ bench-hc
# A line naming $(MAKE) runs even under make -n: in a dry run it only
# lists the steps, and writes nothing.
DRY_RUN = $(findstring n,$(firstword -$(MAKEFLAGS)))
bench: build
	@if [ -n "$(DRY_RUN)" ]; then $(MAKE) --no-print-directory -n bench-steps; exit 0; fi; \
	  mkdir -p $(dir $(BENCH_OUT)) $(dir $(BENCH_SUMMARY)); \
	  { $(MAKE) --no-print-directory -k -j1 bench-steps; echo $$? >$(BENCH_OUT).rc; } 2>&1 | tee $(BENCH_OUT)
	@echo; $(GO) run ./tools/benchsummary $(BENCH_OUT) $(BENCH_ALSO) | tee $(BENCH_SUMMARY)
	@rc=$$(cat $(BENCH_OUT).rc); rm -f $(BENCH_OUT).rc; \
	  if [ "$$rc" != 0 ]; then echo "make bench: a bench failed (see $(BENCH_OUT))" >&2; exit 1; fi
bench-steps: $(BENCH_STEPS)
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./applyconfig/... ./internal/jsondoc/ ./refresh/... ./collectors/...
bench-oac:
	$(GO) run ./tools/oacbench -ours $(BIN)/os-apply-config -workdir $(BENCH_DISK)
	@if [ -d "$$(dirname $(BENCH_TMPFS))" ]; then \
	  $(GO) run ./tools/oacbench -ours $(BIN)/os-apply-config -workdir $(BENCH_TMPFS); fi
bench-orc:
	$(GO) run ./tools/orcbench -ours $(BIN)/os-refresh-config
bench-occ:
	$(GO) run ./tools/occbench -ours $(BIN)/os-collect-config -workdir $(CURDIR)/.bench/occ $(if $(HEAT_AGENTS),-heat-agents $(HEAT_AGENTS))
bench-hc:
	$(GO) run ./tools/hcbench -ours $(BIN) -workdir $(CURDIR)/.bench/hc $(if $(HEAT_AGENTS),-heat-agents $(HEAT_AGENTS))

# openstack/heat-agents' own tests (tests/test_*.py) against our tree as
# make install lays it out: HEAT_AGENTS=<a checkout of openstack/heat-agents>
# (required); only the tests' paths to the programs are rewritten. One
# line per module; fails on a failure not in scripts/heat-agents-known.txt
# (docs/hooks.md, "heat-agents' own tests").
heat-agents-test:
	@test -n "$(HEAT_AGENTS)" || { echo "make heat-agents-test: set HEAT_AGENTS to a checkout of openstack/heat-agents" >&2; exit 2; }
	HEAT_AGENTS="$(HEAT_AGENTS)" MAKE="$(MAKE)" GO="$(GO)" bash scripts/heat-agents-tests.sh

demo: build
	@sh examples/demo.sh $(BIN)

# Links are relative (libexec/x/y/ is three levels under PREFIX), so the
# tree works in place under DESTDIR with the programs' environment
# variables pointing into it (test/install does that). The programs keep
# the reference's /usr/libexec defaults: with another PREFIX, install
# prints the variables that point them at $(PREFIX)/libexec.
LIBEXEC := $(DESTDIR)$(PREFIX)/libexec
# A manual page for each program in bin/, made by the binary from the
# same data as its --help (tripleo-agent --man PROGRAM), dated from
# SOURCE_DATE_EPOCH when set (make deb sets it), so the build reproduces.
MAN1    := $(DESTDIR)$(PREFIX)/share/man/man1
# bash-completion loads a command's completion from the file of its name.
COMPLETIONS := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN)/tripleo-agent $(DESTDIR)$(PREFIX)/bin/tripleo-agent
	@rm -f $(DESTDIR)$(PREFIX)/bin/os-apply-config # a link to the agent, from an older install
	install -m 0755 $(BIN)/os-apply-config $(DESTDIR)$(PREFIX)/bin/os-apply-config
	@for p in $(AGENT_PROGRAMS); do ln -sfn tripleo-agent $(DESTDIR)$(PREFIX)/bin/$$p; done
	@ln -sfn os-apply-config $(DESTDIR)$(PREFIX)/bin/os-config-applier
	install -d $(LIBEXEC)/os-refresh-config/configure.d $(LIBEXEC)/os-refresh-config/post-configure.d \
	  $(LIBEXEC)/heat-config/hooks $(LIBEXEC)/os-apply-config/templates
	@for h in $(HOOKS); do ln -sfn ../../../bin/tripleo-agent $(LIBEXEC)/heat-config/hooks/$$h; done
	@for e in $(ORC_ELEMENTS); do \
	  if [ -d $$e/os-refresh-config ]; then cp -R --no-dereference --preserve=mode,links --no-preserve=ownership $$e/os-refresh-config/. $(LIBEXEC)/os-refresh-config/; fi; \
	done
	@for e in $(TEMPLATE_ELEMENTS); do \
	  cp -R --preserve=mode --no-preserve=ownership $$e/os-apply-config/. $(LIBEXEC)/os-apply-config/templates/; \
	done
	install -d $(DESTDIR)$(PREFIX)/lib/systemd/system
	sed 's|/usr/local/bin/|$(PREFIX)/bin/|' systemd/os-collect-config.service > $(DESTDIR)$(PREFIX)/lib/systemd/system/os-collect-config.service
	install -d $(MAN1)
	@for p in tripleo-agent $(PROGRAMS); do \
	  $(GEN_BIN)/tripleo-agent --man $$p | gzip -9n > $(MAN1)/$$p.1.gz || exit 1; done
	install -d $(COMPLETIONS)
	$(GEN_BIN)/tripleo-agent --completion bash > $(COMPLETIONS)/tripleo-agent
	@for p in $(PROGRAMS); do ln -sfn tripleo-agent $(COMPLETIONS)/$$p; done
	@if [ "$(PREFIX)" != /usr ]; then \
	  echo "make install: PREFIX=$(PREFIX): the scripts, templates and hooks are under $(PREFIX)/libexec, but the programs"; \
	  echo "  look under /usr/libexec unless told (os-refresh-config would run nothing); point them with"; \
	  echo "  OS_REFRESH_CONFIG_BASE_DIR=$(PREFIX)/libexec/os-refresh-config"; \
	  echo "  OS_CONFIG_APPLIER_TEMPLATES=$(PREFIX)/libexec/os-apply-config/templates"; \
	  echo "  HEAT_CONFIG_HOOKS=$(PREFIX)/libexec/heat-config/hooks"; \
	  echo "  e.g. as Environment= lines of os-collect-config.service (systemctl edit os-collect-config)"; \
	fi

# The Debian package: $(DEB_OUT)/tripleo-agent_<version>_amd64.deb, built
# from make install PREFIX=/usr with plain dpkg-deb, with dh_installsystemd's
# maintainer scripts (packaging/; test/deb installs it in a chroot).
# VERSION=1.2-1 sets the version; by default it comes from git (a vX.Y.Z
# tag, else 0.0~gitDATE.HASH-1; see packaging/build-deb.sh).
# MAINTAINER="Jane Doe <jane@example.org>" sets the Maintainer field (and
# the changelog's signature): whoever builds the package for a
# distribution or a site sets theirs; the default names the project.
DEB_OUT    ?= dist
MAINTAINER ?= TripleO Go agent team <tripleo-go@users.noreply.github.com>
deb:
	MAKE="$(MAKE)" GO="$(GO)" DEB_OUT="$(DEB_OUT)" VERSION="$(VERSION)" DEB_MAINTAINER="$(MAINTAINER)" bash packaging/build-deb.sh

# The RPM: $(RPM_OUT)/tripleo-agent-<Version>-<Release>.<arch>.rpm, the
# same make install PREFIX=/usr built with rpmbuild from
# packaging/rpm/tripleo-agent.spec (Debian's rpm is enough); Version and
# Release are VERSION's two parts, MAINTAINER is the Packager, GOARCH
# picks the architecture (packaging/README.md, "The RPM"; test/rpm).
RPM_OUT ?= dist
rpm:
	MAKE="$(MAKE)" GO="$(GO)" RPM_OUT="$(RPM_OUT)" VERSION="$(VERSION)" RPM_PACKAGER="$(MAINTAINER)" bash packaging/build-rpm.sh

# The release (packaging/release.sh; packaging/README.md, "Release"): for
# amd64, arm64 and ppc64le, the .deb, the .rpm, a tarball of make
# install's tree and the binary's SBOM (SPDX 2.3 JSON), then SHA256SUMS,
# into RELEASE_OUT. The same commit gives the same bytes (test/release).
RELEASE_OUT ?= dist
release:
	MAKE="$(MAKE)" GO="$(GO)" RELEASE_OUT="$(RELEASE_OUT)" VERSION="$(VERSION)" DEB_MAINTAINER="$(MAINTAINER)" RPM_PACKAGER="$(MAINTAINER)" bash packaging/release.sh

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf $(BIN) .bench dist
