package hooks

import (
	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// ReadOutputs adds to res, for each output d declares, the content of the
// file <outputsPath>.<name> (§2.5: whole, as text); files that cannot be
// read are left out, so Heat keeps those outputs null.
func ReadOutputs(res *jsondoc.Object, d *deployment.Deployment, outputsPath string) {
	for _, o := range d.Outputs() {
		if text, err := ReadText(outputsPath + "." + o.Name); err == nil {
			res.Set(o.Name, text)
		}
	}
}

// Result is the result of most hooks: the outputs produced, then the
// tool's stdout, stderr and status (the reference's dict, in its order).
func Result(d *deployment.Deployment, outputsPath string, out Outcome) *jsondoc.Object {
	res := jsondoc.NewObject(3)
	ReadOutputs(res, d, outputsPath)
	return Status(res, out.Stdout, out.Stderr, out.Status)
}

// Status sets deploy_stdout, deploy_stderr and deploy_status_code on res
// (a new object when res is nil) and returns it.
func Status(res *jsondoc.Object, stdout, stderr string, code int) *jsondoc.Object {
	if res == nil {
		res = jsondoc.NewObject(3)
	}
	res.Set("deploy_stdout", stdout)
	res.Set("deploy_stderr", stderr)
	res.Set("deploy_status_code", jsondoc.Int(int64(code)))
	return res
}
