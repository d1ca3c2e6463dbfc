package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/runs"
)

// flow-worker --provider-rules answers agent steps from a file and --prices charges them
// at the file's prices: a definition's agent step on a model of neither the defaults nor
// the examples costs exactly the rule's tokens at the price file's rates.
func TestFlowWorkerProviderRulesAndPriceFile(t *testing.T) {
	workerBin, ctlBin := binaries(t)
	dir := t.TempDir()
	flows := filepath.Join(dir, "flows")
	require.NoError(t, os.MkdirAll(flows, 0o755))
	write := func(path, text string) string {
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
		return path
	}
	write(filepath.Join(flows, "priced.yaml"), `name: priced
version: "1"
steps:
  - id: answer
    uses: agent
    with:
      prompt: "Price this call, please"
      model: scripted-priced
      max_budget_usd: "1.00"
`)
	rules := write(filepath.Join(dir, "rules.yaml"), "# the priced flow's answer\n- match: Price this call\n  text: priced answer\n  input_tokens: 2000\n  output_tokens: 100\n")
	prices := write(filepath.Join(dir, "prices.json"), `{"scripted-priced": {"input_per_mtok": "4.00", "output_per_mtok": "20.00"}}`)
	port := freePort(t)
	address := fmt.Sprintf("127.0.0.1:%d", port)
	worker := exec.Command(workerBin, "--dev", "--port", fmt.Sprint(port), "--ui-port", "0", "--flows", flows,
		"--provider-rules", rules, "--prices", prices)
	startWorkerProcess(t, worker)

	o, e, code := runCtl(t, ctlBin, os.Environ(), "--address", address, "start", "priced", "--wait", "-o", "json")
	require.Equal(t, 0, code, e)
	var d runs.Description
	require.NoError(t, flowctl.DecodeJSON([]byte(o), &d), o)
	assert.Equal(t, runs.StatusCompleted, d.Status, o)
	require.NotNil(t, d.State)
	require.Len(t, d.State.Steps, 1, o)
	s := d.State.Steps[0]
	assert.Equal(t, "answer", s.Name)
	// 2,000 input tokens at $4.00 and 100 output tokens at $20.00 per million.
	assert.Equal(t, "0.01", s.CostUSD.String(), "charged at the price file's rates")
	require.NotNil(t, s.Tokens, o)
	assert.Equal(t, int64(2000), s.Tokens.Input)
	assert.Equal(t, int64(100), s.Tokens.Output)

	// A bad rules file: flow-worker refuses to start, naming the file, line and rule.
	bad := write(filepath.Join(dir, "bad.yaml"), "- match: x\n  text: y\n- match: z\n  tokens: 3\n")
	out, err := exec.Command(workerBin, "--dev", "--port", fmt.Sprint(freePort(t)), "--ui-port", "0", "--provider-rules", bad).CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", out)
	assert.Equal(t, 2, ee.ExitCode())
	assert.Contains(t, string(out), "--provider-rules: "+bad+":3: rule 2: line 4: unknown field \"tokens\"")
}
