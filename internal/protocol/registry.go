package protocol

// Kinds of catalog entries (core.WorkflowInfo.Kind).
const (
	// KindGoFlow is a flow defined in Go with flow.Define.
	KindGoFlow = "go"
	// KindYAMLFlow is a declarative definition (package flowdef) a worker loaded from a
	// file.
	KindYAMLFlow = "yaml"
)

// RegistryEntryName is the name of the catalog entry that carries the registries of the
// task queue's workers (core.RegistryInfo). It is not a flow: core.Catalog.Workflows
// never lists it.
const RegistryEntryName = "gateflow.registry"

// FallbackActionActivity is the activity name of a worker's fallback action
// (flow.Worker.RegisterFallbackAction): a definition's step whose action no activity is
// registered under runs it with an activities.ActionCall.
const FallbackActionActivity = "gateflow.action"

// ServiceQueue is the activity task queue of service name on taskQueue (service.Declare).
func ServiceQueue(taskQueue, name string) string { return taskQueue + "/svc/" + name }

// ServicesID is the workflow ID of the entity holding the services' state of taskQueue.
func ServicesID(taskQueue string) string { return CatalogID(taskQueue) + "/services" }
