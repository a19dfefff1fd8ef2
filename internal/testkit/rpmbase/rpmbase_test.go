package rpmbase

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A Spec builds to a package with its name, dependencies, files (a
// %config(noreplace) one marked so), directories and scriptlets.
func TestBuild(t *testing.T) {
	if _, err := exec.LookPath("rpmbuild"); err != nil {
		if os.Getenv("REQUIRE_RPM") == "1" {
			t.Fatal("REQUIRE_RPM=1: no rpmbuild")
		}
		t.Skip("no rpmbuild (apt-get install rpm)")
	}
	s := Spec{Name: "stand-in", Version: "1.2", Release: "3.el9",
		Provides: []string{"thing = 1.2"}, Requires: []string{"systemd"}, Obsoletes: []string{"old < 1"},
		Files: map[string]File{
			"/etc/stand-in.conf":  {Content: "a = 1\n", Config: true},
			"/usr/bin/stand-in":   {Content: "#!/usr/bin/python3\n", Mode: 0o755},
			"/usr/share/x/README": {Content: "x\n"},
		},
		Dirs:       []string{"/var/lib/stand-in"},
		Scriptlets: map[string]string{"post": "echo post $1", "preun": "echo preun $1"},
	}
	p, err := Build(context.Background(), t.TempDir(), s)
	if err != nil {
		t.Fatal(err)
	}
	q := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("rpm", append(append([]string{"-qp"}, args...), p)...).Output()
		if err != nil {
			t.Fatalf("rpm -qp %v: %v", args, err)
		}
		return string(out)
	}
	for args, want := range map[string][]string{
		"--qf %{NAME}-%{VERSION}-%{RELEASE}.%{ARCH}": {"stand-in-1.2-3.el9.noarch"},
		"--provides":    {"thing = 1.2", "stand-in = 1.2-3.el9"},
		"--requires":    {"systemd"},
		"--obsoletes":   {"old < 1"},
		"--configfiles": {"/etc/stand-in.conf"},
		"-l":            {"/usr/bin/stand-in", "/usr/share/x/README", "/var/lib/stand-in"},
		"--scripts":     {"echo post $1", "echo preun $1"},
	} {
		out := q(strings.SplitN(args, " ", 2)...)
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("rpm -qp %s: no %q in\n%s", args, w, out)
			}
		}
	}
	if out := q("--requires"); strings.Contains(out, "python") {
		t.Errorf("requirements found in the files:\n%s", out)
	}
	if out := q("--qf", "[%{FILEMODES:perms} %{FILENAMES}\n]"); !strings.Contains(out, "-rwxr-xr-x /usr/bin/stand-in") {
		t.Errorf("modes:\n%s", out)
	}
	if _, err := Build(context.Background(), t.TempDir(), Spec{Name: "x"}); err == nil {
		t.Error("a spec without version built")
	}
}
