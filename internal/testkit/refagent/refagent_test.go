package refagent

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Two reference daemons, released together, poll a server; on Mark and
// at Stop each appends what its sockets sent and received, by port.
func TestReferenceFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Python daemons")
	}
	if why := Available(); why != "" {
		if os.Getenv("REQUIRE_REFERENCE") == "1" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		fmt.Fprint(w, `{"a": "`+strings.Repeat("x", 1000)+`"}`)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	dir := t.TempDir()
	var agents []Agent
	for i := 0; i < 2; i++ {
		d := filepath.Join(dir, fmt.Sprint(i))
		os.MkdirAll(d, 0o700)
		conf := filepath.Join(d, "occ.conf")
		os.WriteFile(conf, []byte(fmt.Sprintf("[DEFAULT]\ncommand = true\ncachedir = %s/cache\nbackup_cachedir = %s/backup\n"+
			"collectors = request\npolling_interval = 1\n[request]\nmetadata_url = %s/doc\n", d, d, srv.URL)), 0o600)
		agents = append(agents, Agent{Dir: d, Args: []string{"--config-file", conf}})
	}
	f, err := Start(dir, agents)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); hits.Load() < 4 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	f.Mark()
	time.Sleep(500 * time.Millisecond)
	if err := f.Exited(); err != nil {
		t.Fatal(err)
	}
	f.Stop()
	for _, a := range agents {
		lines, err := ReadCounts(a.Dir)
		if err != nil || len(lines) != 2 {
			t.Fatalf("%s: %d count lines (%v)", a.Dir, len(lines), err)
		}
		if lines[1].Received[port] < 1000 || lines[1].Sent[port] <= 0 || lines[1].Received[port] < lines[0].Received[port] {
			t.Fatalf("%s: counts %+v", a.Dir, lines)
		}
	}
}
