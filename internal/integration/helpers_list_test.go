package integration

import "go.temporal.io/api/workflowservice/v1"

func listRequest(query string) *workflowservice.ListWorkflowExecutionsRequest {
	return &workflowservice.ListWorkflowExecutionsRequest{Query: query, PageSize: 100}
}
