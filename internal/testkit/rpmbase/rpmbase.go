// Package rpmbase builds small RPM packages in a test with Debian's
// rpmbuild, and readies a Debian root for rpm transactions: the base
// package that provides, in the rpm database, what the Debian root has
// (/bin/sh, bash, systemd, coreutils...), so that tripleo-agent's rpm
// installs without --nodeps and its scriptlets run; stand-ins of other
// distributions' packages (RDO's os-collect-config) from a Spec; and
// CopyRPM, which puts the host's rpm command in a chroot root, where the
// scriptlets that query the database run (rpm --root runs them
// chrooted). test/rpm and the RPM-installed node of test/e2e share it.
package rpmbase

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// File is one file a Spec ships.
type File struct {
	Content string
	Mode    os.FileMode // 0644 when zero
	// Config marks it %config(noreplace), as a distribution ships a
	// file its administrator edits.
	Config bool
}

// Spec describes a package. Scriptlets are shell bodies keyed by
// section ("pre", "post", "preun", "postun", "posttrans"); Provides,
// Requires and Obsoletes are dependency strings ("systemd",
// "os-collect-config = 12.0.0").
type Spec struct {
	Name, Version, Release string
	Summary                string
	Provides               []string
	Requires               []string
	Obsoletes              []string
	Files                  map[string]File // absolute path -> file
	Dirs                   []string        // directories owned (%dir)
	Scriptlets             map[string]string
}

// BaseProvides is what the base package says the Debian root holds:
// whatever tripleo-agent's rpm and the stand-ins require (the shell its
// scriptlets run in and the commands they call), and the rest of a
// minimal Fedora root's names for what Debian's minbase has.
var BaseProvides = []string{
	"/bin/sh", "/bin/bash", "/usr/bin/sh", "/usr/bin/bash", "bash",
	"coreutils", "grep", "sed", "findutils", "gawk", "util-linux",
	"glibc", "systemd", "systemd-libs", "hostname", "shadow-utils",
}

// FedoraPreset is Fedora's 99-default-disable.preset, which the base
// package ships so that `systemctl preset` in the Debian root does what
// it does on Fedora: a unit no preset names is left disabled (Debian's
// systemd, with no such file, would enable it).
const FedoraPreset = "/usr/lib/systemd/system-preset/99-default-disable.preset"

// Base is the node's base package, tripleo-test-base-1-1.noarch: it
// owns no file of the root but FedoraPreset and provides BaseProvides.
func Base() Spec {
	return Spec{
		Name: "tripleo-test-base", Version: "1", Release: "1",
		Summary:  "What the Debian root of the tests holds, as rpm names it",
		Provides: BaseProvides,
		Files: map[string]File{
			FedoraPreset: {Content: "# Fedora's default: units are enabled by presets that name them.\ndisable *\n"},
		},
	}
}

// Build writes s's spec under dir and builds it with rpmbuild (noarch,
// no build dependencies), returning the package's path in dir.
func Build(ctx context.Context, dir string, s Spec) (string, error) {
	if s.Name == "" || s.Version == "" || s.Release == "" {
		return "", fmt.Errorf("rpmbase: a spec needs a name, a version and a release: %+v", s)
	}
	work, err := os.MkdirTemp(dir, "rpmbuild-"+s.Name+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	stage := filepath.Join(work, "stage")
	for p, f := range s.Files {
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		dst := filepath.Join(stage, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(dst, []byte(f.Content), mode); err != nil {
			return "", err
		}
		if err := os.Chmod(dst, mode); err != nil {
			return "", err
		}
	}
	for _, d := range s.Dirs {
		if err := os.MkdirAll(filepath.Join(stage, d), 0o755); err != nil {
			return "", err
		}
	}
	spec := filepath.Join(work, s.Name+".spec")
	if err := os.WriteFile(spec, []byte(s.text(stage)), 0o644); err != nil {
		return "", err
	}
	out := filepath.Join(work, "rpms")
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "rpmbuild", "-bb", "--nodeps", "--quiet", "--target", "noarch",
		"--define", "_topdir "+filepath.Join(work, "top"),
		"--define", "_rpmdir "+out,
		"--define", "_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm",
		spec)
	cmd.Env = append(os.Environ(), "HOME="+work)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("rpmbuild %s: %v\n%s", s.Name, err, b)
	}
	name := fmt.Sprintf("%s-%s-%s.noarch.rpm", s.Name, s.Version, s.Release)
	dst := filepath.Join(dir, name)
	if err := os.Rename(filepath.Join(out, name), dst); err != nil {
		return "", fmt.Errorf("rpmbase: rpmbuild wrote no %s: %v", name, err)
	}
	return dst, nil
}

// text is the spec file: the staged tree copied in, every file listed.
func (s Spec) text(stage string) string {
	var b strings.Builder
	summary := s.Summary
	if summary == "" {
		summary = "test stand-in for " + s.Name
	}
	fmt.Fprintf(&b, "%%global debug_package %%{nil}\n%%global __os_install_post %%{nil}\n%%global _build_id_links none\n")
	// No dependencies found in the files (a stand-in's python script
	// would need /usr/bin/python3): a Spec says all of its own.
	fmt.Fprintf(&b, "AutoReq: no\n")
	fmt.Fprintf(&b, "Name: %s\nVersion: %s\nRelease: %s\nSummary: %s\nLicense: Apache-2.0\nBuildArch: noarch\n",
		s.Name, s.Version, s.Release, summary)
	for _, l := range [][2]any{{"Provides", s.Provides}, {"Requires", s.Requires}, {"Obsoletes", s.Obsoletes}} {
		for _, d := range l[1].([]string) {
			fmt.Fprintf(&b, "%s: %s\n", l[0], d)
		}
	}
	fmt.Fprintf(&b, "\n%%description\nA package built by a test (internal/testkit/rpmbase).\n\n")
	fmt.Fprintf(&b, "%%prep\n%%build\n%%install\nmkdir -p %%{buildroot}\n")
	if len(s.Files) > 0 || len(s.Dirs) > 0 {
		fmt.Fprintf(&b, "cp -a %s/. %%{buildroot}/\n", stage)
	}
	for _, sec := range []string{"pre", "post", "preun", "postun", "posttrans"} {
		if body, ok := s.Scriptlets[sec]; ok {
			fmt.Fprintf(&b, "\n%%%s\n%s\n", sec, strings.TrimRight(body, "\n"))
		}
	}
	fmt.Fprintf(&b, "\n%%files\n")
	for _, d := range s.Dirs {
		fmt.Fprintf(&b, "%%dir %s\n", d)
	}
	paths := make([]string, 0, len(s.Files))
	for p := range s.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if s.Files[p].Config {
			fmt.Fprintf(&b, "%%config(noreplace) %s\n", p)
		} else {
			fmt.Fprintf(&b, "%s\n", p)
		}
	}
	return b.String()
}

// CopyRPM puts the host's rpm command in root (a Debian root of the same
// release, as the lab's is the host's): /usr/bin/rpm, the shared
// libraries it loads that root lacks, and /usr/lib/rpm (rpmrc, macros),
// so that scriptlets rpm runs chrooted in root can query its database
// (rpm's default path there, as on the host).
func CopyRPM(ctx context.Context, root string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	bin, err := exec.LookPath("rpm")
	if err != nil {
		return err
	}
	if bin, err = filepath.EvalSymlinks(bin); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, "ldd", bin).Output()
	if err != nil {
		return fmt.Errorf("ldd %s: %v", bin, err)
	}
	paths := []string{bin, "/usr/lib/rpm"}
	for _, l := range strings.Split(string(out), "\n") {
		// "libx.so.1 => /lib/x86_64-linux-gnu/libx.so.1 (0x...)" or
		// "/lib64/ld-linux-x86-64.so.2 (0x...)"
		f := strings.Fields(l)
		for _, w := range f {
			if strings.HasPrefix(w, "/") {
				paths = append(paths, w)
				break
			}
		}
	}
	for _, p := range paths {
		if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
			continue
		}
		// cp --parents keeps the path (through the root's /lib -> usr/lib
		// link); -L copies a library's file, not its soname link.
		args := []string{"-a", "--parents", p, root + "/"}
		if !strings.HasPrefix(p, "/usr/lib/rpm") && p != bin {
			args = []string{"-L", "--preserve=mode", "--parents", p, root + "/"}
		}
		if b, err := exec.CommandContext(ctx, "cp", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("cp %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
	return nil
}
