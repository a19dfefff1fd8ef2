package status

import (
	"bufio"
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/secret"
)

// parseINI returns "section.key" -> value, the last one winning; enough
// to find the cache directories and the secrets.
func parseINI(data []byte) map[string]string {
	out := map[string]string{}
	section := "DEFAULT"
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && strings.HasSuffix(line, "]"):
			section = strings.TrimSpace(line[1 : len(line)-1])
		default:
			if k, v, ok := cutAssign(line); ok {
				out[section+"."+k] = v
			}
		}
	}
	return out
}

func cutAssign(line string) (k, v string, ok bool) {
	i := strings.IndexAny(line, "=:")
	if i <= 0 {
		return "", "", false
	}
	return strings.TrimSpace(line[:i]), strings.TrimSpace(line[i+1:]), true
}

// redactINI keeps the file's shape, comments included, and replaces the
// value of every option that names a credential (and, in any line, what
// RedactText removes).
func redactINI(data []byte) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(string(data), "\n") {
		t := strings.TrimSpace(line)
		if k, _, ok := cutAssign(t); ok && t[0] != '#' && t[0] != ';' && t[0] != '[' && secret.SensitiveName(k) {
			line = k + " = " + secret.Redacted + "\n"
		}
		b.WriteString(secret.RedactText(line))
	}
	return b.String()
}

// redaction gathers the secret values to remove from every member.
type redaction struct{ known []string }

func (r *redaction) redactor() *secret.Redactor {
	// Once each (a deployment's signal URL is in heat.json, its .last and
	// its .orig), longest first: a secret that contains another goes whole.
	sort.Slice(r.known, func(i, j int) bool {
		if len(r.known[i]) != len(r.known[j]) {
			return len(r.known[i]) > len(r.known[j])
		}
		return r.known[i] < r.known[j]
	})
	return secret.NewRedactor(slices.Compact(r.known)...)
}

// harvestURL keeps a URL's password and query (whole, and each value,
// raw and decoded) as secrets: a signed or temporary URL's signature.
func (r *redaction) harvestURL(v string) {
	if !strings.Contains(v, "://") {
		return
	}
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil {
		return
	}
	if pw, ok := u.User.Password(); ok {
		r.known = append(r.known, pw)
	}
	for k, vals := range u.Query() {
		if l := strings.ToLower(k); (secret.SensitiveName(l) || strings.HasSuffix(l, "sig")) && !strings.HasSuffix(l, "method") && !strings.HasSuffix(l, "version") {
			r.known = append(r.known, vals...)
			for _, v := range vals {
				r.known = append(r.known, url.QueryEscape(v))
			}
		}
	}
}

// harvestDir reads the JSON files of dir (the cache; heat-config's state
// directory) for secrets: values under sensitive names, the value of a
// {"name": sensitive, "value": ...} input, and signed URLs.
func (r *redaction) harvestDir(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if !e.Type().IsRegular() || !(strings.HasSuffix(e.Name(), ".json") || strings.HasSuffix(e.Name(), ".json.last") || strings.HasSuffix(e.Name(), ".json.orig")) {
			continue
		}
		if fi, err := e.Info(); err != nil || fi.Size() > harvestBytes {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if v, err := jsondoc.Loads(data); err == nil {
			r.walk(v, false)
		}
	}
}

func (r *redaction) walk(v jsondoc.Value, sensitive bool) {
	switch v := v.(type) {
	case string:
		if sensitive {
			r.known = append(r.known, v)
		}
		r.harvestURL(v)
	case *jsondoc.Object:
		name, _ := v.Get("name")
		input, _ := name.(string)
		for _, k := range v.Keys() {
			child, _ := v.Get(k)
			r.walk(child, sensitive || secret.SensitiveName(k) || (k == "value" && secret.SensitiveName(input)))
		}
	case []jsondoc.Value:
		for _, c := range v {
			r.walk(c, sensitive)
		}
	}
}
