package flowctl

import (
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/runs"
)

// decision is one vote or answer the run counted, for printDecisions.
type decision struct {
	at             time.Time
	what, by, with string
}

// printDecisions lists the votes and answers the run counted, in the order they arrived,
// each with how its identity was verified: "signature alice-1", "identity provider ...",
// or "unverified" when the sender's typed identity is all the run has.
func printDecisions(w io.Writer, st *runs.State) error {
	var ds []decision
	for _, g := range st.Gates {
		for _, v := range g.Votes {
			ds = append(ds, decision{v.At, string(v.Kind) + " " + g.Name, v.By, verifiedText(v.Verified)})
		}
	}
	for _, in := range st.Inputs {
		if a := in.Answer; a != nil {
			ds = append(ds, decision{a.At, "answer " + in.Name, a.By, verifiedText(a.Verified)})
		}
	}
	if len(ds) == 0 {
		return nil
	}
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].at.Before(ds[j].at) })
	fmt.Fprintln(w)
	t := newTable(w, "DECISION", "BY", "AT", "VERIFIED")
	for _, d := range ds {
		t.row(d.what, d.by, d.at.Local().Format("2006-01-02 15:04:05"), d.with)
	}
	return t.flush()
}

// verifiedText says how a decision's identity was verified.
func verifiedText(v *auth.Verified) string {
	switch {
	case v == nil:
		return "unverified"
	case v.Method == auth.MethodIdentityProvider:
		return fmt.Sprintf("identity provider %s (key %s)", v.Issuer, v.KeyID)
	}
	return "signature, key " + v.KeyID
}
