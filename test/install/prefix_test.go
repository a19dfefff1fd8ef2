package install

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPrefixNotUsr: make install with a PREFIX other than /usr says where
// the scripts, templates and hooks went and which variable points each
// program there (they keep the reference's /usr/libexec defaults); every
// directory it names exists. With PREFIX=/usr it says nothing.
func TestPrefixNotUsr(t *testing.T) {
	if testing.Short() {
		t.Skip("runs make install")
	}
	install := func(prefix string) (string, string) {
		d := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "make", "-s", "-C", "../..", "install",
			"DESTDIR="+d+"/dest", "PREFIX="+prefix, "BIN="+d+"/bin").CombinedOutput()
		if err != nil {
			t.Fatalf("make install PREFIX=%s: %v\n%s", prefix, err, out)
		}
		return d + "/dest", string(out)
	}
	dest, out := install("/opt/tripleo-agent")
	for v, dir := range map[string]string{
		"OS_REFRESH_CONFIG_BASE_DIR":  "/opt/tripleo-agent/libexec/os-refresh-config",
		"OS_CONFIG_APPLIER_TEMPLATES": "/opt/tripleo-agent/libexec/os-apply-config/templates",
		"HEAT_CONFIG_HOOKS":           "/opt/tripleo-agent/libexec/heat-config/hooks",
	} {
		if !strings.Contains(out, v+"="+dir+"\n") {
			t.Errorf("make install PREFIX=/opt/tripleo-agent does not say %s=%s:\n%s", v, dir, out)
		}
		if entries, err := os.ReadDir(filepath.Join(dest, dir)); err != nil || len(entries) == 0 {
			t.Errorf("%s names %s, which holds nothing under DESTDIR (%v)", v, dir, err)
		}
	}
	if !strings.Contains(out, "/usr/libexec") {
		t.Errorf("make install PREFIX=/opt/tripleo-agent does not say where the programs look by default:\n%s", out)
	}
	if _, out := install("/usr"); strings.TrimSpace(out) != "" {
		t.Errorf("make install PREFIX=/usr printed:\n%s", out)
	}
}
