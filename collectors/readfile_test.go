package collectors

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/httpclient"
)

// A file is read whole, whatever its size (max_metadata_bytes caps the
// network only), into a buffer of its size.
func TestReadFileWhole(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 4096, 1 << 20} {
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, []byte(strings.Repeat("x", size)), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(path)
		if err != nil || len(got) != size || cap(got) != size+1 {
			t.Errorf("%d bytes: read %d (capacity %d), %v", size, len(got), cap(got), err)
		}
	}
}

// The collectors' HTTP policy names max_metadata_bytes in the error of a
// body over it.
func TestHTTPCapNamesTheOption(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(strings.Repeat("x", 101)))
	}))
	defer srv.Close()
	c, err := httpclient.New(Globals{MaxBody: 100}.HTTP(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Get(context.Background(), srv.URL, nil)
	if !errors.Is(err, httpclient.ErrTooLarge) || !strings.Contains(err.Error(), "(100 bytes, max_metadata_bytes in [DEFAULT], --max-metadata-bytes)") {
		t.Fatalf("error %v", err)
	}
}
