package deployment

import "github.com/tripleo-go/agent/internal/jsondoc"

// CoerceStrings gives every input whose type is exactly "String" and whose
// value is not a string the value Python's str() makes of it: 1 -> "1",
// true -> "True", null -> "None", {"a": 1} -> "{'a': 1}". Heat does not
// coerce values, and hooks (the script hook's environment) expect text;
// the reference does this, so hooks and saved state see the same.
func (d *Deployment) CoerceStrings() {
	v, _ := d.obj.Get("inputs")
	list, _ := v.([]jsondoc.Value)
	for _, item := range list {
		o := item.(*jsondoc.Object)
		if t, _ := str(o, "type"); t != "String" {
			continue
		}
		val, ok := o.Get("value")
		if !ok {
			continue
		}
		if _, isStr := val.(string); !isStr {
			o.Set("value", jsondoc.PyStr(val))
		}
	}
}

// ResolveComponent turns a deployment of group "component" into the
// entry of config.configs whose actions hold deploy_action: its config
// and its tool as the group. It reports false when no entry matches (the
// deployment is then skipped, as by the reference).
func (d *Deployment) ResolveComponent() (action string, ok bool) {
	act, _ := d.Input("deploy_action")
	action = jsondoc.PyStr(act)
	cfg, _ := d.Config().(*jsondoc.Object)
	cv, _ := cfg.Get("configs")
	configs, _ := cv.([]jsondoc.Value)
	for _, item := range configs {
		c, ok := item.(*jsondoc.Object)
		if !ok {
			continue
		}
		av, _ := c.Get("actions")
		actions, _ := av.([]jsondoc.Value)
		for _, a := range actions {
			if s, ok := a.(string); ok && act != nil && s == action {
				conf, _ := c.Get("config")
				tool, _ := c.Get("tool")
				d.obj.Set("config", conf)
				d.obj.Set("group", tool)
				return action, true
			}
		}
	}
	return action, false
}
