package robustness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// faultKind names one kind of injected failure.
type faultKind string

const (
	faultKillFollower   faultKind = "kill-follower"   // a follower's process dies, then restarts with its data
	faultKillLeader     faultKind = "kill-leader"     // the leader's process dies, then restarts
	faultClusterDown    faultKind = "cluster-down"    // every member dies for seconds, then all restart
	faultFreeze         faultKind = "freeze"          // etcd answers nothing while connections stay open
	faultCutConnections faultKind = "cut-connections" // one replica's connections to etcd are closed
	faultCompact        faultKind = "compact"         // etcd's history is compacted while lists page and watches resume
	faultRestartReplica faultKind = "restart-replica" // a cacher replica dies and restarts empty while etcd moves on
	faultPartition      faultKind = "partition"       // a member's peer traffic is blackholed (leader or follower)
)

// allFaults are the kinds a run cycles through.
var allFaults = []faultKind{faultKillFollower, faultCompact, faultFreeze, faultRestartReplica,
	faultKillLeader, faultCutConnections, faultClusterDown, faultPartition}

// faultRecord is one injected fault.
type faultRecord struct {
	Kind       faultKind
	Target     string
	Start, End time.Duration
	Err        string
}

// links are every link of the run (the replicas' and the history's):
// a member's death is every process losing its connections to it.
func (r *run) links() []*link {
	ls := []*link{r.histLink}
	for _, rep := range r.replicas {
		ls = append(ls, rep.link)
	}
	return ls
}

// injectFaults injects the kinds in a seeded order, cycling, with a pause
// between faults, until ctx is done and every kind was injected once;
// then it closes cycled.
func (r *run) injectFaults(ctx context.Context, cycled chan<- struct{}) {
	defer close(cycled)
	if len(r.cfg.Faults) == 0 {
		return
	}
	rng := rand.New(rand.NewPCG(r.cfg.Seed, 7))
	kinds := append([]faultKind(nil), r.cfg.Faults...)
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	// Faults injected after ctx is done (to complete the first cycle) run
	// in full.
	full := context.WithoutCancel(ctx)
	for i := 0; i < len(kinds) || ctx.Err() == nil; i++ {
		pause := r.cfg.FaultPause/2 + time.Duration(rng.Int64N(int64(r.cfg.FaultPause)))
		if i < len(kinds) {
			sleepCtx(full, pause)
		} else if sleepCtx(ctx, pause); ctx.Err() != nil {
			return
		}
		k := kinds[i%len(kinds)]
		f := faultRecord{Kind: k, Start: r.rec.since()}
		target, err := r.inject(full, rng, k)
		f.End, f.Target = r.rec.since(), target
		if err != nil {
			f.Err = err.Error()
		}
		r.mu.Lock()
		r.faults = append(r.faults, f)
		r.mu.Unlock()
	}
}

// inject injects one fault and repairs it before returning.
func (r *run) inject(ctx context.Context, rng *rand.Rand, k faultKind) (string, error) {
	hold := time.Duration(500+rng.IntN(1500)) * time.Millisecond
	switch k {
	case faultKillFollower, faultKillLeader:
		lead, err := cluster.WaitLeader(ctx)
		if err != nil {
			return "", err
		}
		m := lead
		if k == faultKillFollower {
			m = (lead + 1 + rng.IntN(2)) % 3
		}
		took, err := r.killMembers(ctx, []int{m}, hold)
		return cluster.Members[m].Name + took, err
	case faultClusterDown:
		took, err := r.killMembers(ctx, []int{0, 1, 2}, hold+time.Second)
		return "all members" + took, err
	case faultFreeze:
		for _, l := range r.links() {
			for _, p := range l.proxies {
				p.Freeze()
			}
		}
		sleepCtx(ctx, requestTimeout+hold)
		for _, l := range r.links() {
			for _, p := range l.proxies {
				p.Thaw()
			}
		}
		return "all members", nil
	case faultCutConnections:
		rep := r.replicas[rng.IntN(len(r.replicas))]
		for _, p := range rep.link.proxies {
			p.Kill()
		}
		sleepCtx(ctx, hold/4)
		var errs []error
		for _, p := range rep.link.proxies {
			errs = append(errs, p.Revive())
		}
		return rep.String(), errors.Join(errs...)
	case faultPartition:
		lead, err := cluster.WaitLeader(ctx)
		if err != nil {
			return "", err
		}
		m, role := lead, "leader"
		if rng.IntN(2) == 0 {
			m, role = (lead+1+rng.IntN(2))%3, "follower"
		}
		cluster.Partition(m)
		sleepCtx(ctx, requestTimeout+hold)
		cluster.Heal()
		return cluster.Members[m].Name + " (" + role + ")", nil
	case faultCompact:
		return r.compact(ctx, rng)
	case faultRestartReplica:
		rep := r.replicas[rng.IntN(len(r.replicas))]
		rep.kill()
		sleepCtx(ctx, hold)
		return rep.String(), rep.start()
	}
	return "", fmt.Errorf("unknown fault %q", k)
}

// killMembers kills members: every link's proxy to them first (the
// process's connections die with it), then the members; after hold it
// restarts them together (a member waits for a quorum) and opens the
// proxies again.
func (r *run) killMembers(ctx context.Context, ms []int, hold time.Duration) (string, error) {
	t0 := time.Now()
	for _, l := range r.links() {
		for _, m := range ms {
			l.proxies[m].Kill()
		}
	}
	// One after another: members stopped together each wait out etcd's
	// 7 s request timeout for their peer connections to drain, where one
	// stopped while its peers run is gone in about a second.
	for _, m := range ms {
		cluster.StopMember(m)
	}
	stopped := time.Since(t0)
	sleepCtx(context.WithoutCancel(ctx), hold)
	t1 := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(ms))
	for i, m := range ms {
		wg.Go(func() { errs[i] = cluster.RestartMember(m) })
	}
	wg.Wait()
	for _, l := range r.links() {
		for _, m := range ms {
			errs = append(errs, l.proxies[m].Revive())
		}
	}
	return fmt.Sprintf(" (stopped in %v, down %v, restarted in %v)", stopped.Round(time.Millisecond),
		hold.Round(time.Millisecond), time.Since(t1).Round(time.Millisecond)), errors.Join(errs...)
}

// compact compacts etcd a few revisions behind the newest acknowledged
// one, but never past what the history recorded (it must hold every
// revision it judges reads by).
func (r *run) compact(ctx context.Context, rng *rand.Rand) (string, error) {
	top := r.rec.maxRV.Load()
	if top < 10 {
		return "", nil
	}
	rev := top - uint64(rng.IntN(8))
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := r.hist.WaitFor(wctx, rev); err != nil {
		return "", err
	}
	r.compactRev.Store(rev)
	if err := cluster.Compact(wctx, int64(rev)); err != nil {
		return fmt.Sprintf("revision %d", rev), err
	}
	return fmt.Sprintf("revision %d", rev), nil
}
