package dev.fencing.it.reactornetty;

import dev.fencing.agent.it.apps.ReactorNettyApp;
import java.time.Duration;

/**
 * The section ReactorNettyIT declares ({@code fencing.sections}): outside the agent's own package, which the agent
 * never instruments. Returns a value, so it runs whether its lock is held or not (its side effects decided by it).
 */
public final class ReactorNettySection {
  private ReactorNettySection() {}

  public static String send(String method, String url) {
    try {
      return "STATUS " + ReactorNettyApp.request(method, url).block(Duration.ofSeconds(20));
    } catch (Throwable e) {
      return ReactorNettyApp.describe(e);
    }
  }
}
