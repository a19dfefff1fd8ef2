// Package version says which release of the reference programs this
// agent matches: what --version prints, and what the agent tells servers
// it is.
package version

// Reference is the release of the Python programs (os-apply-config,
// os-collect-config, os-refresh-config) whose behaviour is matched.
const Reference = "12.0.0"

// UserAgent is the User-Agent of the agent's HTTP requests.
const UserAgent = "os-collect-config/" + Reference + " (tripleo-agent)"
