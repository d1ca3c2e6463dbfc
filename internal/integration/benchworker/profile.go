package main

import (
	"fmt"
	"net/http"
	"os"
	"runtime/pprof"
	"sync"
)

// writeProfile writes the named runtime profile (heap, allocs) to file.
func writeProfile(name, file string) error {
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("%s profile: %w", name, err)
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		_ = f.Close()
		return fmt.Errorf("%s profile %s: %w", name, file, err)
	}
	return f.Close()
}

// cpuProfile is the CPU profile GET /cpu/start?file=F starts and /cpu/stop writes to F.
type cpuProfile struct {
	mu sync.Mutex
	f  *os.File
}

func (p *cpuProfile) start(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.f != nil {
		http.Error(w, "a CPU profile is already running", http.StatusConflict)
		return
	}
	f, err := os.Create(r.URL.Query().Get("file"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	p.f = f
}

func (p *cpuProfile) stop(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.f == nil {
		http.Error(w, "no CPU profile is running", http.StatusConflict)
		return
	}
	pprof.StopCPUProfile()
	if err := p.f.Close(); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
	p.f = nil
}
