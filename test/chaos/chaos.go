// Package chaos is a hostile server kit for the agent's HTTP clients: an
// http.Handler (Injector) that sits in front of a stand-in for a real
// service and breaks its answers on cue (latency, resets, 5xx storms,
// truncated, 1 GB and dripping bodies, wrong content types, bad
// validators), a schedule to play faults one after another, and the
// process figures (RSS, descriptors, threads) read from /proc.
//
// The tests of this package run the real os-collect-config daemon and
// heat-config-notify through it: about a minute under make test (not
// under -short), CHAOS_MINUTES under make torture. They print their
// figures (faults injected, RSS, descriptors, goroutines, recovery) at
// the end of a verbose run.
package chaos

// Fault is one way a server misbehaves.
type Fault string

// The faults. Reset and Storm never reach the stand-in: the service
// behind saw nothing. Latency delays the request; the others let the
// stand-in answer, then break the answer on its way back, so the service
// did what was asked although the client may not know it.
const (
	// None passes requests through.
	None Fault = ""
	// Latency waits a random time up to the Injector's MaxLatency, then
	// passes the request through.
	Latency Fault = "latency"
	// Reset resets the connection as the request arrives.
	Reset Fault = "reset"
	// Storm answers a 500, 502, 503 or 504, some with a Retry-After.
	Storm Fault = "5xx-storm"
	// LostAnswer lets the stand-in answer, then resets the connection
	// instead of sending the answer: the client cannot know whether its
	// request was carried out.
	LostAnswer Fault = "lost-answer"
	// Truncated sends half of the answer's body under its full
	// Content-Length, then closes the connection.
	Truncated Fault = "truncated-body"
	// Huge answers with the stand-in's status and a body of the
	// Injector's HugeSize (1 GiB), every other time declared by
	// Content-Length or chunked: a JSON string that never ends.
	Huge Fault = "1GB-body"
	// Drip sends the answer's body a byte at a time over the Injector's
	// DripFor.
	Drip Fault = "slow-drip"
	// WrongType sends the answer as it is under Content-Type text/html.
	WrongType Fault = "wrong-content-type"
	// ErrorPage replaces the answer by a proxy's HTML error page under
	// 200 OK (a websocket's upgrade gets it instead of the upgrade).
	ErrorPage Fault = "html-error-page"
	// BadValidators replaces the answer's ETag and Last-Modified by
	// nonsense, in turn: dates that do not parse, or far in the past or
	// the future; entity tags unterminated, huge, unquoted, or the same
	// for every version.
	BadValidators Fault = "bad-etag-last-modified"
	// AheadDate drops the answer's ETag and dates it a month ahead (a
	// server whose clock ran ahead): a client that sends the date back in
	// If-Modified-Since is told "not modified" for a month.
	AheadDate Fault = "last-modified-ahead"
)

// WireFaults are all the faults, in a fixed order.
var WireFaults = []Fault{Latency, Reset, Storm, LostAnswer, Truncated, Huge, Drip, WrongType, ErrorPage, BadValidators, AheadDate}

// Delivers tells whether a request under f reaches the stand-in.
func (f Fault) Delivers() bool { return f != Reset && f != Storm }
