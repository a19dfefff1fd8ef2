package heatapi

import (
	"testing"

	"github.com/tripleo-go/agent/heatconfig/deployment"
)

// Build reads the stack user, the region, the stack and the resource
// from their inputs; the password is a secret of the signal.
func TestBuildReadsTheInputs(t *testing.T) {
	d, err := deployment.Parse([]byte(`{"id": "5555", "group": "script", "inputs": [
		{"name": "deploy_auth_url", "value": "http://ks/v3"}, {"name": "deploy_user_id", "value": "aaaa"},
		{"name": "deploy_password", "value": "pa55word"}, {"name": "deploy_project_id", "value": "bbbb"},
		{"name": "deploy_stack_id", "value": "st/cccc"}, {"name": "deploy_resource_name", "value": "the_resource"},
		{"name": "deploy_region_name", "value": "RegionOne"}]}`))
	if err != nil {
		t.Fatal(err)
	}
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
