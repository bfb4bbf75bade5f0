package dev.fencing.agent.events;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

class EventRateLimiterTest {
  private static final long SECOND = 1_000_000_000L;

  @Test
  void firstEventPassesThenOnePerPeriodWithTheCountOfThoseLeftOut() {
    EventRateLimiter limiter = new EventRateLimiter(2, 10 * SECOND);
    long t = -5 * SECOND; // nanoTime may be negative
    assertThat(limiter.tryAcquire(0, t)).isZero();
    assertThat(limiter.tryAcquire(0, t + 1)).isEqualTo(EventRateLimiter.SUPPRESSED);
    assertThat(limiter.tryAcquire(0, t + 9 * SECOND)).isEqualTo(EventRateLimiter.SUPPRESSED);
    assertThat(limiter.tryAcquire(1, t + 9 * SECOND)).as("another slot is independent").isZero();
    assertThat(limiter.tryAcquire(0, t + 10 * SECOND)).as("two left out since the last line").isEqualTo(2);
    assertThat(limiter.tryAcquire(0, t + 11 * SECOND)).isEqualTo(EventRateLimiter.SUPPRESSED);
    assertThat(limiter.tryAcquire(0, t + 30 * SECOND)).isEqualTo(1);
    assertThat(limiter.tryAcquire(0, t + 60 * SECOND)).isZero();
  }

  @Test
  void worksAcrossTheWrapOfTheNanosecondClock() {
    EventRateLimiter limiter = new EventRateLimiter(1, 10 * SECOND);
    long t = Long.MAX_VALUE - SECOND;
    assertThat(limiter.tryAcquire(0, t)).isZero();
    assertThat(limiter.tryAcquire(0, t + 5 * SECOND)).isEqualTo(EventRateLimiter.SUPPRESSED);
    assertThat(limiter.tryAcquire(0, t + 10 * SECOND)).isEqualTo(1);
  }

  @Test
  void aZeroPeriodLetsEveryEventThrough() {
    EventRateLimiter limiter = new EventRateLimiter(1, 0);
    for (int i = 0; i < 5; i++) {
      assertThat(limiter.tryAcquire(0, 42)).isZero();
    }
  }

  @Test
  void concurrentEventsLetExactlyOneThroughPerPeriodAndCountTheRest() throws Exception {
    EventRateLimiter limiter = new EventRateLimiter(1, 1000 * SECOND);
    int threads = 4;
    int each = 50_000;
    long[] passed = new long[threads];
    Thread[] ts = new Thread[threads];
    for (int i = 0; i < threads; i++) {
      int n = i;
      ts[i] = new Thread(() -> {
        for (int j = 0; j < each; j++) {
          if (limiter.tryAcquire(0, 7) != EventRateLimiter.SUPPRESSED) {
            passed[n]++;
          }
        }
      });
      ts[i].start();
    }
    for (Thread t : ts) {
      t.join();
    }
    assertThat(passed[0] + passed[1] + passed[2] + passed[3]).isEqualTo(1);
    assertThat(limiter.tryAcquire(0, 7 + 1000 * SECOND)).isEqualTo(threads * each - 1);
  }

  @Test
  void aSuppressedEventAllocatesNothing() {
    EventRateLimiter limiter = new EventRateLimiter(4, 1000 * SECOND);
    limiter.tryAcquire(3, System.nanoTime());
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long id = Thread.currentThread().getId();
    long sum = 0;
    for (int i = 0; i < 200_000; i++) { // warm up
      sum += limiter.tryAcquire(3, System.nanoTime());
    }
    long before = threads.getThreadAllocatedBytes(id);
    for (int i = 0; i < 1_000_000; i++) {
      sum += limiter.tryAcquire(3, System.nanoTime());
    }
    long allocated = threads.getThreadAllocatedBytes(id) - before;
    assertThat(sum).isEqualTo(-1_200_000);
    assertThat(allocated).as("bytes allocated by 1,000,000 suppressed events").isLessThan(64 * 1024);
  }
}
