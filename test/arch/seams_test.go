package arch

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const seamsDoc = "../../docs/architecture.md"

// seam is a row of docs/architecture.md's "Standard-library seams" table:
// a standard package (pattern) and the packages of ours that may import it.
type seam struct {
	std    string
	owners []string
}

var ticked = regexp.MustCompile("`([^`]+)`")

// readSeams reads the table that follows the "| standard package |" header.
func readSeams(t *testing.T) []seam {
	t.Helper()
	data, err := os.ReadFile(seamsDoc)
	if err != nil {
		t.Fatal(err)
	}
	var seams []seam
	for _, cells := range tableRows(string(data), "| standard package |") {
		if len(cells) < 4 {
			t.Fatalf("%s: a seam row without two cells: %q", seamsDoc, strings.Join(cells, "|"))
		}
		var owners []string
		for _, m := range ticked.FindAllStringSubmatch(cells[2], -1) {
			owners = append(owners, m[1])
		}
		for _, m := range ticked.FindAllStringSubmatch(cells[1], -1) {
			seams = append(seams, seam{std: m[1], owners: owners})
		}
	}
	if len(seams) < 2 {
		t.Fatalf("%s: no standard-library seams table (want rows for os/exec and net/http)", seamsDoc)
	}
	return seams
}

// isKit tells a test kit: a package that only tests and tools import,
// under internal/testkit or beside what it tests (hooks/hooktest).
func isKit(pkg string) bool {
	return matches("internal/testkit/...", pkg) || strings.HasSuffix(path.Base(pkg), "test")
}

// aside are the packages the seams do not bind: tests and tools.
func aside(pkg string) bool {
	return matches("tools/...", pkg) || matches("test/...", pkg)
}

type goFiles struct {
	ImportPath, Dir string
	GoFiles         []string
	CgoFiles        []string
}

// TestStandardSeams checks every non-test file of the module against the
// seams table, and that only tests, tools and kits import a kit.
func TestStandardSeams(t *testing.T) {
	seams := readSeams(t)
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	fset := token.NewFileSet()
	used := map[string]bool{} // "std owner" pairs seen, to find stale owners
	for {
		var p goFiles
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkg := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if aside(pkg) {
			continue
		}
		for _, name := range append(p.GoFiles, p.CgoFiles...) {
			file := filepath.Join(p.Dir, name)
			f, err := parser.ParseFile(fset, file, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			rel := path.Join(pkg, name)
			for _, spec := range f.Imports {
				imp, _ := strconv.Unquote(spec.Path.Value)
				if dep, ours := strings.CutPrefix(imp, module+"/"); ours {
					if isKit(dep) && !isKit(pkg) {
						t.Errorf("%s imports %s, a test kit, which only tests, tools and other kits may import", rel, dep)
					}
					continue
				}
				if isKit(pkg) {
					continue
				}
				for _, s := range seams {
					if matches(s.std, imp) && ownedBy(s, pkg) {
						used[s.std+" "+pkg] = true
					}
					if matches(s.std, imp) && !ownedBy(s, pkg) {
						t.Errorf("%s imports %s, which only %s may import (docs/architecture.md, \"Standard-library seams\")",
							rel, imp, strings.Join(s.owners, ", "))
					}
				}
			}
		}
	}
	// An owner that no longer imports its package is a stale row: the
	// table must say who talks HTTP today, not who once did.
	for _, s := range seams {
		for _, o := range s.owners {
			if !used[s.std+" "+o] {
				t.Errorf("docs/architecture.md, \"Standard-library seams\": %s is listed for %s but does not import it", o, s.std)
			}
		}
	}
}

func ownedBy(s seam, pkg string) bool {
	for _, o := range s.owners {
		if matches(o, pkg) {
			return true
		}
	}
	return false
}

// The table's rows are what the test polices: a row lost to an edit
// must fail here rather than let everything through.
func TestSeamsTableRead(t *testing.T) {
	got := map[string][]string{}
	for _, s := range readSeams(t) {
		got[s.std] = s.owners
	}
	if o := got["os/exec"]; len(o) != 1 || o[0] != "internal/proc" {
		t.Errorf("os/exec owners = %v, want [internal/proc]", o)
	}
	if o := got["net/http/..."]; len(o) == 0 || o[0] != "internal/httpclient" {
		t.Errorf("net/http/... owners = %v, want internal/httpclient first", o)
	}
}
