package chaos

import (
	"bytes"
	"context"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Injector is an http.Handler that passes requests to Next, except that
// while a fault is set it inflicts it on them. It is safe for concurrent
// use; the fault can change at any time, and applies to the requests
// that arrive after the change.
type Injector struct {
	Next http.Handler
	// MaxLatency is Latency's longest wait (3 s when zero).
	MaxLatency time.Duration
	// DripFor is how long Drip takes to send a body (5 s when zero).
	DripFor time.Duration
	// HugeSize is the size of Huge's body (1 GiB when zero).
	HugeSize int64
	// Only, when set, picks the requests that may suffer: the others
	// pass through, and do not count against SetN's n.
	Only func(*http.Request) bool

	mu       sync.Mutex
	fault    Fault
	left     int // faulted requests left; negative: no limit
	seq      int
	injected map[Fault]int
	served   int
}

// Set inflicts f on every request from now on (None: on none).
func (in *Injector) Set(f Fault) { in.SetN(f, -1) }

// SetN inflicts f on the next n requests, then passes them through.
func (in *Injector) SetN(f Fault, n int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.fault, in.left = f, n
}

// Fault is the fault now set.
func (in *Injector) Fault() Fault {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.fault
}

// Injected is how many requests suffered each fault so far.
func (in *Injector) Injected() map[Fault]int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return maps.Clone(in.injected)
}

// Requests is how many requests arrived, faulted or not.
func (in *Injector) Requests() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.served
}

// take decides the fault of request r, and numbers it.
func (in *Injector) take(r *http.Request) (Fault, int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.served++
	in.seq++
	f := in.fault
	if f == None || in.left == 0 || in.Only != nil && !in.Only(r) {
		return None, in.seq
	}
	if in.left > 0 {
		in.left--
	}
	return f, in.seq
}

// count records that a request suffered f.
func (in *Injector) count(f Fault) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.injected == nil {
		in.injected = map[Fault]int{}
	}
	in.injected[f]++
}

func (in *Injector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f, seq := in.take(r)
	upgrade := strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
	switch f {
	case None:
		in.Next.ServeHTTP(w, r)
		return
	case Latency:
		in.count(f)
		if sleep(r.Context(), time.Duration(rand.Int64N(int64(in.maxLatency())))) {
			in.Next.ServeHTTP(w, r)
		}
		return
	case Reset:
		in.count(f)
		reset(w)
		return
	case Storm:
		in.count(f)
		storm(w, seq)
		return
	}
	if upgrade {
		in.serveUpgrade(w, r, f)
		return
	}
	rec := httptest.NewRecorder()
	in.Next.ServeHTTP(rec, r)
	in.count(f)
	res := rec.Result()
	body := rec.Body.Bytes()
	switch f {
	case LostAnswer:
		reset(w)
	case Truncated:
		writeRaw(w, res.StatusCode, res.Header, body, len(body)/2, 0)
	case Huge:
		huge(w, res.StatusCode, res.Header, in.hugeSize(), seq%2 == 0)
	case Drip:
		writeRaw(w, res.StatusCode, res.Header, body, len(body), in.dripFor())
	case WrongType:
		h := res.Header.Clone()
		h.Set("Content-Type", "text/html; charset=iso-8859-1")
		writeAnswer(w, res.StatusCode, h, body)
	case ErrorPage:
		errorPage(w, http.StatusOK)
	case BadValidators:
		h := res.Header.Clone()
		etag, lastMod := badValidators(seq)
		h.Set("ETag", etag)
		h.Set("Last-Modified", lastMod)
		writeAnswer(w, res.StatusCode, h, body)
	case AheadDate:
		h := res.Header.Clone()
		h.Del("ETag")
		h.Set("Last-Modified", time.Now().Add(30*24*time.Hour).UTC().Format(http.TimeFormat))
		writeAnswer(w, res.StatusCode, h, body)
	default:
		panic("chaos: unknown fault " + string(f))
	}
}

// serveUpgrade inflicts f on a websocket: the error page instead of the
// upgrade, or the stream broken after it.
func (in *Injector) serveUpgrade(w http.ResponseWriter, r *http.Request, f Fault) {
	switch f {
	case ErrorPage:
		in.count(f)
		errorPage(w, http.StatusOK)
	case LostAnswer, Truncated, Huge, Drip:
		in.count(f)
		in.Next.ServeHTTP(&faultyHijacker{ResponseWriter: w, fault: f, in: in}, r)
	default: // headers do not matter to a websocket
		in.Next.ServeHTTP(w, r)
	}
}

func (in *Injector) maxLatency() time.Duration {
	if in.MaxLatency > 0 {
		return in.MaxLatency
	}
	return 3 * time.Second
}

func (in *Injector) dripFor() time.Duration {
	if in.DripFor > 0 {
		return in.DripFor
	}
	return 5 * time.Second
}

func (in *Injector) hugeSize() int64 {
	if in.HugeSize > 0 {
		return in.HugeSize
	}
	return 1 << 30
}

// sleep waits d unless ctx ends first; it tells whether it waited d.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// writeAnswer writes an answer through the server, as a healthy one.
func writeAnswer(w http.ResponseWriter, status int, h http.Header, body []byte) {
	for k, vs := range h {
		w.Header()[k] = vs
	}
	w.WriteHeader(status)
	w.Write(body)
}

// storm answers one of the 5xx a struggling service or its proxy gives,
// in turn; every third with a short Retry-After.
func storm(w http.ResponseWriter, seq int) {
	codes := []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}
	code := codes[seq%len(codes)]
	if seq%3 == 0 {
		w.Header().Set("Retry-After", "1")
	}
	errorPage(w, code)
}

// errorPage is a proxy's error page.
func errorPage(w http.ResponseWriter, code int) {
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(code)
	var b bytes.Buffer
	b.WriteString("<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<center><h1>502 Bad Gateway</h1></center>\n")
	b.WriteString("<hr><center>nginx</center>\n</body>\n</html>\n")
	w.Write(b.Bytes())
}

// badValidators are an ETag and a Last-Modified of a server that gets
// them wrong, in turn.
func badValidators(seq int) (etag, lastMod string) {
	bad := [][2]string{
		{`W/"unterminated`, "Mon, 99 Foo 2024 25:61:61 GMT"},
		{`"` + strings.Repeat("e", 8000) + `"`, "Thu, 01 Jan 1970 00:00:00 GMT"},
		{`"same-for-every-version"`, "Fri, 31 Dec 2100 23:59:59 GMT"},
		{`nonsense without quotes`, "yesterday"},
	}
	p := bad[seq%len(bad)]
	return p[0], p[1]
}
