package signal_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/heatconfig/deployment"
	"github.com/tripleo-go/agent/internal/pyjson"
	"github.com/tripleo-go/agent/signal"
)

// dep is a deployment with the given inputs, as name, value pairs of
// JSON text.
func dep(t *testing.T, inputs ...string) *deployment.Deployment {
	t.Helper()
	var items []string
	for i := 0; i < len(inputs); i += 2 {
		items = append(items, fmt.Sprintf(`{"name": %q, "value": %s}`, inputs[i], inputs[i+1]))
	}
	d, err := deployment.Parse([]byte(`{"id": "5555", "group": "script", "config": "five", "inputs": [` + strings.Join(items, ", ") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var heatInputs = []string{"deploy_auth_url", `"http://ks/v3"`, "deploy_user_id", `"aaaa"`, "deploy_password", `"pa55word"`,
	"deploy_project_id", `"bbbb"`, "deploy_stack_id", `"st/cccc"`, "deploy_resource_name", `"the_resource"`}

func TestRoute(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inputs []string
		want   []signal.Kind
		err    string
	}{
		{"signal id", []string{"deploy_signal_id", `"http://h/x"`}, []signal.Kind{signal.CFN}, ""},
		{"signal id, PUT", []string{"deploy_signal_id", `"http://h/x"`, "deploy_signal_verb", `"PUT"`}, []signal.Kind{signal.TempURL}, ""},
		{"signal id, put (not PUT)", []string{"deploy_signal_id", `"http://h/x"`, "deploy_signal_verb", `"put"`}, []signal.Kind{signal.CFN}, ""},
		{"signal id, null verb", []string{"deploy_signal_id", `"http://h/x"`, "deploy_signal_verb", `null`}, []signal.Kind{signal.CFN}, ""},
		{"heat", heatInputs, []signal.Kind{signal.Heat}, ""},
		{"zaqar, with an auth url too", append([]string{"deploy_queue_id", `"q"`}, heatInputs...), []signal.Kind{signal.Zaqar}, ""},
		{"signal id and heat: both, as the reference", append([]string{"deploy_signal_id", `"http://h/x"`}, heatInputs...), []signal.Kind{signal.CFN, signal.Heat}, ""},
		{"no signal inputs", []string{"foo", `"bar"`, "deploy_signal_transport", `"NO_SIGNAL"`}, []signal.Kind{signal.None}, ""},
		{"signal id not a string", []string{"deploy_signal_id", `null`}, nil, "deploy_signal_id input is not a string"},
		{"heat without a user id", append(heatInputs[:2:2], heatInputs[4:]...), nil, "HEAT_SIGNAL: no deploy_user_id input"},
		{"zaqar without credentials", []string{"deploy_queue_id", `"q"`}, nil, "ZAQAR_SIGNAL: no deploy_auth_url input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := signal.Route(dep(t, tc.inputs...))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v %v, want %v", got, err, tc.want)
			}
		})
	}
}

// fake is a transport that records what it is given.
type fake struct {
	limit int
	got   []*signal.Request
	err   error
}

func (f *fake) Limit() int { return f.limit }
func (f *fake) Send(_ context.Context, r *signal.Request) error {
	f.got = append(f.got, r)
	return f.err
}

func TestSendHandsEachWayItsRequest(t *testing.T) {
	url, zaqar, heat := &fake{limit: 1000}, &fake{limit: 1000}, &fake{limit: 100}
	o := signal.Options{Transports: signal.Transports{URL: url, Zaqar: zaqar, Heat: heat}}
	d := dep(t, append([]string{"deploy_signal_id", `"http://h/x?a=1"`, "deploy_signal_verb", `"PUT"`, "deploy_region_name", `"RegionOne"`}, heatInputs...)...)
	data := pyjson.NewObject(1)
	data.Set("deploy_stdout", strings.Repeat("x", 200))
	kinds, err := signal.Send(context.Background(), d, data, o)
	if err != nil || !reflect.DeepEqual(kinds, []signal.Kind{signal.TempURL, signal.Heat}) {
		t.Fatalf("%v %v", kinds, err)
	}
	if len(zaqar.got) != 0 || len(url.got) != 1 || len(heat.got) != 1 {
		t.Fatalf("requests: url %d, zaqar %d, heat %d", len(url.got), len(zaqar.got), len(heat.got))
	}
	u, h := url.got[0], heat.got[0]
	if u.Method != "PUT" || u.URL != "http://h/x?a=1" || len(u.Body) != 221 || u.HTTP == nil {
		t.Errorf("URL request: %s %s, %d bytes", u.Method, u.URL, len(u.Body))
	}
	c := h.Keystone.Creds
	if c.AuthURL != "http://ks/v3" || c.UserID != "aaaa" || c.ProjectID != "bbbb" || c.Password.Reveal() != "pa55word" ||
		h.Region != "RegionOne" || h.StackID != "st/cccc" || h.Resource != "the_resource" || h.Keystone.HTTP == nil {
		t.Errorf("heat request: %+v", h)
	}
	if len(h.Body) > 100 {
		t.Errorf("heat body %d bytes, over its transport's limit", len(h.Body))
	}
}

func TestSendNoSignal(t *testing.T) {
	f := &fake{limit: 1000}
	kinds, err := signal.Send(context.Background(), dep(t, "foo", `"bar"`), pyjson.NewObject(0),
		signal.Options{Transports: signal.Transports{URL: f, Zaqar: f, Heat: f}})
	if err != nil || !reflect.DeepEqual(kinds, []signal.Kind{signal.None}) || len(f.got) != 0 {
		t.Fatalf("%v %v, %d sent", kinds, err, len(f.got))
	}
}

func TestSendWithoutTheTransport(t *testing.T) {
	_, err := signal.Send(context.Background(), dep(t, heatInputs...), pyjson.NewObject(0), signal.Options{})
	if err == nil || !strings.Contains(err.Error(), "HEAT_SIGNAL: no transport") {
		t.Fatalf("got %v", err)
	}
}

// A server that echoes a secret does not get it into the error's message.
func TestSendRedactsEchoedSecrets(t *testing.T) {
	cause := errors.New("403: bad signature ab%2Bcd%3D for AKIDEXAMPLE, password pa55word")
	url, heat := &fake{limit: 1000, err: cause}, &fake{limit: 1000, err: cause}
	d := dep(t, append([]string{"deploy_signal_id", `"http://h/x?Timestamp=2026-01-01T00%3A00%3A00Z&AWSAccessKeyId=AKIDEXAMPLE&Signature=ab%2Bcd%3D"`}, heatInputs...)...)
	_, err := signal.Send(context.Background(), d, pyjson.NewObject(0), signal.Options{Transports: signal.Transports{URL: url, Heat: heat}})
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
	f := &fake{limit: 100}
	data := pyjson.NewObject(2)
	data.Set("deploy_stdout", strings.Repeat("o", 150))
	data.Set("deploy_stderr", strings.Repeat("e", 50))
	o := signal.Options{Log: slog.New(slog.NewTextHandler(&log, nil)), Transports: signal.Transports{URL: f}}
	if _, err := signal.Send(context.Background(), dep(t, "deploy_signal_id", `"http://h/x"`), data, o); err != nil {
		t.Fatal(err)
	}
	want := `level=WARN msg="Signal data is 242 bytes, over the limit of 100: trimmed from the start of deploy_stdout (107 bytes) and deploy_stderr (36 bytes); sending 99 bytes"`
	if !strings.Contains(log.String(), want) || len(f.got[0].Body) != 99 {
		t.Fatalf("log:\n%s\nwant %s", log.String(), want)
	}
}
