// Package install checks what `make install DESTDIR=D PREFIX=/usr` lays
// out: every program, os-refresh-config script and hook is a relative
// link to the agent's binary (os-apply-config is a binary of its own, and
// os-config-applier a link to it), the os-apply-config templates render what the
// heat-config element's did, and the tree works in place under D with the
// programs' environment variables pointing into it.
package install

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/pkgtest"
)

var dest string // the DESTDIR of one make install per test run

func TestMain(m *testing.M) {
	code := func() int {
		dir, err := os.MkdirTemp("", "install-test")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		defer os.RemoveAll(dir + ".bin")
		dest = dir
		return m.Run()
	}()
	os.Exit(code)
}

var installed = func() func(t *testing.T) string {
	var err error
	done := false
	return func(t *testing.T) string {
		t.Helper()
		if testing.Short() {
			t.Skip("runs make install")
		}
		if !done {
			done = true
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			// BIN of our own: other packages' tests may be running the
			// checkout's bin/ meanwhile.
			cmd := exec.CommandContext(ctx, "make", "-s", "-C", "../..", "install", "DESTDIR="+dest, "PREFIX=/usr", "BIN="+dest+".bin")
			var out []byte
			if out, err = cmd.CombinedOutput(); err != nil {
				err = fmt.Errorf("make install: %v\n%s", err, out)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		return dest
	}
}()

// The layout: each name is a link, relative, to the binary.
func TestLayout(t *testing.T) {
	d := installed(t)
	links := []string{}
	for _, p := range []string{"os-apply-config", "os-config-applier", "os-refresh-config", "dib-run-parts", "os-collect-config",
		"heat-config-notify", "heat-config-rebuild-deployed", "tripleo-agent-status",
		"sysctl-set-value", "sysctl-write-value", "sysctl-append-value"} {
		switch target := pkgtest.BinTarget(p); target {
		case "":
			if fi, err := os.Lstat(filepath.Join(d, "usr/bin", p)); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o755 {
				t.Errorf("usr/bin/%s: want a binary of mode 0755 (%v)", p, err)
			}
		case "tripleo-agent":
			links = append(links, "usr/bin/"+p)
		default:
			if l, err := os.Readlink(filepath.Join(d, "usr/bin", p)); err != nil || l != target {
				t.Errorf("usr/bin/%s -> %q (%v), want %s", p, l, err, target)
			}
		}
	}
	for _, s := range []string{"configure.d/20-os-apply-config",
		"configure.d/50-heat-config-docker-cmd", "configure.d/50-heat-config-docker-compose", "configure.d/50-heat-config-kubelet",
		"configure.d/55-heat-config", "post-configure.d/99-refresh-completed"} {
		links = append(links, "usr/libexec/os-refresh-config/"+s)
	}
	// The node's own steps come with their elements, in images only
	// (Makefile: NODE_ELEMENTS): a node that swaps packages gets none.
	for _, s := range []string{"configure.d/10-sysctl-apply-config", "configure.d/20-os-net-config", "configure.d/25-set-network-gateway",
		"configure.d/10-hiera-disable", "configure.d/40-hiera-datafiles", "configure.d/51-hosts"} {
		if _, err := os.Lstat(filepath.Join(d, "usr/libexec/os-refresh-config", s)); err == nil {
			t.Errorf("the package has %s, a step of an image element", s)
		}
	}
	for _, h := range []string{"script", "puppet", "ansible", "hiera", "json-file", "apply-config", "cfn-init", "docker-cmd", "docker-compose", "kubelet", "salt", "chef"} {
		links = append(links, "usr/libexec/heat-config/hooks/"+h)
	}
	bin := filepath.Join(d, "usr/bin/tripleo-agent")
	for _, l := range links {
		p := filepath.Join(d, l)
		target, err := os.Readlink(p)
		if err != nil {
			t.Errorf("%s: %v", l, err)
			continue
		}
		if filepath.IsAbs(target) {
			t.Errorf("%s -> %s is absolute", l, target)
		}
		if resolved, err := filepath.EvalSymlinks(p); err != nil || resolved != bin {
			t.Errorf("%s resolves to %s (%v), want %s", l, resolved, err, bin)
		}
	}
	for _, f := range []string{"var/run/heat-config/heat-config", "var/run/heat-config/heat-config.oac"} {
		if _, err := os.Stat(filepath.Join(d, "usr/libexec/os-apply-config/templates", f)); err != nil {
			t.Error(err)
		}
	}
	// An operator's file is no template of the package's (issue 22):
	// the os-collect-config element carries it for images.
	if _, err := os.Stat(filepath.Join(d, "usr/libexec/os-apply-config/templates/etc")); err == nil {
		t.Error("make install lays out templates under etc/: the renders would overwrite an operator's files")
	}
}

// The installed templates render the deployments list as compact JSON,
// private (it holds credentials), and nothing else.
func TestTemplatesRender(t *testing.T) {
	d := installed(t)
	out := t.TempDir()
	oac(t, d, filepath.Join(d, "usr/libexec/os-apply-config/templates"), out, "testdata/metadata.json")
	checkFile(t, filepath.Join(out, "var/run/heat-config/heat-config"), `[{"id": "x", "inputs": []}]`, 0o600)
	var rendered []string
	filepath.WalkDir(out, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(out, p)
			rendered = append(rendered, rel)
		}
		return nil
	})
	if len(rendered) != 1 {
		t.Errorf("the installed templates rendered %q, want var/run/heat-config/heat-config alone", rendered)
	}
}

// The os-collect-config element's template (images built with the
// element) renders os-collect-config's configuration as TripleO's
// element did (the golden file was checked against it, rendered by the
// Python os-apply-config), private: it holds credentials.
func TestElementTemplateRenders(t *testing.T) {
	d := installed(t)
	out := t.TempDir()
	oac(t, d, filepath.Join(elementsDir, "os-collect-config/os-apply-config"), out, "testdata/metadata.json")
	want, err := os.ReadFile("testdata/os-collect-config.conf.golden")
	if err != nil {
		t.Fatal(err)
	}
	checkFile(t, filepath.Join(out, "etc/os-collect-config.conf"), string(want), 0o600)
	if _, err := os.Stat(filepath.Join(out, "etc/os-collect-config.conf.oac")); err == nil {
		t.Error("a control file was rendered as a file")
	}
}

// Issue 22: a node configured by hand (or by cloud-init) keeps its
// /etc/os-collect-config.conf byte for byte, mode included, through the
// installed os-apply-config, whatever the metadata carries: the package
// renders no file of the operator's.
func TestOperatorConfigKept(t *testing.T) {
	d := installed(t)
	const hand = "# written by hand\n[DEFAULT]\ncommand = /usr/local/sbin/converge\ncollectors = local\n\n[local]\npath = /srv/node-data\n"
	for _, c := range []struct{ name, metadata string }{
		{"no os-collect-config key", `{"deployments": [{"id": "x", "inputs": []}]}`},
		{"no key and no deployments", `{"greeting": "hello"}`},
		{"an os-collect-config key", `{"os-collect-config": {"command": "os-refresh-config", "collectors": ["ec2"]}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			conf := filepath.Join(out, "etc/os-collect-config.conf")
			os.MkdirAll(filepath.Dir(conf), 0o755)
			if err := os.WriteFile(conf, []byte(hand), 0o640); err != nil {
				t.Fatal(err)
			}
			md := filepath.Join(out, "metadata.json")
			os.WriteFile(md, []byte(c.metadata), 0o600)
			oac(t, d, filepath.Join(d, "usr/libexec/os-apply-config/templates"), out, md)
			checkFile(t, conf, hand, 0o640)
		})
	}
}

// oac renders templates into out with the installed os-apply-config.
func oac(t *testing.T, d, templates, out string, metadata ...string) {
	t.Helper()
	args := append([]string{"--output", out, "--metadata"}, metadata...)
	cmd := exec.Command(filepath.Join(d, "usr/bin/os-apply-config"), args...)
	cmd.Env = append(os.Environ(), "OS_CONFIG_APPLIER_TEMPLATES="+templates)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("os-apply-config: %v: %s", err, b)
	}
}

func checkFile(t *testing.T, path, want string, mode os.FileMode) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Errorf("%s: %v\n%s\nwant:\n%s", path, err, got, want)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != mode {
		t.Errorf("%s: %v, want mode %v", path, err, mode)
	}
}

func env(d string, extra ...string) []string {
	return append(append(os.Environ(),
		"PATH="+filepath.Join(d, "usr/bin")+":"+os.Getenv("PATH"),
		"OS_REFRESH_CONFIG_BASE_DIR="+filepath.Join(d, "usr/libexec/os-refresh-config"),
		"OS_CONFIG_APPLIER_TEMPLATES="+filepath.Join(d, "usr/libexec/os-apply-config/templates"),
		"HEAT_CONFIG_HOOKS="+filepath.Join(d, "usr/libexec/heat-config/hooks"),
		"HEAT_CONFIG_NOTIFY="+filepath.Join(d, "usr/bin/heat-config-notify"),
	), extra...)
}

// Each program in usr/bin has its manual page, gzipped, a page that
// names the program and documents its options.
func TestManualPages(t *testing.T) {
	d := installed(t)
	bins, err := os.ReadDir(filepath.Join(d, "usr/bin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bins {
		p := filepath.Join(d, "usr/share/man/man1", b.Name()+".1.gz")
		f, err := os.Open(p)
		if err != nil {
			t.Errorf("%s has no manual page: %v", b.Name(), err)
			continue
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		page, err := io.ReadAll(zr)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		title := ".TH \"" + strings.ToUpper(b.Name()) + "\" 1 "
		if !strings.HasPrefix(string(page), title) || !strings.Contains(string(page), ".SH OPTIONS\n") {
			t.Errorf("%s: not the page of %s:\n%.200s", p, b.Name(), page)
		}
	}
}

// Each program in usr/bin has a bash completion, which bash-completion
// finds by the command's name.
func TestBashCompletions(t *testing.T) {
	d := installed(t)
	bins, err := os.ReadDir(filepath.Join(d, "usr/bin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bins {
		data, err := os.ReadFile(filepath.Join(d, "usr/share/bash-completion/completions", b.Name()))
		if err != nil {
			t.Errorf("%s has no completion: %v", b.Name(), err)
			continue
		}
		if !strings.Contains(string(data), "complete -o default -F _tripleo_agent ") || !strings.Contains(strings.ReplaceAll(string(data), "\n", " "), " "+b.Name()+" ") {
			t.Errorf("%s: the completion does not complete it", b.Name())
		}
	}
}
