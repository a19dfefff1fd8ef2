package signal

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/tripleo-go/agent/heatconfig/deployment"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
	"github.com/tripleo-go/agent/internal/secret"
)

// plan reads the ways out from d's inputs, as the reference's if / if-elif:
// a URL signal, then Zaqar or else the Heat API.
func plan(d *deployment.Deployment) ([]*Request, error) {
	var reqs []*Request
	if _, ok := d.Input("deploy_signal_id"); ok {
		u, err := stringInput(d, "deploy_signal_id")
		if err != nil {
			return nil, err
		}
		verb, _ := d.InputString("deploy_signal_verb") // absent or not a string: POST
		reqs = append(reqs, urlRequest(u, verb))
	}
	_, queue := d.Input("deploy_queue_id")
	_, auth := d.Input("deploy_auth_url")
	if !queue && !auth {
		return reqs, nil
	}
	r := &Request{Kind: Heat}
	names := []string{"deploy_auth_url", "deploy_user_id", "deploy_password", "deploy_project_id"}
	if queue {
		r.Kind = Zaqar
		names = append(names, "deploy_queue_id")
	} else {
		names = append(names, "deploy_stack_id", "deploy_resource_name")
	}
	vals := map[string]string{}
	for _, n := range names {
		v, err := stringInput(d, n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Kind, err)
		}
		vals[n] = v
	}
	r.Keystone = &keystone.Session{Creds: keystone.Credentials{AuthURL: vals["deploy_auth_url"], UserID: vals["deploy_user_id"],
		ProjectID: vals["deploy_project_id"], Password: secret.String(vals["deploy_password"])}}
	r.Region, _ = d.InputString("deploy_region_name") // absent, null: any region
	r.Queue, r.StackID, r.Resource = vals["deploy_queue_id"], vals["deploy_stack_id"], vals["deploy_resource_name"]
	return append(reqs, r), nil
}

func stringInput(d *deployment.Deployment, name string) (string, error) {
	v, ok := d.Input(name)
	if !ok {
		return "", fmt.Errorf("no %s input", name)
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("the %s input is not a string", name)
	}
	return s, nil
}

// urlRequest is a signal to a pre-signed URL: PUT only when asked for
// exactly (a TempURL), else POST (a CFN URL), as the reference.
func urlRequest(u, verb string) *Request {
	if verb == http.MethodPut {
		return &Request{Kind: TempURL, Method: http.MethodPut, URL: u}
	}
	return &Request{Kind: CFN, Method: http.MethodPost, URL: u}
}

// harmlessParams are query parameters of signed URLs that are no secret
// and that messages may quote (the CFN hint quotes the Timestamp).
var harmlessParams = map[string]bool{"Timestamp": true, "SignatureMethod": true, "SignatureVersion": true, "temp_url_expires": true}

// redactor removes from messages any secret the requests carry (the
// password, the signed URL's query values), should a server have echoed
// one.
func redactor(reqs []*Request) *secret.Redactor {
	var vals []string
	for _, r := range reqs {
		if r.Keystone != nil {
			vals = append(vals, r.Keystone.Creds.Password.Reveal())
		}
		u, err := url.Parse(r.URL)
		if err != nil || r.URL == "" {
			continue
		}
		for k, vs := range u.Query() {
			if !harmlessParams[k] {
				vals = append(vals, vs...)
			}
		}
		for _, kv := range strings.Split(u.RawQuery, "&") { // the encoded forms too
			if k, v, ok := strings.Cut(kv, "="); ok && !harmlessParams[k] {
				vals = append(vals, v)
			}
		}
	}
	return secret.NewRedactor(vals...)
}

// redact is err with its message redacted.
func redact(red *secret.Redactor, err error) error {
	msg := red.Redact(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redacted{msg: msg, err: err}
}

// redacted is an error whose message lost its secrets; errors.Is and As
// still see the cause.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }
