package ec2

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// metadataServer answers from a tree that a fuzz input can replace, and
// counts the requests.
type metadataServer struct {
	mu       sync.Mutex
	tree     map[string]string
	listing  string // when set, the answer of every directory
	leaf     string // and of every other path
	requests atomic.Int64
}

func (s *metadataServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tree == nil {
		if strings.HasSuffix(r.URL.Path, "/") {
			io.WriteString(w, s.listing)
		} else {
			io.WriteString(w, s.leaf)
		}
		return
	}
	body, ok := s.tree[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	io.WriteString(w, body)
}

// specReader turns fuzz bytes into choices, zeros once they run out.
type specReader struct{ b []byte }

func (r *specReader) next() int {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return int(c)
}

const nameChars = "abcdefghijklmnopqrstuvwxyz0123456789-_.ABC"

var valueChars = []rune("ab \n\t=/é\u2028{}\"")

// build makes a metadata tree at dir (a URL path ending in "/") from
// spec, records its listing and leaves in tree, and returns the value
// the walk must find: directories, "N=name" key entries (the directory
// "N/"), and leaves of any text.
func build(r *specReader, tree map[string]string, dir string, depth int) *jsondoc.Object {
	want := jsondoc.NewObject(0)
	var listing []string
	n := r.next() % 5
	if depth >= 4 {
		n = min(n, 1)
	}
	for i := 0; i < n; i++ {
		var name strings.Builder
		for j := 0; j <= r.next()%6; j++ {
			name.WriteByte(nameChars[r.next()%len(nameChars)])
		}
		key := name.String()
		if key == "." || key == ".." {
			key += "x"
		}
		if _, dup := want.Get(key); dup {
			continue
		}
		switch kind := r.next() % 3; {
		case kind == 0 || depth >= 4:
			var v strings.Builder
			for j := 0; j < r.next()%12; j++ {
				v.WriteRune(valueChars[r.next()%len(valueChars)])
			}
			tree[dir+key] = v.String()
			listing = append(listing, key)
			want.Set(key, v.String())
		case kind == 1:
			listing = append(listing, key+"/")
			want.Set(key, build(r, tree, dir+key+"/", depth+1))
		default:
			idx := strconv.Itoa(r.next() % 10)
			if _, dup := want.Get(idx); dup {
				continue
			}
			listing = append(listing, idx+"="+key)
			want.Set(idx, build(r, tree, dir+idx+"/", depth+1))
		}
	}
	tree[dir] = strings.Join(listing, "\n")
	if r.next()%2 == 1 {
		tree[dir] += "\n" // a trailing newline, as real services send
	}
	return want
}

// FuzzWalkServedTree serves a metadata tree built from the input and
// walks it: what comes back is the tree, in listing order, each leaf's
// text unchanged, one request per entry.
func FuzzWalkServedTree(f *testing.F) {
	f.Add([]byte{3, 2, 1, 1, 1, 0, 4, 2, 2, 2, 3, 7, 0, 1, 1, 5, 1, 2, 3})
	f.Add([]byte("ec2 metadata, with public-keys and placement"))
	f.Add([]byte{})
	srv := &metadataServer{}
	ts := httptest.NewServer(srv)
	f.Cleanup(ts.Close)
	// One collector for the whole run: its connections are reused.
	c := collector(f, ts.URL+"/latest/meta-data", f.TempDir()+"/ec2.json")
	f.Fuzz(func(t *testing.T, spec []byte) {
		tree := map[string]string{}
		want := build(&specReader{spec}, tree, "/latest/meta-data/", 0)
		srv.mu.Lock()
		srv.tree, srv.listing, srv.leaf = tree, "", ""
		srv.mu.Unlock()
		before := srv.requests.Load()
		got, err := c.Collect(context.Background())
		if err != nil {
			t.Fatalf("walking %q: %v", tree, err)
		}
		if jsondoc.Dumps(got[0].Content) != jsondoc.Dumps(want) {
			t.Fatalf("walked %s\nserved %s", jsondoc.Dumps(got[0].Content), jsondoc.Dumps(want))
		}
		if n := srv.requests.Load() - before; n != int64(len(tree)) {
			t.Fatalf("%d requests for %d entries", n, len(tree))
		}
	})
}

// FuzzHostileListing walks a service that answers every directory with
// the same listing and every other path with the same text: the walk
// ends, after a bounded number of requests, with the metadata or a
// one-line error naming where it stopped.
func FuzzHostileListing(f *testing.F) {
	f.Add("a\nb/\n0=k", "v")
	f.Add("self/", "")
	f.Add("\n\n=\n/\n//", "x")
	f.Add("../\n./x", "y")
	srv := &metadataServer{}
	ts := httptest.NewServer(srv)
	f.Cleanup(ts.Close)
	c := collector(f, ts.URL+"/latest/meta-data", f.TempDir()+"/ec2.json")
	f.Fuzz(func(t *testing.T, listing, leaf string) {
		srv.mu.Lock()
		srv.tree, srv.listing, srv.leaf = nil, listing, leaf
		srv.mu.Unlock()
		before := srv.requests.Load()
		_, err := c.Collect(context.Background())
		if n := srv.requests.Load() - before; n > walkRequestBound {
			t.Fatalf("%d requests for listing %.60q", n, listing)
		}
		if err != nil {
			if !errors.Is(err, collectors.ErrNotAvailable) || strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("error %q", err)
			}
		}
	})
}

// walkRequestBound is more requests than any real metadata tree needs
// (an EC2 instance's is some hundred entries).
const walkRequestBound = 5000
