package storage

import "time"

// DeadlineBookmarkLead is how long before a watch's deadline its last
// bookmark is sent (as Kubernetes' cacher does), so that a client whose watch
// times out can resume from a recent RV even when nothing it watches changed.
const DeadlineBookmarkLead = 2 * time.Second

// DeadlineBookmarkTime returns when a watch that allows bookmarks and ends at
// deadline gets its deadline bookmark: DeadlineBookmarkLead before it, or
// halfway for shorter watches.
func DeadlineBookmarkTime(now, deadline time.Time) time.Time {
	if at := deadline.Add(-DeadlineBookmarkLead); at.After(now) {
		return at
	}
	return now.Add(deadline.Sub(now) / 2)
}
