// Package cross runs make demo's chain (examples/demo.sh: os-collect-config
// -> os-refresh-config -> os-apply-config, 55-heat-config -> the script
// hook -> heat-config-notify, then tripleo-agent-status) with the binary
// cross-built for each architecture the release ships besides amd64, under
// qemu-user, and checks that every file it writes is the native binary's,
// byte for byte and mode for mode.
//
// The machines have no binfmt_misc: the kernel cannot exec a foreign
// binary, and every program of the chain starts the next one. So the
// demo is given a directory of wrappers in place of bin/: one script,
// tripleo-agent, that runs the foreign binary under qemu-<arch>-static
// with its own invocation name as argv[0] (-0 "$0"), and each program's
// name a link to it, as make build links them to the binary. The
// multi-call binary picks its program from argv[0]'s base name, so a link
// made elsewhere (the demo's hooks/script, which points at tripleo-agent)
// runs the program it is named after, as on a node.
//
// It runs when asked: REQUIRE_CROSS=1 (make cross-test; fails when an
// emulator is missing) or CROSS=1 (skips then). CROSS_ARCHES picks the
// architectures (default "arm64 ppc64le").
package cross

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/qemu"
)

const repo = "../.."

// machines is the ELF machine each cross build must be: a check that the
// binary run under the emulator is a foreign one.
var machines = map[string]elf.Machine{"arm64": elf.EM_AARCH64, "ppc64le": elf.EM_PPC64}

// arches are the GOARCHes to test, each with its emulator's path; it
// skips (fails, with REQUIRE_CROSS=1) when one cannot be tested.
func arches(t *testing.T) map[string]string {
	t.Helper()
	require := os.Getenv("REQUIRE_CROSS") == "1"
	if !require && os.Getenv("CROSS") != "1" {
		t.Skip("cross-builds and runs the chain under qemu-user: set CROSS=1, or REQUIRE_CROSS=1 as make cross-test does")
	}
	skip := t.Skipf
	if require {
		skip = t.Fatalf
	}
	list := strings.Fields(os.Getenv("CROSS_ARCHES"))
	if len(list) == 0 {
		list = []string{"arm64", "ppc64le"}
	}
	out := map[string]string{}
	for _, a := range list {
		q, ok := qemu.Arches[a]
		if !ok {
			t.Fatalf("CROSS_ARCHES: no emulator known for GOARCH=%s", a)
		}
		path, err := exec.LookPath(qemu.Emulator(q))
		if err != nil {
			skip("GOARCH=%s: %v (make deps installs qemu-user-static)", a, err)
		}
		out[a] = path
	}
	return out
}

// build runs make build into dir (for goarch, "" natively).
func build(t *testing.T, dir, goarch string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := []string{"-s", "-C", repo, "build", "BIN=" + dir}
	if goarch != "" {
		args = append(args, "GOARCH="+goarch)
	}
	if out, err := exec.CommandContext(ctx, "make", args...).CombinedOutput(); err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// wrappers makes dir a stand-in for bin (a make build of a foreign
// GOARCH): each of bin's binaries (tripleo-agent, os-apply-config) is a
// script that runs it under emulator, and each of bin's links to them is
// a link to its script. Each run appends the name it was run by to log.
func wrappers(t *testing.T, dir, bin, emulator, log string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(bin)
	if err != nil {
		t.Fatal(err)
	}
	links := 0
	for _, e := range entries {
		switch {
		case e.Type().IsRegular():
			script := "#!/bin/sh\n# No binfmt_misc: the emulator runs the foreign binary, argv[0] names the program.\n" +
				`echo "${0##*/}" >>` + qemu.ShellQuote(log) + "\n" +
				"exec " + qemu.ShellQuote(emulator) + ` -0 "$0" ` + qemu.ShellQuote(filepath.Join(bin, e.Name())) + " \"$@\"\n"
			if err := os.WriteFile(filepath.Join(dir, e.Name()), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
		case e.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(filepath.Join(bin, e.Name()))
			if err != nil || strings.Contains(target, "/") {
				continue
			}
			if err := os.Symlink(target, filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
			links++
		}
	}
	if links == 0 {
		t.Fatalf("%s has no program links to wrap", bin)
	}
}

// demo runs examples/demo.sh with bin as its bin/, keeping its scratch
// directory (KEEP=1) under run; it returns the demo's output and that
// directory.
func demo(t *testing.T, run, bin string) (string, string) {
	t.Helper()
	home, tmp := filepath.Join(run, "home"), filepath.Join(run, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "examples/demo.sh", bin)
	cmd.Dir = repo
	cmd.Env = []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + home, "TMPDIR=" + tmp, "LANG=C.UTF-8", "KEEP=1",
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("sh examples/demo.sh %s: %v\n%s", bin, err, out.String())
	}
	scratch, err := filepath.Glob(filepath.Join(tmp, "tripleo-demo.*"))
	if err != nil || len(scratch) != 1 {
		t.Fatalf("the demo's scratch directory in %s: %q %v\n%s", tmp, scratch, err, out.String())
	}
	for _, bad := range []string{"[ERROR]", "[WARNING]", "Traceback", "qemu:", "Exec format error"} {
		if strings.Contains(out.String(), bad) {
			t.Errorf("the demo's output has %q:\n%s", bad, out.String())
		}
	}
	if !strings.Contains(out.String(), "refresh completed on overcloud-controller-0") {
		t.Errorf("the chain did not reach post-configure:\n%s", out.String())
	}
	return out.String(), scratch[0]
}

// timeRe is an RFC 3339 time as the status records write it.
var timeRe = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"`)

// stamped are the files that record when something happened (the pass's
// status record, the deployment's signal record): their times are masked,
// every other byte compared.
func stamped(rel string) bool {
	return rel == "status/status.json" || strings.HasSuffix(rel, ".signal.json")
}

// tree is every path under scratch (relative) with its type and
// permissions, and its bytes or link target, where the scratch directory's
// and bin's own paths read $SCRATCH and $BIN.
func tree(t *testing.T, scratch, bin string) map[string]string {
	t.Helper()
	norm := func(s string) string {
		return strings.NewReplacer(scratch, "$SCRATCH", bin, "$BIN").Replace(s)
	}
	out := map[string]string{}
	err := filepath.WalkDir(scratch, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(scratch, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			v += " -> " + norm(target)
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s := norm(string(b))
			if stamped(rel) {
				s = timeRe.ReplaceAllString(s, `"$$TIME"`)
			}
			v += "\n" + s
		}
		out[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// diff lists the paths whose entries differ, with both sides.
func diff(native, cross map[string]string) []string {
	var out []string
	for p, n := range native {
		if c, ok := cross[p]; !ok {
			out = append(out, fmt.Sprintf("%s: missing (native: %.200q)", p, n))
		} else if c != n {
			out = append(out, fmt.Sprintf("%s:\n  native: %q\n  cross:  %q", p, n, c))
		}
	}
	for p, c := range cross {
		if _, ok := native[p]; !ok {
			out = append(out, fmt.Sprintf("%s: only under qemu (%.200q)", p, c))
		}
	}
	sort.Strings(out)
	return out
}

// emulated are the programs the demo runs, each of which must have run
// under the emulator.
var emulated = []string{"os-collect-config", "os-refresh-config", "os-apply-config", "tripleo-agent", "script",
	"heat-config-notify", "tripleo-agent-status"}

// TestDemoChainUnderQemu: for each architecture, make demo's whole chain
// run by the cross-built binary under qemu-user writes the native run's
// files: the cache, the rendered templates with their modes, heat-config's
// deployments file and state, the hook's outputs, the status records.
func TestDemoChainUnderQemu(t *testing.T) {
	emulators := arches(t)
	dir := t.TempDir()
	native := filepath.Join(dir, "native")
	build(t, native, "")
	_, nativeScratch := demo(t, filepath.Join(dir, "run-native"), native)
	want := tree(t, nativeScratch, native)
	for _, sub := range []string{"root/etc/nova/nova.conf", "root/var/run/heat-config/heat-config", "cache/os_config_files.json",
		"root/var/lib/heat-config/deployed/2f1c9a57-6d1e-4c8b-9e3a-5b7d0c4e8a21.notify.json"} {
		if _, ok := want[sub]; !ok {
			t.Fatalf("the native run wrote no %s: the comparison would prove little", sub)
		}
	}

	goarches := make([]string, 0, len(emulators))
	for a := range emulators {
		goarches = append(goarches, a)
	}
	sort.Strings(goarches)
	for _, a := range goarches {
		t.Run(a, func(t *testing.T) {
			bin := filepath.Join(dir, a)
			build(t, bin, a)
			for _, b := range []string{"tripleo-agent", "os-apply-config"} {
				f, err := elf.Open(filepath.Join(bin, b))
				if err != nil {
					t.Fatal(err)
				}
				m := f.Machine
				f.Close()
				if m != machines[a] {
					t.Fatalf("make build GOARCH=%s made a %v %s, want %v", a, m, b, machines[a])
				}
			}
			wrapped, log := filepath.Join(dir, a+"-qemu"), filepath.Join(dir, a+"-qemu.log")
			wrappers(t, wrapped, bin, emulators[a], log)
			start := time.Now()
			_, scratch := demo(t, filepath.Join(dir, "run-"+a), wrapped)
			t.Logf("the chain under %s: %.1f s", filepath.Base(emulators[a]), time.Since(start).Seconds())
			ran, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			// Every program of the chain ran emulated (55-heat-config is
			// run as tripleo-agent 55-heat-config).
			for _, p := range emulated {
				if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(p) + `$`).Match(ran) {
					t.Errorf("%s did not run under qemu; the wrappers ran:\n%s", p, ran)
				}
			}
			got := tree(t, scratch, wrapped)
			if d := diff(want, got); len(d) != 0 {
				t.Errorf("GOARCH=%s under qemu wrote other files than the native binary (%d paths):\n%s", a, len(d), strings.Join(d, "\n"))
			}
		})
	}
}
