package dev.fencing.faults;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.locks.LockSupport;

/**
 * Run by {@link FakeClockTest} in a JVM with libfaketime preloaded. Arguments: the real epoch second at launch.
 * Prints {@code wall=<offset s> monotonic=<offset from /proc/uptime, s> parks=<returns of parkNanos(10 ms) in 1 s>
 * waits=<returns of Object.wait(50) in 1 s>}.
 */
public final class FakeClockProbe {
  private FakeClockProbe() {}

  public static void main(String[] args) throws Exception {
    long realAtLaunch = Long.parseLong(args[0]);
    double uptime = Double.parseDouble(Files.readString(Path.of("/proc/uptime")).split(" ")[0]);
    double monotonic = System.nanoTime() / 1e9 - uptime; // the JDK's nanoTime is CLOCK_MONOTONIC on Linux
    long wall = System.currentTimeMillis() / 1000 - realAtLaunch;
    long parks = 0;
    long end = System.nanoTime() + 1_000_000_000L;
    while (System.nanoTime() < end) {
      LockSupport.parkNanos(10_000_000L);
      parks++;
    }
    long waits = 0;
    Object monitor = new Object();
    end = System.nanoTime() + 1_000_000_000L;
    synchronized (monitor) {
      while (System.nanoTime() < end) {
        monitor.wait(50);
        waits++;
      }
    }
    System.out.printf(java.util.Locale.ROOT, "wall=%d monotonic=%.1f parks=%d waits=%d%n", wall, monotonic, parks,
        waits);
  }
}
