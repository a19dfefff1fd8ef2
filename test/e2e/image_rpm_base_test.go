package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/rpmbase"
)

// The base package stands, in the image's rpm database, for what a
// Fedora node's base packages give and the Debian root has: rpm then
// resolves the agent's requirements itself, with no --nodeps. It is
// rpmbase's (test/rpm's too) with provides of its own: only what the
// packages require, each checked against the root, with the version the
// root has.

// debianOf maps a capability an RPM may require by name to the Debian
// package that gives it; the base package provides the name, at the
// Debian package's upstream version, only if the root has that package.
var debianOf = map[string]string{
	"bash":          "bash",
	"coreutils":     "coreutils",
	"dbus":          "dbus",
	"findutils":     "findutils",
	"glibc":         "libc6",
	"grep":          "grep",
	"procps-ng":     "procps",
	"sed":           "sed",
	"shadow-utils":  "passwd",
	"systemd":       "systemd",
	"systemd-units": "systemd",
	"systemd-libs":  "libsystemd0",
	"util-linux":    "util-linux",
}

// rpmQuery runs a query of package files with a throw-away database, so
// that the host's own (~/.rpmdb with Debian's rpm) is never opened.
func rpmQuery(ctx context.Context, scratch string, args ...string) ([]string, error) {
	argv := append([]string{"rpm", "--dbpath", filepath.Join(scratch, "querydb"), "-qp"}, args...)
	res, err := Run(ctx, time.Minute, Cmd{Argv: argv})
	if err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, tail(res.Stderr, 2000))
	}
	return strings.Split(strings.TrimSpace(string(res.Stdout)), "\n"), nil
}

// baseProvides is what the base package must provide for pkgs to install
// on root: every requirement of theirs that none of them provides, each
// checked against the root (a path must exist there, a name must be a
// Debian package installed there, see debianOf). A requirement the root
// cannot meet is an error naming it.
func baseProvides(ctx context.Context, scratch, root string, pkgs ...string) ([]string, error) {
	installed, err := debianPackages(ctx, root)
	if err != nil {
		return nil, err
	}
	own := map[string]bool{}
	var requires []string
	for _, p := range pkgs {
		provides, err := rpmQuery(ctx, scratch, "--provides", p)
		if err != nil {
			return nil, err
		}
		files, err := rpmQuery(ctx, scratch, "--list", p)
		if err != nil {
			return nil, err
		}
		for _, c := range append(provides, files...) {
			own[capName(c)] = true
		}
		req, err := rpmQuery(ctx, scratch, "--requires", p)
		if err != nil {
			return nil, err
		}
		requires = append(requires, req...)
	}
	var out, missing []string
	for _, r := range requires {
		name := capName(r)
		switch {
		case name == "" || own[name] || strings.HasPrefix(name, "rpmlib("):
			continue
		case strings.HasPrefix(name, "/"):
			// inside the root: its links are the root's (/bin -> usr/bin)
			if _, err := Run(ctx, time.Minute, Cmd{Argv: []string{"chroot", root, "test", "-e", name}}); err != nil {
				missing = append(missing, r)
				continue
			}
			out = append(out, name)
		default:
			v, ok := installed[debianOf[name]]
			if !ok {
				missing = append(missing, r)
				continue
			}
			out = append(out, name+" = "+v)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the packages require what the Debian root %s does not have (or test/e2e's debianOf does not map): %s",
			root, strings.Join(missing, ", "))
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// capName is a dependency's name: "systemd >= 250" gives "systemd".
func capName(dep string) string {
	name, _, _ := strings.Cut(strings.TrimSpace(dep), " ")
	return name
}

// debianPackages are the root's installed Debian packages with their
// upstream versions (no epoch, no Debian revision), as an RPM's EVR takes
// them.
func debianPackages(ctx context.Context, root string) (map[string]string, error) {
	res, err := Run(ctx, time.Minute, Cmd{Argv: []string{"dpkg-query", "--admindir", filepath.Join(root, "var", "lib", "dpkg"),
		"-W", "-f", "${db:Status-Abbrev} ${Package} ${Version}\n"}})
	if err != nil {
		return nil, fmt.Errorf("dpkg-query in %s: %w\n%s", root, err, res.Stderr)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "ii" {
			continue
		}
		v := f[2]
		if _, after, ok := strings.Cut(v, ":"); ok {
			v = after
		}
		if i := strings.LastIndex(v, "-"); i > 0 {
			v = v[:i]
		}
		out[f[1]] = v
	}
	return out, nil
}

// buildBase builds the base package for pkgs on root under dir (the
// shared rpmbase.Base, with Fedora's default preset policy as its one
// file, providing what baseProvides found), and returns its path and what
// it provides.
func buildBase(ctx context.Context, dir, root string, pkgs ...string) (string, []string, error) {
	provides, err := baseProvides(ctx, dir, root, pkgs...)
	if err != nil {
		return "", nil, err
	}
	spec := rpmbase.Base()
	spec.Provides = provides
	rpm, err := rpmbase.Build(ctx, dir, spec)
	return rpm, provides, err
}
