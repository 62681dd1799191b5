package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrAmbiguous: a session ID prefix matches more than one session.
var ErrAmbiguous = errors.New("ambiguous")

// ResolveSessionID turns what a user typed for a session, its full ID or
// a unique prefix of it (the short ID the REPL shows), into the full ID.
// A full ID wins even when it prefixes another. No match is ErrNotFound;
// several are ErrAmbiguous, with the matches in the error's text.
func ResolveSessionID(ctx context.Context, s Store, prefix string) (string, error) {
	prefix = strings.TrimSpace(prefix)
	if prefix == "" {
		return "", fmt.Errorf("session ID: empty: %w", ErrNotFound)
	}
	if sess, err := s.Session(ctx, prefix); err == nil {
		return sess.ID, nil
	} else if !errors.Is(err, ErrNotFound) {
		return "", err
	}
	all, err := s.Sessions(ctx, SessionQuery{Children: true})
	if err != nil {
		return "", err
	}
	var matches []string
	for _, sess := range all {
		if strings.HasPrefix(strings.ToLower(sess.ID), strings.ToLower(prefix)) {
			matches = append(matches, sess.ID)
		}
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("session %q: %w", prefix, ErrNotFound)
	case 1:
		return matches[0], nil
	}
	if len(matches) > 5 {
		matches = append(matches[:5], "…")
	}
	return "", fmt.Errorf("session ID prefix %q matches %s: %w", prefix, strings.Join(matches, ", "), ErrAmbiguous)
}
