package zaqarqueue

import (
	"testing"

	"github.com/tripleo-go/agent/signal/signaltest"
)

// Build reads the stack user, the region and the queue from their
// inputs; the password is a secret of the signal.
func TestBuildReadsTheInputs(t *testing.T) {
	d := signaltest.Deployment(t, append(append([]string{}, signaltest.StackUser...), "deploy_queue_id", `"queue-1"`)...)
	if !Transport.Claims(d) {
		t.Fatal("not claimed")
	}
	s, err := Transport.Build(d)
	if err != nil {
		t.Fatal(err)
	}
	q := s.(*queue)
	c := q.session.Creds
	if c.AuthURL != "http://ks/v3" || c.UserID != "aaaa" || c.ProjectID != "bbbb" || c.Password.Reveal() != "pa55word" ||
		q.region != "" || q.name != "queue-1" {
		t.Errorf("built %+v, %+v", q, c)
	}
	if sec := s.Secrets(); len(sec) != 1 || sec[0] != "pa55word" {
		t.Errorf("secrets %q", sec)
	}
}
