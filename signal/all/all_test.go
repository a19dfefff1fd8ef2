package all_test

import (
	"reflect"
	"testing"

	"github.com/tripleo-go/agent/signal"
	"github.com/tripleo-go/agent/signal/all"
	"github.com/tripleo-go/agent/signal/heatapi"
	"github.com/tripleo-go/agent/signal/presigned"
	"github.com/tripleo-go/agent/signal/signaltest"
	"github.com/tripleo-go/agent/signal/zaqarqueue"
)

var (
	dep        = signaltest.Deployment
	heatInputs = signaltest.HeatInputs
)

// The ways a deployment's inputs ask for, as the reference's if /
// if-elif: a URL; then a queue, else the Heat API. Claim is whether
// there is any; Name, the transport in 55-heat-config's status record.
func TestRoute(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inputs []string
		want   []signal.Kind
		err    string
		record string // Name
	}{
		{"signal id", []string{"deploy_signal_id", `"http://h/x"`}, []signal.Kind{presigned.CFN}, "", "CFN_SIGNAL"},
		{"signal id, PUT", []string{"deploy_signal_id", `"http://h/x"`, "deploy_signal_verb", `"PUT"`}, []signal.Kind{presigned.TempURL}, "", "CFN_SIGNAL"},
		{"signal id, put (not PUT)", []string{"deploy_signal_id", `"http://h/x"`, "deploy_signal_verb", `"put"`}, []signal.Kind{presigned.CFN}, "", "CFN_SIGNAL"},
		{"signal id, null verb", []string{"deploy_signal_id", `"http://h/x"`, "deploy_signal_verb", `null`}, []signal.Kind{presigned.CFN}, "", "CFN_SIGNAL"},
		{"signal id, named by Heat", []string{"deploy_signal_id", `"http://h/x"`, "deploy_signal_verb", `"PUT"`, "deploy_signal_transport", `"TEMP_URL_SIGNAL"`},
			[]signal.Kind{presigned.TempURL}, "", "TEMP_URL_SIGNAL"},
		{"heat", heatInputs, []signal.Kind{heatapi.Kind}, "", "NO_SIGNAL"},
		{"heat, named by Heat", append([]string{"deploy_signal_transport", `"HEAT_SIGNAL"`}, heatInputs...), []signal.Kind{heatapi.Kind}, "", "HEAT_SIGNAL"},
		{"zaqar, with an auth url too", append([]string{"deploy_queue_id", `"q"`}, heatInputs...), []signal.Kind{zaqarqueue.Kind}, "", "NO_SIGNAL"},
		{"signal id and heat: both, as the reference", append([]string{"deploy_signal_id", `"http://h/x"`}, heatInputs...), []signal.Kind{presigned.CFN, heatapi.Kind}, "", "CFN_SIGNAL"},
		{"no signal inputs", []string{"foo", `"bar"`, "deploy_signal_transport", `"NO_SIGNAL"`}, nil, "", "NO_SIGNAL"},
		{"no inputs at all", nil, nil, "", "NO_SIGNAL"},
		{"an empty name", []string{"deploy_signal_transport", `""`}, nil, "", "NO_SIGNAL"},
		{"signal id not a string", []string{"deploy_signal_id", `null`}, nil, "the deploy_signal_id input is not a string", "CFN_SIGNAL"},
		{"heat without a user id", append(heatInputs[:2:2], heatInputs[4:]...), nil, "HEAT_SIGNAL: no deploy_user_id input", "NO_SIGNAL"},
		{"heat without a resource name", heatInputs[:10], nil, "HEAT_SIGNAL: no deploy_resource_name input", "NO_SIGNAL"},
		{"zaqar without credentials", []string{"deploy_queue_id", `"q"`}, nil, "ZAQAR_SIGNAL: no deploy_auth_url input", "NO_SIGNAL"},
		{"zaqar, its queue not a string", append([]string{"deploy_queue_id", `7`}, heatInputs...), nil, "ZAQAR_SIGNAL: the deploy_queue_id input is not a string", "NO_SIGNAL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := dep(t, tc.inputs...)
			if got := all.Transports.Name(d); got != tc.record {
				t.Errorf("Name %q, want %q", got, tc.record)
			}
			senders, err := all.Transports.Plan(d)
			claimed := all.Transports.Claim(d)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err || !claimed {
					t.Fatalf("error %v (claimed %v), want %q", err, claimed, tc.err)
				}
				return
			}
			var got []signal.Kind
			for _, s := range senders {
				got = append(got, s.Kind())
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) || claimed != (len(tc.want) > 0) {
				t.Fatalf("got %v %v (claimed %v), want %v", got, err, claimed, tc.want)
			}
		})
	}
}
