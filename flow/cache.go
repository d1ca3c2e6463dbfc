package flow

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gateflow/gateflow/internal/blob"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// The step cache's activities (registered by RegisterActivities).
const (
	cacheLookupActivity = "gateflow.cache.lookup"
	cacheStoreActivity  = "gateflow.cache.store"
)

// cacheSpec is a step's Cache or SharedCache option.
type cacheSpec struct {
	key    string
	ttl    time.Duration
	shared bool
}

// Cache reuses the step's result: before the step is dispatched its key is looked up in the
// worker's blob store (WorkerOptions.BlobURL); an entry stored less than ttl ago is a hit,
// and the step is recorded completed and cached (runs.Step.Cached, with its age) with the
// stored result, without running and without cost (no reservation, no charge). A miss runs
// the step and stores its result when it succeeds. Keys are namespaced per flow (workflow
// type): two flows never share an entry unless both use SharedCache. A worker without a
// blob store fails a step with Cache before dispatch (error type ErrorNoCacheStore). Shell,
// HTTP, agent and custom activity steps take it; other steps ignore it.
func Cache(key string, ttl time.Duration) StepOption {
	return func(o *stepOptions) { o.cache = &cacheSpec{key: key, ttl: ttl} }
}

// SharedCache is Cache with a key shared by every flow of the blob store.
func SharedCache(key string, ttl time.Duration) StepOption {
	return func(o *stepOptions) { o.cache = &cacheSpec{key: key, ttl: ttl, shared: true} }
}

// cacheLookup is the lookup activity's input.
type cacheLookup struct {
	Key   string        `json:"key"`
	TTL   time.Duration `json:"ttl"`
	Label string        `json:"label"`
}

// cacheHit is the lookup activity's answer (in history: replay sees the same decision).
type cacheHit struct {
	Hit      bool            `json:"hit"`
	Result   json.RawMessage `json:"result,omitempty"`
	StoredAt time.Time       `json:"stored_at"`
	AgeMS    int64           `json:"age_ms"`
}

// cacheEntry is what the store keeps under a key.
type cacheEntry struct {
	StoredAt time.Time       `json:"stored_at"`
	Label    string          `json:"label"`
	Result   json.RawMessage `json:"result"`
}

// cacheStoreInput is the store activity's input.
type cacheStoreInput struct {
	Key    string          `json:"key"`
	Label  string          `json:"label"`
	Result json.RawMessage `json:"result"`
}

// cacheActivities look up and store cache entries in the worker's blob store.
type cacheActivities struct {
	url   string
	once  sync.Once
	store *blob.Store
	err   error
}

func (a *cacheActivities) open(ctx context.Context) (*blob.Store, error) {
	a.once.Do(func() {
		if a.store != nil {
			return
		}
		if a.url == "" {
			a.err = temporal.NewNonRetryableApplicationError(
				"step cache: the worker has no blob store (set WorkerOptions.BlobURL; flow-worker --blob-url)", string(ErrorNoCacheStore), nil)
			return
		}
		a.store, a.err = blob.Open(ctx, a.url)
	})
	return a.store, a.err
}

func (a *cacheActivities) lookup(ctx context.Context, in cacheLookup) (cacheHit, error) {
	s, err := a.open(ctx)
	if err != nil {
		return cacheHit{}, err
	}
	data, err := s.Get(ctx, in.Key)
	if errors.Is(err, blob.ErrNotFound) {
		return cacheHit{}, nil
	}
	if err != nil {
		return cacheHit{}, fmt.Errorf("step cache %s: %w", in.Label, err)
	}
	var e cacheEntry
	if err := json.Unmarshal(data, &e); err != nil {
		return cacheHit{}, nil // an unreadable entry is a miss (and is overwritten)
	}
	age := time.Since(e.StoredAt)
	if in.TTL > 0 && age >= in.TTL {
		return cacheHit{}, nil // expired
	}
	return cacheHit{Hit: true, Result: e.Result, StoredAt: e.StoredAt, AgeMS: age.Milliseconds()}, nil
}

func (a *cacheActivities) put(ctx context.Context, in cacheStoreInput) error {
	s, err := a.open(ctx)
	if err != nil {
		return err
	}
	data, err := json.Marshal(cacheEntry{StoredAt: time.Now().UTC(), Label: in.Label, Result: in.Result})
	if err != nil {
		return fmt.Errorf("step cache %s: %w", in.Label, err)
	}
	if err := s.Put(ctx, in.Key, data); err != nil {
		return fmt.Errorf("step cache %s: %w", in.Label, err)
	}
	return nil
}

// cacheKey is the blob key of a step's cache entry: per flow unless shared.
func (c *Context) cacheKey(cs *cacheSpec) string { return cacheBlobKey(c.run.info.Name, cs) }

func cacheBlobKey(flowName string, cs *cacheSpec) string {
	sum := sha256.Sum256([]byte(cs.key))
	ns := "shared"
	if !cs.shared {
		ns = "flow/" + sanitizeKeyPart(flowName)
	}
	return "cache/" + ns + "/" + hex.EncodeToString(sum[:])
}

func sanitizeKeyPart(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < ' ' {
			return '_'
		}
		return r
	}, s)
}

func cacheActivityOptions(summary string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		Summary:             summary,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{string(ErrorNoCacheStore)}},
	}
}

// lookupCache asks the store for the step's entry; a hit is in history.
func (c *Context) lookupCache(cl call) (cacheHit, error) {
	cs := cl.opts.cache
	if strings.TrimSpace(cs.key) == "" {
		return cacheHit{}, errors.New("step cache: the key is empty")
	}
	if cs.ttl <= 0 {
		return cacheHit{}, fmt.Errorf("step cache %q: the ttl must be positive, got %s", cs.key, cs.ttl)
	}
	actx := workflow.WithActivityOptions(c.wctx, cacheActivityOptions("cache lookup "+cl.name))
	var hit cacheHit
	in := cacheLookup{Key: c.cacheKey(cs), TTL: cs.ttl, Label: cl.name}
	if err := workflow.ExecuteActivity(actx, cacheLookupActivity, in).Get(actx, &hit); err != nil {
		return cacheHit{}, fmt.Errorf("step cache %q: %w", cs.key, err)
	}
	return hit, nil
}

// hitCache makes p a finished step with the cached result.
func (c *Context) hitCache(p *pending, hit cacheHit) {
	fut, set := workflow.NewFuture(c.wctx)
	set.Set(hit.Result, nil)
	p.fut, p.raw = fut, true
	age := time.Duration(hit.AgeMS) * time.Millisecond
	p.cachedAge = &age
}

// storeCache keeps a step's successful result under its key (a miss). A failure to store
// does not fail the step: it is logged.
func (c *Context) storeCache(p *pending, result any) {
	cs := p.call.opts.cache
	if cs == nil || p.cachedAge != nil {
		return
	}
	raw, err := json.Marshal(result)
	if err != nil {
		c.Logger().Warn("step cache: cannot encode the result", "step", p.call.name, "error", err)
		return
	}
	actx := workflow.WithActivityOptions(c.wctx, cacheActivityOptions("cache store "+p.call.name))
	in := cacheStoreInput{Key: c.cacheKey(cs), Label: p.call.name, Result: raw}
	if err := workflow.ExecuteActivity(actx, cacheStoreActivity, in).Get(actx, nil); err != nil {
		c.Logger().Warn("step cache: cannot store the result", "step", p.call.name, "error", err)
	}
}

// openBlobs opens WorkerOptions.BlobURL for the worker's activities.
func (w *Worker) openBlobs() error {
	if w.opts.BlobURL == "" || w.opts.blobs != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := blob.Open(ctx, w.opts.BlobURL)
	if err != nil {
		return fmt.Errorf("blob store: %w", err)
	}
	w.opts.blobs = s
	return nil
}

// closeBlobs closes the store openBlobs opened.
func (w *Worker) closeBlobs() {
	if w.opts.blobs != nil {
		_ = w.opts.blobs.Close()
		w.opts.blobs = nil
	}
}
