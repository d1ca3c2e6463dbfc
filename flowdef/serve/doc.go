/*
Package serve serves a directory of declarative flow definitions (package flowdef) on a
gateflow worker, and reloads them while it runs.

	w := flow.NewWorker(tc, flow.WorkerOptions{TaskQueue: "gateflow"}, goFlows...)
	l, err := serve.Dir(w, "flows", serve.Options{Interp: []interp.Option{interp.DefaultModel("gpt-4o-mini")}})
	if err != nil {
		return err // every problem of every file, one per line
	}
	if err := w.Start(); err != nil { ... }
	go l.Watch(ctx, 0) // poll every 2s

# Loading

Dir reads every *.yaml, *.yml and *.json file of the directory, parses each and validates
it with flowdef.Validate against the worker's registry (Worker.Registry) plus the other
definitions of the directory, so a `call:` may name a sibling definition by its name. One
invalid file refuses them all: the error lists every problem of every file. Each
definition becomes an interpreted flow (interp.Live) added to the worker before it starts
(Worker.AddFlows), published in the catalog with kind yaml, its content hash and its file
as source (`flowctl flows` lists them).

Dir also adds the generic definition flow, interp.DefinitionFlowName
("gateflow.definition"; EnsureDefinitionFlow does it alone): it runs the definition its
input carries, so `flowctl start --file` runs a definition no worker loaded.

# Reloading

Watch polls the directory (no file system notifications: portable, and a poll every two
seconds costs nothing); Reload is one poll. What changed since the last poll:

  - an edited file that validates is Set on its Live: new runs use it, runs in progress
    keep the definition they started with (each run records its definition, see package
    interp); its catalog entry is republished with the new hash;
  - an edited file that does not validate is logged with every error and the last good
    version stays served;
  - a new file is served by its name at once, without restarting the worker: the
    loader adds its flow with Worker.AddFlows, which serves flows added after Start
    through the worker's dynamic workflow (Temporal takes a worker's registrations only
    before it starts) with the same run wrapper as a registered flow, and publishes it in
    the catalog; the loader logs "added". A file bringing back a removed definition
    serves it again at once;
  - a removed file (or a file renaming its definition) stops the definition for new runs:
    its catalog entry says so (WorkflowInfo.Removed, and its description), so
    Client.Start and flowctl refuse new starts and nothing starts; a run started another
    way (a raw client, a schedule) fails at once saying it was removed. Runs in progress
    go on. The catalog keeps the entry: entries are never deleted from a catalog.
*/
package serve
