package notify

import (
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/deadline"
	"github.com/tripleo-go/agent/internal/version"
	"github.com/tripleo-go/agent/signal"
)

// CLI is heat-config-notify's command line as its help and manual page
// tell it; Run reads its arguments itself, as the reference did, and the
// multi-call binary answers --help and --version from this.
func CLI() *argparse.Parser {
	return &argparse.Parser{
		Prog: Name,
		Description: "Signals a deployment's result to Heat: the deployment (the state file heat-config wrote) " +
			"names the transport (a pre-signed CloudFormation or Swift TempURL, Heat's API, or a Zaqar queue), " +
			"and the hook's JSON result comes on the standard input. A failed signal is retried with backoff " +
			"within the retry budget.",
		Version: Name + ": " + version.Current().String(),
		Manual: argparse.Manual{
			Summary:  "signal a Heat software deployment's result",
			Synopsis: []string{"heat-config-notify DEPLOYMENT_FILE < RESULT_JSON"},
			Sections: []argparse.Section{
				{Title: "Environment", Items: []argparse.Item{
					{Tag: deadline.NotifyRetryVar, Text: "The retry budget in seconds, or a Go duration such as 90s (default " + deadline.DefaultNotifyRetry.String() + ")."},
					{Tag: signal.TokenCacheVar, Text: tokenCacheHelp},
				}},
				{Title: "Exit status", Paragraphs: []string{"0 when the signal was delivered; 1 when it was not, or the deployment file is missing or unreadable; 143 when stopped."}},
				{Title: "See also", Paragraphs: []string{"55-heat-config (run by os-refresh-config), os-collect-config(1)"}},
			},
		},
	}
}

// tokenCacheHelp tells the token cache, for both programs that signal.
const tokenCacheHelp = "The directory where the stack user's Keystone token is kept for the next signal " +
	"(HEAT_SIGNAL, ZAQAR_SIGNAL), one 0600 file per set of credentials named by their SHA-256 (default " +
	signal.DefaultTokenCache + "); empty or off keeps none."
