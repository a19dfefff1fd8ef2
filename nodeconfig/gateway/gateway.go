// Package gateway is the network-gateway element's os-refresh-config
// step, 25-set-network-gateway: the interface the metadata's
// network-config.gateway-dev names becomes GATEWAYDEV in
// /etc/sysconfig/network (ifcfg-style systems), and is restarted
// (ifdown, ifup) to take the default route at once.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/tripleo-go/agent/applyconfig/metadata"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/nodeconfig"
)

// Name is the step's name.
const Name = "25-set-network-gateway"

// Key is the metadata key.
const Key = "network-config.gateway-dev"

// File is the ifcfg network file (under nodeconfig.Env.Root).
const File = "/etc/sysconfig/network"

// device is what an interface name may hold (the kernel's names, ifcfg's
// aliases after a colon); anything else would be taken by sed, or by the
// shell of ifup, for something else.
var device = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.:@-]+$`) })

// setLine finds the line that sets GATEWAYDEV (grep "^\s*GATEWAYDEV=").
var setLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[ \t\n\v\f\r]*GATEWAYDEV=`) })

// Sysconfig is the directory of the RHEL family's network scripts,
// which the element is for.
const Sysconfig = "/etc/sysconfig"

// Run is the step. Bad metadata (network-config not an object, a
// gateway-dev that is not a string naming an interface) is one error
// line naming the key, and nothing changes; so is a node without
// /etc/sysconfig (Debian, Ubuntu), where the element does not belong.
func Run(ctx context.Context, _ []string, env nodeconfig.Env) error {
	log := env.Logger(Name)
	fail := func(err error) error {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	dev, err := gatewayDev(env)
	if err != nil {
		return fail(err)
	}
	if dev == "" {
		fmt.Fprintln(env.Stdout, "$new_gatewaydev not set")
		return nil
	}
	if st, err := os.Stat(env.Path(Sysconfig)); errors.Is(err, fs.ErrNotExist) || err == nil && !st.IsDir() {
		return fail(fmt.Errorf("%s: this node has no %s: the network-gateway element is for the RHEL family's network scripts (ifcfg), not this image's; nothing changed", File, Sysconfig))
	}
	path := nodeconfig.Resolve(env.Path(File))
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail(err)
	}
	data := update(string(old), dev, env)
	if data != string(old) || err != nil {
		if err := nodeconfig.WriteFile(path, []byte(data), nodeconfig.ModeOr(path, 0o644)); err != nil {
			return fail(fmt.Errorf("%s: %w", path, err))
		}
	}
	// Restarted on every run, as the reference does: the route the
	// interface's lease brings must win over one set meanwhile.
	for _, cmd := range []string{"ifdown", "ifup"} {
		if err := env.Command(ctx, nil, cmd, dev); err != nil {
			return fail(err)
		}
	}
	return nil
}

// gatewayDev is the interface the metadata names, "" for none (the key,
// or network-config, absent or null, or an empty string). network-config
// that is not an object, or a value that is not a string naming an
// interface, is an error naming the key.
func gatewayDev(env nodeconfig.Env) (string, error) {
	files, err := env.MetadataFiles()
	if err != nil {
		return "", err
	}
	cfg, err := metadata.Read(files)
	if err != nil {
		return "", err
	}
	parent, _, _ := strings.Cut(Key, ".")
	if v, found := metadata.Lookup(cfg, parent); found {
		if _, ok := v.(*jsondoc.Object); !ok {
			return "", fmt.Errorf("%s is %s, not an object", parent, jsondoc.KindOf(v))
		}
	}
	v, found := metadata.Lookup(cfg, Key)
	if !found || v == "" {
		return "", nil
	}
	dev, ok := v.(string)
	switch {
	case !ok:
		return "", fmt.Errorf("%s is %s, not a string", Key, jsondoc.KindOf(v))
	case strings.ContainsAny(dev, "\x00\n\r"):
		return "", fmt.Errorf("%s holds a NUL or a line break", Key)
	case !device().MatchString(dev):
		return "", fmt.Errorf("%s: %q is not an interface name", Key, dev)
	}
	return dev, nil
}

// update is the file's text with GATEWAYDEV set to dev: when a line sets
// it, every line holding "GATEWAYDEV=" has the rest of it replaced (the
// reference's sed, which also rewrote a commented one); else a line is
// added, on a line of its own even when the file did not end with a
// newline. The lines that set it are shown, as the reference's grep did.
func update(text, dev string, env nodeconfig.Env) string {
	lines := strings.SplitAfter(text, "\n")
	set := false
	for _, l := range lines {
		if setLine().MatchString(l) {
			fmt.Fprint(env.Stdout, strings.TrimSuffix(l, "\n")+"\n")
			set = true
		}
	}
	if !set {
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		return text + "GATEWAYDEV=" + dev + "\n"
	}
	var b strings.Builder
	for _, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		if i := strings.Index(body, "GATEWAYDEV="); i >= 0 {
			body = body[:i] + "GATEWAYDEV=" + dev
		}
		b.WriteString(body)
		if nl {
			b.WriteString("\n")
		}
	}
	return b.String()
}
