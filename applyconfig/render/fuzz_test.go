package render

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/cbroglie/mustache"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

// mustacheSeeds are templates over the metadata `fixture` (or their own):
// every tag kind, sections over each JSON type, dotted names, standalone
// lines, delimiter changes and the malformed forms.
var mustacheSeeds = []struct{ tmpl, meta string }{
	{"{{x}} {{{s}}} {{&s}} {{d}} {{l}} {{e}} {{nums}} {{big}} {{f}} {{ff}} {{n}} {{t}} {{y}} {{z}}", ""},
	{"{{#items}}{{name}}:{{top}}\n{{/items}}{{^l}}empty{{/l}}{{#d}}{{x}}{{y.z}}{{/d}}", ""},
	{"a\n  {{#t}}  \n  b\n{{/t}}\n{{! comment }}\n{{=<% %>=}}\n<%x%>{{x}}<%={{ }}=%>{{x}}\n", ""},
	{"{{#nums}}<{{.}}>{{/nums}}{{#blank}}[{{.}}]{{/blank}}{{#one}}({{.}}){{/one}}", ""},
	{"{{d.é}}|{{d.a.b}}|{{nope.deeper}}|{{>partial}}|{{ x }}|{{# t }}in{{/ t }}", ""},
	{"{{#a}}x{{/b}}", ""},
	{"x{{/b}}", ""},
	{"{{#a}}unclosed", ""},
	{"{{x", ""},
	{"{{}}", ""},
	{"{{{x}}", ""},
	{"a\r\nb\rc{{x}}\r\n", ""},
	{"\xff{{x}}", ""},
	{"{{#list}}{{#.}}{{.}}{{/.}};{{/list}}", `{"list": [[1, 2], [], [{"a": 1}]]}`},
	{"{{a.b.c}} {{#a}}{{#b}}{{c}}{{/b}}{{/a}}", `{"a": {"b": {"c": "deep"}}}`},
	{"{{k}}", `{"k": "\u0000\u00e9\ud83d\ude00"}`},
	{"{{.}}", `{}`},
	{"{{#k}}{{.}}{{/k}}", `{"k": "  "}`},
}

func seedMustache(f *testing.F) {
	for _, s := range mustacheSeeds {
		f.Add([]byte(s.tmpl), []byte(s.meta))
	}
}

// fuzzMetadata is meta when it is a JSON object, else the fixture.
func fuzzMetadata(meta []byte) jsondoc.Value {
	if v, err := jsondoc.Loads(meta); err == nil {
		if _, ok := v.(*jsondoc.Object); ok {
			return v
		}
	}
	v, err := jsondoc.Loads([]byte(fixture))
	if err != nil {
		panic(err)
	}
	return v
}

// FuzzMustache renders a template over metadata. Rendering never lets
// the view's markers (the dict sentinels) into the output, gives the
// same bytes twice, and a refused template is a one-line error. With
// FUZZ_REFERENCE=1 every input is also rendered by the reference
// (checkMustache).
func FuzzMustache(f *testing.F) {
	seedMustache(f)
	ref := difftest.FuzzReference(f, "testdata/oracle.py", "os_apply_config.apply_config")
	f.Fuzz(func(t *testing.T, tmpl, meta []byte) {
		m := NewMetadata(fuzzMetadata(meta))
		out, err := m.Mustache(tmpl)
		if err != nil {
			if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error is not one line: %q", msg)
			}
		} else {
			if bytes.Contains(out, []byte(m.vb.nonce)) || bytes.Contains(out, []byte("\x00dict-")) && !bytes.Contains(tmpl, []byte("\x00dict-")) {
				t.Fatalf("a dict sentinel reached the output: %q", out)
			}
			again, err := m.Mustache(tmpl)
			if err != nil || !bytes.Equal(again, out) {
				t.Fatalf("second render differs: %q, %v\nfirst: %q", again, err, out)
			}
		}
		if ref != nil {
			checkMustache(t, ref, tmpl, meta)
		}
	})
}

// FuzzScanTags checks the tag scanner the pystache emulation rests on:
// tags come in order, within the text, each starting with the opening
// delimiter in force; what matchPystacheStandalone adds is only empty
// marker tags, and firstMismatch reports a closing tag that exists.
func FuzzScanTags(f *testing.F) {
	seedMustache(f)
	f.Fuzz(func(t *testing.T, tmpl, _ []byte) {
		src := string(tmpl)
		otag, last := "{{", 0
		var tags []tag
		scanTags(src, func(tg tag) bool {
			if tg.start < last || tg.end <= tg.start || tg.end > len(src) {
				t.Fatalf("tag [%d, %d) out of order or outside the text (after %d, length %d)", tg.start, tg.end, last, len(src))
			}
			if !strings.HasPrefix(src[tg.start:], otag) {
				t.Fatalf("tag at %d does not start with %q: %q", tg.start, otag, src[tg.start:tg.end])
			}
			if !strings.HasSuffix(src[:tg.end], tg.ctag) && tg.kind != '=' {
				t.Fatalf("tag %q does not end with %q", src[tg.start:tg.end], tg.ctag)
			}
			otag, last = tg.otag, tg.end
			tags = append(tags, tg)
			return true
		})
		marked, alike := matchPystacheStandalone(src)
		if alike && checkTags(src) != nil {
			t.Fatalf("tags read alike by both but checkTags refuses %q: %v", src, checkTags(src))
		}
		if len(marked) < len(src) {
			t.Fatalf("standalone marking removed text: %q -> %q", src, marked)
		}
		// Removing the markers, each written with the delimiters in
		// force at its place, gives back the text.
		restored := marked
		for _, tg := range tags {
			restored = strings.Replace(restored, tg.otag+"&"+standaloneMarker+tg.ctag, "", 1)
		}
		if len(tags) > 0 && restored != src && !strings.Contains(src, "&"+standaloneMarker) {
			t.Fatalf("marking changed more than markers:\n%q\n%q", src, marked)
		}
		if closing, open, ok := firstMismatch(src); ok {
			found := false
			for _, tg := range tags {
				found = found || tg.kind == '/' && tg.name == closing
			}
			if !found || open == "" {
				t.Fatalf("mismatch %q != %q names no closing tag of %q", closing, open, src)
			}
		}
	})
}

// The reference's render_template over the seeds (checkMustache).
func TestMustacheSeedsAgainstReference(t *testing.T) {
	ref := difftest.StartReference(t, "testdata/oracle.py", "os_apply_config.apply_config")
	n := 0
	for _, s := range mustacheSeeds {
		n += checkMustache(t, ref, []byte(s.tmpl), []byte(s.meta))
	}
	for _, vals := range difftest.FuzzCorpus(t, "FuzzMustache") {
		n += checkMustache(t, ref, vals[0].([]byte), vals[1].([]byte))
	}
	t.Logf("%d cases compared", n)
}

// checkMustache renders tmpl over meta (or the fixture) here and in the
// reference: where we render, the bytes must be pystache's; where we
// refuse, pystache must refuse too, or the template is one of the
// malformed kinds docs/compat.md lists (pystache renders something of
// those). It returns 0 when the reference's answer is a known
// difference, else 1.
func checkMustache(t *testing.T, ref *difftest.Reference, tmpl, meta []byte) int {
	t.Helper()
	var want struct {
		Out   *string
		Error string
		Skip  string
	}
	md := fuzzMetadata(meta)
	if !ref.Query(t, map[string]string{"template": base64.StdEncoding.EncodeToString(tmpl), "metadata": jsondoc.Dumps(md)}, &want) || want.Skip != "" {
		return 0
	}
	got, err := NewMetadata(md).Mustache(tmpl)
	switch {
	case err == nil && want.Out == nil:
		t.Errorf("template %q: ours renders %q, the reference refuses: %s", tmpl, got, want.Error)
	case err == nil && string(got) != *want.Out:
		t.Errorf("template %q over %s:\nours      %q\nreference %q", tmpl, jsondoc.Dumps(md), got, *want.Out)
	case err != nil && want.Out != nil && !malformed(string(tmpl)):
		t.Errorf("template %q: ours refuses (%v), the reference renders %q", tmpl, err, *want.Out)
	}
	return 1
}

// malformed reports the templates docs/compat.md lets us refuse where
// pystache renders something: an unclosed section, an unterminated tag,
// an empty tag, an unbalanced triple mustache, a tag pystache reads
// otherwise (tagError).
func malformed(tmpl string) bool {
	_, err := NewMetadata(jsondoc.NewObject(0)).Mustache([]byte(tmpl))
	if errors.As(err, new(tagError)) {
		return true
	}
	var pe mustache.ParseError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case mustache.ErrSectionNoClosingTag, mustache.ErrUnmatchedOpenTag, mustache.ErrEmptyTag:
		return true
	}
	return false
}
