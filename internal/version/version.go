// Package version says which release of the reference programs this
// agent matches: what --version prints, and what the agent tells servers
// it is; and which build of the agent this is.
package version

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Reference is the release of the Python programs (os-apply-config,
// os-collect-config, os-refresh-config) whose behaviour is matched.
const Reference = "12.0.0"

// UserAgent is the User-Agent of the agent's HTTP requests.
const UserAgent = "os-collect-config/" + Reference + " (tripleo-agent)"

// Package is the version of the package the binary was built for, set at
// link time: go build -ldflags "-X
// github.com/tripleo-go/agent/internal/version.Package=1.2-1" (make build
// passes VERSION). Empty in a plain go build.
var Package string

// Commit and Modified are the commit built and "true" when tracked files
// had changes, set at link time by make build from git: Go records them
// itself (vcs.revision, vcs.modified) only in a plain clone, not in a git
// worktree, nor with -buildvcs=false. Go's own record wins when present.
var Commit, Modified string

// Build is what the binary knows of how it was built.
type Build struct {
	// Package is the package version (Package), or "" when not set.
	Package string
	// Revision is the commit built (Go records it for a build in a git
	// checkout or worktree, -trimpath included; "" when built outside
	// one, or with -buildvcs=false); Modified, that tracked files had
	// changes.
	Revision string
	Modified bool
	// Time is the commit's time (RFC 3339), Go the toolchain.
	Time, Go string
}

// Current is this binary's build.
func Current() Build {
	var b Build
	if info, ok := debug.ReadBuildInfo(); ok {
		b = fromInfo(info)
	}
	b.Package = Package
	if b.Revision == "" && Commit != "" {
		b.Revision, b.Modified = Commit, Modified == "true"
	}
	return b
}

func fromInfo(info *debug.BuildInfo) Build {
	b := Build{Go: info.GoVersion}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "vcs.time":
			b.Time = s.Value
		}
	}
	return b
}

// String is the build in one line, e.g. "tripleo-agent 1.2-1 (commit
// 0123456789ab, modified, 2026-11-25T20:00:00Z, go1.26.0); matches the
// Python programs 12.0.0". Unknown parts are said to be unknown.
func (b Build) String() string {
	var details []string
	if b.Revision != "" {
		c := b.Revision
		if len(c) > 12 {
			c = c[:12]
		}
		details = append(details, "commit "+c)
		if b.Modified {
			details = append(details, "modified")
		}
		if b.Time != "" {
			details = append(details, b.Time)
		}
	} else {
		details = append(details, "commit unknown")
	}
	if b.Go != "" {
		details = append(details, b.Go)
	}
	pkg := b.Package
	if pkg == "" {
		pkg = "devel"
	}
	return fmt.Sprintf("tripleo-agent %s (%s); matches the Python programs %s", pkg, strings.Join(details, ", "), Reference)
}
