package signal

import (
	"context"
	"fmt"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
	"github.com/tripleo-go/agent/internal/secret"
)

// Transport is one way out, as data: which deployments are its own, and
// how it reads their inputs into a signal. Each transport package exports
// one; a program's list of them is signal/all's.
type Transport struct {
	// Claims tells whether d's inputs ask for this way, well formed or
	// not (Build judges them).
	Claims func(d *deployment.Deployment) bool
	// Build reads d's inputs into the signal to send; a malformed input
	// is an error that names it.
	Build func(d *deployment.Deployment) (Sender, error)
	// Implied names the way, for the status record, when Heat left
	// deploy_signal_transport out: old Heat wrote only
	// deploy_signal_id, a CFN_SIGNAL. Ways Heat always names leave it
	// empty.
	Implied Kind

	orElse bool
}

// Else is t taken only when the transport before it in the list did not
// claim the deployment: the reference's elif (a Zaqar queue, else the
// Heat API).
func Else(t Transport) Transport {
	t.orElse = true
	return t
}

// Sender is one deployment's signal, read from its inputs, ready to go.
type Sender interface {
	// Kind is the way, as Heat names it, in messages.
	Kind() Kind
	// Limit is the largest body, in bytes, it may send.
	Limit() int
	// Secrets are the values no message may quote (a password, a
	// signature), should a server echo one.
	Secrets() []string
	// Send sends r.Body. Its error says what the server answered, with
	// secrets left out; it logs debug lines only.
	Send(ctx context.Context, r *Request) error
}

// Transports are a program's ways out, in the order they are tried.
type Transports []Transport

// claimed is the transports that claim d, in order, an Else left out
// when the one before it claimed d.
func (ts Transports) claimed(d *deployment.Deployment) []Transport {
	var out []Transport
	taken := false
	for _, t := range ts {
		if !t.orElse {
			taken = false
		}
		if taken || !t.Claims(d) {
			continue
		}
		taken = true
		out = append(out, t)
	}
	return out
}

// Claim tells whether d carries a way to signal (NO_SIGNAL deployments
// carry none: Heat completed them already).
func (ts Transports) Claim(d *deployment.Deployment) bool {
	return len(ts.claimed(d)) > 0
}

// Plan is the signals Send would send for d, in order; none when it has
// no signal inputs. A malformed signal input is an error.
func (ts Transports) Plan(d *deployment.Deployment) ([]Sender, error) {
	var out []Sender
	for _, t := range ts.claimed(d) {
		s, err := t.Build(d)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Name is d's way as Heat named it (deploy_signal_transport), for the
// status record; without that input, the Implied name of the first
// transport that claims d and implies one, else NO_SIGNAL.
func (ts Transports) Name(d *deployment.Deployment) string {
	if t, ok := d.InputString("deploy_signal_transport"); ok && t != "" {
		return t
	}
	for _, t := range ts.claimed(d) {
		if t.Implied != "" {
			return string(t.Implied)
		}
	}
	return string(None)
}

// StringInput is d's input name, which must be there and a string.
func StringInput(d *deployment.Deployment, name string) (string, error) {
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

// StackUser is the Keystone session of d's stack user (deploy_auth_url,
// deploy_user_id, deploy_password, deploy_project_id, read in that order)
// and the region of its endpoints, deploy_region_name ("" for any).
func StackUser(d *deployment.Deployment) (*keystone.Session, string, error) {
	names := []string{"deploy_auth_url", "deploy_user_id", "deploy_password", "deploy_project_id"}
	vals := make([]string, len(names))
	for i, n := range names {
		v, err := StringInput(d, n)
		if err != nil {
			return nil, "", err
		}
		vals[i] = v
	}
	region, _ := d.InputString("deploy_region_name") // absent, null: any region
	return &keystone.Session{Creds: keystone.Credentials{AuthURL: vals[0], UserID: vals[1],
		Password: secret.String(vals[2]), ProjectID: vals[3]}}, region, nil
}

// redactor removes from messages any secret the signals carry.
func redactor(senders []Sender) *secret.Redactor {
	var vals []string
	for _, s := range senders {
		vals = append(vals, s.Secrets()...)
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
