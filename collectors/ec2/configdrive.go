package ec2

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/proc"
)

const (
	// driveTimeout bounds blkid and mount together.
	driveTimeout = 30 * time.Second
	// umountTimeout is umount's own deadline: it runs even when the
	// look for the drive used up driveTimeout or its caller gave up.
	umountTimeout = 10 * time.Second
	// toolOutput bounds what is kept of a tool's output; blkid's export
	// is about 200 bytes a device.
	toolOutput = 1 << 20
)

// ConfigDrive finds an OpenStack config drive (label config-2, vfat or
// iso9660) with blkid, uses its mount point or mounts it read-only on a
// temporary directory, and reads ec2/latest/meta-data.json. mounts is the
// mount table (/proc/mounts); each command has a deadline.
func ConfigDrive(mounts string) func(ctx context.Context) (jsondoc.Value, error) {
	return func(ctx context.Context) (jsondoc.Value, error) {
		ctx, cancel := context.WithTimeout(ctx, driveTimeout)
		defer cancel()
		out, err := runTool(ctx, 0, false, "blkid", "-o", "export")
		if err != nil {
			return nil, fmt.Errorf("blkid: %w", err)
		}
		dev := findConfigDrive(string(out))
		if dev == "" {
			return nil, fmt.Errorf("no config drive")
		}
		dir := mountPoint(mounts, dev)
		if dir == "" {
			tmp, err := os.MkdirTemp("", "config-2-")
			if err != nil {
				return nil, err
			}
			defer os.Remove(tmp)
			if out, err := runTool(ctx, 0, true, "mount", dev, tmp, "-o", "ro"); err != nil {
				return nil, fmt.Errorf("mount %s: %w: %s", dev, err, out)
			}
			// Best effort, as the reference; a lazy unmount returns at once
			// unless umount itself hangs, which its deadline bounds.
			defer runTool(context.WithoutCancel(ctx), umountTimeout, false, "umount", "-l", tmp) //nolint:errcheck
			dir = tmp
		}
		data, err := os.ReadFile(filepath.Join(dir, "ec2/latest/meta-data.json"))
		if err != nil {
			return nil, err
		}
		return jsondoc.Loads(data)
	}
}

// runTool runs a tool from PATH through internal/proc and returns its
// stdout (and its stderr too when combined); a failure is worded as
// os/exec words it ("exit status 2", "signal: killed").
func runTool(ctx context.Context, timeout time.Duration, combined bool, args ...string) ([]byte, error) {
	out := proc.NewCapture(toolOutput, 0)
	spec := proc.Spec{Path: args[0], Args: args, Stdout: out, Timeout: timeout, Grace: time.Second}
	if combined {
		spec.Stderr = out
	}
	res, err := proc.Run(ctx, spec)
	switch {
	case err != nil:
		return out.Bytes(), err
	case res.Stopped != 0 && ctx.Err() != nil:
		return out.Bytes(), ctx.Err()
	case res.TimedOut:
		return out.Bytes(), fmt.Errorf("timed out after %s", timeout)
	case res.Signal != 0:
		return out.Bytes(), fmt.Errorf("signal: %v", res.Signal)
	case res.ExitCode != 0:
		return out.Bytes(), fmt.Errorf("exit status %d", res.ExitCode)
	case out.Dropped() > 0:
		return nil, fmt.Errorf("output over %d bytes", toolOutput)
	}
	return out.Bytes(), nil
}

// findConfigDrive reads `blkid -o export` (blank-line separated blocks of
// NAME=value, spaces escaped as "\ ") and returns the first config drive.
func findConfigDrive(export string) string {
	for _, block := range strings.Split(export, "\n\n") {
		attrs := map[string]string{}
		for _, line := range strings.Split(block, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				attrs[k] = strings.ReplaceAll(v, `\ `, " ")
			}
		}
		if attrs["LABEL"] == "config-2" && (attrs["TYPE"] == "vfat" || attrs["TYPE"] == "iso9660") {
			return attrs["DEVNAME"]
		}
	}
	return ""
}

// mountPoint is where dev is mounted per the mount table, or "".
func mountPoint(mounts, dev string) string {
	data, err := os.ReadFile(mounts)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == dev {
			return strings.ReplaceAll(f[1], `\040`, " ")
		}
	}
	return ""
}
