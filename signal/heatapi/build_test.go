package heatapi

import (
	"testing"

	"github.com/tripleo-go/agent/signal/signaltest"
)

// Build reads the stack user, the region, the stack and the resource
// from their inputs; the password is a secret of the signal.
func TestBuildReadsTheInputs(t *testing.T) {
	d := signaltest.Deployment(t, append(append([]string{}, signaltest.StackUser...), "deploy_stack_id", `"st/cccc"`, "deploy_resource_name", `"the_resource"`, "deploy_region_name", `"RegionOne"`)...)
	if !Transport.Claims(d) {
		t.Fatal("not claimed")
	}
	s, err := Transport.Build(d)
	if err != nil {
		t.Fatal(err)
	}
	h := s.(*resource)
	c := h.session.Creds
	if c.AuthURL != "http://ks/v3" || c.UserID != "aaaa" || c.ProjectID != "bbbb" || c.Password.Reveal() != "pa55word" ||
		h.region != "RegionOne" || h.stack != "st/cccc" || h.name != "the_resource" {
		t.Errorf("built %+v, %+v", h, c)
	}
	if sec := s.Secrets(); len(sec) != 1 || sec[0] != "pa55word" {
		t.Errorf("secrets %q", sec)
	}
}
