package dev.fencing.agent.instrumentation.kafka;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.instrumentation.api.WeakIdentityCache;

/**
 * Per transactional producer (its {@code TransactionManager}, weakly): the decisions under which the records of its
 * transaction in progress toward unfenced topics were tagged. Those records reach the broker at {@code send()}, but
 * only {@code commitTransaction()} makes them visible to {@code read_committed} consumers: the commit is their side
 * effect, judged by the grants they were tagged under ({@link #check}). Kept from {@code beginTransaction()} to the
 * next; a send adds nothing when its decision is the one noted last (no allocation in the steady state).
 */
final class TransactionGrants {
  private static final Decision[] NONE = new Decision[0];

  /** One producer's transaction in progress: its distinct tagging decisions (copy on write, rarely more than one). */
  private static final class Noted {
    volatile Decision[] decisions = NONE;
  }

  /** Re-judges a decision a record was tagged under, now: the blocking decision, or null while it holds. */
  interface Recheck {
    Decision recheck(Decision taggedWith);
  }

  private final WeakIdentityCache<Object, Noted> byProducer = new WeakIdentityCache<>();
  private final Recheck recheck;

  TransactionGrants(Recheck recheck) {
    this.recheck = recheck;
  }

  /** {@code transactions} began a transaction: nothing of it is noted yet. */
  void begins(Object transactions) {
    Noted n = byProducer.get(transactions);
    if (n != null) {
      n.decisions = NONE;
    }
  }

  /** A record toward an unfenced topic left in the transaction of {@code transactions}, tagged under {@code d}. */
  void sent(Object transactions, Decision d) {
    Noted n = byProducer.computeIfAbsent(transactions, k -> new Noted());
    Decision[] known = n.decisions;
    for (int i = known.length - 1; i >= 0; i--) {
      if (known[i] == d) {
        return;
      }
    }
    synchronized (n) {
      Decision[] now = n.decisions;
      Decision[] more = java.util.Arrays.copyOf(now, now.length + 1);
      more[now.length] = d;
      n.decisions = more;
    }
  }

  /**
   * {@code transactions} is about to commit: the decision that blocks the commit (the first grant its records toward
   * unfenced topics were tagged under that no longer holds, or has been followed by another), or null.
   */
  Decision check(Object transactions) {
    Noted n = byProducer.get(transactions);
    if (n == null) {
      return null;
    }
    for (Decision d : n.decisions) {
      Decision blocked = recheck.recheck(d);
      if (blocked != null) {
        return blocked;
      }
    }
    return null;
  }
}
