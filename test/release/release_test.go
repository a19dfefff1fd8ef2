// Package release checks `make release` (packaging/release.sh): two clean
// clones of HEAD, built in different directories, at different times,
// under different umasks, time zones and temporary directories, write the
// same bytes; the artefacts are exactly the three architectures' .deb,
// .rpm, tarball and SBOM, and SHA256SUMS over them; each binary is for
// its architecture and the same in the three artefacts of an
// architecture, the one its SBOM describes; and the amd64 tarball is make
// install's tree.
//
// It builds the committed HEAD, not the working tree's changes. Skipped
// under -short, and unless rpmbuild is on PATH or REQUIRE_RELEASE=1
// (which turns every skip into a failure). The Go build cache is shared
// with the caller's (the compiler's own reproducibility is Go's
// guarantee); RELEASE_COLD_CACHE=1 gives each build an empty one.
package release

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/spdx"
)

// arch is one release architecture under its three names.
type arch struct {
	goarch, deb, rpm string
	machine          elf.Machine
}

var arches = []arch{
	{"amd64", "amd64", "x86_64", elf.EM_X86_64},
	{"arm64", "arm64", "aarch64", elf.EM_AARCH64},
	{"ppc64le", "ppc64el", "ppc64le", elf.EM_PPC64},
}

// names are a release's artefacts for VERSION (Debian form) and its
// upstream part and revision.
type names struct{ version, upstream, revision string }

func (n names) deb(a arch) string { return "tripleo-agent_" + n.version + "_" + a.deb + ".deb" }
func (n names) rpm(a arch) string {
	return "tripleo-agent-" + n.upstream + "-" + n.revision + "." + a.rpm + ".rpm"
}
func (n names) base(a arch) string    { return "tripleo-agent-" + n.upstream + "-linux-" + a.goarch }
func (n names) tarball(a arch) string { return n.base(a) + ".tar.gz" }
func (n names) sbom(a arch) string    { return n.base(a) + ".spdx.json" }

// all is every artefact, SHA256SUMS included, sorted.
func (n names) all() []string {
	l := []string{"SHA256SUMS"}
	for _, a := range arches {
		l = append(l, n.deb(a), n.rpm(a), n.tarball(a), n.sbom(a))
	}
	slices.Sort(l)
	return l
}

func requireTools(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: make release builds nine packages, twice")
	}
	required := os.Getenv("REQUIRE_RELEASE") == "1"
	if _, err := exec.LookPath("rpmbuild"); err != nil && !required {
		t.Skip("rpmbuild is not installed (REQUIRE_RELEASE=1 to fail instead)")
	}
	for _, tool := range []string{"git", "make", "go", "dpkg-deb", "rpmbuild", "rpm", "rpm2cpio", "cpio", "tar", "gzip", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("make release needs %s: %v", tool, err)
		}
	}
}

// build is one clean clone and its make release.
type build struct {
	label, dir, out string
	releaseOut      string // RELEASE_OUT, relative to the build's root; "" for the default
	env             []string
	umask           string
	took            time.Duration
}

// cleanEnv is the test's environment without what would choose the
// version, the time or the output for the build, or a make's variables.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "VERSION", "SOURCE_DATE_EPOCH", "RELEASE_OUT", "DEB_OUT", "RPM_OUT", "GOARCH", "TMPDIR",
			"DESTDIR", "PREFIX", "BIN", "STRIP", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "TZ", "LANG", "LC_ALL":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// newBuild is a build in a directory of its own; with out empty, make
// release writes its default, dist/ under the clone.
func newBuild(t *testing.T, label, subdir, out, umask string, extra ...string) *build {
	root := t.TempDir()
	tmp := filepath.Join(root, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	b := &build{label: label, dir: filepath.Join(root, subdir), umask: umask}
	if b.releaseOut = out; out != "" {
		b.out = filepath.Join(root, out)
	} else {
		b.out = filepath.Join(b.dir, "dist")
	}
	b.env = append(cleanEnv(), "TMPDIR="+tmp)
	if os.Getenv("RELEASE_COLD_CACHE") == "1" {
		b.env = append(b.env, "GOCACHE="+filepath.Join(root, "gocache"))
	}
	b.env = append(b.env, extra...)
	return b
}

// run clones src's HEAD and makes the release in it.
func (b *build) run(ctx context.Context, src string) error {
	script := `umask "$UMASK" && git clone -q --no-hardlinks "$SRC" "$DIR" && cd "$DIR" && make release`
	if b.releaseOut != "" {
		script += ` RELEASE_OUT="$OUT"`
	}
	cmd := groupCommand(ctx, "bash", "-c", script)
	cmd.Env = append(b.env, "UMASK="+b.umask, "SRC="+src, "DIR="+b.dir, "OUT="+b.out)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	start := time.Now()
	err := cmd.Run()
	b.took = time.Since(start)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%v, stopped after %s (%v): give go test a longer -timeout", err, b.took.Round(time.Second), ctx.Err())
		}
		return fmt.Errorf("%s: make release: %v\n%s", b.label, err, tail(log.String(), 40))
	}
	return nil
}

// groupCommand runs in a process group of its own, all of which the
// context's end kills: make, go, dpkg-deb and rpmbuild, which would
// otherwise keep the output pipe, and the test, waiting.
func groupCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func output(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	b, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("%s %q: %v\n%s", name, args, err, ee.Stderr)
		}
		t.Fatalf("%s %q: %v", name, args, err)
	}
	return strings.TrimSpace(string(b))
}

func TestReleaseReproducible(t *testing.T) {
	requireTools(t)
	src := repoRoot(t)
	if st := output(t, src, nil, "git", "status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Logf("the checkout has uncommitted changes; the clones build HEAD without them")
	}

	// Two builds as different as one machine allows: directories of
	// different names and depths, their own TMPDIR, umasks, time zones
	// and locales, started a second apart (their clocks differ) and
	// running side by side (nothing shared but the Go caches).
	// The first writes dist/, the second RELEASE_OUT.
	a := newBuild(t, "first", "tripleo-agent", "", "022", "TZ=UTC", "LANG=C")
	b := newBuild(t, "second", "elsewhere/a-longer-name/build", "release-out", "027", "TZ=Pacific/Chatham", "LANG=C.UTF-8")
	// The builds stop half a minute before go test's -timeout would, so
	// that a slow machine gets this test's message, not a panic.
	deadline := time.Now().Add(25 * time.Minute)
	if d, ok := t.Deadline(); ok && d.Add(-30*time.Second).Before(deadline) {
		deadline = d.Add(-30 * time.Second)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if os.Getenv("RELEASE_COLD_CACHE") != "1" {
		warmCache(ctx, t, src)
	}
	errs := make(chan error, 2)
	start := time.Now()
	go func() { errs <- a.run(ctx, src) }()
	time.Sleep(1100 * time.Millisecond)
	go func() { errs <- b.run(ctx, src) }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		return
	}
	t.Logf("make release: %s in %s, %s in %s (side by side: %s)", a.label, a.took.Round(time.Second),
		b.label, b.took.Round(time.Second), time.Since(start).Round(time.Second))

	version := output(t, a.dir, a.env, "bash", "packaging/version.sh")
	epoch := output(t, a.dir, a.env, "bash", "-c", `. packaging/version.sh && echo "$SOURCE_DATE_EPOCH"`)
	upstream := output(t, a.dir, a.env, "bash", "-c", `. packaging/version.sh && version_upstream "$VERSION"`)
	revision := output(t, a.dir, a.env, "bash", "-c", `. packaging/version.sh && version_revision "$VERSION"`)
	n := names{version: version[strings.Index(version, ":")+1:], upstream: upstream, revision: revision}

	t.Run("artefacts", func(t *testing.T) {
		for _, d := range []*build{a, b} {
			if got := listDir(t, d.out); !slices.Equal(got, n.all()) {
				t.Errorf("%s build wrote %q, want %q", d.label, got, n.all())
			}
		}
	})
	t.Run("same bytes", func(t *testing.T) {
		for _, name := range n.all() {
			pa, pb := filepath.Join(a.out, name), filepath.Join(b.out, name)
			ba, errA := os.ReadFile(pa)
			bb, errB := os.ReadFile(pb)
			if errA != nil || errB != nil {
				continue // reported by "artefacts"
			}
			if !bytes.Equal(ba, bb) {
				t.Errorf("%s differs between the builds: %s", name, firstDifference(t, name, pa, pb))
			}
		}
	})
	t.Run("SHA256SUMS", func(t *testing.T) {
		checkSums(t, a, n)
	})
	for _, ar := range arches {
		t.Run(ar.goarch, func(t *testing.T) {
			checkArch(t, a.out, n, ar, epoch)
		})
	}
	t.Run("tarball is make install's tree", func(t *testing.T) {
		checkInstallTree(t, a, n, version, epoch)
	})
}

// warmCache compiles the agent once for each architecture into the
// shared Go build cache, so that the two builds, which run side by side,
// do not both compile everything from cold (CI's first cross build).
func warmCache(ctx context.Context, t *testing.T, src string) {
	t.Helper()
	start := time.Now()
	for _, ar := range arches {
		cmd := groupCommand(ctx, "go", "build", "-trimpath", "-o", os.DevNull, "./cmd/tripleo-agent")
		cmd.Dir = src
		cmd.Env = append(cleanEnv(), "GOWORK=off", "CGO_ENABLED=0", "GOARCH="+ar.goarch)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build for %s: %v\n%s", ar.goarch, err, out)
		}
	}
	t.Logf("Go build cache warmed for %d architectures in %s", len(arches), time.Since(start).Round(time.Second))
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var l []string
	for _, e := range ents {
		l = append(l, e.Name())
	}
	return l
}

// checkSums: SHA256SUMS names every other artefact once, sorted, and
// packaging/README.md's verification passes.
func checkSums(t *testing.T, a *build, n names) {
	b, err := os.ReadFile(filepath.Join(a.out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if raw, err := hex.DecodeString(sum); !ok || err != nil || len(raw) != 32 {
			t.Errorf("SHA256SUMS: not a sha256sum line: %q", line)
		}
		listed = append(listed, name)
	}
	want := slices.DeleteFunc(n.all(), func(s string) bool { return s == "SHA256SUMS" })
	if !slices.Equal(listed, want) {
		t.Errorf("SHA256SUMS lists %q, want %q", listed, want)
	}
	const verify = "cd dist && sha256sum -c SHA256SUMS"
	cmd := exec.Command("bash", "-c", verify)
	cmd.Dir = a.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: %v\n%s", verify, err, out)
	}
}

// checkArch: the tarball's one top directory, its entries' owners and
// times, and its binary; the same binary in the .deb and the .rpm, each
// of them for the architecture; the SBOM valid, naming that binary and
// its modules.
func checkArch(t *testing.T, dir string, n names, ar arch, epoch string) {
	top := n.base(ar)
	entries := readTarGz(t, filepath.Join(dir, n.tarball(ar)))
	var binary []byte
	for i, e := range entries {
		h := e.hdr
		if i == 0 && (h.Name != top+"/" || h.Typeflag != tar.TypeDir) {
			t.Errorf("%s: first entry %q, want the directory %s/", n.tarball(ar), h.Name, top)
		}
		if !strings.HasPrefix(h.Name, top+"/") {
			t.Errorf("%s: %q is outside %s/", n.tarball(ar), h.Name, top)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || fmt.Sprint(h.ModTime.Unix()) != epoch {
			t.Errorf("%s: %s: owner %d:%d (%q:%q), mtime %d; want 0:0, no names, SOURCE_DATE_EPOCH %s",
				n.tarball(ar), h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime.Unix(), epoch)
		}
		if h.Name == top+"/usr/bin/tripleo-agent" && h.Typeflag == tar.TypeReg {
			binary = e.data
		}
	}
	if binary == nil {
		t.Fatalf("%s: no regular file %s/usr/bin/tripleo-agent", n.tarball(ar), top)
	}
	checkELF(t, n.tarball(ar), binary, ar)

	debBin := commandOutput(t, "bash", "-c", `dpkg-deb --fsys-tarfile "$1" | tar -xO ./usr/bin/tripleo-agent`, "-", filepath.Join(dir, n.deb(ar)))
	checkELF(t, n.deb(ar), debBin, ar)
	if got := strings.TrimSpace(string(commandOutput(t, "dpkg-deb", "-f", filepath.Join(dir, n.deb(ar)), "Architecture"))); got != ar.deb {
		t.Errorf("%s: Architecture %q, want %q", n.deb(ar), got, ar.deb)
	}
	rpmBin := commandOutput(t, "bash", "-c", `rpm2cpio "$1" | cpio -i --quiet --to-stdout ./usr/bin/tripleo-agent`, "-", filepath.Join(dir, n.rpm(ar)))
	checkELF(t, n.rpm(ar), rpmBin, ar)
	if got := string(commandOutput(t, "rpm", "-qp", "--qf", "%{ARCH}", filepath.Join(dir, n.rpm(ar)))); got != ar.rpm {
		t.Errorf("%s: ARCH %q, want %q", n.rpm(ar), got, ar.rpm)
	}
	if !bytes.Equal(binary, debBin) || !bytes.Equal(binary, rpmBin) {
		t.Errorf("%s: the tarball's, the .deb's and the .rpm's binaries differ (sha256 %s, %s, %s)",
			ar.goarch, sha(binary), sha(debBin), sha(rpmBin))
	}

	doc, err := os.ReadFile(filepath.Join(dir, n.sbom(ar)))
	if err != nil {
		t.Fatal(err)
	}
	if err := spdx.Validate(doc); err != nil {
		t.Errorf("%s: %v", n.sbom(ar), err)
	}
	var d spdx.Document
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	created, _ := time.Parse(time.RFC3339, d.CreationInfo.Created)
	if d.Name != top || fmt.Sprint(created.Unix()) != epoch {
		t.Errorf("%s: name %q, created %q; want %q and SOURCE_DATE_EPOCH %s", n.sbom(ar), d.Name, d.CreationInfo.Created, top, epoch)
	}
	mods := map[string]string{}
	for _, p := range d.Packages {
		mods[p.Name] = p.VersionInfo
	}
	if main := d.Packages[0]; main.Name != "tripleo-agent" || main.VersionInfo != n.upstream || main.Checksums[0].ChecksumValue != sha(binary) {
		t.Errorf("%s: describes %s %s, SHA-256 %s; want tripleo-agent %s, the binary's %s",
			n.sbom(ar), main.Name, main.VersionInfo, main.Checksums[0].ChecksumValue, n.upstream, sha(binary))
	}
	info, err := buildinfo.Read(bytes.NewReader(binary))
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range info.Deps {
		if dep.Replace != nil {
			dep = dep.Replace
		}
		if mods[dep.Path] != dep.Version {
			t.Errorf("%s: module %s at %q, the binary has %s", n.sbom(ar), dep.Path, mods[dep.Path], dep.Version)
		}
	}
	if len(d.Packages) != len(info.Deps)+2 {
		t.Errorf("%s: %d packages, want %d (the program, stdlib and the binary's modules)", n.sbom(ar), len(d.Packages), len(info.Deps)+2)
	}
}

func checkELF(t *testing.T, what string, b []byte, ar arch) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Errorf("%s: usr/bin/tripleo-agent is not ELF: %v", what, err)
		return
	}
	if f.Machine != ar.machine || f.Data != elf.ELFDATA2LSB || f.Class != elf.ELFCLASS64 {
		t.Errorf("%s: usr/bin/tripleo-agent is %v %v %v, want %v little-endian 64-bit", what, f.Machine, f.Data, f.Class, ar.machine)
	}
	// Static: no interpreter.
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s: usr/bin/tripleo-agent has an interpreter (not static)", what)
		}
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func commandOutput(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, stderr.String())
	}
	return b
}

// checkInstallTree: the amd64 tarball holds, entry for entry (type, mode,
// link target, content), what make install PREFIX=/usr STRIP=1 lays out
// in the same clone with the same version and time.
func checkInstallTree(t *testing.T, a *build, n names, version, epoch string) {
	ar := arches[0]
	dest := filepath.Join(t.TempDir(), "root")
	cmd := exec.Command("make", "-s", "install", "PREFIX=/usr", "STRIP=1", "GOARCH="+ar.goarch,
		"DESTDIR="+dest, "BIN="+filepath.Join(filepath.Dir(dest), "bin"))
	cmd.Dir = a.dir
	cmd.Env = append(slices.Clone(a.env), "VERSION="+version, "SOURCE_DATE_EPOCH="+epoch)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	want := map[string]string{}
	err := filepath.Walk(dest, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == dest {
			return err
		}
		rel, _ := filepath.Rel(dest, p)
		want[rel] = describeFile(t, p, fi)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	top := n.base(ar) + "/"
	for _, e := range readTarGz(t, filepath.Join(a.out, n.tarball(ar))) {
		name := strings.TrimSuffix(strings.TrimPrefix(e.hdr.Name, top), "/")
		if name == "" || e.hdr.Name == top {
			continue
		}
		got[name] = describeEntry(e)
	}
	for _, p := range sortedKeys(want) {
		if g, ok := got[p]; !ok {
			t.Errorf("tarball lacks %s (%s)", p, want[p])
		} else if g != want[p] {
			t.Errorf("tarball's %s is %s, make install's %s", p, g, want[p])
		}
	}
	for _, p := range sortedKeys(got) {
		if _, ok := want[p]; !ok {
			t.Errorf("tarball has %s (%s), which make install does not lay out", p, got[p])
		}
	}
}

func sortedKeys(m map[string]string) []string {
	k := make([]string, 0, len(m))
	for p := range m {
		k = append(k, p)
	}
	slices.Sort(k)
	return k
}

func describeFile(t *testing.T, p string, fi os.FileInfo) string {
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(p)
		if err != nil {
			t.Fatal(err)
		}
		return "link to " + target
	case fi.IsDir():
		return fmt.Sprintf("directory %04o", fi.Mode().Perm())
	default:
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("file %04o sha256 %s", fi.Mode().Perm(), sha(b))
	}
}

func describeEntry(e tarEntry) string {
	switch e.hdr.Typeflag {
	case tar.TypeSymlink:
		return "link to " + e.hdr.Linkname
	case tar.TypeDir:
		return fmt.Sprintf("directory %04o", e.hdr.Mode&0o7777)
	case tar.TypeReg:
		return fmt.Sprintf("file %04o sha256 %s", e.hdr.Mode&0o7777, sha(e.data))
	}
	return fmt.Sprintf("type %q", e.hdr.Typeflag)
}

type tarEntry struct {
	hdr  *tar.Header
	data []byte
}

func readTarGz(t *testing.T, path string) []tarEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	entries, err := readTar(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return entries
}

func readTar(r io.Reader) ([]tarEntry, error) {
	tr := tar.NewReader(r)
	var l []tarEntry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return l, nil
		}
		if err != nil {
			return l, err
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return l, err
		}
		l = append(l, tarEntry{h, data})
	}
}

// firstDifference says where two artefacts of the same name first differ,
// as a reviewer would look: a tarball's first differing entry, a
// package's listing (dpkg-deb -c, rpm -qp --dump), then its header or
// control, then its files; a text's first differing line.
func firstDifference(t *testing.T, name, a, b string) string {
	tool := func(args ...string) func(string) string {
		return func(p string) string {
			out, err := exec.Command(args[0], append(args[1:], p)...).CombinedOutput()
			if err != nil {
				return fmt.Sprintf("(%s: %v) %s", args[0], err, out)
			}
			return string(out)
		}
	}
	tarOf := func(args ...string) func(string) ([]tarEntry, error) {
		return func(p string) ([]tarEntry, error) {
			out, err := exec.Command(args[0], append(args[1:], p)...).Output()
			if err != nil {
				return nil, err
			}
			return readTar(bytes.NewReader(out))
		}
	}
	switch {
	case strings.HasSuffix(name, ".tar.gz"):
		if d := tarDifference(readTarGzErr, a, b); d != "" {
			return d
		}
		return "the tar streams are the same; the gzip layers differ"
	case strings.HasSuffix(name, ".deb"):
		if d := lineDifference("dpkg-deb -c", tool("dpkg-deb", "-c")(a), tool("dpkg-deb", "-c")(b)); d != "" {
			return d
		}
		if d := tarDifference(tarOf("dpkg-deb", "--ctrl-tarfile"), a, b); d != "" {
			return "control: " + d
		}
		if d := tarDifference(tarOf("dpkg-deb", "--fsys-tarfile"), a, b); d != "" {
			return "data: " + d
		}
		return "the listings, control and data are the same; the ar members or their compression differ"
	case strings.HasSuffix(name, ".rpm"):
		dump := tool("rpm", "-qp", "--dump")
		if d := lineDifference("rpm -qp --dump", dump(a), dump(b)); d != "" {
			return d
		}
		xml := tool("rpm", "-qp", "--xml")
		if d := lineDifference("rpm -qp --xml (the header)", xml(a), xml(b)); d != "" {
			return d
		}
		return "the header and the file list are the same; the payload or the signature differ"
	default:
		ba, _ := os.ReadFile(a)
		bb, _ := os.ReadFile(b)
		if d := lineDifference("", string(ba), string(bb)); d != "" {
			return d
		}
		return "the same lines; the bytes differ (line ends or the last newline)"
	}
}

func readTarGzErr(p string) ([]tarEntry, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return readTar(zr)
}

func tarDifference(read func(string) ([]tarEntry, error), a, b string) string {
	ea, errA := read(a)
	eb, errB := read(b)
	if errA != nil || errB != nil {
		return fmt.Sprintf("unreadable: %v, %v", errA, errB)
	}
	for i := 0; i < len(ea) || i < len(eb); i++ {
		if i >= len(ea) || i >= len(eb) {
			return fmt.Sprintf("%d entries in the first, %d in the second", len(ea), len(eb))
		}
		ha, hb := headerText(ea[i].hdr), headerText(eb[i].hdr)
		if ha != hb {
			return fmt.Sprintf("entry %d: %s\n  vs %s", i, ha, hb)
		}
		if !bytes.Equal(ea[i].data, eb[i].data) {
			return fmt.Sprintf("entry %d, %s: contents differ (sha256 %s vs %s)", i, ea[i].hdr.Name, sha(ea[i].data), sha(eb[i].data))
		}
	}
	return ""
}

func headerText(h *tar.Header) string {
	return fmt.Sprintf("%s type %q mode %o owner %d:%d %q:%q mtime %d link %q size %d format %v pax %v",
		h.Name, h.Typeflag, h.Mode, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime.Unix(), h.Linkname, h.Size, h.Format, h.PAXRecords)
}

func lineDifference(what, a, b string) string {
	sa, sb := bufio.NewScanner(strings.NewReader(a)), bufio.NewScanner(strings.NewReader(b))
	sa.Buffer(nil, 1<<24)
	sb.Buffer(nil, 1<<24)
	for line := 1; ; line++ {
		okA, okB := sa.Scan(), sb.Scan()
		if !okA && !okB {
			return ""
		}
		if okA != okB || sa.Text() != sb.Text() {
			return strings.TrimSpace(fmt.Sprintf("%s line %d:", what, line)) + fmt.Sprintf("\n  %q\n  vs %q", sa.Text(), sb.Text())
		}
	}
}
