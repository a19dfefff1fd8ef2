module github.com/tripleo-go/agent

go 1.24
