// Package approve holds what a permission check decides and how a human
// answers it: a Verdict (Allow, Ask or Deny, with the Findings and the Rule
// behind each), the Denial returned to the model, the Approver interface
// with its headless, session-memory (Memory) and event-bus (BusApprover)
// implementations. Memory and BusApprover are safe for concurrent use.
package approve
