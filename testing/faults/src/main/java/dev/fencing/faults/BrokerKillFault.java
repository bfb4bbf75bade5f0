package dev.fencing.faults;

/**
 * {@code broker-kill}: SIGKILL of the Kafka broker at a random point of the workers' loops (each has a record in
 * its producer most of the time), started again on the same ports and log dir after 0.5-2 s. The producers retry
 * what they buffered; an acknowledged record must be consumed or dead-lettered, and a record of a stale token the
 * consumer fence must still dead-letter.
 */
final class BrokerKillFault implements FaultKind {
  @Override
  public String inject(Trial trial) {
    FaultKind.sleep(trial.random().nextInt(100));
    long down = 500 + trial.random().nextInt(1_500);
    trial.kafka().kill();
    FaultKind.sleep(down);
    long started = System.nanoTime();
    int attempts = 1;
    while (true) {
      try {
        trial.kafka().restart(java.time.Duration.ofSeconds(45));
        break;
      } catch (IllegalStateException e) {
        // A guard: a restarted broker starved of CPU (w1's spinning JVM before its libfaketime was set up right, on
        // a loaded machine) stayed silent after loading its metadata; killed and started once more, it came up.
        if (attempts++ == 3) {
          throw e;
        }
        trial.kafka().kill();
      }
    }
    return "killed the Kafka broker, restarted after " + down + " ms (ready " + (System.nanoTime() - started)
        / 1_000_000 + " ms later" + (attempts > 1 ? ", at start attempt " + attempts : "") + ")";
  }
}
