package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeTarGz writes a .tar.gz of entries (name, content, mtime); gzName
// is the gzip header's name, which only the gzip layer carries.
func writeTarGz(t *testing.T, path, gzName string, entries ...tarEntry) {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Name = gzName
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := *e.hdr
		h.Size = int64(len(e.data))
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func entry(name, data string, mtime int64) tarEntry {
	return tarEntry{&tar.Header{Name: name, Mode: 0o644, Typeflag: tar.TypeReg, ModTime: time.Unix(mtime, 0), Format: tar.FormatPAX}, []byte(data)}
}

// A mismatch is named where a reviewer would look first: the tarball's
// first differing entry (its header, then its content), the gzip layer
// when the tar streams agree, a text's first differing line.
func TestFirstDifference(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	writeTarGz(t, p("a.tar.gz"), "", entry("d/x", "one", 100), entry("d/y", "two", 100))
	writeTarGz(t, p("mtime.tar.gz"), "", entry("d/x", "one", 100), entry("d/y", "two", 101))
	writeTarGz(t, p("content.tar.gz"), "", entry("d/x", "one", 100), entry("d/y", "TWO", 100))
	writeTarGz(t, p("gzname.tar.gz"), "build-dir-name", entry("d/x", "one", 100), entry("d/y", "two", 100))
	if err := os.WriteFile(p("a.txt"), []byte("same\nabc  f1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("b.txt"), []byte("same\nabd  f1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, a, b, want string }{
		{"x.tar.gz", "a.tar.gz", "mtime.tar.gz", "entry 1: d/y type '0' mode 644 owner 0:0 \"\":\"\" mtime 100"},
		{"x.tar.gz", "a.tar.gz", "content.tar.gz", "entry 1, d/y: contents differ"},
		{"x.tar.gz", "a.tar.gz", "gzname.tar.gz", "the gzip layers differ"},
		{"SHA256SUMS", "a.txt", "b.txt", "line 2:\n  \"abc  f1\"\n  vs \"abd  f1\""},
	} {
		got := firstDifference(t, c.name, p(c.a), p(c.b))
		if !strings.Contains(got, c.want) {
			t.Errorf("%s vs %s: %q, want it to contain %q", c.a, c.b, got, c.want)
		}
	}
}
