// Package runparts runs the executable files of a directory in order, as
// dib-run-parts (dib-utils 0.0.11, the bash script the reference
// os-refresh-config calls) does: the names that match RUN_PARTS_REGEX, in
// `LANG=C sort -n` order; environment.d beside the directory sourced by
// bash first (under set -eu -o pipefail, with xtrace); each file executed
// with the environment a bash parent would give it; the first failure stops
// the run with that file's exit status; a profiling table at the end.
package runparts

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/proc"
)

// DefaultRegex is the names dib-run-parts runs unless RUN_PARTS_REGEX says
// otherwise.
const DefaultRegex = `^[0-9A-Za-z_-]+$`

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
	// context ends (DefaultGrace when zero).
	Grace time.Duration
	// Bash runs environment.d and shebang-less scripts ("/bin/bash").
	Bash string
}

// DefaultGrace is a script's time between SIGTERM and SIGKILL.
const DefaultGrace = 5 * time.Second

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
	proc.CloseInheritedFDs()
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

// runScript runs one script as bash would run the command "path": with
// "_" set to it, and, when the kernel will not execute it (no shebang),
// by bash itself.
func (r *Runner) runScript(ctx context.Context, path string, env []string, workDir string) (int, syscall.Signal) {
	env = environ.With(env, "_", path)
	p, err := proc.Start(r.spec(env, workDir, path))
	if errors.Is(err, syscall.ENOEXEC) {
		r.Log.Warn(path+" has no #! line: running it with "+r.bash()+", as the reference's bash does", "script", filepath.Base(path))
		p, err = proc.Start(r.spec(env, workDir, r.bash(), path))
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
	return r.wait(ctx, p)
}

// spec is how the runner starts a child: path with args, its output
// where the runner's goes.
func (r *Runner) spec(env []string, dir, path string, args ...string) proc.Spec {
	return proc.Spec{Path: path, Args: append([]string{path}, args...), Env: env, Dir: dir,
		Stdout: r.Stdout, Stderr: r.Stderr, Grace: cmp.Or(r.Grace, DefaultGrace)}
}

// wait waits for p; when ctx ends first, it is stopped with its
// descendants. It returns the exit status as a shell reports it (128+n
// for signal n) and the signal that ctx's end sent, if any.
func (r *Runner) wait(ctx context.Context, p *proc.Process) (int, syscall.Signal) {
	res, err := p.Wait(ctx)
	if err != nil && res.ShellStatus() == 0 {
		return 1, res.Stopped
	}
	return res.ShellStatus(), res.Stopped
}
