package signal_test

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/signal"
	"github.com/tripleo-go/agent/signal/heatapi"
	"github.com/tripleo-go/agent/signal/presigned"
	"github.com/tripleo-go/agent/signal/signaltest"
	"github.com/tripleo-go/agent/signal/zaqarqueue"
)

var (
	dep        = signaltest.Deployment
	heatInputs = signaltest.HeatInputs
)

// fake is a way out that records the requests of the signals it
// builds: it claims and builds as the real transport t, and sends
// nothing, answering err.
type fake struct {
	t     signal.Transport
	limit int
	got   []*signal.Request
	err   error
}

// way is the fake as a Transport.
func (f *fake) way() signal.Transport {
	w := f.t
	w.Build = func(d *deployment.Deployment) (signal.Sender, error) {
		s, err := f.t.Build(d)
		if err != nil {
			return nil, err
		}
		return &fakeSender{Sender: s, f: f}, nil
	}
	return w
}

// fakeSender is a real signal, with the fake's limit, sent to the fake.
type fakeSender struct {
	signal.Sender
	f *fake
}

func (s *fakeSender) Limit() int { return s.f.limit }
func (s *fakeSender) Send(_ context.Context, r *signal.Request) error {
	s.f.got = append(s.f.got, r)
	return s.f.err
}

// fakes are fakes of the real transports, and their list in all's order.
func fakes(limits ...int) (url, zaqar, heat *fake, list signal.Transports) {
	url, zaqar, heat = &fake{t: presigned.Transport}, &fake{t: zaqarqueue.Transport}, &fake{t: heatapi.Transport}
	for i, f := range []*fake{url, zaqar, heat} {
		f.limit = 1000
		if i < len(limits) {
			f.limit = limits[i]
		}
	}
	return url, zaqar, heat, signal.Transports{url.way(), zaqar.way(), signal.Else(heat.way())}
}

// Each way gets the body trimmed to its own limit, and the HTTP policy.
// (What each reads from the inputs is its package's test.)
func TestSendHandsEachWayItsRequest(t *testing.T) {
	url, zaqar, heat, list := fakes(1000, 1000, 100)
	o := signal.Options{Transports: list}
	d := dep(t, append([]string{"deploy_signal_id", `"http://h/x?a=1"`, "deploy_signal_verb", `"PUT"`, "deploy_region_name", `"RegionOne"`}, heatInputs...)...)
	data := jsondoc.NewObject(1)
	data.Set("deploy_stdout", strings.Repeat("x", 200))
	kinds, err := signal.Send(context.Background(), d, data, o)
	if err != nil || !reflect.DeepEqual(kinds, []signal.Kind{presigned.TempURL, heatapi.Kind}) {
		t.Fatalf("%v %v", kinds, err)
	}
	if len(zaqar.got) != 0 || len(url.got) != 1 || len(heat.got) != 1 {
		t.Fatalf("requests: url %d, zaqar %d, heat %d", len(url.got), len(zaqar.got), len(heat.got))
	}
	u, h := url.got[0], heat.got[0]
	if u.Kind != presigned.TempURL || len(u.Body) != 221 || u.HTTP == nil || u.Log == nil || u.Deadline.IsZero() {
		t.Errorf("URL request: %s, %d bytes", u.Kind, len(u.Body))
	}
	if h.Kind != heatapi.Kind || h.HTTP == nil {
		t.Errorf("heat request: %+v", h)
	}
	if len(h.Body) > 100 {
		t.Errorf("heat body %d bytes, over its transport's limit", len(h.Body))
	}
}

func TestSendNoSignal(t *testing.T) {
	url, zaqar, heat, list := fakes()
	kinds, err := signal.Send(context.Background(), dep(t, "foo", `"bar"`), jsondoc.NewObject(0), signal.Options{Transports: list})
	if err != nil || !reflect.DeepEqual(kinds, []signal.Kind{signal.None}) || len(url.got)+len(zaqar.got)+len(heat.got) != 0 {
		t.Fatalf("%v %v, %d sent", kinds, err, len(url.got)+len(zaqar.got)+len(heat.got))
	}
}

// A program that forgot its list of transports fails, rather than take
// every deployment for a NO_SIGNAL one.
func TestSendWithoutTransports(t *testing.T) {
	_, err := signal.Send(context.Background(), dep(t, heatInputs...), jsondoc.NewObject(0), signal.Options{})
	if err == nil || !strings.Contains(err.Error(), "no signal transports in this program") {
		t.Fatalf("got %v", err)
	}
}

// A server that echoes a secret does not get it into the error's message.
func TestSendRedactsEchoedSecrets(t *testing.T) {
	cause := errors.New("403: bad signature ab%2Bcd%3D for AKIDEXAMPLE, password pa55word")
	url, _, heat, list := fakes()
	url.err, heat.err = cause, cause
	d := dep(t, append([]string{"deploy_signal_id", `"http://h/x?Timestamp=2026-01-01T00%3A00%3A00Z&AWSAccessKeyId=AKIDEXAMPLE&Signature=ab%2Bcd%3D"`}, heatInputs...)...)
	_, err := signal.Send(context.Background(), d, jsondoc.NewObject(0), signal.Options{Transports: list})
	if err == nil || !errors.Is(err, cause) {
		t.Fatalf("got %v, want it to wrap the cause", err)
	}
	for _, s := range []string{"pa55word", "AKIDEXAMPLE", "ab%2Bcd%3D"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("%q in %q", s, err)
		}
	}
}

// A trimmed body is said so, once per way, in a warning.
func TestSendWarnsOfATrim(t *testing.T) {
	var log strings.Builder
	f, _, _, list := fakes(100)
	data := jsondoc.NewObject(2)
	data.Set("deploy_stdout", strings.Repeat("o", 150))
	data.Set("deploy_stderr", strings.Repeat("e", 50))
	o := signal.Options{Log: slog.New(slog.NewTextHandler(&log, nil)), Transports: list}
	if _, err := signal.Send(context.Background(), dep(t, "deploy_signal_id", `"http://h/x"`), data, o); err != nil {
		t.Fatal(err)
	}
	want := `level=WARN msg="Signal data is 242 bytes, over the limit of 100: trimmed from the start of deploy_stdout (107 bytes) and deploy_stderr (36 bytes); sending 99 bytes"`
	if !strings.Contains(log.String(), want) || len(f.got[0].Body) != 99 {
		t.Fatalf("log:\n%s\nwant %s", log.String(), want)
	}
}
