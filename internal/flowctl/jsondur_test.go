package flowctl

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/runs"
)

type durInner struct {
	Wait time.Duration `json:"wait"`
}

type durOuter struct {
	durInner
	Name     string                   `json:"name"`
	Timeout  int                      `json:"timeout"` // not a duration: kept
	Every    time.Duration            `json:"every,omitempty"`
	Ptr      *time.Duration           `json:"ptr,omitempty"`
	List     []durInner               `json:"list"`
	ByName   map[string]time.Duration `json:"by_name"`
	Opaque   any                      `json:"opaque"`
	Untagged time.Duration
}

func TestJSONDurationsAreStrings(t *testing.T) {
	p := 90 * time.Second
	v := durOuter{
		durInner: durInner{Wait: 24 * time.Hour}, Name: "n", Timeout: 5, Ptr: &p,
		List:   []durInner{{Wait: time.Millisecond}, {}},
		ByName: map[string]time.Duration{"b": time.Minute, "a": 0},
		Opaque: durInner{Wait: time.Second}, Untagged: 1500 * time.Millisecond,
	}
	var out bytes.Buffer
	require.NoError(t, printJSON(&out, v))
	assert.JSONEq(t, `{"wait":"24h0m0s","name":"n","timeout":5,"ptr":"1m30s",
		"list":[{"wait":"1ms"},{"wait":"0s"}],"by_name":{"a":"0s","b":"1m0s"},
		"opaque":{"wait":1000000000},"Untagged":"1.5s"}`, out.String(),
		"durations behind an interface cannot be told from numbers and stay as they are")
	assert.Regexp(t, `(?s)^\{\n  "wait": .*\n  "name": .*\n  "timeout": .*"ptr".*"list".*"by_name".*"opaque".*"Untagged"`, out.String(),
		"the fields keep encoding/json's order")
}

func TestJSONDurationsOfARunDescription(t *testing.T) {
	d := &runs.Description{State: &runs.State{
		Gates: []*approval.Gate{{Name: "ship", Request: approval.Request{Message: "Ship?", Timeout: 24 * time.Hour}}},
		Steps: []runs.Step{{Name: "wait", Gate: &runs.Gate{Type: "http", PollInterval: 30 * time.Second}}},
	}}
	var out bytes.Buffer
	require.NoError(t, printJSON(&out, d))
	var back struct {
		State struct {
			Gates []struct {
				Request struct {
					Timeout string `json:"timeout"`
				} `json:"request"`
			} `json:"gates"`
			Steps []struct {
				Gate struct {
					PollInterval string `json:"poll_interval"`
				} `json:"gate"`
			} `json:"steps"`
		} `json:"state"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &back), out.String())
	require.Len(t, back.State.Gates, 1)
	assert.Equal(t, "24h0m0s", back.State.Gates[0].Request.Timeout)
	require.Len(t, back.State.Steps, 1)
	assert.Equal(t, "30s", back.State.Steps[0].Gate.PollInterval)

	var read runs.Description
	require.NoError(t, DecodeJSON(out.Bytes(), &read))
	assert.Equal(t, 24*time.Hour, read.State.Gates[0].Request.Timeout, "DecodeJSON reads the strings back")
	assert.Equal(t, 30*time.Second, read.State.Steps[0].Gate.PollInterval)
	assert.Error(t, json.Unmarshal(out.Bytes(), &read), "encoding/json alone cannot")

	plain, err := json.Marshal(d)
	require.NoError(t, err)
	assert.Contains(t, string(plain), `"timeout":86400000000000`, "the wire format (the Query answer) keeps nanoseconds")
}

func TestJSONWithoutDurationsIsAsEncoded(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, printJSON(&out, map[string]string{"run": "r", "status": "<ok>"}))
	assert.Equal(t, "{\n  \"run\": \"r\",\n  \"status\": \"\\u003cok\\u003e\"\n}\n", out.String())
}
