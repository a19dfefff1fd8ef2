package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The nearest known key of a file: its spelling in files, a deprecated
// one or its command-line name, the same section first; none when even
// the nearest is more than a third of the key away.
func TestNearest(t *testing.T) {
	var v values
	s := v.set()
	s.Options = append(s.Options, Option{Name: "print", Dest: "print_only", Into: new(bool)},
		Option{Name: "log-file", Aliases: []string{"logfile"}, Into: new(string)})
	s.Accepted = []string{"DEFAULT.use_stderr"}
	for _, tc := range []struct{ section, key, want string }{
		{"DEFAULT", "nmae", "name"},
		{"DEFAULT", "Name", "name"},
		{"DEFAULT", "count-", "count"},
		{"DEFAULT", "print", "print_only"},
		{"DEFAULT", "log-file", "log_file"},
		{"DEFAULT", "log_fil", "log_file"},
		{"DEFAULT", "logfil", "logfile"},
		{"DEFAULT", "use-stderr", "use_stderr"},
		{"DEFAULT", "group_id", "[grp] group_id"},
		{"grp", "group-id", "group_id"},
		{"grp", "name", "[DEFAULT] name"},
		{"other", "rate", "[DEFAULT] rate"},
		{"DEFAULT", "xyzzy", ""},
		{"DEFAULT", "on_", "on"},
		{"DEFAULT", "o", "on"},
		{"DEFAULT", strings.Repeat("n", 300), ""},
	} {
		if got := s.nearest(tc.section, tc.key); got != tc.want {
			t.Errorf("[%s] %s: %q, want %q", tc.section, tc.key, got, tc.want)
		}
	}
}

// Each key no option reads is told once per file, section and key, in
// the order read, with its nearest known key; accepted keys, and every
// key when no one asks, are not.
func TestUnknownKeys(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.conf"), filepath.Join(dir, "b.conf")
	os.WriteFile(a, []byte("[DEFAULT]\nnmae = x\nnmae = y\nuse_stderr = 1\nname = ok\n[Grp]\ngroup-id = g\n[nowhere]\nkey = \"s3cret\"\n"), 0o644)
	os.WriteFile(b, []byte("[DEFAULT]\nnmae = z\n"), 0o644)
	var v values
	s := v.set()
	s.Accepted = []string{"DEFAULT.use_stderr"}
	var got []string
	if _, err := s.Parse([]string{"--config-file", a, "--config-file", b}, Env{Unknown: func(u Unknown) { got = append(got, u.String()) }}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Unknown option nmae in [DEFAULT] of " + a + ": ignored (the nearest known option is name).",
		"Unknown option group-id in [Grp] of " + a + ": ignored (the nearest known option is group_id).",
		"Unknown option key in [nowhere] of " + a + ": ignored (the nearest known option is [DEFAULT] key).",
		"Unknown option nmae in [DEFAULT] of " + b + ": ignored (the nearest known option is name).",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := s.Parse([]string{"--config-file", a}, Env{}); err != nil {
		t.Fatal(err)
	}
}

// A name that would break a log line is quoted.
func TestUnknownIsOneLine(t *testing.T) {
	u := Unknown{File: "/etc/a\nb.conf", Section: "DEFAULT", Key: "k\x1b[31m"}
	if got := u.String(); strings.ContainsAny(got, "\n\x1b") {
		t.Errorf("%q", got)
	}
}

// FuzzUnknownKeys reads any file with the warnings asked for: each is
// one line naming the file, told once, and its nearest key is one a file
// may hold.
func FuzzUnknownKeys(f *testing.F) {
	for _, s := range iniSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte("[DEFAULT]\nnmae = x\n[grp]\ngroup-id = 1\n[x\x1b]\nk\u00e9y = v\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "f.conf")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var v values
		s := v.set()
		known := map[string]bool{}
		for i := range s.Options {
			o := &s.Options[i]
			known[o.key()] = true
		}
		seen := map[Unknown]bool{}
		s.Parse([]string{"--config-file", path}, Env{Unknown: func(u Unknown) {
			msg := u.String()
			if strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "Unknown option ") || !strings.Contains(msg, path) {
				t.Fatalf("warning %q", msg)
			}
			n := u.Nearest
			u.Nearest = ""
			if seen[u] {
				t.Fatalf("told twice: %+v", u)
			}
			seen[u] = true
			if n == "" {
				return
			}
			g, d, ok := strings.Cut(strings.TrimPrefix(n, "["), "] ")
			if !ok {
				g, d = normalizeSection(u.Section), n
			}
			if !known[g+"."+d] {
				t.Fatalf("nearest %q of %+v is no key of a file", n, u)
			}
		}})
	})
}
