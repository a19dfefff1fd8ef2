module github.com/tripleo-go/agent

go 1.26.0

require (
	github.com/cbroglie/mustache v1.4.2
	github.com/coreos/go-systemd/v22 v22.7.0
	github.com/fsnotify/fsnotify v1.10.1
	github.com/gophercloud/gophercloud/v2 v2.15.0
	github.com/gorilla/websocket v1.5.3
	github.com/hashicorp/go-retryablehttp v0.7.8
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/sys v0.49.0
)

require github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
