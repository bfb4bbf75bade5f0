package dev.fencing.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * w1's wall clock (clock-jump): a real JVM with libfaketime preloaded as {@link WorkerSlot#fakeClockEnv} sets it up
 * sees the control file's offset on its wall clock only, and its timed waits still wait (they returned at once with
 * libfaketime's monotonic fix on: every thread of that JVM spun, and the starved machine left a restarted Kafka
 * broker silent).
 */
class FakeClockTest {
  private static final Pattern LINE = Pattern.compile("wall=(-?\\d+) monotonic=(-?[\\d.]+) parks=(\\d+) waits=(\\d+)");

  @Test
  void onlyTheWallClockMovesAndTimedWaitsStillWait(@TempDir Path dir) throws Exception {
    assertThat(WorkerSlot.LIBFAKETIME).as("libfaketime (scripts/prerequisites.sh installs Debian's libfaketime)")
        .isRegularFile();
    for (long offset : new long[] {600, -600}) {
      Path clock = dir.resolve("clock");
      Files.writeString(clock, (offset < 0 ? "" : "+") + offset + "\n");
      String classes = Path.of(FakeClockProbe.class.getProtectionDomain().getCodeSource().getLocation().toURI())
          .toString();
      ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-Xmx64m", "-XX:+UseSerialGC", "-cp", classes, FakeClockProbe.class.getName(),
          Long.toString(System.currentTimeMillis() / 1000)).redirectErrorStream(true);
      pb.environment().putAll(WorkerSlot.fakeClockEnv(clock));
      Process p = pb.start();
      p.getOutputStream().close();
      boolean ended = p.waitFor(60, TimeUnit.SECONDS);
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!ended) {
        p.destroyForcibly();
      }
      assertThat(ended).as("the probe ended within 60 s (a timed wait that never returns hangs it): %s", out).isTrue();
      Matcher m = LINE.matcher(out);
      assertThat(m.find()).as("the probe's line in: %s", out).isTrue();
      assertThat(Long.parseLong(m.group(1))).as("wall clock offset, s (%s)", out).isBetween(offset - 3, offset + 3);
      assertThat(Math.abs(Double.parseDouble(m.group(2)))).as("monotonic clock against /proc/uptime, s (%s)", out)
          .isLessThan(1.0);
      // Real waits: at most 100 parks of 10 ms and 20 waits of 50 ms fit in a second (a spinning wait returns
      // hundreds of thousands of times).
      assertThat(Long.parseLong(m.group(3))).as("parkNanos(10 ms) returns in 1 s (%s)", out).isLessThanOrEqualTo(110);
      assertThat(Long.parseLong(m.group(4))).as("Object.wait(50) returns in 1 s (%s)", out).isLessThanOrEqualTo(22);
    }
  }
}
