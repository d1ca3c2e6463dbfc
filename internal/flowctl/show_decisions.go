package flowctl

import (
	"fmt"
	"io"

	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/runs"
)

// printDecisions lists the votes and answers the run counted, each with how its identity
// was verified: "verified (signature alice-1)", or "unverified" when the sender's typed
// identity is all the run has.
func printDecisions(w io.Writer, st *runs.State) {
	first := true
	line := func(format string, args ...any) {
		if first {
			fmt.Fprintln(w, "\nDecisions")
			first = false
		}
		fmt.Fprintf(w, "  "+format+"\n", args...)
	}
	for _, g := range st.Gates {
		for _, v := range g.Votes {
			line("%s %s by %s  %s", v.Kind, g.Name, v.By, verifiedText(v.Verified))
		}
	}
	for _, in := range st.Inputs {
		if a := in.Answer; a != nil {
			line("answer %s by %s  %s", in.Name, a.By, verifiedText(a.Verified))
		}
	}
}

// verifiedText says how a decision's identity was verified.
func verifiedText(v *auth.Verified) string {
	switch {
	case v == nil:
		return "unverified"
	case v.Method == auth.MethodIdentityProvider:
		return fmt.Sprintf("verified (identity provider %s, key %s)", v.Issuer, v.KeyID)
	}
	return fmt.Sprintf("verified (signature, key %s)", v.KeyID)
}
