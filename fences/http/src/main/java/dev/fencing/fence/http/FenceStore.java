package dev.fencing.fence.http;

/**
 * The highest fencing token seen per lock, and the one operation that moves it. {@link #check} is an atomic
 * check-and-advance (DESIGN.md section 4): accept iff the token is at least the highest seen, advance when it is
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

  /** The highest token seen for {@code lock}, 0 when none (tokens start at 1). Reads only. */
  long current(String lock);
}
