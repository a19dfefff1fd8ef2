package main

// expected are issue 25's targets, so that the table covers each one even
// when no line of the output measured it: a figure make bench measures
// but did not print (a bench skipped or not yet written) is "NOT RUN";
// one measured by another harness is "measured elsewhere", with where,
// unless a log of that harness given to the summary holds its line.
// match is a glob (path.Match) over program/name: the benches name a
// figure after its case, its medium or its input's size.
type expected struct {
	id    string // shown when nothing matched
	match string
	goal  string
	where string // empty: make bench measures it
}

var issueTargets = []expected{
	{"os-apply-config/fresh-disk-over-floor", "os-apply-config/fresh-disk-over-floor", "<=3x", ""},
	{"os-apply-config/steady-disk-over-floor", "os-apply-config/steady-disk-over-floor", "<=3x", ""},
	{"os-apply-config/fresh-tmpfs-over-floor", "os-apply-config/fresh-tmpfs-over-floor", "<=3x", ""},
	{"os-apply-config/steady-tmpfs-over-floor", "os-apply-config/steady-tmpfs-over-floor", "<=3x", ""},
	{"os-apply-config/peak-rss", "os-apply-config/peak-rss*", "<=20MiB", ""},
	{"os-collect-config/mem-100MB", "os-collect-config/mem-*", memGoal, ""},
	{"os-apply-config/mem-100MB", "os-apply-config/mem-*", memGoal, ""},
	{"55-heat-config/mem-100MB", "55-heat-config/mem-*", memGoal, ""},
	{"heat-config-notify/mem-100MB", "heat-config-notify/mem-*", memGoal, ""},
	{"os-collect-config/push-change-to-command-lab", "*/*push*lab*", "<=1s",
		"make e2e, on the lab's real Zaqar: its PUSH change_to_command= line"},
	{"fleetsim/zaqar-push-p99", "*/*push*p99*", "<=2s",
		"make fleet (tools/fleetsim, zaqar-push at 10,000 agents), docs/scale.md"},
	{"fleetsim/zaqar-push-idle-requests", "*/*push*idle*", "<=26.8req/agent-h",
		"make fleet (tools/fleetsim, zaqar-push), docs/scale.md; 10% of today's 268"},
	{"heat-config/own-share-heat", "heat-config/own-share-heat", "<=50ms",
		"make e2e, TestDeploy's update step (HEAT_SIGNAL)"},
	{"heat-config/own-share-zaqar", "heat-config/own-share-zaqar", "<=50ms",
		"make e2e, TestDeploy's update step (ZAQAR_SIGNAL)"},
}

// memGoal is benchkit.MemTarget's goal in words: its figure depends on the
// input's size.
const memGoal = "<=2*input+32MiB"
