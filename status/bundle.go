package status

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tripleo-go/agent/internal/secret"
)

// writeBundle writes the members, redacted, as a tar.gz under top/, to
// out: staged beside it and renamed, private (0600).
func writeBundle(out, top string, now time.Time, ms []member, red *secret.Redactor) error {
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".")
	if err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	defer os.Remove(f.Name())
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	for _, m := range ms {
		data := []byte(red.Redact(secret.RedactText(string(m.data))))
		hdr := &tar.Header{Name: top + "/" + m.name, Mode: 0o600, Size: int64(len(data)), ModTime: now, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			f.Close()
			return fmt.Errorf("writing %s: %w", out, err)
		}
		if _, err := tw.Write(data); err != nil {
			f.Close()
			return fmt.Errorf("writing %s: %w", out, err)
		}
	}
	err = tw.Close()
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), out)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return nil
}
