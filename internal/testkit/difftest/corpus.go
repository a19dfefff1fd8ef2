package difftest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// FuzzCorpus reads the inputs of a fuzz target kept in the tree, the
// files under testdata/fuzz/<target> that go test reads as seeds and go
// test -fuzz writes its crashers to, in name order; a test that compares
// the seeds with the reference adds its f.Add seeds to them.
//
// With FUZZ_GENERATED=1 it also reads what go test -fuzz generated in
// the build cache for the package in the working directory, so that
// after a long fuzzing run (make fuzz) every input the fuzzer kept is
// compared with the reference too.
func FuzzCorpus(t testing.TB, target string) [][]any {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "fuzz", target, "*"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	if os.Getenv("FUZZ_GENERATED") == "1" {
		dir, err := generatedCorpus(target)
		if err != nil {
			t.Fatal(err)
		}
		more, _ := filepath.Glob(filepath.Join(dir, "*"))
		sort.Strings(more)
		paths = append(paths, more...)
	}
	var out [][]any
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		vals, err := ParseCorpusFile(data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, vals)
	}
	return out
}

// generatedCorpus is where go test -fuzz keeps the inputs it generated
// for target of the package in the working directory:
// $GOCACHE/fuzz/<import path>/<target>.
func generatedCorpus(target string) (string, error) {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOCACHE: %w", err)
	}
	cache := strings.TrimSpace(string(out))
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			rel, _ := filepath.Rel(dir, wd)
			for _, line := range strings.Split(string(data), "\n") {
				if mod, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
					return filepath.Join(cache, "fuzz", strings.TrimSpace(mod), rel, target), nil
				}
			}
			return "", fmt.Errorf("%s/go.mod names no module", dir)
		}
		if dir == filepath.Dir(dir) {
			return "", fmt.Errorf("no go.mod above %s", wd)
		}
	}
}

// ParseCorpusFile reads go test's corpus file format: a "go test fuzz
// v1" line, then one Go conversion per argument ([]byte("..."),
// string("..."), int(3), bool(true), ...).
func ParseCorpusFile(data []byte) ([]any, error) {
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) == 0 || lines[0] != "go test fuzz v1" {
		return nil, fmt.Errorf("not a go test fuzz v1 file")
	}
	var vals []any
	for i, line := range lines[1:] {
		if strings.TrimSpace(line) == "" {
			continue
		}
		v, err := corpusValue(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", i+2, err)
		}
		vals = append(vals, v)
	}
	return vals, nil
}

func corpusValue(line string) (any, error) {
	e, err := parser.ParseExpr(line)
	if err != nil {
		return nil, err
	}
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return nil, fmt.Errorf("%q is not a conversion", line)
	}
	var typ string
	switch f := call.Fun.(type) {
	case *ast.Ident:
		typ = f.Name
	case *ast.ArrayType:
		if id, ok := f.Elt.(*ast.Ident); ok && f.Len == nil && (id.Name == "byte" || id.Name == "uint8") {
			typ = "[]byte"
		}
	}
	arg := call.Args[0]
	neg := false
	if u, ok := arg.(*ast.UnaryExpr); ok && u.Op == token.SUB {
		neg, arg = true, u.X
	}
	lit, ok := arg.(*ast.BasicLit)
	if !ok {
		if id, ok := arg.(*ast.Ident); ok && typ == "bool" && (id.Name == "true" || id.Name == "false") {
			return id.Name == "true", nil
		}
		return nil, fmt.Errorf("%q: want a literal", line)
	}
	text := lit.Value
	if neg {
		text = "-" + text
	}
	switch typ {
	case "[]byte", "string":
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return nil, err
		}
		if typ == "string" {
			return s, nil
		}
		return []byte(s), nil
	case "int", "int64", "int32", "int16", "int8", "rune", "uint", "uint64", "uint32", "uint16", "uint8", "byte":
		return corpusInteger(typ, lit, text)
	case "float64", "float32":
		f, err := strconv.ParseFloat(text, 64)
		if typ == "float32" {
			return float32(f), err
		}
		return f, err
	}
	return nil, fmt.Errorf("%q: unsupported type", line)
}

// corpusInteger reads an integer literal, or a character, as typ.
func corpusInteger(typ string, lit *ast.BasicLit, text string) (any, error) {
	if lit.Kind == token.CHAR {
		r, _, _, err := strconv.UnquoteChar(strings.Trim(lit.Value, "'"), '\'')
		if err != nil {
			return nil, err
		}
		text = strconv.Itoa(int(r))
	}
	if typ == "byte" || strings.HasPrefix(typ, "uint") {
		n, err := strconv.ParseUint(text, 0, 64)
		return corpusUint(typ, n), err
	}
	n, err := strconv.ParseInt(text, 0, 64)
	return corpusInt(typ, n), err
}

func corpusInt(typ string, n int64) any {
	switch typ {
	case "int64":
		return n
	case "int32", "rune":
		return int32(n)
	case "int16":
		return int16(n)
	case "int8":
		return int8(n)
	}
	return int(n)
}

func corpusUint(typ string, n uint64) any {
	switch typ {
	case "uint64":
		return n
	case "uint32":
		return uint32(n)
	case "uint16":
		return uint16(n)
	case "uint8", "byte":
		return uint8(n)
	}
	return uint(n)
}
