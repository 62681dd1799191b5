package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/internal/changeset"
	"github.com/odin-code/odin/internal/checkpoint"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/present"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/term"
)

// Rewind takes a session back to the moment just before one of the user's
// messages: the files (every change set made since, restored newest first,
// as odin undo restores one) and the conversation (the messages from that
// one on are hidden from the model and the transcript, never deleted: they
// stay in the store and in exports, after a marker saying when and where
// the session was rewound).
//
// The conversation the model sees is what store.Messages returns: the
// history from the session's summary message on. A conversation rewind
// appends, in one transaction, the marker (before the new cut, so the
// model never sees it), a copy of the first message kept as the new
// summary message, and copies of the rest that is kept (their original
// times kept, so the file checkpoints still line up with them).
//
// Crash safety: before anything changes, a journal naming the change sets
// to restore and the marker to write is stored; each step updates it. An
// interrupted rewind (a kill, a conflict) is finished by the next
// `odin rewind` of the session, or reported when it cannot be.

// rewindScope says what a rewind restores.
type rewindScope struct{ code, conversation bool }

func (s rewindScope) String() string {
	switch {
	case s.code && s.conversation:
		return "code and conversation"
	case s.code:
		return "code"
	}
	return "conversation"
}

// rewindJournal is the state of one rewind, stored in the store's cache
// under rewindKey before the rewind changes anything.
type rewindJournal struct {
	Session      string `json:"session"`
	N            int    `json:"n"`
	Seq          int64  `json:"seq"`
	Text         string `json:"text"`
	Code         bool   `json:"code"`
	Conversation bool   `json:"conversation"`
	// Checkpoints are the change sets to restore, newest first; Restored
	// counts those done.
	Checkpoints []string `json:"checkpoints"`
	Restored    int      `json:"restored"`
	// Marker is the ID of the rewound-at marker message; LastSeq the
	// session's last message when the rewind began (a session that went
	// on after an interrupted rewind is not rewound blindly).
	Marker           string    `json:"marker"`
	LastSeq          int64     `json:"last_seq"`
	ConversationDone bool      `json:"conversation_done"`
	Done             bool      `json:"done"`
	Started          time.Time `json:"started"`
}

// errWentOn: the session has messages the interrupted rewind did not see.
var errWentOn = errors.New("the session went on after the rewind was interrupted")

func rewindKey(session string) string { return "odin/rewind-journal/" + session }

func loadRewindJournal(ctx context.Context, st store.Store, session string) (*rewindJournal, error) {
	raw, _, ok, err := st.CacheGet(ctx, rewindKey(session))
	if err != nil || !ok || len(raw) == 0 {
		return nil, err
	}
	var j rewindJournal
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("rewind journal of %s: %w", session, err)
	}
	if j.Done {
		return nil, nil
	}
	return &j, nil
}

func (j *rewindJournal) save(ctx context.Context, st store.Store) error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if err := st.CachePut(ctx, rewindKey(j.Session), data, time.Time{}); err != nil {
		return fmt.Errorf("rewind journal: %w", err)
	}
	return nil
}

// rewindPoints are the session's user messages as the model sees them now.
func rewindPoints(ctx context.Context, st store.Store, session string) ([]actors.RewindPoint, []store.Message, error) {
	msgs, err := st.Messages(ctx, session)
	if err != nil {
		return nil, nil, err
	}
	return actors.RewindPoints(msgs), msgs, nil
}

// rewindList renders the picker's list: each user message with its number.
func rewindList(points []actors.RewindPoint) string {
	if len(points) == 0 {
		return "No messages to rewind to in this session yet."
	}
	var b strings.Builder
	b.WriteString("Messages of this session (rewinding to one restores the state just before it was sent):\n")
	for _, p := range points {
		text := firstLine(p.Text)
		if r := []rune(text); len(r) > 70 {
			text = string(r[:69]) + "…"
		}
		fmt.Fprintf(&b, "%3d  %s  %s\n", p.N, p.At.Local().Format("01-02 15:04"), text)
	}
	return strings.TrimRight(b.String(), "\n")
}

// rewind takes session back to just before its n-th user message. The
// caller holds no lease on the session: rewind takes it (a session
// running in another process is refused) and gives it back.
func (a *app) rewind(ctx context.Context, session string, n int, scope rewindScope, force bool) (string, error) {
	st, err := a.openStore(ctx)
	if err != nil {
		return "", err
	}
	sess, err := st.Session(ctx, session)
	if err != nil {
		return "", err
	}
	if sess.Project != a.root {
		// Its change sets and the roots files are restored beneath are
		// the project's: rewinding from elsewhere would rewind the
		// conversation and miss the files.
		return "", fmt.Errorf("session %s belongs to the project %s, not %s: run the rewind there (or with --dir)", shortID(session), sess.Project, a.root)
	}
	lease, err := a.takeLease(session)
	if err != nil {
		return "", err
	}
	defer func() { _ = lease.Release() }()
	if j, err := loadRewindJournal(ctx, st, session); err != nil {
		return "", err
	} else if j != nil {
		msg, err := a.finishRewind(ctx, st, j, force)
		if errors.Is(err, errWentOn) {
			// Reported, and closed: it cannot be finished, and must not
			// block the rewinds asked for from now on.
			j.Done = true
			if serr := j.save(context.WithoutCancel(ctx), st); serr != nil {
				return "", errors.Join(err, serr)
			}
			return "", fmt.Errorf("an earlier rewind of this session (to message %d, %q) was interrupted: %w; its journal is closed, so rewind again", j.N, firstLine(j.Text), err)
		}
		if err != nil {
			return "", fmt.Errorf("an earlier rewind of this session (to message %d, %q) was interrupted and cannot be finished yet: %w", j.N, firstLine(j.Text), err)
		}
		return "An earlier rewind of this session was interrupted; it is finished now.\n" + msg +
			"\nThe messages are numbered anew after a rewind: list them with `odin rewind " + shortID(session) + "` before rewinding again.", nil
	}
	points, msgs, err := rewindPoints(ctx, st, session)
	if err != nil {
		return "", err
	}
	if n < 1 || n > len(points) {
		return "", fmt.Errorf("no message %d to rewind to: the session has %s in its conversation", n, present.Plural(len(points), "user message"))
	}
	target := points[n-1]
	j := &rewindJournal{Session: session, N: n, Seq: target.Seq, Text: target.Text, Code: scope.code, Conversation: scope.conversation,
		Marker: newID(), Started: time.Now().UTC()}
	if len(msgs) > 0 {
		j.LastSeq = msgs[len(msgs)-1].Seq
	}
	if scope.code {
		cps, err := st.Checkpoints(ctx, a.root)
		if err != nil {
			return "", err
		}
		// Newest first, as Checkpoints lists them: each is restored onto
		// the state the next newer one left.
		for _, c := range cps {
			if c.SessionID == session && c.RestoredAt.IsZero() && c.Files > 0 && !c.CreatedAt.Before(target.At) {
				j.Checkpoints = append(j.Checkpoints, c.ID)
			}
		}
	}
	if err := j.save(ctx, st); err != nil {
		return "", err
	}
	msg, err := a.finishRewind(ctx, st, j, force)
	var conflict *checkpoint.ConflictError
	var typed *checkpoint.TypeChangedError
	if err != nil && j.Restored == 0 && (errors.As(err, &conflict) || errors.As(err, &typed)) {
		// Restore touches nothing when it refuses: the first change set
		// conflicts, nothing changed and nothing is left to finish.
		j.Done = true
		if serr := j.save(context.WithoutCancel(ctx), st); serr != nil {
			err = errors.Join(err, serr)
		}
	}
	return msg, err
}

// finishRewind runs what is left of j's steps: the change sets not yet
// restored, then the conversation. Every step is idempotent, so a rewind
// killed anywhere is finished by running it again.
func (a *app) finishRewind(ctx context.Context, st store.Store, j *rewindJournal, force bool) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Rewound the %s to just before message %d: %q", rewindScope{j.Code, j.Conversation}, j.N, firstLine(j.Text))
	if j.Code {
		if len(j.Checkpoints) == 0 {
			b.WriteString("\nNo file was changed since that message; no file to restore.")
		}
		for j.Restored < len(j.Checkpoints) {
			id := j.Checkpoints[j.Restored]
			lines, err := a.restoreCheckpoint(ctx, st, id, force)
			if err != nil {
				return "", fmt.Errorf("restored %d of %d change set(s); change set %s: %w", j.Restored, len(j.Checkpoints), id, err)
			}
			for _, l := range lines {
				b.WriteString("\n  " + l)
			}
			j.Restored++
			if err := j.save(ctx, st); err != nil {
				return "", err
			}
		}
	}
	if j.Conversation && !j.ConversationDone {
		if err := a.rewindConversation(ctx, st, j); err != nil {
			return "", err
		}
		j.ConversationDone = true
		b.WriteString("\nThe conversation goes on from before that message; the later messages are hidden from the model and the transcript, and kept in the store (odin sessions export shows them).")
	}
	j.Done = true
	if err := j.save(ctx, st); err != nil {
		return "", err
	}
	return b.String(), nil
}

// restoreCheckpoint restores one change set as odin undo does (refusing
// files changed by someone else unless force) and marks it restored.
func (a *app) restoreCheckpoint(ctx context.Context, st store.Store, id string, force bool) ([]string, error) {
	cp, err := st.Checkpoint(ctx, id)
	if err != nil {
		return nil, err
	}
	snaps, err := st.Snapshots(ctx, id)
	if err != nil {
		return nil, err
	}
	files := make([]checkpoint.File, len(snaps))
	for i, s := range snaps {
		files[i] = checkpoint.File{Path: s.Path, Existed: s.Existed, Mode: s.Mode, Content: s.Content, AfterHashes: checkpoint.SplitHashes(s.HashAfter)}
	}
	outcomes, err := checkpoint.Restore(files, a.undoRoots(), force)
	if err != nil {
		return nil, err
	}
	if cp.RestoredAt.IsZero() {
		if err := st.MarkRestored(ctx, id, time.Time{}); err != nil {
			return nil, err
		}
	}
	var out []string
	for _, o := range outcomes {
		action := o.Action
		if o.Reason != "" {
			action += ": " + o.Reason
		}
		out = append(out, fmt.Sprintf("%s %s (%s)", changeset.RelPath(a.root, o.Path), action, firstLine(cp.Label)))
	}
	return out, nil
}

// rewindConversation hides the messages from j.Seq on. It is one
// transaction where the store has them; a marker already written means an
// interrupted run got that far, and nothing is written twice.
func (a *app) rewindConversation(ctx context.Context, st store.Store, j *rewindJournal) error {
	all, err := st.AllMessages(ctx, j.Session)
	if err != nil {
		return err
	}
	for _, m := range all {
		if m.ID == j.Marker {
			return nil
		}
	}
	if n := len(all); n > 0 && all[n-1].Seq != j.LastSeq {
		return fmt.Errorf("%w (its last message is no longer #%d); its conversation was not rewound", errWentOn, j.LastSeq)
	}
	view, err := st.Messages(ctx, j.Session)
	if err != nil {
		return err
	}
	cut := -1
	for i, m := range view {
		if m.Seq == j.Seq {
			cut = i
			break
		}
	}
	if cut < 0 {
		return fmt.Errorf("message %d (#%d) is no longer in the conversation", j.N, j.Seq)
	}
	kept := view[:cut]
	now := time.Now().UTC()
	marker := store.Message{ID: j.Marker, SessionID: j.Session, Role: llm.RoleSystem, CreatedAt: now,
		Parts: []store.Part{store.TextPart{Text: fmt.Sprintf("[Odin] Rewound at %s to just before message %d (#%d); the messages from #%d to #%d are hidden from the model and the transcript.",
			now.Format(time.RFC3339), j.N, j.Seq, j.Seq, j.LastSeq)}}}
	first := store.Message{SessionID: j.Session, Role: llm.RoleUser, CreatedAt: now,
		Parts: []store.Part{store.TextPart{Text: actors.RewindNotePrefix + " to its start; nothing said before this note is part of it."}}}
	if len(kept) > 0 {
		first, kept = copyMessage(kept[0]), kept[1:]
	}
	write := func(ctx context.Context) error {
		if _, err := st.AppendMessage(ctx, marker); err != nil {
			return err
		}
		if _, err := st.AppendSummary(ctx, first); err != nil {
			return err
		}
		for _, m := range kept {
			if _, err := st.AppendMessage(ctx, copyMessage(m)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := store.InBatch(ctx, st, write); err != nil {
		return fmt.Errorf("rewind the conversation: %w", err)
	}
	return nil
}

// copyMessage is m as a new message of the same session: a fresh ID and
// sequence number, the same role, model, time and parts.
func copyMessage(m store.Message) store.Message {
	return store.Message{SessionID: m.SessionID, Role: m.Role, Model: m.Model, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
		Parts: append([]store.Part(nil), m.Parts...)}
}

func newRewindCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	var code, conversation, force bool
	cmd := &cobra.Command{
		Use:   "rewind ID|PREFIX [N]",
		Short: "Take a session back to just before one of its messages (files and conversation)",
		Long: "Without N, list the session's messages with their numbers. With N, restore the state just before message N was sent:\n" +
			"the files every later change set touched (exactly, as odin undo restores them) and the conversation (the later\n" +
			"messages are hidden from the model and the transcript, and kept in the store for export). --code or\n" +
			"--conversation restores only that part. An interrupted rewind is finished by the next odin rewind of the session.",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(_ *cobra.Command, args []string) error {
			if code && conversation {
				return usageError("--code and --conversation together are the default; give one of them, or neither")
			}
			scope := rewindScope{code: !conversation, conversation: !code}
			return withStore(g, func(ctx context.Context, a *app, st store.Store) error {
				id, err := resolveSessionCode(ctx, st, args[0], exitFailed)
				if err != nil {
					return err
				}
				s, err := st.Session(ctx, id)
				if err != nil {
					return err
				}
				if s.ParentID != "" {
					return usageError("session %s is a specialist's transcript; rewind its parent %s", s.ID, s.ParentID)
				}
				if len(args) == 1 {
					points, _, err := rewindPoints(ctx, st, id)
					if err != nil {
						return err
					}
					fmt.Fprintln(stdout, rewindList(points))
					if j, err := loadRewindJournal(ctx, st, id); err == nil && j != nil {
						fmt.Fprintf(stdout, "\nA rewind to message %d (%q) was interrupted: `odin rewind %s %d` finishes it.\n", j.N, firstLine(j.Text), shortID(id), j.N)
					}
					return nil
				}
				n, err := strconv.Atoi(args[1])
				if err != nil {
					return usageError("N must be a message number (odin rewind %s lists them): %q", shortID(id), args[1])
				}
				msg, err := a.rewind(ctx, id, n, scope, force)
				if err != nil {
					var exit *exitError
					if errors.As(err, &exit) {
						return err
					}
					return &exitError{code: exitFailed, err: err}
				}
				fmt.Fprintln(stdout, msg)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&code, "code", false, "restore only the files")
	cmd.Flags().BoolVar(&conversation, "conversation", false, "rewind only the conversation")
	cmd.Flags().BoolVar(&force, "force", false, "restore even files that changed after Odin's change")
	return cmd
}

// rewindCommand is /rewind: without arguments the picker (the session's
// messages, numbered); with N it rewinds the session the REPL is in. The
// session is closed first (its Orchestrator holds the conversation in
// memory and the lease), rewound in the store, and resumed.
func (r *repl) rewindCommand() term.Command {
	const usage = "/rewind [N [--code|--conversation] [--force]]"
	return term.Command{Name: "rewind", Usage: usage, Idle: true,
		Description: "go back to just before one of this session's messages: files and conversation (without N: pick from the list)",
		Run: func(ctx context.Context, args string) (term.Result, error) {
			cur := r.current()
			fields := strings.Fields(args)
			if len(fields) == 0 {
				st, err := r.a.openStore(ctx)
				if err != nil {
					return term.Result{}, err
				}
				points, _, err := rewindPoints(ctx, st, cur.ID())
				if err != nil {
					return term.Result{}, err
				}
				text := rewindList(points)
				if len(points) > 0 {
					text += "\n\n/rewind N goes back to just before message N (files and conversation; --code or --conversation for one of them)."
				}
				return term.Result{Text: "```\n" + text + "\n```"}, nil
			}
			n, err := strconv.Atoi(fields[0])
			if err != nil {
				return term.Result{}, fmt.Errorf("usage: %s", usage)
			}
			scope, force := rewindScope{code: true, conversation: true}, false
			for _, f := range fields[1:] {
				switch f {
				case "--code":
					scope.conversation = false
				case "--conversation":
					scope.code = false
				case "--force":
					force = true
				default:
					return term.Result{}, fmt.Errorf("usage: %s", usage)
				}
			}
			if !scope.code && !scope.conversation {
				return term.Result{}, fmt.Errorf("--code and --conversation together are the default; give one of them, or neither")
			}
			id := cur.ID()
			// A number that names no message is refused before the
			// session is closed for nothing.
			st, err := r.a.openStore(ctx)
			if err != nil {
				return term.Result{}, err
			}
			if points, _, err := rewindPoints(ctx, st, id); err != nil {
				return term.Result{}, err
			} else if j, _ := loadRewindJournal(ctx, st, id); j == nil && (n < 1 || n > len(points)) {
				return term.Result{}, fmt.Errorf("no message %d to rewind to: this session has %d (/rewind lists them)", n, len(points))
			}
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			err = cur.Close(cctx)
			cancel()
			if err != nil {
				return term.Result{}, fmt.Errorf("could not close the session to rewind it: %w", err)
			}
			msg, rerr := r.a.rewind(ctx, id, n, scope, force)
			// Resumed whatever the rewind did: the REPL's session was
			// closed for it.
			s, err := r.start(ctx, sessionOptions{Resume: id, Mode: string(r.mode)})
			if err != nil {
				return term.Result{}, errors.Join(rerr, fmt.Errorf("could not reopen session %s (odin -r %s continues it): %w", shortID(id), shortID(id), err))
			}
			if rerr != nil {
				return term.Result{Session: s, Text: "Rewind failed: " + rerr.Error()}, nil
			}
			return term.Result{Session: s, Text: msg}, nil
		}}
}
