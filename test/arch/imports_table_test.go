package arch

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// The reader on a small table: every row, the doc's "x/<word>" read as
// one level under x, the prose after "never" left out, "anything" and
// "nothing".
func TestParseRules(t *testing.T) {
	doc, err := os.ReadFile("testdata/imports.md")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := parseRules(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := []rule{
		{"cmd/agent", []string{"collectors/occ", "hooks/...", "internal/exitcode"}},
		{"collectors/*", []string{"collectors", "internal/..."}},
		{"collectors/occ", []string{"collectors/...", "internal/..."}},
		{"collectors", []string{"internal/..."}},
		{"internal/...", []string{"internal/..."}},
		{"systemd", nil},
		{"tools/...", []string{"..."}},
		{"test/...", []string{"..."}},
	}
	if !slices.EqualFunc(rules, want, func(a, b rule) bool { return a.pkg == b.pkg && slices.Equal(a.may, b.may) }) {
		t.Errorf("rules\n%v\nwant\n%v", rules, want)
	}
}

// What the checker makes of the small table: a package's own row wins
// over its family's, a package without a row and an import its row does
// not allow are each reported, and nothing else is.
func TestViolations(t *testing.T) {
	doc, err := os.ReadFile("testdata/imports.md")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := parseRules(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string][]string{
		"cmd/agent":          {"collectors/occ", "hooks/all", "internal/exitcode"},
		"collectors/occ":     {"collectors/heat", "collectors", "internal/proc"},
		"collectors/heat":    {"collectors", "internal/httpclient"},
		"collectors/ec2":     {"collectors/occ"},
		"internal/testkit/x": {"internal/proc"},
		"internal/proc":      {"systemd"},
		"systemd":            nil,
		"tools/fleetsim":     {"collectors/occ", "test/fleet"},
		"heatconfig":         nil,
		"cmd/other":          {"internal/exitcode"},
	}
	got := violations(rules, imports)
	slices.Sort(got)
	want := []string{
		"cmd/other: no row in docs/architecture.md's import table",
		"collectors/ec2 imports collectors/occ, which its row (collectors/*) does not allow",
		"heatconfig: no row in docs/architecture.md's import table",
		"internal/proc imports systemd, which its row (internal/...) does not allow",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A table the reader cannot read fails it, rather than letting every
// import through.
func TestParseRulesRefuses(t *testing.T) {
	const head = "| package | may import, of ours |\n|---|---|\n"
	for _, doc := range []string{
		"no table here\n",
		head + "| collectors | internal |\n",                 // no backquotes
		head + "| `collectors` | `internal/...` | extra |\n", // three cells
		head + "| `collectors` | `Internal Stuff` |\n",       // not a pattern
		head + "| collectors | `internal/...` |\n",           // no package
		head + "| `systemd` | nothing |\n| `systemd` | anything |\n",
	} {
		if rules, err := parseRules(doc); err == nil {
			t.Errorf("%q: read as %v, want an error", doc, rules)
		}
	}
}

// The doc's own table, read: the rows the checks lean on are there.
func TestImportTableRead(t *testing.T) {
	rules, err := readRules()
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) < 30 {
		t.Errorf("%d rows read, want at least 30", len(rules))
	}
	for _, tc := range []struct {
		pkg, row string // a package, and the row that must be its
		may      []string
	}{
		{"cmd/tripleo-agent", "cmd/tripleo-agent", []string{"hooks/all", "internal/exitcode"}},
		{"collectors/heat", "collectors/*", []string{"collectors", "internal/..."}},
		{"collectors/occ", "collectors/occ", []string{"collectors/...", "internal/..."}},
		{"hooks/puppet", "hooks/*", []string{"hooks", "deployment", "internal/..."}},
		{"internal/proc", "internal/...", []string{"internal/..."}},
		{"systemd", "systemd", nil},
		{"tools/fleetsim", "tools/...", []string{"..."}},
		{"test/e2e", "test/...", []string{"..."}},
	} {
		r, ok := ruleFor(rules, tc.pkg)
		if !ok || r.pkg != tc.row {
			t.Errorf("%s: row %v, want the row %s", tc.pkg, r, tc.row)
			continue
		}
		for _, w := range tc.may {
			if !slices.Contains(r.may, w) {
				t.Errorf("row %s allows %v, want %s among them", tc.row, r.may, w)
			}
		}
		if tc.may == nil && r.may != nil {
			t.Errorf("row %s allows %v, want nothing", tc.row, r.may)
		}
	}
	if r, _ := ruleFor(rules, "collectors/heat"); allows(r, "collectors/occ") {
		t.Errorf("a collector may import collectors/occ (row %v)", r)
	}
}
