package main

import (
	"net/http"
	"os"
	"runtime/pprof"
	"sync"
)

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
