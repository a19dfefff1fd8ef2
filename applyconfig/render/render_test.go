package render

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

const fixture = `{"x": "foo", "y": false, "z": null, "n": 0, "f": -0.0, "ff": 0.0, "one": 1,
 "blank": " ", "empty": "", "s": "a<b>&\"c'", "d": {"x": 9, "\u00e9": "\u00e9", "y": {"z": "deep"}, "a.b": 1},
 "e": {}, "l": [], "items": [{"name": "a"}, {"name": "b", "top": "inner"}], "nums": [1, 2.5, "three"],
 "top": "outer", "big": 123456789012345678901234567890, "t": true, "String": "key named String"}`

func md(t testing.TB) *Metadata {
	cfg, err := jsondoc.Loads([]byte(fixture))
	if err != nil {
		t.Fatal(err)
	}
	return NewMetadata(cfg)
}

// Expectations are pystache 0.6.0's output with os-apply-config's renderer
// (checked by running the reference); the difftest corpus covers more.
func TestMustache(t *testing.T) {
	m := md(t)
	for _, tc := range []struct{ name, tmpl, want string }{
		{"no escaping", "{{s}}|{{{s}}}|{{&s}}", `a<b>&"c'|a<b>&"c'|a<b>&"c'`},
		{"missing is empty", "[{{nope}}][{{nope.deeper}}]", "[][]"},
		{"null is empty", "[{{z}}]", "[]"},
		{"json of non-strings", "{{y}} {{n}} {{f}} {{ff}} {{big}} {{t}}", "false 0 -0.0 0.0 123456789012345678901234567890 true"},
		{"dict as json, non-ascii escaped", "{{d}}", `{"x": 9, "\u00e9": "\u00e9", "y": {"z": "deep"}, "a.b": 1}`},
		{"raw non-ascii in strings", "{{d.é}}", "é"},
		{"dotted", "{{d.y.z}}", "deep"},
		{"dotted key unreachable", "[{{d.a.b}}]", "[]"},
		{"empty containers", "{{e}} {{l}}", "{} []"},
		{"falsy sections", "{{#y}}1{{/y}}{{#z}}2{{/z}}{{#n}}3{{/n}}{{#f}}4{{/f}}{{#ff}}5{{/ff}}{{#empty}}6{{/empty}}{{#e}}7{{/e}}{{#l}}8{{/l}}{{#nope}}9{{/nope}}", ""},
		{"inverted", "{{^y}}1{{/y}}{{^z}}2{{/z}}{{^n}}3{{/n}}{{^f}}4{{/f}}{{^e}}5{{/e}}{{^l}}6{{/l}}{{^x}}7{{/x}}", "123456"},
		{"whitespace string is truthy", "[{{#blank}}yes{{.}}{{/blank}}]", "[yes ]"},
		{"list of dicts, parent fallback", "{{#items}}{{name}}:{{top}} {{/items}}", "a:outer b:inner "},
		{"implicit iterator", "{{#nums}}<{{.}}>{{/nums}}", "<1><2.5><three>"},
		{"dict section pushes", "{{#d}}{{x}}{{top}}{{/d}}", "9outer"},
		{"scalar section", "{{#one}}[{{.}}]{{/one}}", "[1]"},
		{"standalone lines vanish", "a\n{{#t}}\nb\n{{/t}}\nc\n", "a\nb\nc\n"},
		{"comments", "a{{! hidden }}b", "ab"},
		{"delimiters", "{{=<% %>=}}<%x%>{{x}}", "foo{{x}}"},
		{"partials are empty", "[{{>p}}]", "[]"},
		{"method names are keys", "{{String}}|{{#d}}{{Format}}{{/d}}", "key named String|"},
		{"crlf read as lf", "a\r\n{{x}}\rb", "a\nfoo\nb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := m.Mustache([]byte(tc.tmpl))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestMustacheErrors(t *testing.T) {
	m := md(t)
	for _, tc := range []struct{ tmpl, want string }{
		{"{{#a}}x{{/b}}", "Section end tag mismatch: b != a"},
		{"{{#a}}{{#c}}x{{/c}}{{/b}}{{/a}}", "Section end tag mismatch: b != a"},
		{"x{{/b}}", "Section end tag mismatch: b != None"},
		{"{{=<% %>=}}<%#a%>x<%/b%>", "Section end tag mismatch: b != a"},
		{"\xff{{x}}", "can't decode byte 0xff in position 0: invalid start byte"},
		// Names are quoted with their line breaks escaped: one log line.
		{"{{#a\nb}}x", "Section a\\nb has no closing tag"},
		{"{{#a}}x{{/b\nc}}", "Section end tag mismatch: b\\nc != a"},
	} {
		_, err := m.Mustache([]byte(tc.tmpl))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.ContainsAny(err.Error(), "\r\n") {
			t.Errorf("%q: error %v, want %q", tc.tmpl, err, tc.want)
		}
	}
}

// A tag that pystache and the library read differently (another extent,
// kind, key or delimiters) is refused: no output of ours could be
// pystache's. The others render as pystache renders them (checked by
// running it).
func TestTagsPystacheReadsOtherwise(t *testing.T) {
	m := md(t)
	for _, tc := range []struct{ tmpl, want string }{
		{"[{{/}}]", `line 1: tag "{{/}}" is read otherwise by pystache`}, // a variable "/" to pystache
		{"a\n{{#}}", `line 2: tag "{{#}}" is read otherwise`},
		{"{{!}}\n", `tag "{{!}}" is read otherwise`},                       // pystache: a variable "!", not a comment
		{"{{!}}\n{{#t}}\n{{/t}}", `tag "{{!}}\n{{#t}}" is read otherwise`}, // pystache: one comment to the next "}}"
		{"{{=0=}}", `tag "{{=0=}}" is read otherwise`},                     // one delimiter: pystache fails
		{"{{=<% %> x=}}", `is read otherwise`},                             // pystache takes two of three
		{"{{=<%  %>=}}<%x%>", `is read otherwise`},                         // the library's closing delimiter would be " %>"
		{"{{{x} }}}", `tag "{{{x} }}}" is read otherwise`},                 // pystache allows the blank, the library wants "}}}"
		{"{{{}}}", `is read otherwise`},
		{"{{#a\x1c}}x{{/a}}", `is read otherwise`},
	} {
		_, err := m.Mustache([]byte(tc.tmpl))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.tmpl, err, tc.want)
		}
	}
	for _, tc := range []struct{ tmpl, want string }{
		{"{{=<% %>=}}<%x%>{{x}}<%={{ }}=%>{{x}}", "foo{{x}}foo"},
		{"{{= <% %> =}}<% x %>", "foo"},
		{"{{ #t }}x{{/ t}}|{{ & s }}|{{{ x }}}|{{! }}", "x|a<b>&\"c'|foo|"},
		{"{{<x}}\n", "\n"}, // a variable to both; the library would drop the line
		{"{{x}}}", "foo}"},
		{"{{\u00a0#t}}x{{/t}}", "x"}, // white space to both
	} {
		got, err := m.Mustache([]byte(tc.tmpl))
		if err != nil || string(got) != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.tmpl, got, err, tc.want)
		}
	}
}

func TestExecutableTemplate(t *testing.T) {
	m := md(t)
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok")
	os.WriteFile(ok, []byte("#!/bin/sh\nhead -c 12\n"), 0o755)
	got, err := m.Template(context.Background(), ok)
	if err != nil || string(got) != `{"x": "foo",` {
		t.Fatalf("got %q, %v", got, err)
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("#!/bin/sh\necho out; echo err >&2; exit 3\n"), 0o755)
	_, err = m.Template(context.Background(), bad)
	want := "config script failed: " + bad + "\n\nwith output:\n\nb'out\\nerr\\n'"
	if err == nil || err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
}

func TestExecutableTimeoutKillsGroup(t *testing.T) {
	m := md(t)
	m.timeout = 200e6 // 200ms
	dir := t.TempDir()
	slow := filepath.Join(dir, "slow")
	os.WriteFile(slow, []byte("#!/bin/sh\nsleep 30 &\nsleep 30\n"), 0o755)
	_, err := m.Template(context.Background(), slow)
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("error %v", err)
	}
}

// An executable template's output is a file body held in memory: past
// the bound it is an error naming the template, not a huge file.
func TestExecutableOutputBound(t *testing.T) {
	m := md(t)
	m.maxOutput = 1000
	dir := t.TempDir()
	chatty := filepath.Join(dir, "chatty")
	os.WriteFile(chatty, []byte("#!/bin/sh\nhead -c 1001 /dev/zero | tr '\\0' x\n"), 0o755)
	_, err := m.Template(context.Background(), chatty)
	if want := "config script wrote more than 1000 bytes: " + chatty; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	os.WriteFile(chatty, []byte("#!/bin/sh\nhead -c 1000 /dev/zero | tr '\\0' x\n"), 0o755)
	if body, err := m.Template(context.Background(), chatty); err != nil || len(body) != 1000 {
		t.Fatalf("%d bytes, %v", len(body), err)
	}
}

// Deliberate fix: a template that is not a regular file (a FIFO, a link
// to a device) is an error naming it; the reference blocked on a FIFO
// forever and read a device until it ended.
func TestNonRegularTemplateIsAnError(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	null := filepath.Join(dir, "null")
	os.Symlink("/dev/null", null)
	m := md(t)
	for _, path := range []string{fifo, null} {
		done := make(chan error, 1)
		go func() { _, err := m.Template(context.Background(), path); done <- err }()
		select {
		case err := <-done:
			var re *Error
			if !errors.As(err, &re) || re.Msg != "could not render moustache template "+path || re.Detail != path+" is not a regular file" {
				t.Errorf("%s: error %#v", path, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Template blocked", path)
		}
	}
}

func BenchmarkMustache(b *testing.B) {
	m := md(b)
	tmpl := []byte(strings.Repeat("[section]\nkey = {{x}}\nnested = {{d.y.z}}\n{{#items}}item = {{name}} {{top}}\n{{/items}}{{^y}}flag = off\n{{/y}}\n", 20))
	b.SetBytes(int64(len(tmpl)))
	for b.Loop() {
		if _, err := m.Mustache(tmpl); err != nil {
			b.Fatal(err)
		}
	}
}

func TestStandaloneAsPystache(t *testing.T) {
	m := md(t)
	for _, tc := range []struct{ tmpl, want string }{
		// pystache keeps a section line that has trailing blanks.
		{" {{#t}} \n x\n {{/t}} \n", "  \n x\n  \n"},
		{"{{#t}}\t\nx\n{{/t}}\n", "\t\nx\n"},
		{"\t{{#t}}\n\tx\n\t{{/t}}\nend", "\tx\nend"},
		{"{{! c }} \nx", " \nx"},
		{"{{=<% %>=}} \n<%x%>", " \nfoo"},
		{"{{#t}}{{x}}{{/t}} \n", "foo \n"},
	} {
		got, err := m.Mustache([]byte(tc.tmpl))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("%q: got %q, want %q", tc.tmpl, got, tc.want)
		}
	}
}

func TestMarkerAndRefsPrintNothing(t *testing.T) {
	m := md(t)
	for _, tc := range []struct{ tmpl, want string }{
		{"{{#blank}}[{{&..}}]{{/blank}}", "[]"},
		{"[{{&..}}][{{d.}}][{{#d}}{{..}}{{/d}}]", "[][][]"},
		{"{{#items}}{{.}};{{/items}}", `{"name": "a"};{"name": "b", "top": "inner"};`},
		{"{{#d}}{{y}}{{/d}}", `{"z": "deep"}`},
	} {
		got, err := m.Mustache([]byte(tc.tmpl))
		if err != nil || string(got) != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.tmpl, got, err, tc.want)
		}
	}
	empty := NewMetadata(jsondoc.NewObject(0))
	if got, err := empty.Mustache([]byte("{{^t}} \n{{/t}}[{{.}}]")); err != nil || string(got) != " \n[{}]" {
		t.Errorf("empty metadata: %q, %v", got, err)
	}
}

// Dicts print as their cell's address, which the writer replaces
// (view.go): a string or a template text that reads like an address
// still prints as itself.
func TestAddressLikeTextPrintsAsItself(t *testing.T) {
	cfg, err := jsondoc.Loads([]byte(`{"h": "0x1f", "d": {"k": "0xc0"}, "l": ["0x2"]}`))
	if err != nil {
		t.Fatal(err)
	}
	m := NewMetadata(cfg)
	got, err := m.Mustache([]byte("{{h}}|{{d.k}}|{{#h}}{{.}}{{/h}}|{{d}}|{{l}}|{{#l}}{{.}}{{/l}}"))
	if want := `0x1f|0xc0|0x1f|{"k": "0xc0"}|["0x2"]|0x2`; err != nil || string(got) != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
	// A text between tags that is exactly the address of d's cell.
	addr := fmt.Sprint(m.view.(cell)) // the top level's cell
	for a, id := range m.vb.cells {
		if id == 1 {
			addr = fmt.Sprintf("%#x", a)
		}
	}
	tmpl := "{{h}}" + addr + "{{d}}"
	got, err = m.Mustache([]byte(tmpl))
	if want := "0x1f" + addr + `{"k": "0xc0"}`; err != nil || string(got) != want {
		t.Errorf("%q: got %q, %v; want %q", tmpl, got, err, want)
	}
}

// RenderTo gives the body Render returns, once, for mustache and
// executable templates, and nothing when the template fails; the next
// render may reuse the buffer it gave.
func TestRenderToGivesTheBodyOnce(t *testing.T) {
	m := md(t)
	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		path string
		want string
		fail bool
	}{
		{write("m", "{{x}} {{d.y.z}} {{items}}", 0o644), `foo deep [{"name": "a"}, {"name": "b", "top": "inner"}]`, false},
		{write("x", "#!/bin/sh\nhead -c 12\n", 0o755), `{"x": "foo",`, false},
		{write("bad", "{{#x}}", 0o644), "", true},
		{write("badx", "#!/bin/sh\nexit 3\n", 0o755), "", true},
	} {
		var got []string
		err := m.RenderTo(context.Background(), Load(tc.path), func(b []byte) { got = append(got, string(b)) })
		body, rerr := m.Render(context.Background(), Load(tc.path))
		switch {
		case tc.fail && (err == nil || rerr == nil || len(got) != 0):
			t.Errorf("%s: RenderTo gave %q, %v; Render %v; want both to fail, nothing given", filepath.Base(tc.path), got, err, rerr)
		case !tc.fail && (err != nil || len(got) != 1 || got[0] != tc.want || string(body) != tc.want):
			t.Errorf("%s: RenderTo gave %q, %v; Render %q; want %q once", filepath.Base(tc.path), got, err, body, tc.want)
		}
	}
}
