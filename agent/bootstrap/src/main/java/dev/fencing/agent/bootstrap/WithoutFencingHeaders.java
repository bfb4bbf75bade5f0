package dev.fencing.agent.bootstrap;

import java.util.function.BiPredicate;

/**
 * Header filter for copying a request without any Fencing-* header, so the agent's pair is carried exactly once
 * (advice may not use lambdas: they would be defined in the instrumented class).
 */
public final class WithoutFencingHeaders implements BiPredicate<String, String> {
  public static final WithoutFencingHeaders INSTANCE = new WithoutFencingHeaders();

  private WithoutFencingHeaders() {}

  @Override
  public boolean test(String name, String value) {
    return !HttpHook.TOKEN_HEADER.equalsIgnoreCase(name) && !HttpHook.LOCK_HEADER.equalsIgnoreCase(name)
        && !HttpHook.SIGNATURE_HEADER.equalsIgnoreCase(name) && !HttpHook.GRANT_HEADER.equalsIgnoreCase(name);
  }
}
