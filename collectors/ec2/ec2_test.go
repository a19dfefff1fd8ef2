package ec2

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/logging"
)

// tree is an EC2-style metadata service: directories answer with a
// listing, one entry a line.
var tree = map[string]string{
	"/latest/meta-data/":                            "ami-id\nhostname\npublic-keys/\nplacement/",
	"/latest/meta-data/ami-id":                      "ami-123",
	"/latest/meta-data/hostname":                    "node-1.example",
	"/latest/meta-data/public-keys/":                "0=heat_key",
	"/latest/meta-data/public-keys/0/":              "openssh-key",
	"/latest/meta-data/public-keys/0/openssh-key":   "ssh-rsa AAAA",
	"/latest/meta-data/placement/":                  "availability-zone",
	"/latest/meta-data/placement/availability-zone": "nova",
}

func server(t *testing.T, hits *int) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*hits++
		body, ok := tree[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, body)
	}))
}

func collector(t testing.TB, url, cachePath string) *Collector {
	client, _ := httpclient.New(httpclient.Options{Timeout: 2 * time.Second})
	return &Collector{URL: url, CachePath: cachePath, Client: client, Log: logging.Discard}
}

func TestWalk(t *testing.T) {
	hits := 0
	srv := server(t, &hits)
	defer srv.Close()
	got, err := collector(t, srv.URL+"/latest/meta-data", t.TempDir()+"/ec2.json").Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ami-id": "ami-123", "hostname": "node-1.example", "public-keys": {"0": {"openssh-key": "ssh-rsa AAAA"}}, "placement": {"availability-zone": "nova"}}`
	if len(got) != 1 || got[0].Name != "ec2" || jsondoc.Dumps(got[0].Content) != want {
		t.Fatalf("got %+v", got)
	}
}

// EC2 metadata is read once: a non-empty cached ec2.json is used as is.
func TestCachedDataIsKept(t *testing.T) {
	hits := 0
	srv := server(t, &hits)
	defer srv.Close()
	cachePath := t.TempDir() + "/ec2.json"
	os.WriteFile(cachePath, []byte(`{"cached": "yes"}`), 0o600)
	got, err := collector(t, srv.URL+"/latest/meta-data", cachePath).Collect(context.Background())
	if err != nil || jsondoc.Dumps(got[0].Content) != `{"cached": "yes"}` || hits != 0 {
		t.Fatalf("got %+v, %v, %d requests", got, err, hits)
	}
	os.WriteFile(cachePath, []byte(`{}`), 0o600) // empty: fetched again
	if _, err := collector(t, srv.URL+"/latest/meta-data", cachePath).Collect(context.Background()); err != nil || hits == 0 {
		t.Fatalf("%v, %d requests", err, hits)
	}
}

func TestMissingEntryIsUnavailable(t *testing.T) {
	hits := 0
	tree["/latest/meta-data/"] += "\nmissing"
	defer func() { tree["/latest/meta-data/"] = strings.TrimSuffix(tree["/latest/meta-data/"], "\nmissing") }()
	srv := server(t, &hits)
	defer srv.Close()
	_, err := collector(t, srv.URL+"/latest/meta-data", t.TempDir()+"/ec2.json").Collect(context.Background())
	if !errors.Is(err, collectors.ErrNotAvailable) || !strings.Contains(err.Error(), "404") {
		t.Fatalf("error %v", err)
	}
}

// A listing that is not one (a proxy's HTML error page answered with
// 200) makes the source unavailable: cached, it would stand for the
// instance's life. So does a name that would leave the tree.
func TestNotAListingIsUnavailable(t *testing.T) {
	for _, listing := range []string{
		"<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<center><h1>502 Bad Gateway</h1></center>\n</body>\n</html>\n",
		"ami-id\n../../admin/",
		"ami-id\r\nhostname\r\n",
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, listing)
		}))
		cachePath := t.TempDir() + "/ec2.json"
		_, err := collector(t, srv.URL+"/latest/meta-data", cachePath).Collect(context.Background())
		srv.Close()
		if !errors.Is(err, collectors.ErrNotAvailable) || !strings.Contains(err.Error(), "/latest/meta-data/ is not a metadata listing") {
			t.Errorf("listing %q: %v", listing, err)
		}
	}
}

func TestConfigDriveHelpers(t *testing.T) {
	export := "DEVNAME=/dev/vda1\nTYPE=ext4\nLABEL=root\n\nDEVNAME=/dev/sr0\nLABEL=config-2\nTYPE=iso9660\n"
	if got := findConfigDrive(export); got != "/dev/sr0" {
		t.Fatalf("found %q", got)
	}
	if got := findConfigDrive("DEVNAME=/dev/vdb\nLABEL=config-2\nTYPE=ext4\n"); got != "" {
		t.Fatalf("ext4 accepted: %q", got)
	}
	mounts := t.TempDir() + "/mounts"
	os.WriteFile(mounts, []byte("/dev/vda1 / ext4 rw 0 0\n/dev/sr0 /mnt/config\\0402 iso9660 ro 0 0\n"), 0o644)
	if got := mountPoint(mounts, "/dev/sr0"); got != "/mnt/config 2" {
		t.Fatalf("mount point %q", got)
	}
}

// A listing that lists itself again is walked to a bound: of depth, and
// of requests (a wide one would cost its length times the depth).
func TestWalkIsBounded(t *testing.T) {
	for _, tc := range []struct {
		listing, want string
		most          int64
	}{
		{"self/", "metadata tree deeper than 20 at ", 22},
		{strings.Repeat("e\n", 300) + "d/", "metadata tree larger than 4096 entries at ", maxFetches},
	} {
		srv := &metadataServer{listing: tc.listing, leaf: "v"}
		ts := httptest.NewServer(srv)
		_, err := collector(t, ts.URL+"/latest/meta-data", t.TempDir()+"/ec2.json").Collect(context.Background())
		ts.Close()
		if !errors.Is(err, collectors.ErrNotAvailable) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.20q: error %v, want %q", tc.listing, err, tc.want)
		}
		if n := srv.requests.Load(); n > tc.most {
			t.Errorf("%.20q: %d requests, want at most %d", tc.listing, n, tc.most)
		}
	}
}
