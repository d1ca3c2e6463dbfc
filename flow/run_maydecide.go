package flow

import (
	"fmt"
	"sort"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/internal/protocol"
)

// registerMayDecide answers protocol.QueryMayDecide: the open gates of the run that a
// person may decide and has not voted on, with group membership resolved as the run's
// votes are checked (each gate's directory snapshot, taken when it opened). `flowctl list
// --waiting-on-me` asks it so that a gate open to a group shows only to its members.
func (p *peoplePart) registerMayDecide(wctx workflow.Context) error {
	err := workflow.SetQueryHandlerWithOptions(wctx, protocol.QueryMayDecide, func(who string) ([]string, error) {
		who = strings.TrimSpace(who)
		if who == "" {
			return nil, fmt.Errorf("query %s: name the person", protocol.QueryMayDecide)
		}
		var out []string
		for name, g := range p.gates {
			if g.Closed() {
				continue
			}
			voted := false
			for _, v := range g.Votes {
				voted = voted || v.By == who
			}
			if voted {
				continue
			}
			if ok, _ := g.Request.Allowed(who, p.gateDirs[name]); ok {
				out = append(out, name)
			}
		}
		sort.Strings(out)
		return out, nil
	}, workflow.QueryHandlerOptions{Description: "The open gates a person (the argument) may decide and has not voted on"})
	if err != nil {
		return fmt.Errorf("register query %s: %w", protocol.QueryMayDecide, err)
	}
	return nil
}
