package dev.fencing.fence.http;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The fence of a single service instance: one {@link AtomicLong} per lock, advanced by compare-and-set. A check of the
 * token in force is one volatile read, so the holder's concurrent requests never contend; only an advance writes. The
 * state is lost on restart, when the fence accepts the first token it sees again: use {@link JdbcFenceStore} where
 * that matters or where several instances serve the same lock.
 */
public final class InMemoryFenceStore implements FenceStore {

  private final ConcurrentHashMap<String, AtomicLong> fences = new ConcurrentHashMap<>();

  @Override
  public Verdict check(String lock, long token, boolean strict) {
    AtomicLong seen = fence(lock);
    while (true) {
      long current = seen.get();
      if (token < current || (strict && token == current)) {
        return Verdict.stale(token, current);
      }
      if (token == current) {
        return Verdict.accepted(token);
      }
      if (seen.compareAndSet(current, token)) {
        return Verdict.advanced(token);
      }
    }
  }

  @Override
  public long current(String lock) {
    AtomicLong seen = fences.get(lock);
    return seen == null ? 0 : seen.get();
  }

  private AtomicLong fence(String lock) {
    AtomicLong seen = fences.get(lock);
    return seen != null ? seen : fences.computeIfAbsent(lock, k -> new AtomicLong());
  }
}
