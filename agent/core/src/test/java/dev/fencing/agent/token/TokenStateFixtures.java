package dev.fencing.agent.token;

import dev.fencing.protocol.TokenSignature;
import java.util.function.LongSupplier;

/** Gives tests outside this package a {@link TokenState} on a fake clock (its clock constructor is package-private). */
public final class TokenStateFixtures {
  private TokenStateFixtures() {}

  public static TokenState onClock(String lock, long tokenMax, LongSupplier clock) {
    return new TokenState(lock, tokenMax, HighestTokenStore.none(), clock);
  }

  public static TokenState signed(String lock, long tokenMax, LongSupplier clock, TokenSignature signer) {
    return new TokenState(lock, tokenMax, HighestTokenStore.none(), clock, signer);
  }
}
