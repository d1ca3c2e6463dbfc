package proc

import (
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMergeEnv(t *testing.T) {
	base := []string{"PATH=/bin", "HOME=/root", "EMPTY=", "WEIRD"}
	tests := []struct {
		name  string
		extra map[string]string
		want  []string
	}{
		{"nothing extra returns base", nil, base},
		{"adds sorted", map[string]string{"B": "2", "A": "1"}, []string{"PATH=/bin", "HOME=/root", "EMPTY=", "WEIRD", "A=1", "B=2"}},
		{"overrides replace base entries", map[string]string{"HOME": "/home/x", "EMPTY": "now"}, []string{"PATH=/bin", "WEIRD", "EMPTY=now", "HOME=/home/x"}},
		{"empty value kept", map[string]string{"PATH": ""}, []string{"HOME=/root", "EMPTY=", "WEIRD", "PATH="}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, MergeEnv(base, tt.extra))
		})
	}
}

func TestKillGroupKillsTheChildrenToo(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 30 & sleep 30; wait")
	OwnGroup(cmd)
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	KillGroup(cmd)
	select {
	case err := <-done:
		assert.Error(t, err, "killed")
	case <-time.After(10 * time.Second):
		t.Fatal("the process group was not killed")
	}
	KillGroup(&exec.Cmd{}) // not started: nothing to do
}

func TestTailKeepsTheEndOnALineBoundary(t *testing.T) {
	assert.Equal(t, "short", Tail("  short \n", 100))
	assert.Equal(t, "…second", Tail("first line\nsecond", 8), "starts after a newline near the cut")
	assert.Equal(t, "…\uFFFDb", Tail("aaaa\xffb", 4), "invalid bytes become U+FFFD")
	assert.Equal(t, "…b", Tail("aaaa\xffb", 2), "never half a rune")
}

func TestBufferTakesConcurrentWrites(t *testing.T) {
	var b Buffer
	cmd := exec.Command("sh", "-c", "for i in 1 2 3 4 5; do echo out$i; echo err$i >&2; done")
	cmd.Stdout, cmd.Stderr = &b, &b
	require.NoError(t, cmd.Run())
	for i := 1; i <= 5; i++ {
		assert.Contains(t, b.String(), "out"+string(rune('0'+i))+"\n")
		assert.Contains(t, b.String(), "err"+string(rune('0'+i))+"\n")
	}
}
