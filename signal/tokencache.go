package signal

import (
	"strings"

	"github.com/tripleo-go/agent/internal/environ"
)

// TokenCacheVar names the directory where heat-config-notify and
// 99-refresh-completed keep the stack user's Keystone token between
// runs; "" or "off" keeps none.
const TokenCacheVar = "HEAT_CONFIG_NOTIFY_TOKEN_CACHE"

// DefaultTokenCache is the directory when TokenCacheVar is unset: a
// cache, which may be deleted at any time at the cost of one
// authentication.
const DefaultTokenCache = "/var/cache/heat-config/tokens"

// TokenCacheDir is the token cache of a program run in env: TokenCacheVar
// when it is set, else def.
func TokenCacheDir(env []string, def string) string {
	v, ok := environ.Lookup(env, TokenCacheVar)
	if !ok {
		return def
	}
	if v = strings.TrimSpace(v); strings.EqualFold(v, "off") {
		return ""
	}
	return v
}
