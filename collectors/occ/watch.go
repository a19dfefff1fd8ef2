package occ

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/tripleo-go/agent/collectors"
)

// debounce gathers a burst of file events (an editor's write, rename and
// chmod; os-apply-config writing many files) into one wake-up.
const debounce = 50 * time.Millisecond

// watcher wakes the daemon when a local directory or a heat_local file
// changes, instead of waiting for the next poll.
type watcher struct {
	stop func()
}

// watchSources starts watching the sources of the configured collectors
// that live on this machine. Its goroutine is owned by ctx and waited for
// by stop. A change is a wake-up sent on wake (see wakeUp). It returns nil
// when there is nothing to watch or the system refuses.
func watchSources(ctx context.Context, cfg *Config, log *slog.Logger, wake chan struct{}) *watcher {
	dirs := map[string]bool{}     // watched directories
	files := map[string]bool{}    // watched files, by clean path
	anyInDir := map[string]bool{} // directories where any change counts
	for _, name := range cfg.Collectors {
		w, ok := cfg.Sources[name].(collectors.Watcher)
		if !ok {
			continue
		}
		wd, wf := w.Watch()
		for _, p := range wd {
			p = filepath.Clean(p)
			dirs[p], anyInDir[p] = true, true
		}
		for _, p := range wf {
			p = filepath.Clean(p)
			files[p] = true
			dirs[filepath.Dir(p)] = true // files are often replaced by rename
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		log.Warn("Cannot watch local sources; polling only: " + err.Error())
		return nil
	}
	added := 0
	for d := range dirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			if err := fw.Add(d); err == nil {
				added++
			}
		}
	}
	if added == 0 {
		fw.Close()
		return nil
	}
	w := &watcher{}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer fw.Close()
		var timer <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-fw.Events:
				if !ok {
					return
				}
				name := filepath.Clean(ev.Name)
				if anyInDir[filepath.Dir(name)] || files[name] {
					if timer == nil {
						timer = time.After(debounce)
					}
				}
			case err, ok := <-fw.Errors:
				if !ok {
					return
				}
				log.Debug("watching local sources: " + err.Error())
			case <-timer:
				timer = nil
				wakeUp(wake)
			}
		}
	}()
	w.stop = func() { cancel(); wg.Wait() }
	return w
}
