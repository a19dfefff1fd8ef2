package arch

import (
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"
)

// rule is a row of docs/architecture.md's "Who may import whom" table:
// a package pattern and the patterns of ours it may import. "x/..." is x
// and everything under it; "x/*" (the doc's "x/<source>") one level
// under x; "..." anything.
type rule struct {
	pkg string
	may []string
}

// pattern is how the doc spells a package, or a family of them.
var pattern = regexp.MustCompile(`^[a-z0-9-]+(/[a-z0-9-]+)*(/\.\.\.|/<[a-z]+>)?$`)

// readRules reads the import table of docs/architecture.md.
func readRules() ([]rule, error) {
	data, err := os.ReadFile(seamsDoc)
	if err != nil {
		return nil, err
	}
	rules, err := parseRules(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s, \"Who may import whom\": %w", seamsDoc, err)
	}
	return rules, nil
}

// parseRules reads the table that follows the "| package | may import,
// of ours |" header. A cell lists patterns in backquotes; what follows
// "never" in it is prose ("never `occ` or another source"); "anything" is
// every package, "nothing" none. Anything else it cannot read is an error,
// so that a row lost to an edit fails rather than lets imports through.
func parseRules(doc string) ([]rule, error) {
	var rules []rule
	seen := map[string]bool{}
	for _, cells := range tableRows(doc, "| package | may import, of ours |") {
		line := strings.Join(cells, "|")
		if len(cells) != 4 {
			return nil, fmt.Errorf("a row without two cells: %q", line)
		}
		pkgs, err := patterns(cells[1])
		if err != nil || len(pkgs) == 0 {
			return nil, fmt.Errorf("a row naming no package: %q", line)
		}
		allowed, _, _ := strings.Cut(cells[2], "never ")
		var may []string
		switch strings.TrimSpace(allowed) {
		case "anything":
			may = []string{"..."}
		case "nothing":
		default:
			if may, err = patterns(allowed); err != nil || len(may) == 0 {
				return nil, fmt.Errorf("a row whose imports it cannot read: %q", line)
			}
		}
		for _, p := range pkgs {
			if seen[p] {
				return nil, fmt.Errorf("two rows for %s", p)
			}
			seen[p] = true
			rules = append(rules, rule{pkg: p, may: may})
		}
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("no table")
	}
	return rules, nil
}

// patterns are the backquoted package patterns of a cell, "x/<word>"
// read as "x/*"; an option the prose quotes (`--man`) is no package.
func patterns(cell string) ([]string, error) {
	var out []string
	for _, m := range ticked.FindAllStringSubmatch(cell, -1) {
		p := m[1]
		if strings.HasPrefix(p, "--") {
			continue
		}
		if !pattern.MatchString(p) {
			return nil, fmt.Errorf("%q is not a package pattern", p)
		}
		if i := strings.Index(p, "/<"); i >= 0 {
			p = p[:i] + "/*"
		}
		out = append(out, p)
	}
	return out, nil
}

// matches tells whether pkg (relative to the module) fits pattern.
func matches(pattern, pkg string) bool {
	switch {
	case pattern == "...":
		return true
	case strings.HasSuffix(pattern, "/..."):
		base := strings.TrimSuffix(pattern, "/...")
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	case strings.HasSuffix(pattern, "/*"):
		return path.Dir(pkg) == strings.TrimSuffix(pattern, "/*")
	}
	return pkg == pattern
}

// specificity orders the patterns that match one package: a package's
// own row wins over its family's ("x/*"), which wins over a subtree's
// ("x/..."), the deeper subtree first; so the table's rows may come in
// any order.
func specificity(pattern string) int {
	switch {
	case pattern == "...":
		return 0
	case strings.HasSuffix(pattern, "/..."):
		return 1 + len(pattern)
	case strings.HasSuffix(pattern, "/*"):
		return 10000
	}
	return 20000
}

// ruleFor is the row that says what pkg may import.
func ruleFor(rules []rule, pkg string) (rule, bool) {
	var best rule
	found := false
	for _, r := range rules {
		if matches(r.pkg, pkg) && (!found || specificity(r.pkg) > specificity(best.pkg)) {
			best, found = r, true
		}
	}
	return best, found
}

// violations are the imports of ours that the table does not allow, and
// the packages it has no row for; pkg and its imports are relative to
// the module.
func violations(rules []rule, imports map[string][]string) []string {
	var out []string
	for pkg, deps := range imports {
		r, ok := ruleFor(rules, pkg)
		if !ok {
			out = append(out, pkg+": no row in docs/architecture.md's import table")
			continue
		}
		for _, dep := range deps {
			if !allows(r, dep) {
				out = append(out, fmt.Sprintf("%s imports %s, which its row (%s) does not allow", pkg, dep, r.pkg))
			}
		}
	}
	return out
}

func allows(r rule, dep string) bool {
	for _, m := range r.may {
		if matches(m, dep) {
			return true
		}
	}
	return false
}

// tableRows returns the cells of each row of the Markdown table whose
// header line starts with header (strings.Split of the row on "|"), the
// separator line left out.
func tableRows(doc, header string) [][]string {
	var rows [][]string
	in := false
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case !in || strings.HasPrefix(line, "|---"):
		case !strings.HasPrefix(line, "|"):
			in = false
		default:
			rows = append(rows, strings.Split(line, "|"))
		}
	}
	return rows
}
