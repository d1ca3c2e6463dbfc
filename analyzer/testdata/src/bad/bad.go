// Package bad holds flow handlers that break Temporal's determinism rules: each forbidden
// construct carries the finding it must produce.
package bad

import (
	crand "crypto/rand"
	"maps"
	"math/rand"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
)

// In is the fixtures' input.
type In struct {
	Names map[string]int
	Ch    chan int
}

// Out is the fixtures' output.
type Out struct{}

func work() {}

func goStmt(ctx *flow.Context, in In) (Out, error) {
	go work() // want `^go statement in flow handler goStmt: use flow branches \(workflow\.Go\) instead$`
	return Out{}, nil
}

func selectStmt(ctx *flow.Context, in In) (Out, error) {
	select { // want `^select statement in flow handler selectStmt: use workflow\.NewSelector`
	case v := <-in.Ch: // the receive belongs to the select: no second finding
		_ = v
	case in.Ch <- 1:
	default:
	}
	return Out{}, nil
}

func chanSend(ctx *flow.Context, in In) (Out, error) {
	in.Ch <- 1 // want `^channel send in flow handler chanSend: native channels are not replayed deterministically; use workflow\.NewChannel`
	return Out{}, nil
}

func chanReceive(ctx *flow.Context, in In) (Out, error) {
	v := <-in.Ch // want `^channel receive in flow handler chanReceive: native channels`
	_ = v
	return Out{}, nil
}

func makeChan(ctx *flow.Context, in In) (Out, error) {
	ch := make(chan int, 1) // want `^make\(chan\) in flow handler makeChan: native channels`
	_ = ch
	return Out{}, nil
}

func rangeChan(ctx *flow.Context, in In) (Out, error) {
	for v := range in.Ch { // want `^range over channel in flow handler rangeChan: native channels`
		_ = v
	}
	return Out{}, nil
}

func rangeMap(ctx *flow.Context, in In) (Out, error) {
	for k := range in.Names { // want `^range over map in flow handler rangeMap: map iteration order is random; sort the keys$`
		_ = k
	}
	for k := range maps.Keys(in.Names) { // want `^range over maps\.Keys in flow handler rangeMap: map iteration order is random; sort the keys`
		_ = k
	}
	return Out{}, nil
}

func clock(ctx *flow.Context, in In) (Out, error) {
	t := time.Now()                // want `^time\.Now in flow handler clock: use ctx\.Now\(\) instead$`
	time.Sleep(time.Second)        // want `^time\.Sleep in flow handler clock: use ctx\.Sleep\(name, d\) instead$`
	<-time.After(time.Second)      // want `^time\.After in flow handler clock: native timers` `^channel receive in flow handler clock`
	_ = time.Since(t)              // want `^time\.Since in flow handler clock: it reads the wall clock; use ctx\.Now\(\)\.Sub\(t\) instead$`
	_ = time.NewTimer(time.Second) // want `^time\.NewTimer in flow handler clock`
	now := time.Now                // want `^time\.Now in flow handler clock`
	_ = now
	return Out{}, nil
}

func random(ctx *flow.Context, in In) (Out, error) {
	_ = rand.Intn(10)                       // want `^math/rand\.Intn in flow handler random: random values differ on replay`
	_, _ = crand.Read(nil)                  // want `^crypto/rand\.Read in flow handler random`
	_ = rand.New(rand.NewSource(1)).Intn(3) // a fixed seed is deterministic
	return Out{}, nil
}

func temporalClient(ctx *flow.Context, c client.Client) (Out, error) {
	run, err := c.ExecuteWorkflow("other") // want `^client call client\.Client\.ExecuteWorkflow in flow handler temporalClient: a client does I/O`
	if err != nil {
		return Out{}, err
	}
	_ = run.Get()                        // want `^client call client\.WorkflowRun\.Get in flow handler temporalClient`
	_, _ = client.Dial(client.Options{}) // want `^client\.Dial in flow handler temporalClient: dialing a Temporal client`
	return Out{}, nil
}

func flowClient(ctx *flow.Context, fc *flowclient.Client) (Out, error) {
	return Out{}, fc.Start("other", nil) // want `^client call \(\*flowclient\.Client\)\.Start in flow handler flowClient`
}

// viaHelper reaches a go statement through a helper of the same package.
func viaHelper(ctx *flow.Context, in In) (Out, error) {
	spawn()
	return Out{}, nil
}

func spawn() {
	go work() // want `^go statement in flow handler viaHelper \(via spawn\): use flow branches \(workflow\.Go\) instead$`
}

type svc struct{}

// viaChain reaches time.Sleep through two methods; spawn, checked already, is not
// reported again.
func viaChain(ctx *flow.Context, in In) (Out, error) {
	s := &svc{}
	s.first()
	spawn()
	return Out{}, nil
}

func (s *svc) first() { s.second() }

func (s svc) second() {
	time.Sleep(time.Millisecond) // want `^time\.Sleep in flow handler viaChain \(via \(\*svc\)\.first -> svc\.second\)`
}

// Handle is a method handler.
func (s *svc) Handle(ctx *flow.Context, in In) (Out, error) {
	_ = time.Now() // want `^time\.Now in flow handler \(\*svc\)\.Handle:`
	return Out{}, nil
}

// litInHandler has its violation inside a function literal.
func litInHandler(ctx *flow.Context, in In) (Out, error) {
	f := func() {
		_ = time.Now() // want `^time\.Now in flow handler litInHandler: use ctx\.Now\(\) instead$`
	}
	f()
	return Out{}, nil
}

// A handler given to Define as a function literal.
var Hello = flow.Define("hello", func(ctx *flow.Context, in In) (Out, error) {
	go work() // want `^go statement in flow handler func literal in var Hello \(bad\.go:\d+\): use flow branches`
	litHelper()
	return Out{}, nil
})

func litHelper() {
	_ = time.Now() // want `^time\.Now in flow handler func literal in var Hello \(bad\.go:\d+\) \(via litHelper\):`
}

// branches passes branch funcs, checked as part of the handler they are written in.
func branches(ctx *flow.Context, in In) (Out, error) {
	err := flow.Parallel(ctx, func(c *flow.Context) error {
		time.Sleep(time.Second) // want `^time\.Sleep in flow handler branches:`
		return nil
	})
	return Out{}, err
}

// branch is a branch func declared on its own.
func branch(ctx *flow.Context) error {
	select {} // want `^select statement in flow handler branch:`
}

// item is an item func.
func item(ctx *flow.Context, i int, name string) (string, error) {
	for range map[int]bool{} { // want `^range over map in flow handler item:`
	}
	return name, nil
}

// outer calls another handler, which is checked as a handler of its own.
func outer(ctx *flow.Context, in In) (Out, error) {
	return Out{}, branchHelper(ctx)
}

func branchHelper(ctx *flow.Context) error {
	time.Sleep(time.Second) // want `^time\.Sleep in flow handler branchHelper:`
	return nil
}

// Ctx is an alias: a handler is recognised by its type.
type Ctx = flow.Context

func aliased(c *Ctx, in In) (Out, error) {
	go work() // want `^go statement in flow handler aliased:`
	return Out{}, nil
}

func generic[T any](ctx *flow.Context, in T) (T, error) {
	genericHelper[T]()
	return in, nil
}

func genericHelper[T any]() {
	<-make(chan T) // want `^channel receive in flow handler generic \(via genericHelper\)` `^make\(chan\) in flow handler generic \(via genericHelper\)`
}

// trailing shows that a directive after code covers its own line only.
func trailing(ctx *flow.Context, in In) (Out, error) {
	x := 1         //flowvet:ignore
	_ = time.Now() // want `^time\.Now in flow handler trailing`
	_ = x
	//flowvet:ignorenot is not the directive
	_ = time.Now() // want `^time\.Now in flow handler trailing`
	return Out{}, nil
}
