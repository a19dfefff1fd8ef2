// Package nodeconfigtest runs a configure step on a table of metadata
// inputs, ours in process on a scratch root and the reference's element
// script in a private mount namespace (its writes land in an overlay of
// /etc), both with the same recording fakes of the commands they run,
// and puts what each left (files, modes, commands run, exit status) in
// one text to compare with a golden file.
package nodeconfigtest

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/nodeconfig"
)

// Update rewrites the golden files from the reference (it needs
// TRIPLEO_IMAGE_ELEMENTS).
var Update = flag.Bool("update", false, "rewrite testdata/golden from the reference's run")

// A Case is one input: the metadata and the files there before.
type Case struct {
	Name string
	// Metadata is the JSON of the one metadata file; "" for none.
	Metadata string
	// Files are the files before the run, by path ("/etc/hosts"); a mode
	// other than 0644 is given as "0600:" before the content.
	Files map[string]string
	// Args are the step's arguments (the sysctl-* helpers take some).
	Args []string
	// Differs, when set, says why ours deliberately leaves something
	// else than the reference: ours is compared with <name>.ours.txt.
	Differs string
	// Dirs are directories there before (with Files' own).
	Dirs []string
	// Dist is what the fake lsb_release -is prints ("Debian" if empty).
	Dist string
	// JQ15 runs the reference with the jq TripleO's nodes had, 1.5, whose
	// -r wins over -a (a string is printed raw, UTF-8 as it is): a
	// wrapper of Debian's jq 1.6 that drops -a when -r is given (jq 1.6
	// prints a `jq -r -a` string as quoted JSON, jq issue 1587).
	JQ15 bool
}

// Watched are the paths whose files the result lists.
var Watched = []string{"/etc/sysctl.d", "/etc/hosts", "/etc/cloud", "/etc/sysconfig"}

// fakes are the commands the steps run, as shell scripts: each records
// its arguments in $FAKE_LOG. sysctl knows a few parameters and refuses
// a value with a double quote or "bad", as the kernel refuses a value it
// cannot parse.
var fakes = map[string]string{
	"sysctl": `if [ "$1" = -a ]; then
  echo "sysctl -a" >>"$FAKE_LOG"
  printf '%s\n' 'kernel.pid_max = 32768' 'net.core.somaxconn = 4096' 'net.ipv4.ip_forward = 0' \
    'net.ipv4.ip_local_reserved_ports = ' 'net.ipv4.tcp_rmem = 4096	131072	6291456' 'vm.swappiness = 60' \
    'kernel.domainname = (none)'
  exit 0
fi
echo "sysctl $*" >>"$FAKE_LOG"
[ "$1" = -p ] || exit 2
grep -v '^#' "$2" | while IFS= read -r l; do
  case $l in *'"'*|*'= bad') echo "sysctl: setting key \"${l%% =*}\": Invalid argument" >&2; exit 255;; esac
  echo "$l"
done
`,
	"ifdown":      `echo "ifdown $*" >>"$FAKE_LOG"` + "\n",
	"ifup":        `echo "ifup $*" >>"$FAKE_LOG"` + "\n",
	"lsb_release": `echo "lsb_release $*" >>"$FAKE_LOG"; echo "${FAKE_DIST:-Debian}"` + "\n",
}

// jq15 is the JQ15 wrapper, put first on PATH as jq.
const jq15 = `raw=0
for a; do [ "$a" = -r ] && raw=1; done
for a; do
  shift
  if [ "$raw" = 1 ] && [ "$a" = -a ]; then continue; fi
  set -- "$@" "$a"
done
exec /usr/bin/jq "$@"
`

// A Step is our program's entry point.
type Step func(ctx context.Context, args []string, env nodeconfig.Env) error

// scratch lays out a case: the root with the files, the fakes, the
// metadata file; it returns the root, the bin directory, the log and the
// metadata path ("" for none).
func scratch(t *testing.T, c Case) (root, bin, log, md string) {
	t.Helper()
	d := t.TempDir()
	root, bin, log = filepath.Join(d, "root"), filepath.Join(d, "bin"), filepath.Join(d, "calls")
	for _, p := range []string{root, bin} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range fakes {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if c.JQ15 {
		if err := os.WriteFile(filepath.Join(bin, "jq"), []byte("#!/bin/sh\n"+jq15), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Dirs {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, content := range c.Files {
		mode := fs.FileMode(0o644)
		if m, rest, ok := strings.Cut(content, ":"); ok && len(m) == 4 && m[0] == '0' {
			fmt.Sscanf(m, "%o", &mode)
			content = rest
		}
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(full, mode) // past the umask
	}
	if c.Metadata != "" {
		md = filepath.Join(d, "metadata.json")
		if err := os.WriteFile(md, []byte(c.Metadata), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, bin, log, md
}

// A Result is what a run left.
type Result struct {
	// Text is the result's text (dump), what the golden files hold.
	Text string
	// Status is the exit status, Err ours' error (nil for the reference).
	Status int
	Err    error
	// Calls are the commands run, one a line, `sysctl -a` included, the
	// root taken out of their arguments; Commands is the same as one text.
	Calls    []string
	Commands string
	// Files are the files under the watched paths afterwards, by path.
	Files map[string]File
	// Stdout and Stderr are the run's output.
	Stdout, Stderr string
	// Before and After are the Trees of the root around our run (the
	// root frozen first): equal when the step changed nothing there.
	Before, After string
}

// RunOurs runs step on the case and returns the result's text.
func RunOurs(t *testing.T, c Case, step Step) string {
	t.Helper()
	return Run(t, c, step).Text
}

// Run runs step on the case, in process on a scratch root with the
// recording fakes on PATH (TMPDIR is a scratch directory too), and
// returns what it did. A failure must be one error line of the step.
func Run(t *testing.T, c Case, step Step) Result {
	t.Helper()
	root, bin, log, md := scratch(t, c)
	tmp := filepath.Join(filepath.Dir(root), "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	env := nodeconfig.Env{
		Stdout: &stdout, Stderr: &stderr, Root: root,
		Environ: []string{"PATH=" + bin + ":/usr/bin:/bin", "OS_CONFIG_FILES=" + md,
			"FAKE_LOG=" + log, "FAKE_DIST=" + c.Dist, "LANG=C.UTF-8", "TMPDIR=" + tmp},
	}
	Freeze(t, root)
	r := Result{Before: Tree(t, root)}
	r.Err = step(context.Background(), c.Args, env)
	r.After = Tree(t, root)
	r.Stdout, r.Stderr = stdout.String(), stderr.String()
	t.Logf("stdout:\n%sstderr:\n%s", r.Stdout, r.Stderr)
	if r.Err != nil && strings.Count(r.Stderr, ": ERROR: ") != 1 {
		t.Errorf("a failure is one error line of the step on stderr, got %q", r.Stderr)
	}
	r.Status = exitcode.Of(r.Err)
	r.Text = dump(t, root, log, r.Status)
	r.Calls = calls(t, root, log)
	if len(r.Calls) > 0 {
		r.Commands = strings.Join(r.Calls, "\n") + "\n"
	}
	r.Files = snapshot(root)
	return r
}

// Refused is the result's text of a run that refused the case: failed,
// nothing run (but `sysctl -a`, which the text leaves out), every file
// as it was.
func Refused(t *testing.T, c Case) string {
	t.Helper()
	root, _, log, _ := scratch(t, c)
	return dump(t, root, log, 1)
}

// RunReference runs the reference's script (a path in the checkout) on
// the case, as root in a mount namespace of its own where /etc is an
// overlay whose writes go to a scratch directory; elementBin is put on
// PATH (the sysctl element's helpers), after the fakes and before
// Debian's os-apply-config and jq.
func RunReference(t *testing.T, c Case, script, elementBin string) string {
	t.Helper()
	return ReferenceResult(t, c, script, elementBin).Text
}

// ReferenceResult is RunReference's whole result.
func ReferenceResult(t *testing.T, c Case, script, elementBin string) Result {
	t.Helper()
	r, _ := ReferenceWithin(t, c, script, elementBin, 0)
	return r
}

// FuzzLimit bounds a reference's run on a fuzz target's input: go test
// -fuzz gives an input 10 s in all (a worker panics past them), ours
// and the reference together.
const FuzzLimit = 7 * time.Second

// ReferenceWithin is ReferenceResult with a deadline (none when limit is
// 0): ok is false when the run took longer and was killed, whole, as
// difftest does with a slow reference; the input is then not compared.
func ReferenceWithin(t *testing.T, c Case, script, elementBin string, limit time.Duration) (r Result, ok bool) {
	t.Helper()
	root, bin, log, md := scratch(t, c)
	out, work := t.TempDir(), t.TempDir()
	var setup strings.Builder
	fmt.Fprintf(&setup, "set -e\nmount -t tmpfs tmpfs %s\nmkdir %s/u %s/w %s/tmp\n", work, work, work, work)
	fmt.Fprintf(&setup, "mount -t overlay overlay -o lowerdir=/etc,upperdir=%s/u,workdir=%s/w /etc\n", work, work)
	for _, p := range Watched {
		fmt.Fprintf(&setup, "rm -rf %s\n", p)
		fmt.Fprintf(&setup, "if [ -e %s%s ]; then cp -a %s%s %s; fi\n", root, p, root, p, p)
	}
	fmt.Fprintf(&setup, "set +e\nTMPDIR=%s/tmp %q %s >%s/stdout 2>%s/stderr\necho $? >%s/status\n",
		work, script, shellWords(c.Args), out, out, out)
	fmt.Fprintf(&setup, "mkdir -p %s/root/etc\nfor p in %s; do [ -e $p ] && cp -a $p %s/root$p; done\nexit 0\n",
		out, strings.Join(Watched, " "), out)
	cmd := exec.Command("unshare", "-m", "--propagation", "private", "bash", "-c", setup.String())
	path := bin + ":" + elementBin + ":/usr/bin:/bin:/usr/sbin:/sbin"
	cmd.Env = []string{"PATH=" + path, "OS_CONFIG_FILES=" + md, "FAKE_LOG=" + log, "FAKE_DIST=" + c.Dist, "LANG=C.UTF-8"}
	b, err := CombinedOutputWithin(cmd, limit)
	if errors.Is(err, ErrSlow) {
		t.Logf("the reference took more than %v: not compared", limit)
		return Result{}, false
	}
	if err != nil {
		t.Fatalf("the reference's run: %v\n%s", err, b)
	}
	so, _ := os.ReadFile(filepath.Join(out, "stdout"))
	se, _ := os.ReadFile(filepath.Join(out, "stderr"))
	t.Logf("reference stdout:\n%sstderr:\n%s", so, se)
	st, _ := os.ReadFile(filepath.Join(out, "status"))
	var status int
	fmt.Sscanf(string(st), "%d", &status)
	return Result{Text: dump(t, filepath.Join(out, "root"), log, status), Status: status,
		Calls: calls(t, root, log), Files: snapshot(filepath.Join(out, "root")), Stdout: string(so), Stderr: string(se)}, true
}

// ErrSlow is CombinedOutputWithin's error when the command took longer
// than its limit.
var ErrSlow = errors.New("the reference took too long")

// CombinedOutputWithin is cmd.CombinedOutput, but past limit (when not
// 0) the command's whole process group is killed and waited for, and
// the error is ErrSlow.
func CombinedOutputWithin(cmd *exec.Cmd, limit time.Duration) ([]byte, error) {
	if limit == 0 {
		return cmd.CombinedOutput()
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.Bytes(), err
	case <-time.After(limit):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return out.Bytes(), ErrSlow
	}
}

// calls are the commands the fakes recorded, root taken out.
func calls(t *testing.T, root, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l != "" {
			out = append(out, strings.ReplaceAll(l, root, ""))
		}
	}
	return out
}

func shellWords(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// dump is the result's text: the exit status (0 or not), the commands
// run (but `sysctl -a`, which ours runs once and the reference once per
// parameter), and each file under the watched paths with its mode and
// quoted bytes. root is taken out of the commands' arguments.
func dump(t *testing.T, root, log string, status int) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "failed: %v\ncommands:\n", status != 0)
	for _, l := range calls(t, root, log) {
		if l != "sysctl -a" {
			b.WriteString("  " + l + "\n")
		}
	}
	b.WriteString("files:\n")
	files := snapshot(root)
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(&b, "  %s %04o %q\n", p, files[p].Mode, files[p].Data)
	}
	return b.String()
}

// A File is one file the result lists.
type File struct {
	Mode fs.FileMode
	Data string
}

// snapshot is every file under the watched paths of root, by its path
// under root.
func snapshot(root string) map[string]File {
	files := map[string]File{}
	for _, w := range Watched {
		filepath.WalkDir(filepath.Join(root, w), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			info, err := os.Lstat(p)
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files[strings.TrimPrefix(p, root)] = File{Mode: info.Mode().Perm(), Data: string(data)}
			return nil
		})
	}
	return files
}

// Golden compares got with testdata/golden/<name><suffix>.txt, or
// rewrites it under -update when ours is false (the reference's results)
// or the suffix is ".ours" (ours, where a row says it differs).
func Golden(t *testing.T, name, suffix, got string, ours bool) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+suffix+".txt")
	if *Update && (!ours || suffix == ".ours") {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (make it with -update and TRIPLEO_IMAGE_ELEMENTS; testdata/README.md)", err)
	}
	if string(want) != got {
		t.Errorf("%s:\n--- want\n%s--- got\n%s", path, want, got)
	}
}

// Reference finds rel (an element's file) in the checkouts that
// TRIPLEO_IMAGE_ELEMENTS names (colon separated: sysctl is gone from
// the newest), or skips the test.
func Reference(t testing.TB, rel string) string {
	t.Helper()
	v := os.Getenv("TRIPLEO_IMAGE_ELEMENTS")
	if v == "" {
		t.Skip("TRIPLEO_IMAGE_ELEMENTS is not set (testdata/README.md)")
	}
	if os.Geteuid() != 0 {
		t.Skip("the reference runs in a mount namespace: root only")
	}
	for _, d := range filepath.SplitList(v) {
		if _, err := os.Stat(filepath.Join(d, rel)); err == nil {
			return filepath.Join(d, rel)
		}
	}
	t.Skipf("%s is in none of TRIPLEO_IMAGE_ELEMENTS=%s", rel, v)
	return ""
}

// Suffix is the golden file's suffix for ours: ".ours" where the case
// differs.
func Suffix(c Case) string {
	if c.Differs != "" {
		return ".ours"
	}
	return ""
}

// InMemory puts the scratch roots of the test (and of each input of a
// fuzz target) on /dev/shm, a tmpfs, when the machine has one: a step
// syncs every file it writes, and on a disk the syncs cost more than the
// rest of a run (three times the whole run on the CI machine).
func InMemory(tb interface{ Setenv(key, value string) }) {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() && syscall.Access("/dev/shm", 2 /* W_OK */) == nil {
		tb.Setenv("TMPDIR", "/dev/shm")
	}
}
