package ec2

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

// stubTools puts shell scripts named after the tools first in PATH; each
// appends its argv to calls.
func stubTools(t *testing.T, scripts map[string]string) (calls string) {
	t.Helper()
	bin := t.TempDir()
	calls = filepath.Join(bin, "calls")
	for name, body := range scripts {
		script := "#!/bin/sh\necho \"" + name + " $*\" >>" + calls + "\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	t.Setenv("TMPDIR", t.TempDir())
	return calls
}

const driveExport = "DEVNAME=/dev/sr0\nLABEL=config-2\nTYPE=iso9660\n"

// An unmounted drive is mounted read-only on a temporary directory, read,
// and unmounted lazily.
func TestConfigDriveMountsReadsUnmounts(t *testing.T) {
	calls := stubTools(t, map[string]string{
		"blkid":  "printf '" + driveExport + "'",
		"mount":  "mkdir -p \"$2/ec2/latest\" && echo '{\"instance-id\": \"i-1\"}' >\"$2/ec2/latest/meta-data.json\"",
		"umount": "rm -rf \"$2/ec2\"",
	})
	v, err := ConfigDrive(filepath.Join(t.TempDir(), "no-mounts"))(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := jsondoc.Dumps(v); got != `{"instance-id": "i-1"}` {
		t.Errorf("got %s", got)
	}
	log, _ := os.ReadFile(calls)
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if len(lines) != 3 || lines[0] != "blkid -o export" || !strings.HasPrefix(lines[1], "mount /dev/sr0 ") ||
		!strings.HasSuffix(lines[1], " -o ro") || !strings.HasPrefix(lines[2], "umount -l ") {
		t.Errorf("calls:\n%s", log)
	}
}

// A drive already mounted is read where it is; a failing blkid or mount
// is an error naming the tool.
func TestConfigDriveMountedAndFailures(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "ec2/latest"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ec2/latest/meta-data.json"), []byte(`{"a": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	mounts := filepath.Join(t.TempDir(), "mounts")
	if err := os.WriteFile(mounts, []byte("/dev/sr0 "+dir+" iso9660 ro 0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stubTools(t, map[string]string{"blkid": "printf '" + driveExport + "'", "mount": "echo busy >&2; exit 32"})
	if v, err := ConfigDrive(mounts)(context.Background()); err != nil || jsondoc.Dumps(v) != `{"a": 1}` {
		t.Errorf("mounted drive: %v, %v", v, err)
	}
	if _, err := ConfigDrive(filepath.Join(t.TempDir(), "none"))(context.Background()); err == nil ||
		err.Error() != "mount /dev/sr0: exit status 32: busy\n" {
		t.Errorf("failing mount: %v", err)
	}
	stubTools(t, map[string]string{"blkid": "exit 2"})
	if _, err := ConfigDrive(mounts)(context.Background()); err == nil || err.Error() != "blkid: exit status 2" {
		t.Errorf("failing blkid: %v", err)
	}
}
