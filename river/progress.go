package riverjob

import (
	"context"
	"database/sql"
)

// Progress counts the generation jobs of a queue by how far they got.
type Progress struct {
	Queued    int // not sent yet, or waiting for a worker to send them
	Rendering int // sent: the service renders while the job snoozes
	Done      int // completed
	Failed    int // cancelled or discarded: the job's errors say why
}

// Progress counts the generation jobs of queue. It reads River's job table
// (river_job, in the connection's default schema) beside the store's.
func (s *Store) Progress(ctx context.Context, queue string) (Progress, error) {
	rows, err := s.db.QueryContext(ctx, s.d.Rebind(`SELECT j.state, g.id IS NOT NULL, count(*) FROM river_job j
		LEFT JOIN mediagen_river_generations g ON g.job_id = j.id
		WHERE j.kind = ? AND j.queue = ? GROUP BY j.state, g.id IS NOT NULL`), Kind, queue)
	if err != nil {
		return Progress{}, err
	}
	defer rows.Close()
	var p Progress
	for rows.Next() {
		var state string
		var sent sql.NullBool
		var n int
		if err := rows.Scan(&state, &sent, &n); err != nil {
			return Progress{}, err
		}
		switch {
		case state == "completed":
			p.Done += n
		case state == "cancelled" || state == "discarded":
			p.Failed += n
		case sent.Valid && sent.Bool:
			p.Rendering += n
		default:
			p.Queued += n
		}
	}
	return p, rows.Err()
}
