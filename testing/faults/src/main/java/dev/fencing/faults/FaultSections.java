package dev.fencing.faults;

import java.util.concurrent.Callable;

/**
 * The declared sections of a run with several locks ({@code --locks=N}): the workers' agents get
 * {@code fencing.sections=dev.fencing.faults.FaultSections#lock1@faults-1,...}, so each write of lock {@code i} runs
 * inside {@code lock<i>} and carries that lock's token, or is refused while the worker does not hold it. The methods
 * return the write's result (not {@code void}: a void section is skipped without the lock, and the write would not
 * be attempted at all).
 */
public final class FaultSections {
  /** How many locks a run can have. */
  static final int COUNT = 4;

  private FaultSections() {
  }

  /** {@code fencing.sections} for {@code locks} locks named {@code names}. */
  static String declaration(java.util.List<String> names) {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < names.size(); i++) {
      s.append(i == 0 ? "" : ",").append(FaultSections.class.getName()).append("#lock").append(i + 1).append('@')
          .append(names.get(i));
    }
    return s.toString();
  }

  /** Runs {@code write} in section {@code i} (1-based). */
  static String run(int i, Callable<String> write) throws Exception {
    return switch (i) {
      case 1 -> lock1(write);
      case 2 -> lock2(write);
      case 3 -> lock3(write);
      case 4 -> lock4(write);
      default -> throw new IllegalArgumentException("no section " + i);
    };
  }

  public static String lock1(Callable<String> write) throws Exception {
    return write.call();
  }

  public static String lock2(Callable<String> write) throws Exception {
    return write.call();
  }

  public static String lock3(Callable<String> write) throws Exception {
    return write.call();
  }

  public static String lock4(Callable<String> write) throws Exception {
    return write.call();
  }
}
