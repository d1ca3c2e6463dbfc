package flowctl

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/flowclient"
)

var completionShells = []string{"bash", "zsh", "fish", "powershell"}

func (a *app) completionCommand() *cobra.Command {
	var noDesc bool
	cmd := &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script for flowctl",
		Long: "Print a script that completes flowctl's commands, flags and run IDs in your shell\n" +
			"(run IDs are read from the server, as `flowctl list` does).",
		Example: `  # bash (needs the bash-completion package)
  source <(flowctl completion bash)
  flowctl completion bash > /etc/bash_completion.d/flowctl

  # zsh
  flowctl completion zsh > "${fpath[1]}/_flowctl"

  # fish
  flowctl completion fish > ~/.config/fish/completions/flowctl.fish

  # PowerShell
  flowctl completion powershell | Out-String | Invoke-Expression`,
		ValidArgs: completionShells,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("completion needs a shell: %s (got %d arguments)", strings.Join(completionShells, ", "), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			root, out := cmd.Root(), a.stdout
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(out, !noDesc)
			case "zsh":
				if noDesc {
					return root.GenZshCompletionNoDesc(out)
				}
				return root.GenZshCompletion(out)
			case "fish":
				return root.GenFishCompletion(out, !noDesc)
			case "powershell":
				if noDesc {
					return root.GenPowerShellCompletion(out)
				}
				return root.GenPowerShellCompletionWithDesc(out)
			}
			return usageErr("completion: unknown shell %q: want %s", args[0], strings.Join(completionShells, ", "))
		},
	}
	cmd.Flags().BoolVar(&noDesc, "no-descriptions", false, "complete without descriptions")
	return cmd
}

// completeRuns completes a RUN argument with the IDs of recent runs. It gives up quickly
// (and completes nothing) when the server cannot be reached: a shell waits for it.
func (a *app) completeRuns(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	a.timeout = min(a.timeout, 2*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c, err := a.client(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	runs, err := c.List(ctx, flowclient.ListOptions{Limit: 100})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, r := range runs {
		if strings.HasPrefix(r.ID, toComplete) {
			out = append(out, r.ID+"\t"+r.Workflow+", "+string(r.Status))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
