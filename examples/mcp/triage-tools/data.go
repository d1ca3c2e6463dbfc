package main

import (
	"strings"
	"time"
)

// runbooks are the runbooks lookup_runbook and runbook://{service} serve, by service.
var runbooks = map[string]string{
	"checkout": `# checkout
1. Check the error rate on the checkout dashboard.
2. If it rose after a deploy, roll the deploy back (recent_deploys lists them).
3. If the payment provider times out, fail over to the secondary provider.`,
	"search": `# search
1. Check the index lag; above 5 minutes, restart the indexer.
2. If queries time out, scale the query tier out by two replicas.`,
	// payments has a long runbook, so that size limits can be exercised.
	"payments": "# payments\n" + strings.Repeat(
		"- Reconcile the ledger against the provider's settlement report; page finance if they differ.\n", 24),
}

// deploy is one deploy of a service.
type deploy struct {
	Version string    `json:"version"`
	At      time.Time `json:"at"`
	By      string    `json:"by"`
}

// deploys returns the recent deploys of a service, newest first (a fixed history).
func deploys(service string) []deploy {
	if _, ok := runbooks[service]; !ok {
		return nil
	}
	base := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	authors := []string{"ana", "bo", "chen", "dee", "eli"}
	out := make([]deploy, 0, len(authors))
	for i, who := range authors {
		out = append(out, deploy{
			Version: service + "-v1." + string(rune('9'-i)),
			At:      base.Add(-time.Duration(i) * 26 * time.Hour),
			By:      who,
		})
	}
	return out
}
