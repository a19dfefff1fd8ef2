package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"time"
)

// run is one run of the command: when it started, and the version of
// the metadata it saw.
type run struct {
	at      time.Time
	version int
	doc     any
}

// waitRun waits until a run of the command saw version v; it returns
// when that run started.
func waitRun(dir, key string, v int, limit time.Duration) (time.Time, bool) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		for _, r := range listRuns(dir, key) {
			if r.version == v {
				return r.at, true
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Time{}, false
}

func listRuns(dir, key string) []run {
	ents, _ := os.ReadDir(filepath.Join(dir, "runs"))
	var runs []run
	for _, e := range ents {
		secs, err := strconv.ParseFloat(e.Name(), 64)
		if err != nil {
			continue
		}
		r := run{at: time.Unix(0, int64(secs*1e9)), version: -1}
		data, err := os.ReadFile(filepath.Join(dir, "runs", e.Name(), key+".json"))
		if err == nil && json.Unmarshal(data, &r.doc) == nil {
			r.version = versionOf(r.doc)
		}
		runs = append(runs, r)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].at.Before(runs[j].at) })
	return runs
}

// versionOf is a document's chaos_version (a string in ec2's tree), -1
// if it has none.
func versionOf(doc any) int {
	m, ok := doc.(map[string]any)
	if !ok {
		return -1
	}
	switch v := m["chaos_version"].(type) {
	case float64:
		return int(v)
	case string:
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return -1
}

// whole tells whether doc is exactly version v as published.
func whole(s *stand, doc any, v int) bool {
	text := document(v)
	if s.once {
		text = ec2JSON(v)
	}
	var want any
	json.Unmarshal([]byte(text), &want)
	return reflect.DeepEqual(doc, want)
}

// checkRuns: every run saw a whole published version, newer than the
// last one's; the last saw final.
func checkRuns(t *verdict, s *stand, runs []run, final int, published func(int) bool) {
	last := 0
	for i, r := range runs {
		switch {
		case r.version < 0 || !published(r.version) || !whole(s, r.doc, r.version):
			t.Errorf("run %d at %s saw garbage: %v", i, r.at.Format(time.StampMilli), r.doc)
		case r.version <= last:
			t.Errorf("run %d at %s saw version %d after %d: run again without a change, or went back", i, r.at.Format(time.StampMilli), r.version, last)
		}
		last = max(last, r.version)
	}
	if len(runs) == 0 || runs[len(runs)-1].version != final {
		t.Errorf("the last run did not see version %d", final)
	}
}

// cacheWatch reads the cache file throughout the run: it must always
// hold a whole published version, never go back to an older one.
type cacheWatch struct {
	stopc chan struct{}
	done  chan struct{}
	bad   []string
}

func watchCache(path string, s *stand, published func(int) bool) *cacheWatch {
	w := &cacheWatch{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		last := 0
		for {
			select {
			case <-w.stopc:
				return
			case <-time.After(200 * time.Millisecond):
			}
			data, err := os.ReadFile(path)
			if err != nil {
				continue // not there yet
			}
			var doc any
			v := -1
			if json.Unmarshal(data, &doc) == nil {
				v = versionOf(doc)
			}
			switch {
			case v < 0 || !published(v) || !whole(s, doc, v):
				w.bad = append(w.bad, fmt.Sprintf("the cache held garbage at %s: %.200s", time.Now().Format(time.StampMilli), data))
			case v < last:
				w.bad = append(w.bad, fmt.Sprintf("the cache went back from version %d to %d", last, v))
			}
			last = max(last, v)
		}
	}()
	return w
}

func (w *cacheWatch) stop() []string {
	close(w.stopc)
	<-w.done
	return w.bad
}
