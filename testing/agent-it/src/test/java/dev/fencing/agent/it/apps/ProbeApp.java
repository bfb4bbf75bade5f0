package dev.fencing.agent.it.apps;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;

/**
 * An application thread that asks the agent, every millisecond, what it would do with an unfenced HTTP write, exactly
 * as a hook does. It prints every change of decision, and after a pause (SIGSTOP) the very first decision it got, so
 * tests can check that no call is tagged after the lease deadline, not even one.
 *
 * <p>Lines: {@code APP STARTED}, {@code DECISION <ms> <KIND> <reason|-> <token>}, {@code RESUMED <gapMs> <KIND> <reason|-> <token>}.
 */
public final class ProbeApp {
  private ProbeApp() {}

  public static void main(String[] args) throws Exception {
    System.out.println("APP STARTED");
    System.out.flush();
    long start = System.nanoTime();
    long last = start;
    String lastLine = "";
    while (true) {
      Decision d = Fencing.decide(Channel.HTTP, true, false);
      long now = System.nanoTime();
      String line = d.kind() + " " + (d.reason() == null ? "-" : d.reason().name()) + " " + d.token();
      if (now - last > 1_000_000_000L) {
        System.out.println("RESUMED " + (now - last) / 1_000_000 + " " + line);
      }
      if (!line.equals(lastLine)) {
        System.out.println("DECISION " + (now - start) / 1_000_000 + " " + line);
        lastLine = line;
      }
      System.out.flush();
      last = now;
      Thread.sleep(1);
    }
  }
}
