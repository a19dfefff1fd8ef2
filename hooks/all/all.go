// Package all is the registry of the hooks: the one list heat-config's
// hooks directory and the multi-call binary's programs are made from.
package all

import (
	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/hooks/ansible"
	"github.com/tripleo-go/agent/hooks/applyconfig"
	"github.com/tripleo-go/agent/hooks/cfninit"
	"github.com/tripleo-go/agent/hooks/chef"
	"github.com/tripleo-go/agent/hooks/dockercmd"
	"github.com/tripleo-go/agent/hooks/dockercompose"
	"github.com/tripleo-go/agent/hooks/hiera"
	"github.com/tripleo-go/agent/hooks/jsonfile"
	"github.com/tripleo-go/agent/hooks/kubelet"
	"github.com/tripleo-go/agent/hooks/puppet"
	"github.com/tripleo-go/agent/hooks/salt"
	"github.com/tripleo-go/agent/hooks/script"
)

// Hooks is every hook, one line each; a hook's Group is its program name.
var Hooks = []hooks.Hook{
	script.Hook,
	puppet.Hook,
	ansible.Hook,
	hiera.Hook,
	jsonfile.Hook,
	applyconfig.Hook,
	cfninit.Hook,
	dockercmd.Hook,
	dockercompose.Hook,
	kubelet.Hook,
	salt.Hook,
	chef.Hook,
}
