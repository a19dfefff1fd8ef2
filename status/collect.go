package status

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/tripleo-go/agent/collectors/cache"
	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/proc"
	"github.com/tripleo-go/agent/internal/secret"
	"github.com/tripleo-go/agent/internal/version"
)

// DefaultBundle is where --collect-logs writes without -o, in the
// working directory, as `cloud-init collect-logs` writes cloud-init.tar.gz.
const DefaultBundle = "tripleo-agent-logs.tar.gz"

// Bounds of what the bundle takes from commands and directories.
const (
	journalLines   = 20000
	journalHead    = 1 << 20  // the journal's first MiB...
	journalTail    = 15 << 20 // ...and its last 15
	commandOutput  = 64 << 10 // --version, dpkg -s, systemctl status
	listingEntries = 20000
	harvestBytes   = 64 << 20 // the largest file read for secrets to redact
)

// member is one file of the bundle.
type member struct {
	name string
	data []byte
}

// collectLogs writes the bug-report bundle to out: what an operator
// attaches to a bug, with every credential removed. Nothing of the
// cache's or heat-config's contents goes in, only their listings; the
// configuration files go in with their secrets redacted; every member is
// redacted again, by the values of the secrets found in the
// configuration, the cache and the deployments, and by form (URL
// queries, name=value), so the journal's lines lose them too.
func collectLogs(ctx context.Context, env Env, out string) error {
	if err := checkOutput(out); err != nil {
		return err
	}
	p := pathsOf(env)
	now := now(env).UTC()
	red := &redaction{}
	var ms []member
	add := func(name string, data []byte) { ms = append(ms, member{name, data}) }

	confs := configFiles(env)
	cacheDir, backupDir := env.Root+cache.DefaultDir, env.Root+cache.DefaultBackupDir
	var confText bytes.Buffer
	for _, c := range confs {
		data, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		ini := parseINI(data)
		for k, v := range ini {
			switch {
			case k == "DEFAULT.cachedir" && v != "":
				cacheDir = env.Root + v
			case (k == "DEFAULT.backup_cachedir" || k == "DEFAULT.backup-cachedir") && v != "":
				backupDir = env.Root + v
			}
			if name := k[strings.IndexByte(k, '.')+1:]; secret.SensitiveName(name) {
				red.known = append(red.known, v)
			} else {
				red.harvestURL(v)
			}
		}
		fmt.Fprintf(&confText, "== %s\n%s\n", c, redactINI(data))
	}
	red.harvestDir(cacheDir)
	red.harvestDir(p.deployed)

	rep, err := gather(p)
	if err != nil {
		add("status.txt", []byte(fmt.Sprintf("tripleo-agent-status: %v\n", err)))
	} else {
		var text bytes.Buffer
		writeText(&text, rep, now)
		// & and < as they are: the redaction reads URLs in the text.
		var js bytes.Buffer
		enc := json.NewEncoder(&js)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
		add("status.txt", text.Bytes())
		add("status.json", js.Bytes())
	}
	add("config.txt", confText.Bytes())
	add("cache-listing.txt", listing(cacheDir, backupDir))
	add("deployed-listing.txt", listing(p.deployed))
	add("versions.txt", versions(ctx, env))
	if jc := lookPath(env, "journalctl"); jc != "" {
		add("journal.txt", run(ctx, env, jc, journalHead, journalTail, 2*time.Minute,
			"-u", "os-collect-config", "--no-pager", "-o", "short-iso-precise", "-n", fmt.Sprint(journalLines)))
	} else {
		add("journal.txt", []byte("journalctl: not found; see the os-collect-config log where it goes on this node\n"))
	}
	if sc := lookPath(env, "systemctl"); sc != "" {
		add("systemctl-status.txt", run(ctx, env, sc, commandOutput, 0, 30*time.Second, "status", "--no-pager", "os-collect-config"))
	}
	return writeBundle(out, "tripleo-agent-logs-"+now.Format("20060102T150405Z"), now, ms, red.redactor())
}

// configFiles are os-collect-config's configuration files, where it
// looks for them without --config-file (oslo.config's search).
func configFiles(env Env) []string {
	var out []string
	for _, c := range []string{"/etc/os-collect-config/os-collect-config.conf", "/etc/os-collect-config.conf"} {
		out = append(out, env.Root+c)
	}
	for _, d := range []string{"/etc/os-collect-config/os-collect-config.conf.d", "/etc/os-collect-config.conf.d"} {
		names, _ := filepath.Glob(filepath.Join(env.Root+d, "*.conf"))
		sort.Strings(names)
		out = append(out, names...)
	}
	return out
}

// listing is each directory's entries: mode, size, time, name; never a
// byte of their contents.
func listing(dirs ...string) []byte {
	var b bytes.Buffer
	for _, dir := range dirs {
		fmt.Fprintf(&b, "== %s\n", dir)
		n := 0
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if path == dir && errors.Is(err, fs.ErrNotExist) {
				b.WriteString("(absent)\n")
				return nil
			}
			if err != nil {
				fmt.Fprintf(&b, "%s: %v\n", path, err)
				return nil
			}
			if n++; n > listingEntries {
				return fs.SkipAll
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(dir, path)
			line := fmt.Sprintf("%s %10d %s %s", fi.Mode(), fi.Size(), fi.ModTime().UTC().Format(time.RFC3339), rel)
			if fi.Mode()&fs.ModeSymlink != 0 {
				if t, err := os.Readlink(path); err == nil {
					line += " -> " + t
				}
			}
			b.WriteString(line + "\n")
			return nil
		})
		if n > listingEntries {
			fmt.Fprintf(&b, "(stopped after %d entries)\n", listingEntries)
		}
		if err != nil {
			fmt.Fprintf(&b, "%v\n", err)
		}
	}
	return b.Bytes()
}

// versions are the programs' --version, this binary's build, and the
// package's dpkg record.
func versions(ctx context.Context, env Env) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "tripleo-agent-status: reference %s\n", version.Reference)
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(&b, "build: %s %s", bi.GoVersion, bi.Main.Version)
		for _, s := range bi.Settings {
			if strings.HasPrefix(s.Key, "vcs.") {
				fmt.Fprintf(&b, " %s=%s", s.Key, s.Value)
			}
		}
		b.WriteString("\n")
	}
	for _, prog := range []string{"os-collect-config", "os-refresh-config", "os-apply-config"} {
		fmt.Fprintf(&b, "== %s --version\n", prog)
		if path := lookPath(env, prog); path != "" {
			b.Write(run(ctx, env, path, commandOutput, 0, 10*time.Second, "--version"))
		} else {
			b.WriteString("not found in PATH\n")
		}
	}
	if dpkg := lookPath(env, "dpkg"); dpkg != "" {
		b.WriteString("== dpkg -s tripleo-agent\n")
		b.Write(run(ctx, env, dpkg, commandOutput, 0, 10*time.Second, "-s", "tripleo-agent"))
	}
	return b.Bytes()
}

// lookPath finds prog in the PATH of env ("" when absent).
func lookPath(env Env, prog string) string {
	path, _ := environ.Lookup(env.Environ, "PATH")
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// run runs path with args under a deadline and returns its output, its
// head and tail bounded, and how it ended when not with 0.
func run(ctx context.Context, env Env, path string, head, tail int, timeout time.Duration, args ...string) []byte {
	c := proc.NewCapture(head, tail)
	res, err := proc.Run(ctx, proc.Spec{Path: path, Args: append([]string{path}, args...), Env: env.Environ, Stdout: c, Stderr: c, Timeout: timeout, Grace: time.Second})
	out := c.Bytes()
	if d := c.Dropped(); d > 0 {
		out = append(out, fmt.Sprintf("\n(%d bytes dropped from the middle)\n", d)...)
	}
	switch {
	case err != nil:
		out = append(out, fmt.Sprintf("(%s: %v)\n", filepath.Base(path), err)...)
	case res.TimedOut:
		out = append(out, fmt.Sprintf("(%s: stopped after %s)\n", filepath.Base(path), timeout)...)
	case res.Returncode() != 0:
		out = append(out, fmt.Sprintf("(%s: exit %d)\n", filepath.Base(path), res.Returncode())...)
	}
	return out
}
