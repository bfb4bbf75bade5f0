package dev.fencing.fence.store;

/**
 * The highest fencing token seen per lock, and the one operation that moves it. {@link #check} is an atomic
 * check-and-advance (docs/DESIGN.md section 4): accept iff the token is at least the highest seen, advance when it is
 * higher, reject a lower one with the current token. Checks of the token already in force write nothing and must not
 * wait for each other: they are every request of the lock holder.
 *
 * <p>{@link InMemoryFenceStore} fences one service instance; {@link JdbcFenceStore} keeps the fence in the SQL fence's
 * table, so that all instances and the database fence agree.
 */
public interface FenceStore {

  /** Check-and-advance with the normal rule: accept {@code token >= seen}. */
  default Verdict check(String lock, long token) {
    return check(lock, token, false);
  }

  /**
   * Check-and-advance; in {@code strict} mode (per-request tokens) only {@code token > seen} is accepted, so each
   * token passes once.
   *
   * @throws FenceStoreException when the store cannot answer; the fence is then unchanged or advanced, never lowered
   */
  Verdict check(String lock, long token, boolean strict);

  /**
   * Check-and-advance that also tells two grants with the same token apart (an etcd restored from a snapshot can
   * issue a new holder the old holder's token): an advance stores {@code grant} (null: none) with the token; an equal
   * token is accepted only when the stored grant is null or equal to {@code grant}, else the verdict is
   * {@link Verdict.Outcome#REPLAYED}. The default, for stores that keep no grants, ignores {@code grant}.
   */
  default Verdict check(String lock, long token, String grant, boolean strict) {
    return check(lock, token, strict);
  }

  /** The highest token seen for {@code lock}, 0 when none (tokens start at 1). Reads only. */
  long current(String lock);

  /**
   * The highest token seen for {@code lock} and the grant stored with it ({@link FenceState#NONE} when none), read
   * together. Reads only. The default, for stores that keep no grants, has no grant.
   */
  default FenceState state(String lock) {
    long token = current(lock);
    return token == 0 ? FenceState.NONE : new FenceState(token, null);
  }
}
