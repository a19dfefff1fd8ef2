// Package all is the registry of the collectors: the one list
// os-collect-config's options, their check, the factories and the watch
// list are made from.
package all

import (
	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/cfn"
	"github.com/tripleo-go/agent/collectors/ec2"
	"github.com/tripleo-go/agent/collectors/heat"
	"github.com/tripleo-go/agent/collectors/heatlocal"
	"github.com/tripleo-go/agent/collectors/local"
	"github.com/tripleo-go/agent/collectors/request"
	"github.com/tripleo-go/agent/collectors/zaqar"
)

// Collectors is every collector os-collect-config has, one line each, in
// the reference's default order (the order of the collectors option's
// default, and so of OS_CONFIG_FILES). A new collector is its package and
// one line here.
var Collectors = []collectors.Registration{
	{Name: heatlocal.Name, Config: heatlocal.NewConfig},
	{Name: ec2.Name, Config: ec2.NewConfig},
	{Name: cfn.Name, Config: cfn.NewConfig},
	{Name: heat.Name, Config: heat.NewConfig},
	{Name: request.Name, Config: request.NewConfig},
	{Name: local.Name, Config: local.NewConfig},
	{Name: zaqar.Name, Config: zaqar.NewConfig},
}
