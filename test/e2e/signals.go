package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Signal transports of a deployment.
const (
	CFNSignal     = "CFN_SIGNAL"
	HeatSignal    = "HEAT_SIGNAL"
	TempURLSignal = "TEMP_URL_SIGNAL"
	ZaqarSignal   = "ZAQAR_SIGNAL"
)

// Signal is a deployment signal as a service logged it.
type Signal struct {
	Resource string    // the deployment resource it was for ("?": unknown)
	Via      string    // the transport it came through
	Status   int       // the HTTP status the service answered
	At       time.Time // when the service had it (see Signals)
}

func (s Signal) String() string {
	return fmt.Sprintf("%s via %s (%d) at %s", s.Resource, s.Via, s.Status, stamp(s.At))
}

// target is where each transport would deliver one deployment's signal,
// from its deploy_* inputs.
type target struct {
	resource  string
	object    string // TEMP_URL_SIGNAL: the Swift object's path
	queue     string // ZAQAR_SIGNAL: the queue
	transport string
}

func targets(md map[string]any) []target {
	var ts []target
	deployments, _ := md["deployments"].([]any)
	for _, d := range deployments {
		in := map[string]string{}
		dm, _ := d.(map[string]any)
		inputs, _ := dm["inputs"].([]any)
		for _, i := range inputs {
			im, _ := i.(map[string]any)
			name, _ := im["name"].(string)
			value, _ := im["value"].(string)
			in[name] = value
		}
		tg := target{resource: in["deploy_resource_name"], queue: in["deploy_queue_id"], transport: in["deploy_signal_transport"]}
		if u, err := url.Parse(in["deploy_signal_id"]); err == nil && tg.transport == TempURLSignal {
			tg.object = u.EscapedPath()
		}
		ts = append(ts, tg)
	}
	return ts
}

// What a signal request looks like in each service's log; the stack's
// name and id are filled in. Submatch 1 tells the deployment.
var signalLines = []struct {
	via, file, pattern string
}{
	// heat-api-cfn: POST /v1/signal/arn%3Aopenstack%3Aheat%3A%3A<tenant>%3Astacks/<name>/<id>/resources/<res>?...
	{CFNSignal, "log/heat-api-cfn.log", `"POST /v1/signal/arn%3Aopenstack%3Aheat%3A%3A\w+%3Astacks/{name}/{id}/resources/(\w+)\S* HTTP/\S+" (\d+)`},
	// heat-api: POST /v1/<tenant>/stacks/<name>/<id>/resources/<res>/signal
	// (or the stack by name or id alone)
	{HeatSignal, "log/heat-api.log", `"POST /v1/\w+/stacks/(?:{name}/{id}|{name}|{id})/resources/(\w+)/signal HTTP/\S+" (\d+)`},
	// swift: a tempurl PUT into the stack's signal container (its id)
	{TempURLSignal, "log/swift-proxy.out", `^swift-proxy: \S+ \S+ \S+ PUT (/v1/AUTH_\w+/{id}/[^ %]+)%3Ftemp_url_sig\S* HTTP/\S+ (\d+) `},
	// zaqar: a message posted to a queue (v1.1: heat-config-notify's API)
	{ZaqarSignal, "log/zaqar.out", `"POST /v[0-9.]+/queues/([^/ ]+)/messages HTTP/\S+" (\d+)`},
}

// Signals returns the signals for stack st's deployments logged since
// the mark, through any transport, in time order. At is when the service
// logged the request, i.e. had answered: heat's logs have milliseconds,
// Swift's proxy logs its end time; Zaqar's own log has whole seconds, so
// for Zaqar it is the end of the Swift PUT that stored the message.
func (m *Mark) Signals(st *Stack) []Signal {
	tgs := targets(st.Metadata)
	var out []Signal
	for _, sl := range signalLines {
		p := strings.NewReplacer("{name}", regexp.QuoteMeta(st.Name), "{id}", regexp.QuoteMeta(st.ID)).Replace(sl.pattern)
		re := regexp.MustCompile(p)
		for _, line := range m.Lines(sl.file) {
			sm := re.FindStringSubmatch(line)
			if sm == nil {
				continue
			}
			s := Signal{Resource: "?", Via: sl.via}
			s.Status, _ = strconv.Atoi(sm[2])
			for _, tg := range tgs {
				if (sl.via == CFNSignal || sl.via == HeatSignal) && sm[1] == tg.resource ||
					sl.via == TempURLSignal && sm[1] == tg.object ||
					sl.via == ZaqarSignal && sm[1] == tg.queue && tg.queue != "" {
					s.Resource = tg.resource
				}
			}
			if sl.via == ZaqarSignal && s.Resource == "?" {
				continue // heat's own posts (ZAQAR_MESSAGE metadata)
			}
			s.At = logTime(sl.via, line)
			out = append(out, s)
		}
	}
	m.zaqarTimes(out, tgs)
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// zaqarTimes sets the time of each Zaqar signal to the end of the Swift
// PUT that stored its message (Zaqar's swift store: container
// zaqar_message:<queue>:<project>, one object per message), in order.
func (m *Mark) zaqarTimes(sigs []Signal, tgs []target) {
	puts := map[string][]time.Time{}
	re := regexp.MustCompile(`^swift-proxy: \S+ \S+ \S+ PUT /v1/AUTH_\w+/zaqar_message%253A([^%]+)%253A\w+/\S+ HTTP/\S+ 201 `)
	for _, line := range m.Lines("log/swift-proxy.out") {
		if sm := re.FindStringSubmatch(line); sm != nil {
			puts[sm[1]] = append(puts[sm[1]], logTime(TempURLSignal, line))
		}
	}
	for i := range sigs {
		if sigs[i].Via != ZaqarSignal {
			continue
		}
		for _, tg := range tgs {
			if tg.resource == sigs[i].Resource && len(puts[tg.queue]) > 0 {
				sigs[i].At, puts[tg.queue] = puts[tg.queue][0], puts[tg.queue][1:]
			}
		}
	}
}

var zaqarDate = regexp.MustCompile(`\[(\d+/\w+/\d+ \d+:\d+:\d+)\]`)

// logTime reads a log line's time (see Signals).
func logTime(via, line string) time.Time {
	switch via {
	case CFNSignal, HeatSignal: // oslo.log: 2026-11-25 02:32:38.543 PID LEVEL ...
		if len(line) >= 23 {
			t, _ := time.ParseInLocation("2006-01-02 15:04:05.000", line[:23], time.Local)
			return t
		}
	case TempURLSignal: // proxy-logging: ... start_time end_time policy_index
		f := strings.Fields(line)
		if len(f) > 3 {
			secs, _ := strconv.ParseFloat(f[len(f)-2], 64)
			return time.Unix(0, int64(secs*1e9))
		}
	case ZaqarSignal: // wsgiref: [25/Nov/2026 02:04:47]
		if sm := zaqarDate.FindStringSubmatch(line); sm != nil {
			t, _ := time.ParseInLocation("02/Jan/2006 15:04:05", sm[1], time.Local)
			return t
		}
	}
	return time.Time{}
}

// Lines returns the lines added to a lab log file (relative to the lab's
// directory) since the mark.
func (m *Mark) Lines(file string) []string {
	f, err := os.Open(filepath.Join(m.lab.Dir, file))
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(m.offsets[file], io.SeekStart); err != nil {
		return nil
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}
