package dev.fencing.fence.store;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The fence of a single service instance: one {@link AtomicReference} to a {@link FenceState} (token and grant) per
 * lock, advanced by compare-and-set. A check of the token in force is one volatile read (and a string comparison when
 * a grant is stored), so the holder's concurrent requests never contend; only an advance writes. The state is lost on
 * restart, when the fence accepts the first token it sees again: use {@link JdbcFenceStore} where that matters or
 * where several instances serve the same lock.
 */
public final class InMemoryFenceStore implements FenceStore {

  private final ConcurrentHashMap<String, AtomicReference<FenceState>> fences = new ConcurrentHashMap<>();

  /** As {@link #check(String, long, String, boolean)} without a grant. */
  @Override
  public Verdict check(String lock, long token, boolean strict) {
    return check(lock, token, null, strict);
  }

  @Override
  public Verdict check(String lock, long token, String grant, boolean strict) {
    AtomicReference<FenceState> seen = fence(lock);
    while (true) {
      FenceState current = seen.get();
      if (token < current.token() || (strict && token == current.token())) {
        return Verdict.stale(token, current.token());
      }
      if (token == current.token()) {
        return current.replayedBy(token, grant) ? Verdict.replayed(token) : Verdict.accepted(token);
      }
      if (seen.compareAndSet(current, new FenceState(token, grant))) {
        return Verdict.advanced(token);
      }
    }
  }

  @Override
  public long current(String lock) {
    return state(lock).token();
  }

  @Override
  public FenceState state(String lock) {
    AtomicReference<FenceState> seen = fences.get(lock);
    return seen == null ? FenceState.NONE : seen.get();
  }

  private AtomicReference<FenceState> fence(String lock) {
    AtomicReference<FenceState> seen = fences.get(lock);
    return seen != null ? seen : fences.computeIfAbsent(lock, k -> new AtomicReference<>(FenceState.NONE));
  }
}
