package flowctl

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/internal/searchattr"
)

// write says what setup did, for people.
func (res setupResult) write(w io.Writer) error {
	if len(res.Added) == 0 {
		_, err := fmt.Fprintf(w, "All %d gateflow search attributes are present on namespace %s; nothing added.\n",
			len(res.Present), res.Namespace)
		return err
	}
	all := searchattr.All()
	fmt.Fprintf(w, "Added %d search attribute(s) to namespace %s:\n", len(res.Added), res.Namespace)
	for _, name := range res.Added {
		fmt.Fprintf(w, "  %s (%s)\n", name, all[name])
	}
	if len(res.Present) > 0 {
		fmt.Fprintf(w, "Already present: %s\n", strings.Join(res.Present, ", "))
	}
	return nil
}

// setupResult is what `setup -o json` prints.
type setupResult struct {
	Namespace string   `json:"namespace"`
	Added     []string `json:"added"`
	Present   []string `json:"present"`
}

func (a *app) setupCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "setup",
		Short: "Register gateflow's search attributes on the namespace",
		Long: "Register the custom search attributes gateflow runs need (" + strings.Join(searchAttrNames(), ", ") + ")\n" +
			"on the namespace, through Temporal's operator service. Run it once per namespace of a\n" +
			"cluster other than `flow-worker --dev` (which registers them itself); running it\n" +
			"again changes nothing. An attribute that exists with another type is an error.",
		Example: `  flowctl setup --address temporal.internal:7233 --namespace prod`,
		Args:    cobra.NoArgs,
		RunE: a.runE(nil, func(x call) (view, error) {
			added, err := searchattr.Ensure(x.ctx, x.c.Temporal().OperatorService(), a.namespace)
			if err != nil {
				return view{}, err
			}
			res := newSetupResult(a.namespace, added)
			return view{value: res, text: func(w io.Writer) error { return res.write(w) }}, nil
		}),
	}
}

// newSetupResult splits gateflow's search attributes into the ones Ensure added and the
// ones that were present.
func newSetupResult(namespace string, added []string) setupResult {
	res := setupResult{Namespace: namespace, Added: []string{}, Present: []string{}}
	for _, name := range searchAttrNames() {
		if slices.Contains(added, name) {
			res.Added = append(res.Added, name)
		} else {
			res.Present = append(res.Present, name)
		}
	}
	return res
}

// searchAttrNames are gateflow's search attribute names, sorted.
func searchAttrNames() []string {
	names := make([]string, 0, len(searchattr.All()))
	for name := range searchattr.All() {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
