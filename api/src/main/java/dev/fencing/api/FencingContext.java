package dev.fencing.api;

import java.util.Objects;

/**
 * The lock, token and grant a side effect made now on the calling thread carries: what to check at a resource the
 * Fencing Agent does not know (a Redis script, a conditional write to an object store) with the same rule as its
 * fences: accept a token not lower than the highest seen for the lock. Immutable and value-based: compare with
 * {@link #equals}, never by identity. Empty ({@link #isPresent()} false) when no token applies, always without the
 * agent.
 */
public final class FencingContext {
  private static final FencingContext EMPTY = new FencingContext(null, 0, null);
  /**
   * The contexts {@link #of} built last, by token: the agent asks for the same few (one per lock and grant) on every
   * read, so a read allocates nothing once they are here. Racy on purpose: entries are immutable and any one is right.
   */
  private static final FencingContext[] RECENT = new FencingContext[16];

  private final String lock;
  private final long token;
  private final String grant;

  private FencingContext(String lock, long token, String grant) {
    this.lock = lock;
    this.token = token;
    this.grant = grant;
  }

  /** No lock, no token. */
  public static FencingContext empty() {
    return EMPTY;
  }

  /**
   * A context with this lock, token and grant id (null: none): what the agent reports, or what a test of the
   * application's own fencing code feeds it.
   *
   * @throws IllegalArgumentException when {@code lock} is null or empty, or {@code token} is not positive
   */
  public static FencingContext of(String lock, long token, String grant) {
    if (lock == null || lock.isEmpty() || token <= 0) {
      throw new IllegalArgumentException("a fencing context needs a lock name and a positive token, not lock=" + lock
          + ", token=" + token);
    }
    int slot = (int) token & (RECENT.length - 1);
    FencingContext recent = RECENT[slot];
    if (recent != null && recent.token == token && Objects.equals(recent.lock, lock)
        && Objects.equals(recent.grant, grant)) {
      return recent;
    }
    FencingContext c = new FencingContext(lock, token, grant);
    RECENT[slot] = c;
    return c;
  }

  /** True when there is a lock and a token. */
  public boolean isPresent() {
    return token > 0;
  }

  /** The lock's name; null when empty. */
  public String lock() {
    return lock;
  }

  /** The fencing token (positive); 0 when empty. */
  public long token() {
    return token;
  }

  /**
   * The id of the grant that issued the token (lower-case hex of the coordinator's lease or session id), which tells
   * two grants with the same token apart; null when empty or when the token came without one.
   */
  public String grant() {
    return grant;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof FencingContext)) {
      return false;
    }
    FencingContext other = (FencingContext) o;
    return token == other.token && Objects.equals(lock, other.lock) && Objects.equals(grant, other.grant);
  }

  @Override
  public int hashCode() {
    return Objects.hash(lock, token, grant);
  }

  @Override
  public String toString() {
    return isPresent() ? "FencingContext[lock=" + lock + ", token=" + token + (grant == null ? "" : ", grant=" + grant)
        + "]" : "FencingContext[empty]";
  }
}
