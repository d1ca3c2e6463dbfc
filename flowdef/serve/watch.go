package serve

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"time"

	"github.com/gateflow/gateflow/flowdef"
)

// DefaultInterval is how often Watch polls the directory when given no interval.
const DefaultInterval = 2 * time.Second

// Watch reloads the directory every interval (DefaultInterval when not positive) until
// ctx ends, then returns ctx's error. See Reload for what a reload does; its errors are
// logged, not returned. Call it after the worker started.
func (l *Loader) Watch(ctx context.Context, interval time.Duration) error {
	if interval <= 0 {
		interval = DefaultInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if err := l.Reload(ctx); err != nil {
				l.log.Error("flow definitions: reload failed", "dir", l.dir, "error", err)
			}
		}
	}
}

// Reload reads the directory once and applies what changed since the last load:
//
//   - an edited file that validates becomes the definition new runs use (interp.Live.Set;
//     runs in progress keep theirs) and its catalog entry is republished with the new
//     hash;
//   - an edited file that does not validate is logged, every error, and the last good
//     version stays served;
//   - a new file, or a file now defining another name, is served at once under its
//     name (Worker.AddFlows: the worker serves flows added after it started without a
//     restart) and published in the catalog; a file that brings back a removed
//     definition serves it again at once;
//   - a removed file stops its definition for new runs: its catalog entry says so
//     (WorkflowInfo.Removed), so Client.Start refuses new starts; a run started another
//     way fails at once saying it was removed. Runs in progress go on.
//
// Reload returns an error only when the directory cannot be read or the catalog cannot be
// published; problems of files are logged.
func (l *Loader) Reload(ctx context.Context) error {
	raw, err := readDir(l.dir)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	changed := map[string][]byte{}
	for path, data := range raw {
		if f, ok := l.files[path]; !ok || f.sum != sumOf(data) {
			changed[path] = data
		}
	}
	var gone []string
	for path := range l.files {
		if _, ok := raw[path]; !ok {
			gone = append(gone, path)
		}
	}
	if len(changed) == 0 && len(gone) == 0 {
		return nil
	}
	// Unchanged files' current definitions resolve the calls of the changed ones.
	others := map[string]*flowdef.Definition{}
	for path, f := range l.files {
		if _, edited := changed[path]; !edited && f.name != "" {
			if s := l.flows[f.name]; s != nil && !s.isRemoved() {
				others[f.name] = s.live.Current()
			}
		}
	}
	valid, sums, errs := l.check(changed, others)
	for _, e := range errs {
		each := flowdef.Errors(e)
		if len(each) == 0 {
			l.log.Error("flow definitions: invalid definition, the last good version stays served", "dir", l.dir, "error", e.Error())
		}
		for _, x := range each {
			l.log.Error("flow definitions: invalid definition, the last good version stays served", "dir", l.dir, "error", x.String())
		}
	}
	republish := false
	for _, path := range sortedKeys(changed) {
		prev := l.files[path]
		def, ok := valid[path]
		if !ok {
			l.files[path] = file{sum: sums[path], name: prev.name}
			continue
		}
		l.files[path] = file{sum: sums[path], name: def.Name}
		if prev.name != "" && prev.name != def.Name {
			republish = l.remove(prev.name, path) || republish
		}
		s := l.flows[def.Name]
		if s == nil {
			if err := l.add(def, path); err != nil {
				if l.flows[def.Name] == nil {
					l.files[path] = file{sum: sums[path]}
				}
				l.log.Error("flow definitions: cannot serve the new definition", "definition", def.Name, "file", path, "error", err.Error())
				continue
			}
			l.log.Info("flow definitions: added", "definition", def.Name, "file", path, "hash", def.Hash())
			continue
		}
		if err := l.set(s, def, path); err != nil {
			l.log.Error("flow definitions: cannot serve the edited definition, the last good version stays served", "file", path, "error", err.Error())
			continue
		}
		republish = true
		l.log.Info("flow definitions: reloaded", "definition", def.Name, "file", path, "hash", def.Hash())
	}
	for _, path := range gone {
		name := l.files[path].name
		delete(l.files, path)
		if name != "" {
			republish = l.remove(name, path) || republish
		}
	}
	if !republish {
		return nil
	}
	if err := l.publish(ctx); err != nil {
		return fmt.Errorf("serve: republish the catalog: %w", err)
	}
	return nil
}

// add serves def, loaded from path, a definition the loader did not serve: the worker
// adds its flow (and publishes its catalog).
func (l *Loader) add(def *flowdef.Definition, path string) error {
	s, err := l.newServed(def, path)
	if err != nil {
		return err
	}
	if err := l.addFlow(s); err != nil {
		if slices.Contains(l.w.Registry().Flows, def.Name) {
			// Added, but the catalog or a start of it failed: served all the same.
			l.flows[def.Name] = s
		}
		return fmt.Errorf("serve: %s: %w", path, err)
	}
	l.flows[def.Name] = s
	return nil
}

// set makes def, loaded from path, the definition new runs of s use.
func (l *Loader) set(s *served, def *flowdef.Definition, path string) error {
	info, err := l.infoOf(def, path)
	if err != nil {
		return err
	}
	if err := s.live.Set(def); err != nil {
		return err
	}
	s.mu.Lock()
	s.info, s.path, s.removed = info, path, false
	s.mu.Unlock()
	return nil
}

// remove stops serving name, which path defined, for new runs; it reports whether the
// catalog changed. Another file still defining name keeps it.
func (l *Loader) remove(name, path string) bool {
	s := l.flows[name]
	if s == nil || s.isRemoved() {
		return false
	}
	for p, f := range l.files {
		if f.name == name && p != path {
			return false
		}
	}
	def, err := removedDefinition(name, path)
	if err == nil {
		err = l.set(s, def, path)
	}
	if err != nil {
		l.log.Error("flow definitions: cannot stop serving a removed definition", "definition", name, "file", path, "error", err.Error())
		return false
	}
	s.mu.Lock()
	s.removed = true
	s.info.Removed = fmt.Sprintf("definition %s was removed (%s); restore the file, or run a definition with flowctl start --file", name, path)
	s.mu.Unlock()
	l.log.Warn(fmt.Sprintf("flow definitions: definition %s was removed (%s): new starts are refused; runs in progress go on", name, path),
		"definition", name, "file", path)
	return true
}

func sumOf(data []byte) [32]byte { return sha256.Sum256(data) }
