// Package flowlink carries the parts of package flow that package flowclient needs and
// that are not public API: the start planning and the catalog reading the worker shares
// with the client (triggered, once and scheduled starts are planned as Client.Start plans
// them), and a few checks. Package flow sets the functions when it is initialised;
// flowclient imports flow, so they are set before flowclient uses them. Parameters typed
// any carry flow's types (flowlink cannot import flow, which imports it).
package flowlink
