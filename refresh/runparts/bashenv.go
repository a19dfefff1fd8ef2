package runparts

// What the scripts see is what dib-run-parts, a bash script, gives them:
// the environment of a bash that has sourced environment.d, or what bash
// passes on to the commands it runs.

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/proc"
	"github.com/tripleo-go/agent/internal/pypath"
)

// envFileName is the names sourced from environment.d.
var envFileName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9A-Za-z_.-]+$`) })

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
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && envFileName().MatchString(e.Name()) {
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
	if pwd := environ.Get(env, "PWD"); pwd != "" {
		if cwd, err := os.Getwd(); err == nil && !samePath(pwd, cwd) && pypath.IsDir(pwd) {
			workDir = pwd
		}
	}
	return env, workDir, nil
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
	spec := r.spec(r.Env, "", r.bash(), append([]string{"-c", sourceScript, "dib-run-parts"}, files...)...)
	spec.ExtraFiles = []*os.File{pw} // fd 3: the environment, as env -0 prints it
	p, err := proc.Start(spec)
	pw.Close() // the child has its own copy: the reader sees EOF when it ends
	if err != nil {
		return nil, err
	}
	out := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(pr); out <- b }()
	status, sig := r.wait(ctx, p)
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
