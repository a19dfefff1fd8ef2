package cfn

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// answerSeeds are heat-api-cfn answers: the real shape, namespaces,
// entities and CDATA, a field twice, and broken XML.
var answerSeeds = []struct{ body, path string }{
	{`<DescribeStackResourceResponse><DescribeStackResourceResult><StackResourceDetail><Metadata>{"a": 1}</Metadata></StackResourceDetail></DescribeStackResourceResult></DescribeStackResourceResponse>`, "server.Metadata"},
	{`<?xml version="1.0" encoding="UTF-8"?><DescribeStackResourceResponse xmlns="http://heat.openstack.org/"><DescribeStackResourceResult><StackResourceDetail><Metadata>{&quot;a&quot;: &lt;1&gt;}</Metadata></StackResourceDetail></DescribeStackResourceResult></DescribeStackResourceResponse>`, "server.Metadata"},
	{`<R><DescribeStackResourceResult><StackResourceDetail><Metadata><![CDATA[{"a": {"b": [1, "&"]}}]]></Metadata><Metadata>{}</Metadata></StackResourceDetail></DescribeStackResourceResult></R>`, "server.Metadata.a"},
	{`<R><DescribeStackResourceResult><StackResourceDetail><M>{"x": 1}</M></StackResourceDetail></DescribeStackResourceResult></R>`, "server.M.x"},
	{`<R><DescribeStackResourceResult><StackResourceDetail><Metadata>[1]</Metadata></StackResourceDetail>`, "server.Metadata"},
	{`<?xml version="1.0" encoding="ISO-8859-1"?><R><DescribeStackResourceResult><StackResourceDetail><Metadata>{"é": "` + "\xe9" + `"}</Metadata></StackResourceDetail></DescribeStackResourceResult></R>`, "server.Metadata"},
	{`not xml`, "server.Metadata"},
	{`<a><b>`, "nodot"},
}

// FuzzDescribeAnswer collects a path from a server that answers with the
// fuzzed body. Whatever the answer, the collector does not crash: the
// source is collected or unavailable (or not configured, for a bad
// path), with a one-line cause that holds neither the secret key nor a
// signature.
func FuzzDescribeAnswer(f *testing.F) {
	for _, s := range answerSeeds {
		f.Add([]byte(s.body), s.path)
	}
	srv := &server{resources: map[string]string{"server": `{"a": 1}`}}
	ts := httptest.NewServer(srv)
	f.Cleanup(ts.Close)
	// One client for the whole run: its connections are reused.
	var log bytes.Buffer
	base := newCollector(f, ts.URL+"/v1/", &log)
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		if len(body) == 0 || strings.ContainsAny(path, "\r\n") {
			return
		}
		srv.mu.Lock()
		srv.body = string(body)
		srv.mu.Unlock()
		log.Reset()
		c := *base
		c.Config.Paths = []string{path}
		_, err := c.Collect(context.Background())
		if err != nil {
			if !errors.Is(err, collectors.ErrNotAvailable) && !errors.Is(err, collectors.ErrNotConfigured) {
				t.Fatalf("error %v is neither unavailable nor not configured", err)
			}
			if cause := collectors.Cause(err); cause != nil && strings.ContainsAny(cause.Error(), "\r\n") {
				t.Fatalf("cause is not one line: %q", cause)
			}
		}
		if said := log.String() + errString(err); strings.Contains(said, secretKey) || strings.Contains(said, "Signature=") {
			t.Fatalf("a secret in the log or the cause: %s", said)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// FuzzMetadataRoundTrip serves a resource's Metadata as heat-api-cfn
// does (the JSON text in the XML, escaped) and collects it: a JSON object
// comes back as the same value, in the same key order.
func FuzzMetadataRoundTrip(f *testing.F) {
	for _, md := range []string{`{"a": 1}`, `{"os-collect-config": {"cfn": {"path": ["x.y"]}}, "b": [true, null, 1.5e300, "<&>\"'"]}`,
		`{"k": "\u00e9\ud83d\ude00", "k": 2, "deep": {"x": {"y": {}}}}`, "\r\n{\t}\r", `[1]`, `{`} {
		f.Add(md)
	}
	srv := &server{resources: map[string]string{}}
	ts := httptest.NewServer(srv)
	f.Cleanup(ts.Close)
	var log bytes.Buffer
	c := newCollector(f, ts.URL+"/v1/", &log, "server.Metadata")
	f.Fuzz(func(t *testing.T, md string) {
		want, err := jsondoc.Loads([]byte(md))
		obj, isObj := want.(*jsondoc.Object)
		if err != nil || !isObj || !xmlText(md) {
			return
		}
		if _, ok := obj.Get("deployments"); ok {
			return // exploded into entries of their own: merger's business
		}
		srv.mu.Lock()
		srv.resources["server"] = md
		srv.mu.Unlock()
		log.Reset()
		entries, err := c.Collect(context.Background())
		if err != nil {
			t.Fatalf("%q: %v\n%s", md, err, log.String())
		}
		if got := jsondoc.Dumps(entries[0].Content); got != jsondoc.Dumps(want) {
			t.Fatalf("%q collected as %s, want %s", md, got, jsondoc.Dumps(want))
		}
	})
}

// xmlText reports whether s is made of characters XML 1.0 can carry.
func xmlText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r >= 0xd800 && r <= 0xdfff || r == 0xfffe || r == 0xffff {
			return false
		}
	}
	return true
}
