// Package netconfig is the os-net-config element's os-refresh-config
// step, configure.d/20-os-net-config: when the metadata has an
// os_net_config key, it runs os-net-config on the file os-apply-config
// rendered from it (/etc/os-net-config/element_config.json). When that
// changed the network, it waits for the metadata server to answer a
// ping; when it failed, it falls back to DHCP on every interface with a
// link (safedefaults.go), so the node can still reach the undercloud.
// A configuration os-net-config could not read, or a metadata server
// endpoint that names no host, is refused before anything runs
// (validate.go): the fallback, which throws the node's bonds, VLANs and
// bridges away, is for a configuration os-net-config failed to apply.
//
// The commands (os-net-config, ip, ping) are looked up on $PATH; every
// path is under $NODECONFIG_ROOT, so tests run recording fakes on a
// fake /sys/class/net.
package netconfig

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tripleo-go/agent/applyconfig/metadata"
	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/proc"
)

// Name is the program's name, in its messages.
const Name = "20-os-net-config"

// RootVar prefixes every path the program reads or writes.
const RootVar = "NODECONFIG_ROOT"

// Paths, under $NODECONFIG_ROOT.
const (
	ElementConfig = "/etc/os-net-config/element_config.json"
	SafeDefaults  = "/etc/os-net-config/dhcp_all_interfaces.yaml"
	DHCPUdevRule  = "/etc/udev/rules.d/99-dhcp-all-interfaces.rules"
	NetClass      = "/sys/class/net"
)

// pingTries is how many pings the metadata server gets, a second apart.
const pingTries = 60

// urlKeys are the metadata's Heat endpoints, in the order they are
// tried; the first that names a host is the metadata server.
var urlKeys = []string{
	"os-collect-config.cfn.metadata_url", "os-collect-config.heat.auth_url",
	"os-collect-config.request.metadata_url", "os-collect-config.zaqar.auth_url",
}

// Env is the world the program runs in.
type Env struct {
	Stdout, Stderr io.Writer
	Environ        []string
	// Sleep waits d (tests: returns at once); nil is a real wait.
	Sleep func(ctx context.Context, d time.Duration) error
}

// ProcessEnv is the Env of the running process.
func ProcessEnv() Env { return Env{Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ()} }

type runner struct {
	env  Env
	root string
	cfg  *jsondoc.Object
}

// errFailed is a failure already reported on stdout or stderr.
var errFailed = errors.New(Name + " failed")

// Run configures the network. It takes no argument. Metadata that
// os-net-config or the ping could not use is one line naming the key,
// exit 1, before anything runs (validate.go).
func Run(ctx context.Context, _ []string, env Env) error {
	r := &runner{env: env, root: environ.Get(env.Environ, RootVar)}
	paths, err := metadata.Files(func(k string) (string, bool) { return environ.Lookup(env.Environ, k) }, r.root)
	if err == nil {
		r.cfg, err = metadata.Read(paths)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", Name, err)
		return exitcode.With(exitcode.Failure, err)
	}
	set, err := checkConfig(metadata.Lookup(r.cfg, Key))
	if err == nil && set {
		err = checkURLs(r.cfg)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", Name, err)
		return exitcode.With(exitcode.Failure, err)
	}
	if !set {
		return nil
	}
	if r.configure(ctx) {
		return nil
	}
	if ctx.Err() == nil {
		r.safeDefaults(ctx)
	}
	if ctx.Err() != nil {
		return exitcode.With(exitcode.Terminated, ctx.Err())
	}
	return exitcode.With(exitcode.Failure, errFailed)
}

// configure applies the element's configuration; false is a failure.
func (r *runner) configure(ctx context.Context) bool {
	switch r.netConfig(ctx, r.root+ElementConfig) {
	case 0:
		return true
	case 2: // changes were made
		if !r.pingMetadataServer(ctx) {
			return false
		}
		// The rule that ran DHCP on every interface at boot is not
		// needed once the network is configured, and could leave DHCP
		// clients running (launchpad bug 1538259).
		if err := os.Remove(r.root + DHCPUdevRule); err != nil && !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(r.env.Stderr, "%s: %v\n", Name, err)
			return false
		}
		return true
	}
	fmt.Fprintln(r.env.Stderr, "ERROR: os-net-config configuration failed.")
	return false
}

// netConfig runs os-net-config on a configuration file, its output
// passed through, and returns its exit status.
func (r *runner) netConfig(ctx context.Context, config string, extra ...string) int {
	args := append([]string{"-c", config, "-v", "--detailed-exit-codes"}, extra...)
	return r.command(ctx, r.env.Stdout, r.env.Stderr, "os-net-config", args...)
}

// command runs name (found on the environment's PATH) and returns its
// status as a shell tells it: 127 when it is not found.
func (r *runner) command(ctx context.Context, stdout, stderr io.Writer, name string, args ...string) int {
	path := lookPath(name, environ.Get(r.env.Environ, "PATH"))
	if path == "" {
		fmt.Fprintf(r.env.Stderr, "%s: %s: command not found\n", Name, name)
		return 127
	}
	res, err := proc.Run(ctx, proc.Spec{Path: path, Args: append([]string{name}, args...), Env: r.env.Environ, Stdout: stdout, Stderr: stderr})
	if err != nil {
		fmt.Fprintf(r.env.Stderr, "%s: %s: %v\n", Name, name, err)
		return 126
	}
	return res.ShellStatus()
}

// lookPath finds an executable name in the directories of path.
func lookPath(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// metadataServer is the host of the first Heat endpoint set in the
// metadata (checkURLs took it: an http or https URL with a host), or "".
// It is the URL's host, not what the reference's sed made of it (from
// "://" to the next colon): that was "[fd00" for an IPv6 literal and
// "host/path" for a URL without a port, which no ping reaches, so that
// a good network change ended in the safe defaults with --cleanup a
// minute later (docs/compat.md).
func (r *runner) metadataServer() string {
	for _, key := range urlKeys {
		v, _ := metadata.Lookup(r.cfg, key)
		s, _ := v.(string)
		if strings.TrimRight(s, "\n") == "" {
			continue
		}
		if u, err := url.Parse(s); err == nil {
			return u.Hostname()
		}
		return ""
	}
	return ""
}

// isLocal tells whether `ip -o a` lists addr on one of our interfaces.
func (r *runner) isLocal(ctx context.Context, addr string) bool {
	var out bytes.Buffer
	if r.command(ctx, &out, io.Discard, "ip", "-o", "a") != 0 && out.Len() == 0 {
		return false
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, "inet "+addr+"/") || strings.Contains(line, "inet6 "+addr+"/") {
			return true
		}
	}
	return false
}

// pingMetadataServer waits until the metadata server answers a ping (a
// remote one; there is nothing to wait for otherwise); false when it
// never did.
func (r *runner) pingMetadataServer(ctx context.Context) bool {
	host := r.metadataServer()
	if host == "" || r.isLocal(ctx, host) {
		fmt.Fprintln(r.env.Stdout, "No metadata IP found. Skipping.")
		return true
	}
	fmt.Fprintf(r.env.Stdout, "Trying to ping metadata IP %s...", host)
	args := []string{"-c", "1", host}
	for tries := 1; ; tries++ {
		if r.command(ctx, io.Discard, io.Discard, "ping", args...) == 0 {
			fmt.Fprintln(r.env.Stdout, "SUCCESS")
			return true
		}
		if r.sleep(ctx) != nil {
			return false
		}
		if tries == pingTries {
			fmt.Fprintln(r.env.Stdout, "FAILURE")
			fmt.Fprintf(r.env.Stderr, "%s is not pingable.\n", host)
			return false
		}
	}
}

func (r *runner) sleep(ctx context.Context) error {
	if r.env.Sleep != nil {
		return r.env.Sleep(ctx, time.Second)
	}
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// readSys is a sysfs attribute as $(cat FILE) gives it: "" when it cannot
// be read (a down interface's carrier).
func readSys(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimRight(string(b), "\n")
}
