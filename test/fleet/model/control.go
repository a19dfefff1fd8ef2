package model

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// The model runs in a process of its own (fleetsim model), so that the
// fleet's process holds only the agents (their memory is what is
// reported) and the model's CPU time is its own, as a service's is. The
// fleet drives it over a second, uncounted listener.

// Model is what the control API drives: the TempURL Endpoint, or the
// Zaqar model (fleet/zaqarmodel).
type Model interface {
	Change() (int, time.Time)
	Outage(mode string) error
	Stats() Stats
}

// Control is the control API of e: POST /change, POST /outage?mode=M,
// GET /stats.
func Control(e Model) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /change", func(w http.ResponseWriter, _ *http.Request) {
		v, at := e.Change()
		json.NewEncoder(w).Encode(changed{Version: v, At: at})
	})
	mux.HandleFunc("POST /outage", func(w http.ResponseWriter, r *http.Request) {
		if err := e.Outage(r.URL.Query().Get("mode")); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(e.Stats())
	})
	return mux
}

type changed struct {
	Version int
	At      time.Time
}

// Remote drives a model through its control API.
type Remote struct {
	// URL is the control API's base URL.
	URL    string
	Client *http.Client
}

func (r Remote) call(ctx context.Context, method, path string, into any) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, r.URL+path, nil)
	if err != nil {
		return err
	}
	c := r.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("model %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("model %s %s: %s: %s", method, path, resp.Status, b)
	}
	if into == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(into)
}

// Change publishes the next version; it returns it and when it was
// published.
func (r Remote) Change(ctx context.Context) (int, time.Time, error) {
	var c changed
	err := r.call(ctx, http.MethodPost, "/change", &c)
	return c.Version, c.At, err
}

// Outage starts an outage of the mode, or ends it ("").
func (r Remote) Outage(ctx context.Context, mode string) error {
	return r.call(ctx, http.MethodPost, "/outage?mode="+mode, nil)
}

// Stats is what the model counted.
func (r Remote) Stats(ctx context.Context) (Stats, error) {
	var s Stats
	err := r.call(ctx, http.MethodGet, "/stats", &s)
	return s, err
}
