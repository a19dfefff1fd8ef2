// Package runparts runs the executable files of a directory in order, as
// dib-run-parts (dib-utils 0.0.11, the bash script the reference
// os-refresh-config calls) does: the names that match RUN_PARTS_REGEX, in
// `LANG=C sort -n` order; environment.d beside the directory sourced by
// bash first (under set -eu -o pipefail, with xtrace); each file executed
// with the environment a bash parent would give it; the first failure stops
// the run with that file's exit status; a profiling table at the end.
package runparts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tripleo-go/agent/internal/pyos"
)

// DefaultRegex is the names dib-run-parts runs unless RUN_PARTS_REGEX says
// otherwise.
const DefaultRegex = `^[0-9A-Za-z_-]+$`

// envFileName is the names sourced from environment.d.
var envFileName = regexp.MustCompile(`^[0-9A-Za-z_.-]+$`)

// List returns the names of the files dir runs, in order: regular files
// or links to regular files, executable by the running user, whose name
// matches re.
func List(dir string, re *regexp.Regexp) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if !re.MatchString(name) {
			continue
		}
		p := filepath.Join(dir, name)
		st, err := os.Stat(p) // find -xtype f: follows links
		if err != nil || !st.Mode().IsRegular() || unix.Access(p, unix.X_OK) != nil {
			continue
		}
		names = append(names, name)
	}
	SortNumeric(names)
	return names, nil
}

// SortNumeric orders names as `LANG=C sort -n` does: by the number at the
// start of each name (none counts as 0), then bytewise.
func SortNumeric(names []string) {
	sort.SliceStable(names, func(i, j int) bool {
		if c := compareNumeric(names[i], names[j]); c != 0 {
			return c < 0
		}
		return names[i] < names[j]
	})
}

// numericPrefix splits the leading number of s as sort -n reads it:
// blanks, an optional minus, digits, an optional fraction.
func numericPrefix(s string) (neg bool, intPart, frac string) {
	s = strings.TrimLeft(s, " \t")
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart = strings.TrimLeft(s[:i], "0")
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		frac = strings.TrimRight(s[i+1:j], "0")
	}
	if intPart == "" && frac == "" {
		neg = false // -0 is 0
	}
	return neg, intPart, frac
}

func compareNumeric(a, b string) int {
	an, ai, af := numericPrefix(a)
	bn, bi, bf := numericPrefix(b)
	if an != bn {
		if an {
			return -1
		}
		return 1
	}
	c := compareMagnitude(ai, af, bi, bf)
	if an {
		return -c
	}
	return c
}

func compareMagnitude(ai, af, bi, bf string) int {
	if len(ai) != len(bi) {
		return cmpInt(len(ai), len(bi))
	}
	if c := strings.Compare(ai, bi); c != 0 {
		return c
	}
	return strings.Compare(af, bf)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Runner runs directories of scripts.
type Runner struct {
	// Stdout and Stderr are given to the scripts; pass *os.File values so
	// scripts write straight to them.
	Stdout, Stderr io.Writer
	// Env is the environment dib-run-parts was started with.
	Env []string
	// Regex selects the names to run (DefaultRegex when nil).
	Regex *regexp.Regexp
	// Log prints dib-run-parts' lines ("dib-run-parts <date> Running ...").
	Log *slog.Logger
	// Grace is how long a script has between SIGTERM and SIGKILL when the
	// context ends (5 s when zero).
	Grace time.Duration
	// Bash runs environment.d and shebang-less scripts ("/bin/bash").
	Bash string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Failure says why a directory's run failed. Status is dib-run-parts' exit
// status; Signal is set when the context ended the run.
type Failure struct {
	Dir    string
	Script string
	Status int
	Signal syscall.Signal
}

func (f *Failure) Error() string {
	if f.Signal != 0 {
		return fmt.Sprintf("%s: stopped by %v", f.Dir, f.Signal)
	}
	if f.Script == "" {
		return fmt.Sprintf("%s: exit status %d", f.Dir, f.Status)
	}
	return fmt.Sprintf("%s: %s exited with status %d", f.Dir, f.Script, f.Status)
}

// ErrNotDir is returned for a directory argument that is not a directory.
var ErrNotDir = errors.New("must exist and be a directory")

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Runner) grace() time.Duration {
	if r.Grace > 0 {
		return r.Grace
	}
	return 5 * time.Second
}

func (r *Runner) bash() string {
	if r.Bash != "" {
		return r.Bash
	}
	return "/bin/bash"
}

// timing is one script's run time, for the profiling table.
type timing struct {
	name    string
	seconds float64
}

// Run runs the scripts of dir (as given: it is printed as given). It
// returns a *Failure when a script or environment file fails or the
// context ends.
func (r *Runner) Run(ctx context.Context, dir string) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return ErrNotDir
	}
	re := r.Regex
	if re == nil {
		re = regexp.MustCompile(DefaultRegex)
	}
	names, err := r.list(dir, re)
	if err != nil {
		return err
	}
	pyos.CloseInheritedFDs()
	env, workDir, err := r.scriptEnv(ctx, dir)
	if err != nil {
		return err
	}
	var timings []timing
	for _, name := range names {
		path := dir + "/" + name
		r.Log.Info("Running "+path, "script", name)
		start := time.Now()
		status, sig := r.runScript(ctx, path, env, workDir)
		secs := time.Since(start).Seconds()
		if sig != 0 || status != 0 {
			r.Log.Debug("failed "+path, "script", name, "seconds", secs, "status", status)
			return &Failure{Dir: dir, Script: name, Status: status, Signal: sig}
		}
		timings = append(timings, timing{name, secs})
		r.Log.Info(name+" completed", "script", name, "seconds", fmt.Sprintf("%.3f", secs))
	}
	r.profile(dir, timings)
	return nil
}

// list is List, except that a directory given as a symbolic link (without
// a trailing slash) runs nothing, as in the reference, whose find(1) does
// not enter such a starting point; here it is also logged.
func (r *Runner) list(dir string, re *regexp.Regexp) ([]string, error) {
	if st, err := os.Lstat(dir); err == nil && st.Mode()&fs.ModeSymlink != 0 && !strings.HasSuffix(dir, "/") {
		r.Log.Warn(dir + " is a symbolic link: running nothing in it, as the reference does (give the real directory)")
		return nil, nil
	}
	return List(dir, re)
}

// profile prints dib-run-parts' table: rows sorted by name, as its
// `sort -n` over "start_NAME" files does.
func (r *Runner) profile(dir string, timings []timing) {
	sort.Slice(timings, func(i, j int) bool { return timings[i].name < timings[j].name })
	r.Log.Info("----------------------- PROFILING -----------------------")
	r.Log.Info("")
	r.Log.Info("Target: " + filepath.Base(dir))
	r.Log.Info("")
	r.Log.Info(fmt.Sprintf("%-40s %9s", "Script", "Seconds"))
	r.Log.Info(fmt.Sprintf("%-40s %9s", "---------------------------------------", "----------"))
	r.Log.Info("")
	for _, t := range timings {
		r.Log.Info(fmt.Sprintf("%-40s %10.3f", t.name, t.seconds))
	}
	r.Log.Info("")
	r.Log.Info("--------------------- END PROFILING ---------------------")
}

// scriptEnv is the environment the scripts get: that of a bash which has
// sourced environment.d (when there is one), else what bash would pass on
// from Env (SHLVL one up, PWD set).
// The working directory is the one the sourcing bash ended in ("" when
// unchanged): an environment file may cd.
func (r *Runner) scriptEnv(ctx context.Context, dir string) ([]string, string, error) {
	envDir := dir + "/../environment.d"
	if st, err := os.Stat(envDir); err != nil || !st.IsDir() {
		return bashChildEnv(r.Env), "", nil
	}
	entries, err := os.ReadDir(envDir)
	if err != nil {
		return bashChildEnv(r.Env), "", nil
	}
	var files []string
	for _, e := range entries {
		p := envDir + "/" + e.Name()
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && envFileName.MatchString(e.Name()) {
			files = append(files, p)
		}
	}
	sort.Strings(files) // sort -n over paths with a common prefix: bytewise
	if len(files) == 0 {
		// The reference fails every phase here (its find|grep pipeline
		// finds nothing under pipefail); an empty environment.d is harmless.
		return bashChildEnv(r.Env), "", nil
	}
	env, err := r.sourceEnv(ctx, dir, files)
	if err != nil {
		return nil, "", err
	}
	workDir := ""
	if pwd := lookupVar(env, "PWD"); pwd != "" {
		if cwd, err := os.Getwd(); err == nil && !samePath(pwd, cwd) && isDir(pwd) {
			workDir = pwd
		}
	}
	return env, workDir, nil
}

func lookupVar(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// sourceScript is dib-run-parts' own sourcing loop, so the log and xtrace
// lines are the same; the resulting environment is written to fd 3.
const sourceScript = `set -ue
set -o pipefail
for env_file in "$@"; do
    printf "%s %s " dib-run-parts "$(date)" >&2
    echo "Sourcing environment file ${env_file}" >&2
    xtrace=$(set +o | grep xtrace)
    set -o xtrace
    source $env_file
    $xtrace
done
env -0 >&3
`

func (r *Runner) sourceEnv(ctx context.Context, dir string, files []string) ([]string, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	cmd := exec.Command(r.bash(), append([]string{"-c", sourceScript, "dib-run-parts"}, files...)...)
	cmd.Env = r.Env
	cmd.Stdout, cmd.Stderr = r.Stdout, r.Stderr
	cmd.ExtraFiles = []*os.File{pw}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		pw.Close()
		return nil, err
	}
	pw.Close()
	out := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(pr); out <- b }()
	status, sig := r.wait(ctx, cmd)
	dump := <-out
	if sig != 0 || status != 0 {
		return nil, &Failure{Dir: dir, Status: status, Signal: sig}
	}
	var env []string
	for _, kv := range bytes.Split(dump, []byte{0}) {
		if len(kv) > 0 {
			env = append(env, string(kv))
		}
	}
	return env, nil
}

// bashChildEnv is the environment bash gives the commands it runs: SHLVL
// one more than it got, PWD the working directory unless PWD already
// names it.
func bashChildEnv(env []string) []string {
	out := make([]string, 0, len(env)+2)
	shlvl, pwd := "", ""
	for _, kv := range env {
		switch {
		case strings.HasPrefix(kv, "SHLVL="):
			shlvl = kv[len("SHLVL="):]
			continue
		case strings.HasPrefix(kv, "PWD="):
			pwd = kv[len("PWD="):]
			continue
		}
		out = append(out, kv)
	}
	level, err := strconv.Atoi(strings.TrimSpace(shlvl))
	if err != nil {
		level = 0
	}
	level++
	if level < 0 {
		level = 0
	} else if level >= 1000 {
		level = 1
	}
	if cwd, err := os.Getwd(); err == nil && !samePath(pwd, cwd) {
		pwd = cwd
	}
	return append(out, "PWD="+pwd, "SHLVL="+strconv.Itoa(level))
}

func samePath(a, b string) bool {
	if !filepath.IsAbs(a) {
		return false
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// runScript runs one script as bash would run the command "path": with
// "_" set to it, and, when the kernel will not execute it (no shebang),
// by bash itself.
func (r *Runner) runScript(ctx context.Context, path string, env []string, workDir string) (int, syscall.Signal) {
	env = append(withoutVar(env, "_"), "_="+path)
	cmd := exec.Command(path)
	cmd.Env, cmd.Dir = env, workDir
	cmd.Stdout, cmd.Stderr = r.Stdout, r.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err := cmd.Start()
	if errors.Is(err, syscall.ENOEXEC) {
		r.Log.Warn(path+" has no #! line: running it with "+r.bash()+", as the reference's bash does", "script", filepath.Base(path))
		cmd = exec.Command(r.bash(), path)
		cmd.Env, cmd.Dir = env, workDir
		cmd.Stdout, cmd.Stderr = r.Stdout, r.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		err = cmd.Start()
	}
	if err != nil {
		// What bash says and returns when it cannot run a command.
		status := 126
		if errors.Is(err, fs.ErrNotExist) {
			status = 127
		}
		fmt.Fprintf(r.Stderr, "%s: %v\n", path, errors.Unwrap(err))
		return status, 0
	}
	return r.wait(ctx, cmd)
}

func withoutVar(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// wait waits for cmd; when ctx ends first, its process group and every
// other descendant get SIGTERM, then SIGKILL after the grace period. It
// returns the exit status as a shell reports it (128+n for signal n) and
// the signal that ctx's end sent, if any.
func (r *Runner) wait(ctx context.Context, cmd *exec.Cmd) (int, syscall.Signal) {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var sent syscall.Signal
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		sent = syscall.SIGTERM
		killTree(cmd.Process.Pid, syscall.SIGTERM)
		select {
		case err = <-done:
		case <-time.After(r.grace()):
			sent = syscall.SIGKILL
			killTree(cmd.Process.Pid, syscall.SIGKILL)
			err = <-done
		}
	}
	// Leftovers in the group (a daemonised child) go too, once its leader
	// has been stopped by the deadline.
	if sent != 0 {
		killTree(cmd.Process.Pid, syscall.SIGKILL)
	}
	return exitStatus(err), sent
}

func exitStatus(err error) int {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		if err != nil {
			return 1
		}
		return 0
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}

// killTree signals the process group led by pid, then every descendant
// of pid found in /proc (scripts may start their own process groups). The
// group goes first and in one call: signalling a child before its shell
// would let the shell, woken by the child's death, run its next command.
func killTree(pid int, sig syscall.Signal) {
	stray := descendants(pid)
	_ = syscall.Kill(-pid, sig)
	for _, p := range stray {
		_ = syscall.Kill(p, sig)
	}
}

// descendants lists the processes below pid, from /proc.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name is in parentheses and may hold spaces.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}
