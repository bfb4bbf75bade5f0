package dev.fencing.bench;

import java.time.Instant;

/** The hello-world JVM the startup benchmark launches: prints when main starts; "idle" keeps it running. */
public final class Hello {
  private Hello() {}

  public static void main(String[] args) throws InterruptedException {
    Instant now = Instant.now();
    System.out.println("main-at " + (now.getEpochSecond() * 1_000_000L + now.getNano() / 1000));
    System.out.println("hello, world");
    System.out.flush();
    if (args.length > 0 && args[0].equals("idle")) {
      Thread.sleep(Long.MAX_VALUE); // the driver reads /proc/<pid>/status, then kills us
    }
  }
}
