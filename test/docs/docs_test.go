package docs

// The command blocks of the READMEs (docFiles) all run somewhere, and this
// test says where each one runs. A command block is an indented code block
// (lines indented 4 spaces, after a blank line, outside fences) or a fenced
// block whose info string is empty, sh, bash, shell or console (```ini,
// ```json and the like are examples of files, not commands). Its mark is
// the last non-blank line above it, when that line is an HTML comment
// (invisible once rendered):
//
//	(no mark)                      run here: runners holds the block's exact
//	                               text and what to run it with; a block
//	                               whose text changed has no runner left
//	<!-- run by: .ci/run -->       each command line of the block is in .ci/run,
//	                               verbatim (the README's full test command)
//	<!-- run by: DIR TestName -->  DIR has func TestName, and each command line
//	                               is in DIR's Go files verbatim, or they read
//	                               the block's whole "## " section (they quote
//	                               "\n## Heading\n"), as test/e2e TestImage does
//	                               with the README's Troubleshooting commands
//	<!-- dry run -->               a make command too long for any test run
//	                               (make bench, make fleet: real services,
//	                               minutes to hours): make -n runs it here, so
//	                               its targets exist and their recipes expand
//	<!-- synopsis -->              not a command but a usage line: its first
//	                               word is a program of bin/ and each option it
//	                               names (--lowercase, -x) is in that program's
//	                               --help; --UPPER-CASE words are placeholders
//
// A command line is a line of the block with its backslash continuations
// joined, blank lines and # comments left out.

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

var docFiles = []string{"README.md", "packaging/README.md", "elements/README.md"}

type block struct {
	file    string
	line    int    // of the block's first line, 1-based
	text    string // its lines, indentation removed, "\n"-terminated
	mark    string // the HTML comment above it, without <!-- -->
	section string // the "## " heading it is under
}

func (b block) String() string {
	first, _, _ := strings.Cut(b.text, "\n")
	return b.file + ":" + itoa(b.line) + ": block `" + first + "`"
}

func itoa(n int) string { return strconv.Itoa(n) }

var commentRe = regexp.MustCompile(`^<!--\s*(.*?)\s*-->$`)

// commandFences are the info strings of fenced blocks that are commands.
var commandFences = map[string]bool{"": true, "sh": true, "bash": true, "shell": true, "console": true}

// blocks parses file's command blocks.
func blocks(t *testing.T, file string) []block {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, file))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var out []block
	section, lastNonBlank := "", ""
	markOf := func() string {
		if m := commentRe.FindStringSubmatch(strings.TrimSpace(lastNonBlank)); m != nil {
			return m[1]
		}
		return ""
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if h, ok := strings.CutPrefix(line, "## "); ok {
			section = h
		}
		if fence, ok := strings.CutPrefix(line, "```"); ok {
			info := strings.TrimSpace(fence)
			start := i
			var text strings.Builder
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
				text.WriteString(lines[i] + "\n")
			}
			if commandFences[info] {
				out = append(out, block{file: file, line: start + 2, text: text.String(), mark: markOf(), section: section})
			}
			lastNonBlank = "```"
			continue
		}
		prevBlank := i == 0 || strings.TrimSpace(lines[i-1]) == ""
		if prevBlank && strings.HasPrefix(line, "    ") && strings.TrimSpace(line) != "" {
			start := i
			var text []string
			for ; i < len(lines) && (strings.HasPrefix(lines[i], "    ") || strings.TrimSpace(lines[i]) == ""); i++ {
				text = append(text, strings.TrimPrefix(lines[i], "    "))
			}
			for len(text) > 0 && strings.TrimSpace(text[len(text)-1]) == "" {
				text = text[:len(text)-1]
			}
			i--
			out = append(out, block{file: file, line: start + 1, text: strings.Join(text, "\n") + "\n", mark: markOf(), section: section})
			lastNonBlank = text[len(text)-1]
			continue
		}
		if strings.TrimSpace(line) != "" {
			lastNonBlank = line
		}
	}
	return out
}

// commands are a block's command lines.
func commands(text string) []string {
	var out []string
	cur := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cur == "" && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if l, ok := strings.CutSuffix(line, "\\"); ok {
			cur += l
			continue
		}
		out = append(out, cur+line)
		cur = ""
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// runner runs one unmarked block, given its exact text.
type runner func(t *testing.T, b block)

var runners = map[string]runner{
	"make demo\n": runMakeDemo,
	"sudo DIB_TRIPLEO_AGENT_DEB=\"$(ls -t dist/tripleo-agent_*.deb | head -n 1)\" scripts/apply-elements /path/to/rootfs \\\n" +
		"    os-collect-config heat-config-script heat-config-puppet\n": runApplyElements(debImage),
	"sudo DISTRO_NAME=centos DIB_TRIPLEO_AGENT_RPM=\"$(ls -t dist/tripleo-agent-*.x86_64.rpm | head -n 1)\" \\\n" +
		"    scripts/apply-elements /path/to/rootfs os-collect-config heat-config-script heat-config-puppet\n": runApplyElements(rpmImage),
}

const markHelp = "run it in test/docs (runners, by its exact text) or mark the line above it with " +
	"<!-- run by: .ci/run -->, <!-- run by: DIR TestName -->, <!-- dry run --> or <!-- synopsis --> " +
	"(the convention is at the top of test/docs/docs_test.go)"

// TestCommandBlocks: every command block of docFiles runs, or its mark's
// claim holds.
func TestCommandBlocks(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range docFiles {
		for _, b := range blocks(t, f) {
			t.Run(f+":"+itoa(b.line), func(t *testing.T) {
				check(t, b)
			})
			if b.mark == "" {
				seen[b.text] = true
			}
		}
	}
	var stale []string
	for text := range runners {
		if !seen[text] {
			stale = append(stale, strings.TrimSpace(text))
		}
	}
	sort.Strings(stale)
	for _, s := range stale {
		t.Errorf("test/docs runner for a block no doc has (any more): %q", s)
	}
}

func check(t *testing.T, b block) {
	switch m := b.mark; {
	case m == "":
		run, ok := runners[b.text]
		if !ok {
			t.Fatalf("%s has no runner: %s", b, markHelp)
		}
		run(t, b)
	case m == "synopsis":
		checkSynopsis(t, b)
	case m == "dry run":
		checkDryRun(t, b)
	case strings.HasPrefix(m, "run by:"):
		checkRunBy(t, b, strings.Fields(strings.TrimPrefix(m, "run by:")))
	default:
		t.Fatalf("%s: unknown mark <!-- %s -->: %s", b, m, markHelp)
	}
}

func checkRunBy(t *testing.T, b block, by []string) {
	if len(by) == 1 && by[0] == ".ci/run" {
		ci, err := os.ReadFile(filepath.Join(repo, ".ci/run"))
		if err != nil {
			t.Fatalf("%s: <!-- run by: .ci/run -->: %v", b, err)
		}
		for _, c := range commands(b.text) {
			if !strings.Contains(string(ci), c) {
				t.Errorf("%s: marked run by .ci/run, which does not run %q", b, c)
			}
		}
		return
	}
	if len(by) != 2 || !strings.HasPrefix(by[1], "Test") {
		t.Fatalf("%s: <!-- run by: %s -->: want .ci/run or DIR TestName", b, strings.Join(by, " "))
	}
	dir, test := by[0], by[1]
	files, _ := filepath.Glob(filepath.Join(repo, dir, "*.go"))
	var src strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(data)
	}
	if !strings.Contains(src.String(), "func "+test+"(") {
		t.Fatalf("%s: marked run by %s %s, which %s has no func %s", b, dir, test, dir, test)
	}
	if b.section != "" && strings.Contains(src.String(), `\n## `+b.section+`\n`) {
		return // the test reads the block's whole section
	}
	for _, c := range commands(b.text) {
		if !strings.Contains(src.String(), c) {
			t.Errorf("%s: marked run by %s %s, whose files neither hold %q nor read the section %q", b, dir, test, c, b.section)
		}
	}
}

func checkDryRun(t *testing.T, b block) {
	for _, c := range commands(b.text) {
		args, ok := strings.CutPrefix(c, "make ")
		if !ok {
			t.Errorf("%s: <!-- dry run --> is for make commands, not %q", b, c)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := exec.CommandContext(ctx, "make", append([]string{"-n", "-C", repo}, strings.Fields(args)...)...).CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("%s: make -n %s: %v\n%s", b, args, err, out)
		}
	}
}

var optionRe = regexp.MustCompile(`(?:^|[\s\[|])(--?[a-z][a-z0-9-]*)`)

func checkSynopsis(t *testing.T, b block) {
	bin := built(t)
	// A synopsis may hold several programs' lines (a line that is not
	// indented under the first starts another program).
	var prog string
	helps := map[string]string{}
	for _, line := range strings.Split(b.text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if !strings.HasPrefix(line, " ") {
			prog = strings.Fields(line)[0]
			if _, err := os.Stat(filepath.Join(bin, prog)); err != nil {
				t.Errorf("%s: synopsis of %q, which is no program of make build", b, prog)
				continue
			}
			out, _ := exec.Command(filepath.Join(bin, prog), "--help").CombinedOutput()
			helps[prog] = string(out)
			line = strings.TrimPrefix(line, prog)
		}
		help, ok := helps[prog]
		if !ok {
			continue
		}
		for _, m := range optionRe.FindAllStringSubmatch(line, -1) {
			opt := m[1]
			if !regexp.MustCompile(`(^|[\s\[,])` + regexp.QuoteMeta(opt) + `($|[\s\],=])`).MatchString(help) {
				t.Errorf("%s: synopsis of %s names %s, which %s --help does not", b, prog, opt, prog)
			}
		}
	}
}

// sandbox is a scratch directory with a fresh HOME and TMPDIR.
func sandbox(t *testing.T) (dir string, env []string) {
	dir = t.TempDir()
	for _, d := range []string{"home", "tmp"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, []string{"PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + dir + "/home", "TMPDIR=" + dir + "/tmp", "LANG=C.UTF-8"}
}

func sh(t *testing.T, b block, dir string, env []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", b.text)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", b, err, out)
	}
	return string(out)
}

// runMakeDemo runs `make demo` in the checkout, with the binary built
// into the sandbox (BIN through MAKEFLAGS, as on make's command line) and
// TMPDIR there: it shows the deployment and leaves nothing behind.
func runMakeDemo(t *testing.T, b block) {
	if testing.Short() {
		t.Skip("builds and runs the demo (test/demo runs it too)")
	}
	dir, env := sandbox(t)
	env = append(env, "MAKEFLAGS=BIN="+dir+"/bin")
	// Go's caches stay where they are (the sandbox's HOME would make
	// the build fetch every module again).
	vars := []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV", "GOFLAGS", "GOTOOLCHAIN"}
	out, err := exec.Command("go", append([]string{"env"}, vars...)...).Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	for i, v := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		env = append(env, vars[i]+"="+v)
	}
	out = []byte(sh(t, b, repo, env))
	if !strings.Contains(string(out), "ControllerMotdDeployment [script] status 0") {
		t.Errorf("%s: the output does not show the deployment:\n%s", b, out)
	}
	if left, _ := os.ReadDir(dir + "/tmp"); len(left) != 0 {
		t.Errorf("%s left %d entries in TMPDIR", b, len(left))
	}
}

// goldenImage is a family's golden-image command: the variable naming the
// package, two packages' names (older, newer) and what else it sets.
type goldenImage struct {
	variable   string
	old, new   string
	extraShown string // what the stand-in prints of the other variables
}

var (
	debImage = goldenImage{"DIB_TRIPLEO_AGENT_DEB", "tripleo-agent_0.1-1_amd64.deb", "tripleo-agent_0.2-1_amd64.deb", ""}
	rpmImage = goldenImage{"DIB_TRIPLEO_AGENT_RPM", "tripleo-agent-0.1-1.x86_64.rpm", "tripleo-agent-0.2-1.x86_64.rpm", "DISTRO_NAME=centos\n"}
)

// runApplyElements runs a golden-image command as written, from a
// directory laid out as the checkout after two package builds, with sudo
// and scripts/apply-elements standing in (what apply-elements does to a
// root filesystem is test/e2e TestImage's, and test/elements' on an rpm
// image): the variable names the newest package, a file that exists, and
// the elements named exist.
func runApplyElements(g goldenImage) runner {
	return func(t *testing.T, b block) {
		dir, env := sandbox(t)
		ws := dir + "/checkout"
		write(t, ws+"/dist/"+g.old, "old", 0o644)
		write(t, ws+"/dist/"+g.new, "new", 0o644)
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(ws+"/dist/"+g.old, old, old); err != nil {
			t.Fatal(err)
		}
		v := g.variable
		write(t, ws+"/scripts/apply-elements", "#!/bin/sh\n"+
			"test -f \"$"+v+"\" || { echo \""+v+"=$"+v+" is not a file\"; exit 1; }\n"+
			"${DISTRO_NAME:+echo DISTRO_NAME=$DISTRO_NAME}\n"+
			"echo \""+v+"=$"+v+"\"; echo \"$@\"\n", 0o755)
		write(t, dir+"/stub/sudo", "#!/bin/sh\nwhile case $1 in *=*) true;; *) false;; esac; do export \"$1\"; shift; done\nexec \"$@\"\n", 0o755)
		env[0] = "PATH=" + dir + "/stub:" + strings.TrimPrefix(env[0], "PATH=")
		out := sh(t, b, ws, env)
		want := g.extraShown + v + "=dist/" + g.new + "\n/path/to/rootfs os-collect-config heat-config-script heat-config-puppet\n"
		if out != want {
			t.Errorf("%s: apply-elements got\n%s\nwant\n%s", b, out, want)
		}
		if fi, err := os.Stat(filepath.Join(repo, "scripts/apply-elements")); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s: scripts/apply-elements is not an executable of the checkout (%v)", b, err)
		}
		for _, e := range strings.Fields("os-collect-config heat-config-script heat-config-puppet") {
			if _, err := os.Stat(filepath.Join(repo, "elements", e)); err != nil {
				t.Errorf("%s: names element %s: %v", b, e, err)
			}
		}
	}
}
