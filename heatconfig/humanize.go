package heatconfig

import (
	"strings"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pyutf8"
	"go.yaml.in/yaml/v3"
)

// humanize shows a hook's output for the log: its JSON result as YAML,
// multi-line strings as literal blocks, so deploy_stdout reads as the
// tool printed it; anything else as the text it is.
func humanize(stdout []byte) string {
	text := pyutf8.DecodeReplace(stdout)
	v, err := jsondoc.Loads([]byte(text))
	if err != nil {
		return text
	}
	if _, ok := v.(*jsondoc.Object); !ok {
		return text
	}
	out, err := yaml.Marshal(yamlNode(v))
	if err != nil {
		return text
	}
	return string(out)
}

// yamlNode builds the YAML of a JSON value, keys in their order.
func yamlNode(v jsondoc.Value) *yaml.Node {
	switch x := v.(type) {
	case *jsondoc.Object:
		n := &yaml.Node{Kind: yaml.MappingNode}
		for i := 0; i < x.Len(); i++ {
			k, val := x.At(i)
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, yamlNode(val))
		}
		return n
	case []jsondoc.Value:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for _, item := range x {
			n.Content = append(n.Content, yamlNode(item))
		}
		return n
	case string:
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: x}
		if strings.Contains(x, "\n") {
			n.Style = yaml.LiteralStyle
		}
		return n
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	default:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: jsondoc.Dumps(x)}
	}
}
