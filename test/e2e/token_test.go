package e2e

import (
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/signal"
)

// tokenEntries are the entries of the node's Keystone token cache of
// heat-config-notify (and 55-heat-config's warm-up, which fills it),
// each with its modification time and size: a new authentication
// rewrites its user's entry (a rename), a token taken from the cache
// leaves it as it is.
func (n Node) tokenEntries() map[string]string {
	dir := n.Path(signal.DefaultTokenCache)
	ents, _ := os.ReadDir(dir)
	out := map[string]string{}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		out[e.Name()] = fmt.Sprintf("%s %d", fi.ModTime().Format(time.RFC3339Nano), fi.Size())
	}
	return out
}

// inputOf is a deployment's input, by the deployment's name, in a
// stack's metadata.
func inputOf(st *Stack, deployment, input string) string {
	deployments, _ := st.Metadata["deployments"].([]any)
	for _, d := range deployments {
		dm, _ := d.(map[string]any)
		if dm["name"] != deployment {
			continue
		}
		inputs, _ := dm["inputs"].([]any)
		for _, i := range inputs {
			im, _ := i.(map[string]any)
			if im["name"] == input {
				v, _ := im["value"].(string)
				return v
			}
		}
	}
	return ""
}

// cachedTokenCheck is the proof that the update step's signal is a
// second one of the same stack user with its token cached: the script
// deployment keeps its stack user (deploy_user_id) across the update,
// and, for the transports that authenticate, the node's token cache
// held entries before the update (the create step's signals) and not
// one was written during it. A token that was not cached (or was
// refused) would have been fetched and stored. The agents' token
// requests to Keystone while the update ran are logged for the record
// only: other pairs' agents run beside this one.
type cachedTokenCheck struct {
	node    Node
	mark    *Mark
	entries map[string]string
}

func startCachedTokenCheck(n Node) *cachedTokenCheck {
	return &cachedTokenCheck{node: n, mark: lab.Mark(), entries: n.tokenEntries()}
}

func (c *cachedTokenCheck) check(t *testing.T, p pair, before, after *Stack) {
	t.Helper()
	user, again := inputOf(before, "e2e-deployment", "deploy_user_id"), inputOf(after, "e2e-deployment", "deploy_user_id")
	if user != again {
		t.Errorf("the script deployment's stack user changed across the update: %q -> %q", user, again)
	}
	now := c.node.tokenEntries()
	authenticates := p.signal == HeatSignal || p.signal == ZaqarSignal
	switch {
	case authenticates && user == "":
		t.Errorf("no deploy_user_id for the script deployment with %s", p.signal)
	case authenticates && len(c.entries) == 0:
		t.Errorf("no Keystone token cached on the node before the update (%s): the create step's signals kept none", p.signal)
	case !maps.Equal(c.entries, now):
		t.Errorf("the node's Keystone token cache changed during the update: the signal authenticated again\n before %v\n after  %v", c.entries, now)
	}
	t.Logf("TOKEN_CACHE pair=%s step=update stack_user_kept=%t entries=%d unchanged=%t lab_agent_token_posts=%d (every running agent's, for the record)",
		p.name, user == again, len(now), maps.Equal(c.entries, now), agentTokenPosts(c.mark.Lines("log/keystone-uwsgi.log")))
}

// agentTokenPosts counts, in Keystone's request log, the authentications
// of our agents (gophercloud's user agent; Heat's own calls, stack users
// and trusts, are python-keystoneclient's).
func agentTokenPosts(lines []string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "REQ POST /v3/auth/tokens ") && strings.Contains(l, `ua="gophercloud/`) {
			n++
		}
	}
	return n
}
