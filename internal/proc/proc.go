// Package proc holds what the steps and gates that run shell commands share: the
// environment a command gets, killing its whole process group, and the tail of its
// output that goes into a failure message.
package proc

import (
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"
)

// MergeEnv is base with extra added or overriding, extra's keys in sorted order; base
// itself when extra is empty.
func MergeEnv(base []string, extra map[string]string) []string {
	if len(extra) == 0 {
		return base
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, override := extra[k]; !override {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+extra[k])
	}
	return out
}

// OwnGroup makes cmd start in a process group of its own, so KillGroup reaches its
// children too.
func OwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// KillGroup sends SIGKILL to the process group of a command started with OwnGroup (the
// shell and its children); nothing when it has not started.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// Tail returns about the last n bytes of s (an ellipsis marks a cut), trimmed of surrounding
// white space, starting on a line boundary when one is near. The result is valid UTF-8
// (invalid bytes become U+FFFD), so it can travel in a Temporal failure message.
func Tail(s string, n int) string {
	s = strings.ToValidUTF8(strings.TrimSpace(s), "\uFFFD")
	if len(s) <= n {
		return s
	}
	start := len(s) - n
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	s = s[start:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < n/4 {
		s = s[i+1:]
	}
	return "…" + s
}
