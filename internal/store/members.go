package store

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Member is one node of an Odin cluster as the members table holds it
// (issue 29): where its actor system listens, which grain kinds it hosts
// and when it last said it was alive.
type Member struct {
	Cluster string
	// ID is the node's actor system ID: a restarted node is a new member.
	ID        string
	Host      string
	Port      int
	Kinds     []string
	StartedAt time.Time
	// Heartbeat is the node's own clock at its last beat: nodes of one
	// cluster must keep their clocks within a fraction of the TTL.
	Heartbeat time.Time
}

// Membership is the members table. Both backends implement it; a cluster
// of processes on one host may share a SQLite file, a fleet shares a
// PostgreSQL database.
type Membership interface {
	// Heartbeat inserts m or refreshes its row (host, port, kinds and
	// heartbeat; started_at is kept from the first beat).
	Heartbeat(ctx context.Context, m Member) error
	// Members returns the members of cluster whose heartbeat is not before
	// since, ordered by ID.
	Members(ctx context.Context, cluster string, since time.Time) ([]Member, error)
	// LeaveCluster deletes the member's row (a graceful stop).
	LeaveCluster(ctx context.Context, cluster, id string) error
	// PruneMembers deletes the rows of cluster whose heartbeat is before
	// before, and says how many it deleted.
	PruneMembers(ctx context.Context, cluster string, before time.Time) (int64, error)
}

var _ Membership = (*SQLite)(nil)

// Heartbeat implements Membership.
func (s *SQLite) Heartbeat(ctx context.Context, m Member) error {
	if m.Cluster == "" || m.ID == "" || m.Host == "" || m.Port <= 0 {
		return fmt.Errorf("store: heartbeat: member needs cluster, id, host and port (got %q %q %q %d): %w", m.Cluster, m.ID, m.Host, m.Port, ErrInvalid)
	}
	for _, k := range m.Kinds {
		if k == "" || strings.Contains(k, ",") {
			return fmt.Errorf("store: heartbeat: kind %q: %w", k, ErrInvalid)
		}
	}
	beat := s.stamp(m.Heartbeat)
	started := beat
	if !m.StartedAt.IsZero() {
		started = m.StartedAt.UnixNano()
	}
	// Ahead of the sessions' queued writes: a beat later than the TTL
	// drops this live node from its cluster.
	ctx = urgent(ctx)
	err := s.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO cluster_members (cluster, id, host, port, kinds, started_at, heartbeat)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (cluster, id) DO UPDATE SET host = excluded.host, port = excluded.port,
				kinds = excluded.kinds, heartbeat = excluded.heartbeat`,
			m.Cluster, m.ID, m.Host, m.Port, strings.Join(m.Kinds, ","), started, beat)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: heartbeat: %w", err)
	}
	return nil
}

// memberConn is a SQLite store's read connection for the members table
// alone, opened on the first read: a node's view of its cluster must not
// wait among its sessions' reads for one of the shared read connections
// (database/sql hands a freed connection to a random waiter), or a node
// busy with a thousand turns saw its peers late. Heartbeats are writes
// and share the one writer connection, ahead of the queue (writeGate).
type memberConn struct {
	dsn  string
	once sync.Once
	db   *sql.DB
	err  error
}

func (m *memberConn) get() (*sql.DB, error) {
	m.once.Do(func() {
		m.db, m.err = sql.Open(driverName, m.dsn)
		if m.err == nil {
			m.db.SetMaxOpenConns(1)
			m.db.SetMaxIdleConns(1)
			m.db.SetConnMaxIdleTime(0)
		}
	})
	return m.db, m.err
}

// close closes the connection if it was opened.
func (m *memberConn) close() error {
	if m == nil {
		return nil
	}
	m.once.Do(func() { m.err = sql.ErrConnDone }) // a read after close opens nothing
	if m.db == nil {
		return nil
	}
	return m.db.Close()
}

// Members implements Membership.
func (s *SQLite) Members(ctx context.Context, cluster string, since time.Time) ([]Member, error) {
	db := s.r
	if s.members != nil {
		var err error
		if db, err = s.members.get(); err != nil {
			return nil, fmt.Errorf("store: members: %w", err)
		}
	}
	rows, err := db.QueryContext(ctx, `SELECT id, host, port, kinds, started_at, heartbeat FROM cluster_members
		WHERE cluster = ? AND heartbeat >= ? ORDER BY id`, cluster, since.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("store: members: %w", err)
	}
	defer rows.Close()
	var out []Member
	for rows.Next() {
		m := Member{Cluster: cluster}
		var kinds string
		var started, beat int64
		if err := rows.Scan(&m.ID, &m.Host, &m.Port, &kinds, &started, &beat); err != nil {
			return nil, fmt.Errorf("store: members: %w", err)
		}
		if kinds != "" {
			m.Kinds = strings.Split(kinds, ",")
			sort.Strings(m.Kinds)
		}
		m.StartedAt, m.Heartbeat = fromNanos(started), fromNanos(beat)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: members: %w", err)
	}
	return out, nil
}

// LeaveCluster implements Membership.
func (s *SQLite) LeaveCluster(ctx context.Context, cluster, id string) error {
	err := s.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM cluster_members WHERE cluster = ? AND id = ?`, cluster, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: leave cluster: %w", err)
	}
	return nil
}

// PruneMembers implements Membership.
func (s *SQLite) PruneMembers(ctx context.Context, cluster string, before time.Time) (int64, error) {
	var n int64
	err := s.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM cluster_members WHERE cluster = ? AND heartbeat < ?`, cluster, before.UnixNano())
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: prune members: %w", err)
	}
	return n, nil
}
