package actors

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/odin-code/odin/internal/web"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// NameResearchRequest is the tool a specialist calls to ask the Research
// agent a question (seed 004's ResearchRequest).
const NameResearchRequest = "ResearchRequest"

// ResearchInput is the ResearchRequest tool's input.
type ResearchInput struct {
	Question string `json:"question" jsonschema:"Self-contained (library and version, exact error, API): the researcher sees nothing else"`
}

const researchDescription = "Ask the Research agent about external information (library or API docs, an error's known causes, an advisory, a best practice) when the answer is not in the repository; its report is the result. Answers are cached."

// researchTool returns the ResearchRequest tool of one specialist task: a
// call sends a *messages.ResearchRequest to the Orchestrator (parent) and
// waits, off the mailbox, for its *messages.ResearchAnswer, at most wait
// or until the task is cancelled.
func researchTool(system *actor.ActorSystem, parent *actor.PID, agent, taskID string, wait time.Duration) tool.Tool {
	return tool.New[ResearchInput](NameResearchRequest, tool.ClassWeb, researchDescription,
		func(ctx context.Context, _ *tool.Env, in ResearchInput) (tool.Result, error) {
			q := strings.TrimSpace(in.Question)
			if q == "" {
				return tool.Errorf("question is empty: say what to find out"), nil
			}
			fut := system.Root.RequestFuture(parent, &messages.ResearchRequest{TaskID: taskID, Agent: agent, Question: q}, wait)
			type outcome struct {
				v   any
				err error
			}
			ch := make(chan outcome, 1)
			go func() {
				v, err := fut.Result()
				ch <- outcome{v, err}
			}()
			var out outcome
			select {
			case <-ctx.Done():
				return tool.Errorf("research request cancelled: %v", ctx.Err()), nil
			case out = <-ch:
			}
			if out.err != nil {
				return tool.Errorf("the research request got no answer: %v", out.err), nil
			}
			ans, ok := out.v.(*messages.ResearchAnswer)
			switch {
			case !ok:
				return tool.Errorf("the research request got an unexpected reply %T", out.v), nil
			case ans.Error != "":
				return tool.Errorf("research failed: %s", ans.Error), nil
			}
			text := ans.Answer
			if ans.Cached {
				text = "(from the research cache)\n" + text
			}
			return tool.Result{Output: text}, nil
		})
}

// offersResearch reports whether an agent's declaration lists
// ResearchRequest (or allows every tool) and does not deny it.
func offersResearch(def *AgentDefinition) bool {
	for _, t := range def.DisallowedTools {
		if t == NameResearchRequest {
			return false
		}
	}
	for _, t := range def.Tools {
		if t == NameResearchRequest || t == "*" {
			return true
		}
	}
	return false
}

// researchCacheKey is the cache key of a question: case and spacing do not
// make a new question.
func researchCacheKey(question string) string {
	norm := strings.Join(strings.Fields(strings.ToLower(question)), " ")
	sum := sha256.Sum256([]byte(norm))
	return "research:v1:" + hex.EncodeToString(sum[:])
}

// cachedResearch is a cached answer with its lifetime.
type cachedResearch struct {
	Answer string        `json:"answer"`
	TTL    time.Duration `json:"ttl"`
}

// researchTTL is how long a research report stays fresh: the shortest
// lifetime of its sources' kinds (a security advisory 1h, general 24h,
// official documentation 7 days, as web.research_ttl sets them); a report
// without sources counts as general.
func (o *Orchestrator) researchTTL(raw json.RawMessage) time.Duration {
	cfg := o.deps.Config.Web.ResearchTTL
	var rr messages.ResearchResult
	_ = json.Unmarshal(raw, &rr)
	if len(rr.Sources) == 0 {
		return web.ResearchTTL("", cfg)
	}
	ttl := time.Duration(-1)
	for _, src := range rr.Sources {
		if d := web.ResearchTTL(src.Type, cfg); ttl < 0 || d < ttl {
			ttl = d
		}
	}
	return ttl
}

// researchCache is the session store's cache, else one in memory for the
// life of the Orchestrator.
func (o *Orchestrator) researchCache() web.Cache {
	if o.research == nil {
		if o.deps.Store != nil {
			o.research = web.StoreCache{S: o.deps.Store}
		} else {
			o.research = web.NewMemoryCache(64)
		}
	}
	return o.research
}

// onResearchRequest answers a specialist's research request: from the
// cache while fresh, else by running the agent with the researcher role
// and routing its report back to the asking run.
func (o *Orchestrator) onResearchRequest(c actor.Context, msg *messages.ResearchRequest) {
	sender := c.Sender()
	reply := func(c actor.Context, a *messages.ResearchAnswer) {
		if sender != nil {
			c.Send(sender, a)
		}
	}
	t := o.turn
	if t == nil || t.finished {
		reply(c, &messages.ResearchAnswer{Error: "no turn is running"})
		return
	}
	def, ok := o.deps.Roster.ByRole(RoleResearcher)
	if !ok {
		reply(c, &messages.ResearchAnswer{Error: "no agent has the researcher role (the research agent is disabled)"})
		return
	}
	cache, key, now := o.researchCache(), researchCacheKey(msg.Question), o.deps.now()
	offMailbox(c, t.ctx, t.id, nil, func(ctx context.Context) *cachedResearch {
		raw, at, ok, err := cache.Get(ctx, key)
		if err != nil || !ok {
			return nil
		}
		var hit cachedResearch
		if json.Unmarshal(raw, &hit) != nil || now.Sub(at) >= hit.TTL {
			return nil
		}
		return &hit
	}, func(c actor.Context, hit *cachedResearch) {
		if hit != nil {
			reply(c, &messages.ResearchAnswer{Answer: hit.Answer, Cached: true})
			return
		}
		brief := fmt.Sprintf("The %s specialist, working on a task of this session, asks:\n\n%s\n\nResearch it and report what you found, with sources.", msg.Agent, msg.Question)
		o.spawnTask(c, def, "research for "+msg.Agent, brief, def.Timeout, "", func(c actor.Context, r *messages.Report) {
			answer := reportForModel(r, "")
			if r.Status != messages.ReportOK {
				reply(c, &messages.ResearchAnswer{Error: answer})
				return
			}
			value, err := json.Marshal(cachedResearch{Answer: answer, TTL: o.researchTTL(r.Result)})
			if err != nil {
				reply(c, &messages.ResearchAnswer{Answer: answer})
				return
			}
			at := o.deps.now()
			// The answer goes out once it is cached: the asking run may
			// ask the same question at once, and must get the cached
			// answer, not a second research run.
			offMailbox(c, context.WithoutCancel(t.ctx), t.id, nil, func(ctx context.Context) error {
				ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				return cache.Put(ctx, key, value, at)
			}, func(c actor.Context, _ error) {
				reply(c, &messages.ResearchAnswer{Answer: answer})
			})
		})
	})
}
