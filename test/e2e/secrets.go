package e2e

import (
	"archive/tar"
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// The secret scan: every password, token and signed URL the lab created
// (its services' passwords, and what each stack gave its server: the
// collectors' passwords and keys, the TempURL of the metadata, the
// deployments' passwords and pre-signed signal URLs), and any Keystone
// token, must appear in no line the agent logged and in no file it wrote
// that is not private (mode 0600).

// minSecret is the shortest value counted as a secret: shorter ones
// (a port, "True") would match anywhere and are no credential.
const minSecret = 8

// sensitiveName is a key (or an input's name) whose value is a secret.
var sensitiveName = regexp.MustCompile(`(?i)(password|secret|token|signature|(^|_)sig$)`)

// sensitiveParam is a signed URL's query parameter whose value is a
// secret (not SignatureMethod, SignatureVersion).
var sensitiveParam = regexp.MustCompile(`(?i)(^signature$|^temp_url_sig$|password|secret|token)`)

// fernet is a Keystone token, whoever asked for it.
var fernet = regexp.MustCompile(`gAAAAA[A-Za-z0-9_-]{60,}`)

const keystoneToken = "keystone-token"

// Secrets is the set of known secrets, each under every form it may
// take in text: as is, URL-encoded, URL-decoded.
type Secrets struct {
	mu    sync.Mutex
	forms map[string]string // form -> what it is (never the value)
	count int               // distinct secrets
	stats ScanStats
}

// ScanStats are the scan's figures.
type ScanStats struct {
	Files, Private, Bytes, LogLines, JournalLines, Hits int
}

// labSecrets are the secrets of this run, as the lab creates them.
var labSecrets = &Secrets{forms: map[string]string{}}

// add records value as what.
func (s *Secrets) add(what, value string) {
	if len(value) < minSecret {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.forms[value]; !ok {
		s.count++
	}
	forms := []string{value, url.QueryEscape(value), url.PathEscape(value)}
	if u, err := url.QueryUnescape(value); err == nil {
		forms = append(forms, u)
	}
	for _, f := range forms {
		if len(f) >= minSecret {
			if _, ok := s.forms[f]; !ok {
				s.forms[f] = what
			}
		}
	}
}

// AddMetadata records the secrets of a server's metadata: values under
// sensitive keys (an input's name counts as its value's key), and the
// signature, token or secret query parameters of the URLs.
func (s *Secrets) AddMetadata(stack string, md map[string]any) {
	var walk func(path, key string, v any)
	walk = func(path, key string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if name, ok := x["name"].(string); ok {
				if val, ok := x["value"]; ok {
					walk(path+"."+name, name, val)
				}
			}
			for k, y := range x {
				walk(path+"."+k, k, y)
			}
		case []any:
			for _, y := range x {
				walk(path, key, y)
			}
		case string:
			if sensitiveName.MatchString(key) {
				s.add(path, x)
			}
			if u, err := url.Parse(x); err == nil && u.RawQuery != "" {
				for k, vals := range u.Query() {
					if sensitiveParam.MatchString(k) {
						for _, v := range vals {
							s.add(path+"?"+k, v)
						}
					}
				}
			}
		}
	}
	walk(stack, "", md)
}

// AddLabPasswords records the lab's own passwords (lab/lib.sh's *_PW).
func (s *Secrets) AddLabPasswords(libSh string) error {
	data, err := os.ReadFile(libSh)
	if err != nil {
		return err
	}
	for _, m := range regexp.MustCompile(`(?m)^([A-Z_]+_PW)=(\S+)$`).FindAllStringSubmatch(string(data), -1) {
		s.add("lab/lib.sh "+m[1], m[2])
	}
	return nil
}

// Hit is a secret found where it must not be.
type Hit struct {
	Where string // file (and line)
	What  string // which secret
}

func (h Hit) String() string { return h.Where + ": " + h.What }

// scan returns what of the known secrets data holds, and Keystone tokens.
func (s *Secrets) scan(where string, data []byte) []Hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	var hits []Hit
	seen := map[string]bool{}
	for form, what := range s.forms {
		if !seen[what] && bytes.Contains(data, []byte(form)) {
			seen[what] = true
			hits = append(hits, Hit{where, what})
		}
	}
	if fernet.Match(data) {
		hits = append(hits, Hit{where, keystoneToken})
	}
	return hits
}

// scanLines scans text line by line, so that a hit names its line.
func (s *Secrets) scanLines(where string, r io.Reader) (hits []Hit, lines int) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		lines++
		hits = append(hits, s.scan(fmt.Sprintf("%s:%d", where, lines), sc.Bytes())...)
	}
	return hits, lines
}

// ScanLog scans a log the agent wrote, whatever its mode.
func (s *Secrets) ScanLog(path string) []Hit {
	f, err := os.Open(path)
	if err != nil {
		return []Hit{{path, "cannot be read: " + err.Error()}}
	}
	defer f.Close()
	hits, n := s.scanLines(path, f)
	s.count1(func(st *ScanStats) { st.LogLines += n; st.Hits += len(hits) })
	return hits
}

// ScanJournal scans a journal's text (journalctl -o cat).
func (s *Secrets) ScanJournal(where string, text string) []Hit {
	hits, n := s.scanLines(where, strings.NewReader(text))
	s.count1(func(st *ScanStats) { st.JournalLines += n; st.Hits += len(hits) })
	return hits
}

// ScanTree scans every regular file under root that is not private
// (mode 0600) nor skipped.
func (s *Secrets) ScanTree(root string, skip func(rel string) bool) []Hit {
	var hits []Hit
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			hits = append(hits, Hit{p, "cannot be read: " + err.Error()})
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if skip != nil && skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if info.Mode().Perm() == 0o600 {
			s.count1(func(st *ScanStats) { st.Private++ })
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			hits = append(hits, Hit{p, "cannot be read: " + err.Error()})
			return nil
		}
		h := s.scan(fmt.Sprintf("%s (%04o)", p, info.Mode().Perm()), data)
		hits = append(hits, h...)
		s.count1(func(st *ScanStats) { st.Files++; st.Bytes += len(data); st.Hits += len(h) })
		return nil
	})
	return hits
}

// ScanTar scans the non-private regular files of a tar stream (a
// machine's /run, which only it sees).
func (s *Secrets) ScanTar(where string, r io.Reader) []Hit {
	var hits []Hit
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return append(hits, Hit{where, "tar: " + err.Error()})
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if h.FileInfo().Mode().Perm() == 0o600 {
			s.count1(func(st *ScanStats) { st.Private++ })
			continue
		}
		data, _ := io.ReadAll(tr)
		found := s.scan(fmt.Sprintf("%s/%s (%04o)", where, strings.TrimPrefix(h.Name, "./"), h.FileInfo().Mode().Perm()), data)
		hits = append(hits, found...)
		s.count1(func(st *ScanStats) { st.Files++; st.Bytes += len(data); st.Hits += len(found) })
	}
	return hits
}

// Find scans a file someone else wrote (a service's log), for the
// record: it does not count in the figures.
func (s *Secrets) Find(path string) []Hit {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return s.scan(path, data)
}

func (s *Secrets) count1(f func(*ScanStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.stats)
}

// Summary is the scan's figures, for the end of the run.
func (s *Secrets) Summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	kinds := map[string]bool{}
	for _, what := range s.forms {
		kinds[kindOf(what)] = true
	}
	var k []string
	for x := range kinds {
		k = append(k, x)
	}
	sort.Strings(k)
	st := s.stats
	return fmt.Sprintf("%d secrets (%d forms; %s), %d files (%d bytes) scanned and %d private (0600) ones skipped, %d log lines, %d journal lines: %d hits",
		s.count, len(s.forms), strings.Join(k, ", "), st.Files, st.Bytes, st.Private, st.LogLines, st.JournalLines, st.Hits)
}

// kindOf is the last part of a secret's description: its key.
func kindOf(what string) string {
	if i := strings.LastIndexAny(what, ". ?"); i >= 0 {
		return what[i+1:]
	}
	return what
}
