package keystone

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/tripleo-go/agent/internal/secret"
)

// cached is the on-disk form of a token. The token is a secret.String,
// so no message prints it (and JSON would write it as "***": storeCache
// writes it in the clear in its place).
type cached struct {
	Token     secret.String          `json:"token"`
	ExpiresAt time.Time              `json:"expires_at"`
	StoredAt  time.Time              `json:"stored_at"`
	Catalog   *tokens.ServiceCatalog `json:"catalog"`
}

// maxEntry bounds what is read of an entry: a token and its catalog are
// a few kilobytes.
const maxEntry = 1 << 20

// cachePath names the entry after a SHA-256 of every credential, the
// password included: other credentials, or a changed password, never
// find the token, and the password is nowhere in the clear.
func (s *Session) cachePath() string {
	if s.CacheDir == "" {
		return ""
	}
	h := sha256.New()
	for _, v := range []string{s.Creds.AuthURL, s.Creds.UserID, s.Creds.ProjectID, s.Creds.Password.Reveal()} {
		fmt.Fprintf(h, "%d:%s", len(v), v) // lengths: no two lists hash alike
	}
	return filepath.Join(s.CacheDir, fmt.Sprintf("token-%x.json", h.Sum(nil)))
}

// warn logs the first cache problem of the session; the others would
// say the same.
func (s *Session) warn(format string, args ...any) {
	if s.warned || s.Log == nil {
		return
	}
	s.warned = true
	s.Log.Warn(fmt.Sprintf(format, args...))
}

// loadCache takes the entry on disk if it is there, private to this
// user, readable, still valid (its expiry less the margin, and
// cache_ttl) and its catalog has every endpoint of Needs. An entry that
// cannot be used is one warning and a new authentication, never an
// error; one whose catalog lacks an endpoint, one line at INFO (the
// cloud changed, nothing is wrong) and a new authentication.
func (s *Session) loadCache() bool {
	path := s.cachePath()
	if path == "" {
		return false
	}
	if err := privateDir(s.CacheDir); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.warn("Not using the Keystone token cache %s: %v", s.CacheDir, err)
		}
		return false
	}
	c, err := readEntry(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		s.warn("Ignoring the cached Keystone token %s: %v", path, err)
		return false
	}
	validTo := c.ExpiresAt.Add(-margin)
	if ttl := c.StoredAt.Add(s.CacheTTL); s.CacheTTL > 0 && ttl.Before(validTo) {
		validTo = ttl
	}
	if !s.now().Before(validTo) {
		return false
	}
	for _, sv := range s.Needs {
		if _, err := lookup(c.Catalog, sv); err != nil {
			if s.Log != nil {
				s.Log.Info(fmt.Sprintf("The cached Keystone token's catalog has no %s: authenticating again", sv))
			}
			return false
		}
	}
	p, err := openstack.NewClient(s.Creds.AuthURL)
	if err != nil {
		return false
	}
	p.HTTPClient = *s.HTTP
	p.SetToken(c.Token.Reveal())
	s.provider, s.catalog, s.validTo, s.cached = p, c.Catalog, validTo, true
	return true
}

// readEntry reads an entry that is a regular file (not a link) of this
// user that no one else may read.
func readEntry(path string) (*cached, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, errors.New("a symbolic link")
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case !fi.Mode().IsRegular():
		return nil, errors.New("not a regular file")
	case fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("mode %04o, not private (0600)", fi.Mode().Perm())
	case !ownedByUs(fi):
		return nil, errors.New("owned by another user")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxEntry+1))
	if err != nil {
		return nil, err
	}
	var c cached
	// The decoder's message is left out: it may quote the file.
	if len(data) > maxEntry || json.Unmarshal(data, &c) != nil || c.Token == "" || c.Catalog == nil || c.ExpiresAt.IsZero() {
		return nil, errors.New("not a token entry")
	}
	return &c, nil
}

// privateDir checks that dir is a directory of this user that no one
// else may write to.
func privateDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return err
	case !fi.IsDir():
		return errors.New("not a directory")
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("mode %04o: others may write to it", fi.Mode().Perm())
	case !ownedByUs(fi):
		return errors.New("owned by another user")
	}
	return nil
}

func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// storeCache writes the entry, 0600, by a rename: a reader sees the old
// entry or the new one, whole. The directory is made 0700; one that
// others may write to is not used. Failing to store costs the next
// process an authentication, so it is one warning at most.
func (s *Session) storeCache(token string, expires time.Time) {
	path := s.cachePath()
	if path == "" {
		return
	}
	c := cached{ExpiresAt: expires, StoredAt: s.now(), Catalog: s.catalog}
	data, err := json.Marshal(struct {
		cached
		Token string `json:"token"` // the shallower field wins
	}{c, token})
	if err != nil {
		return
	}
	if err := os.MkdirAll(s.CacheDir, 0o700); err != nil {
		s.warn("Cannot keep the Keystone token in %s: %v", s.CacheDir, err)
		return
	}
	if err := privateDir(s.CacheDir); err != nil {
		s.warn("Not using the Keystone token cache %s: %v", s.CacheDir, err)
		return
	}
	tmp, err := os.CreateTemp(s.CacheDir, ".token-*")
	if err != nil {
		s.warn("Cannot keep the Keystone token in %s: %v", s.CacheDir, err)
		return
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		s.warn("Cannot keep the Keystone token in %s: writing %s failed", s.CacheDir, tmp.Name())
		return
	}
	if err := os.Rename(tmp.Name(), path); err != nil { // CreateTemp made it 0600
		s.warn("Cannot keep the Keystone token in %s: %v", s.CacheDir, err)
	}
}
