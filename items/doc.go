// Package items defines the lists a fan-out runs over: an Item, and the Provider a worker
// registers (flow.WorkerOptions.ItemProviders) to list them. A handler reads a list with
// ctx.Items (flow.Context.Items) and runs over it with flow.ForEach; a declarative
// definition names the provider in a foreach node (`provider:`).
package items
