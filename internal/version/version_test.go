package version

import (
	"runtime/debug"
	"testing"
)

// The build line names the package version and the commit, or says they
// are unknown; it never drops the reference release.
func TestBuildString(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build Build
		want  string
	}{
		{"package and clean commit",
			Build{Package: "1.2-1", Revision: "0123456789abcdef0123456789abcdef01234567", Time: "2026-11-25T20:00:00Z", Go: "go1.26.0"},
			"tripleo-agent 1.2-1 (commit 0123456789ab, 2026-11-25T20:00:00Z, go1.26.0); matches the Python programs 12.0.0"},
		{"modified tree",
			Build{Package: "0.0~git20261125.0123456-1", Revision: "0123456789abcdef", Modified: true, Go: "go1.26.0"},
			"tripleo-agent 0.0~git20261125.0123456-1 (commit 0123456789ab, modified, go1.26.0); matches the Python programs 12.0.0"},
		{"plain go build outside git",
			Build{Go: "go1.26.0"},
			"tripleo-agent devel (commit unknown, go1.26.0); matches the Python programs 12.0.0"},
	} {
		if got := tc.build.String(); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// The commit comes from the vcs settings Go records in the binary.
func TestFromInfo(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.0", Settings: []debug.BuildSetting{
		{Key: "-trimpath", Value: "true"},
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "abc"},
		{Key: "vcs.time", Value: "2026-11-25T20:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	want := Build{Revision: "abc", Modified: true, Time: "2026-11-25T20:00:00Z", Go: "go1.26.0"}
	if got := fromInfo(info); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
