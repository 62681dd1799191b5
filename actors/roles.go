package actors

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/web"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// Role is an agent's part in the quality-gate pipeline. The gates find
// the agent that plays a part by its role, never by its name, so that a
// custom agent can take the part of a built-in one.
type Role string

// Gate roles. Each fixes the Report schema its holder must use, because
// the gate reads that structured result.
const (
	RoleNone Role = ""
	// RoleReviewer reviews a change set; its findings decide the fix rounds.
	RoleReviewer Role = "reviewer"
	// RoleTester reruns the tests after a failing test report.
	RoleTester Role = "tester"
	// RoleFixer changes the code to fix what a gate found.
	RoleFixer Role = "fixer"
	// RoleDiagnostician explains failing QA checks.
	RoleDiagnostician Role = "diagnostician"
	// RoleResearcher answers the research requests of the other agents.
	RoleResearcher Role = "researcher"
)

// roleReport is the Report schema each role requires.
var roleReport = map[Role]string{
	RoleReviewer:      "review",
	RoleTester:        "test",
	RoleFixer:         "code",
	RoleDiagnostician: "qa",
	RoleResearcher:    "research",
}

// Roles lists the gate roles in pipeline order.
func Roles() []Role {
	return []Role{RoleReviewer, RoleTester, RoleFixer, RoleDiagnostician, RoleResearcher}
}

// reportContext is what a schema's finalizer may use to complete a result
// from facts instead of the model's word: the change tracker and the files
// the task touched.
type reportContext struct {
	root    string
	tracker ChangeTracker
	files   []string
	// lint is what the pre-report lint step ran (Code), nil if nothing.
	lint *messages.LintReport
}

// reportSchema is one kind of Report: the tool whose input schema is the
// result type, and what Odin fills in or corrects before the result leaves
// the specialist.
type reportSchema struct {
	tool func() tool.Tool
	// finalize may replace fields of the typed result (the value the
	// Report tool's Meta holds); nil leaves it as reported.
	finalize func(rc reportContext, result any) any
	// testsFailing reads whether a result of this schema says tests fail;
	// nil for schemas that do not report tests.
	testsFailing func(raw json.RawMessage) (bool, bool)
}

// reportSchemas are the Report kinds by name (config.ReportKinds).
var reportSchemas = map[string]reportSchema{
	"generic": {tool: func() tool.Tool { return reportTool[messages.GenericResult]("a short structured result") }},
	"search":  {tool: func() tool.Tool { return reportTool[messages.SearchResult]("your findings") }},
	"research": {tool: func() tool.Tool { return reportTool[messages.ResearchResult]("your research") },
		finalize: func(_ reportContext, result any) any {
			rr, ok := result.(messages.ResearchResult)
			if !ok {
				return result
			}
			// A source's kind and reliability follow the seed's source
			// priority, decided from its URL, not from the model's opinion.
			for i := range rr.Sources {
				rr.Sources[i].Type, rr.Sources[i].Reliability = web.ClassifySource(rr.Sources[i].URL)
			}
			return rr
		}},
	"code": {tool: func() tool.Tool {
		return reportTool[messages.CodeResult]("the change you made", odinFills("files_modified", "files_created", "lint"))
	},
		finalize: func(rc reportContext, result any) any {
			cr, ok := result.(messages.CodeResult)
			if !ok {
				return result
			}
			if rc.tracker != nil {
				cr.FilesModified, cr.FilesCreated = rc.tracker.FileChanges(rc.files)
			}
			cr.Lint = rc.lint
			if rc.lint != nil {
				cr.LintPassed = rc.lint.Clean
			}
			return cr
		}},
	"review": {tool: func() tool.Tool {
		return reportTool[messages.ReviewResult]("your review", tool.WithSchema(severityEnum))
	}},
	"test": {tool: func() tool.Tool { return reportTool[messages.TestResult]("the test results") },
		testsFailing: func(raw json.RawMessage) (bool, bool) {
			var tr messages.TestResult
			if raw == nil || json.Unmarshal(raw, &tr) != nil {
				return false, false
			}
			return tr.Failed > 0, true
		}},
	"docs": {tool: func() tool.Tool { return reportTool[messages.DocsResult]("the documentation change") },
		finalize: func(rc reportContext, result any) any {
			dr, ok := result.(messages.DocsResult)
			if !ok || len(dr.FilesUpdated) > 0 {
				return result
			}
			dr.FilesUpdated = make([]string, len(rc.files))
			for i, f := range rc.files {
				dr.FilesUpdated[i] = relPath(rc.root, f)
			}
			return dr
		}},
	"qa": {tool: func() tool.Tool {
		return reportTool[messages.QAResult]("the QA verdict", odinFills("criteria", "coverage"))
	}},
	"init": {tool: func() tool.Tool {
		return reportTool[messages.InitResult]("the ODIN.md sections", odinFills("mode", "path", "token_count", "token_budget", "changes_from_previous", "sections[].token_count"))
	}},
}

// schema returns the agent's Report schema (generic when it names none).
func (a *AgentDefinition) schema() reportSchema {
	if s, ok := reportSchemas[a.Report]; ok {
		return s
	}
	return reportSchemas["generic"]
}

// finalizeReport completes a reported result with the facts its schema
// takes from Odin rather than from the model.
func (a *AgentDefinition) finalizeReport(rc reportContext, result any) any {
	if f := a.schema().finalize; f != nil {
		return f(rc, result)
	}
	return result
}

// testsFailing reads a report of this agent: ok is false when its schema
// does not report tests or the result does not decode.
func (a *AgentDefinition) testsFailing(r *messages.Report) (failing, ok bool) {
	f := a.schema().testsFailing
	if f == nil || r.Status != messages.ReportOK {
		return false, false
	}
	return f(r.Result)
}

// ByRole returns the agent that plays role in the gates.
func (r *Roster) ByRole(role Role) (*AgentDefinition, bool) {
	a, ok := r.byRole[role]
	return a, ok
}

// parseRole reads a role key: "none" and "" are RoleNone, explicit says
// whether the key was set.
func parseRole(s string) (role Role, explicit bool, err error) {
	switch s {
	case "":
		return RoleNone, false, nil
	case "none":
		return RoleNone, true, nil
	}
	for _, r := range Roles() {
		if string(r) == s {
			return r, true, nil
		}
	}
	return RoleNone, false, fmt.Errorf("unknown role %q (want reviewer, tester, fixer, diagnostician, researcher or none)", s)
}

// applyRoleReport sets an entry's role and Report schema from its keys,
// checking that the schema is the one the role requires.
func applyRoleReport(a *AgentDefinition, role, report string, rerr func(key, problem string) error) error {
	r, explicit, err := parseRole(role)
	if err != nil {
		return rerr("role", err.Error())
	}
	if explicit {
		a.Role, a.roleExplicit = r, true
	}
	if report != "" {
		if _, ok := reportSchemas[report]; !ok {
			return rerr("report", fmt.Sprintf("unknown report schema %q (want one of %s)", report, strings.Join(reportKinds(), ", ")))
		}
		a.Report = report
	}
	if want, ok := roleReport[a.Role]; ok {
		switch {
		case report == "" || a.Report == "":
			a.Report = want
		case a.Report != want:
			key := "report"
			if report == "" {
				key = "role"
			}
			return rerr(key, fmt.Sprintf("the %s role reports with the %s schema (the gate reads it), not %s", a.Role, want, a.Report))
		}
	}
	return nil
}

// resolveRoles gives each role one holder. An agent that declared a role
// (in odin.yaml or an agent file) takes it from the built-in that holds it
// by default, with a warning; two agents declaring the same role is an
// error naming both, since either choice could silently drop the gate the
// user meant.
func resolveRoles(agents []*AgentDefinition) (map[Role]*AgentDefinition, []string, error) {
	byRole := map[Role]*AgentDefinition{}
	var warnings []string
	sorted := append([]*AgentDefinition(nil), agents...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, a := range sorted {
		if a.Role == RoleNone {
			continue
		}
		prev, held := byRole[a.Role]
		switch {
		case !held:
			byRole[a.Role] = a
		case prev.roleExplicit && a.roleExplicit:
			return nil, nil, a.rosterErr("role", fmt.Sprintf("the %s role is also declared by agent %s (%s); give it to one agent", a.Role, prev.Name, prev.where("role")))
		case a.roleExplicit:
			prev.Role = RoleNone
			byRole[a.Role] = a
			warnings = append(warnings, fmt.Sprintf("%s: agent %s takes the %s role from the built-in %s agent", a.where("role"), a.Name, a.Role, prev.Name))
		default:
			a.Role = RoleNone
			warnings = append(warnings, fmt.Sprintf("%s: agent %s takes the %s role from the built-in %s agent", sourceFile(prev), prev.Name, prev.Role, a.Name))
		}
	}
	return byRole, warnings, nil
}

// sourceFile is the file an entry comes from ("odin.yaml" for an
// override of a built-in).
func sourceFile(a *AgentDefinition) string {
	if i := strings.Index(a.Source, "+"); i >= 0 {
		return a.Source[i+1:]
	}
	return a.Source
}

func reportKinds() []string {
	out := make([]string, 0, len(reportSchemas))
	for k := range reportSchemas {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// definitionFields are seed 001's agent definition keys, as odin.yaml and
// agent files both give them.
type definitionFields struct {
	role, report, permissionMode, criticalReminder, color string
	skills                                                []string
	sandbox                                               config.AgentSandbox
}

// applyDefinitionFields checks and sets the definition fields of a roster
// entry; rerr names the file and key of a bad value.
func applyDefinitionFields(a *AgentDefinition, f definitionFields, rerr func(key, problem string) error) error {
	if err := applyRoleReport(a, f.role, f.report, rerr); err != nil {
		return err
	}
	if f.permissionMode != "" {
		m, err := messages.ParseMode(f.permissionMode)
		if err != nil || string(m) != f.permissionMode {
			return rerr("permission_mode", fmt.Sprintf("invalid mode %q (want ask, plan or edit)", f.permissionMode))
		}
		a.PermissionMode = m
	}
	if f.criticalReminder != "" {
		a.CriticalReminder = strings.TrimSpace(f.criticalReminder)
	}
	if f.color != "" {
		if !config.ValidColor(f.color) {
			return rerr("color", fmt.Sprintf("unknown colour %q (want one of %s or #rrggbb)", f.color, strings.Join(config.AgentColors(), ", ")))
		}
		a.Color = strings.ToLower(f.color)
	}
	if f.skills != nil {
		for _, sk := range f.skills {
			if sk != "*" && !agentName().MatchString(sk) {
				return rerr("skills", fmt.Sprintf("invalid skill name %q: use lower-case letters, digits, '-' and '_'", sk))
			}
		}
		a.Skills = append([]string(nil), f.skills...)
	}
	switch f.sandbox.Network {
	case "", "on", "off":
	default:
		return rerr("sandbox.network", fmt.Sprintf("want on or off (got %q)", f.sandbox.Network))
	}
	for _, d := range f.sandbox.AllowedDomains {
		if strings.TrimSpace(d) == "" || strings.ContainsAny(d, " /\\\t") {
			return rerr("sandbox.allowed_domains", fmt.Sprintf("%q is not a host name (use example.com or *.example.com)", d))
		}
	}
	if f.sandbox.Network != "" {
		a.Sandbox.Network = f.sandbox.Network
	}
	if f.sandbox.AllowedDomains != nil {
		a.Sandbox.AllowedDomains = append([]string(nil), f.sandbox.AllowedDomains...)
	}
	for _, s := range f.sandbox.AllowUnixSockets {
		if !filepath.IsAbs(s) || filepath.Clean(s) == "/" || strings.ContainsAny(s, "*?[") {
			return rerr("sandbox.allow_unix_sockets", fmt.Sprintf("%q is not the absolute path of a unix socket (use e.g. /var/run/docker.sock)", s))
		}
	}
	if f.sandbox.AllowUnixSockets != nil {
		a.Sandbox.AllowUnixSockets = append([]string(nil), f.sandbox.AllowUnixSockets...)
	}
	return nil
}

// EffectiveMode is the mode an agent works in for a message in mode: the
// more restrictive of the two, so that an agent capped at plan stays
// read-only in an edit turn.
func EffectiveMode(def *AgentDefinition, mode messages.Mode) messages.Mode {
	if def == nil || def.PermissionMode == "" {
		return mode
	}
	rank := func(m messages.Mode) int {
		switch m {
		case messages.ModeAsk:
			return 0
		case messages.ModePlan:
			return 1
		}
		return 2
	}
	if rank(def.PermissionMode) < rank(mode) {
		return def.PermissionMode
	}
	return mode
}
