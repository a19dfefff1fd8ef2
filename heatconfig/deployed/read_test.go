package deployed

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/agentstate"
)

// Deployments come in start order with their signal; what became of
// each depends on its signal and, without one, on when it started
// against the last pass; a daemon's Reader sees a state file changed.
func TestDeployments(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	last := &agentstate.Pass{Started: t0, Ended: t0.Add(time.Minute)}
	put := func(id, doc string, at time.Time, sig *agentstate.Signal) {
		p := filepath.Join(dir, id+".json")
		os.WriteFile(p, []byte(doc), 0o600)
		os.Chtimes(p, at, at)
		if sig != nil {
			agentstate.Write(Dir(dir).Signal(id), sig)
		}
	}
	put("ok", `{"name": "a", "group": "script"}`, t0.Add(-2*time.Hour), &agentstate.Signal{StatusCode: "0", Result: "sent"})
	put("bad", `{"name": "b", "group": "puppet"}`, t0.Add(-time.Hour), &agentstate.Signal{StatusCode: "2", Result: "sent"})
	put("lost", `{"name": "c"}`, t0.Add(time.Second), nil)
	put("now", `{"name": "d"}`, t0.Add(time.Hour), nil)
	put("old", ``, t0.Add(-3*time.Hour), nil)
	os.WriteFile(filepath.Join(dir, "x.notify.json"), []byte(`{}`), 0o600)
	var r Reader
	ds, err := r.Read(Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ds {
		got = append(got, d.ID+":"+d.Name+":"+d.Outcome(last))
	}
	want := "old::unknown ok:a:succeeded bad:b:failed lost:c:unsignalled now:d:running"
	if strings.Join(got, " ") != want {
		t.Errorf("got %v, want %s", got, want)
	}
	put("bad", `{"name": "b2", "group": "puppet"}`, t0.Add(-time.Hour+time.Second), nil)
	if ds, _ = r.Read(Dir(dir)); ds[2].Name != "b2" {
		t.Errorf("a changed state file was not read again: %+v", ds[2])
	}
}
