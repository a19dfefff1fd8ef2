package kubelet

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// Container is what the hook needs of a pod's container.
type Container struct{ Name, Image string }

// PodContainers are the config's containers (none when it has none); a
// config that is not a pod is an error, as the reference's was.
func PodContainers(config jsondoc.Value) ([]Container, error) {
	pod, ok := config.(*jsondoc.Object)
	if !ok {
		return nil, fmt.Errorf("%w: the kubelet config is not a pod (a JSON object)", hooks.ErrConfig)
	}
	v, _ := pod.Get("containers")
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]jsondoc.Value)
	if !ok {
		return nil, fmt.Errorf("%w: the pod's containers are not a list", hooks.ErrConfig)
	}
	var out []Container
	for i, item := range list {
		o, _ := item.(*jsondoc.Object)
		var c Container
		if o != nil {
			name, _ := o.Get("name")
			image, _ := o.Get("image")
			c.Name, _ = name.(string)
			c.Image, _ = image.(string)
		}
		if c.Name == "" || c.Image == "" {
			return nil, fmt.Errorf("%w: container %d of the pod has no name or no image", hooks.ErrConfig, i)
		}
		out = append(out, c)
	}
	return out, nil
}

// RequiredImages are the images of the containers, each once, sorted
// (the reference's set had no order).
func RequiredImages(containers []Container) []string {
	var images []string
	for _, c := range containers {
		images = append(images, c.Image)
	}
	slices.Sort(images)
	return slices.Compact(images)
}

// IDToPodNamePart is the start of the pod's name the kubelet gives its
// containers: the deployment id without dashes, 15 characters at most.
func IDToPodNamePart(id string) string {
	r := []rune(strings.ReplaceAll(id, "-", ""))
	return string(r[:min(15, len(r))])
}

// ContainerPattern matches the names of the kubelet's containers of
// container name in the deployment's pod.
func ContainerPattern(id, name string) string {
	return fmt.Sprintf(`^/k8s_%s\.[0-9a-z]{8}_%s`, name, IDToPodNamePart(id))
}

// Pattern is the pattern of the names of one container of the pod.
type Pattern struct{ Name, Regexp string }

// RequiredContainerPatterns is a pattern per container name, in the
// pod's order (a name given twice counts once).
func RequiredContainerPatterns(id string, containers []Container) []Pattern {
	var out []Pattern
	for _, c := range containers {
		if !slices.ContainsFunc(out, func(p Pattern) bool { return p.Name == c.Name }) {
			out = append(out, Pattern{Name: c.Name, Regexp: ContainerPattern(id, c.Name)})
		}
	}
	return out
}
