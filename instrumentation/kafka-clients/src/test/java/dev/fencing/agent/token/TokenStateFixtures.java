package dev.fencing.agent.token;

import java.util.function.LongSupplier;

/**
 * A {@link TokenState} on a fake clock for this module's tests (its clock constructor is package-private). agent/core's
 * tests have their own: a test-jar of core would make `-Dmaven.test.skip` builds of this module fail to resolve.
 */
public final class TokenStateFixtures {
  private TokenStateFixtures() {}

  public static TokenState onClock(String lock, long tokenMax, LongSupplier clock) {
    return new TokenState(lock, tokenMax, HighestTokenStore.none(), clock);
  }
}
