package dev.fencing.agent.bootstrap;

import java.util.ArrayDeque;

/**
 * ShedLock's runs ({@code fencing.shedlock.enabled}): what the ShedLock advice calls when ShedLock has taken its lock
 * and the task is about to run ({@link #started}), and when the task returned or threw ({@link #ended}). The core's
 * hook takes the agent's lock of the same name for the run (a campaign with a bounded wait) and puts the thread in
 * that lock's scope; when it cannot, the run fails with {@link ShedLockNotFencedException} instead of running
 * unfenced. Until the core installs its hook, nothing changes. java.base types only.
 */
public final class ShedLocks {
  /** Implemented by the agent core. */
  public interface Hook {
    /**
     * Takes the agent's lock for ShedLock's lock {@code name} and enters its scope on the calling thread; returns what
     * {@link #exit} must be given. Throws {@link ShedLockNotFencedException} when the run must not go on.
     */
    Object enter(String name);

    /** Leaves the scope {@link #enter} entered and gives the agent's lock back. */
    void exit(Object entered);
  }

  /** What a run the agent did not enter leaves on the thread's stack of runs. */
  private static final Object NONE = new Object();

  private static volatile Hook hook;
  /** The thread's runs, innermost last: ShedLock's own starts and ends nest the same way. */
  private static final ThreadLocal<ArrayDeque<Object>> RUNS = new ThreadLocal<>();

  private ShedLocks() {}

  public static void install(Hook h) {
    hook = h;
  }

  /**
   * ShedLock holds its lock {@code name} and the task runs next on this thread. {@code fenced} false: a name the
   * agent leaves alone (ShedLock's test helper). Throws {@link ShedLockNotFencedException} (and only that) to fail
   * the run; the matching {@link #ended} still comes, from ShedLock's finally block.
   */
  public static void started(String name, boolean fenced) {
    ArrayDeque<Object> runs = RUNS.get();
    if (runs == null) {
      runs = new ArrayDeque<>();
      RUNS.set(runs);
    }
    Hook h = hook;
    if (h == null || !fenced) {
      runs.addLast(NONE);
      return;
    }
    runs.addLast(NONE);
    Object entered;
    try {
      entered = h.enter(name);
    } catch (ShedLockNotFencedException e) {
      throw e;
    } catch (Throwable t) {
      throw new ShedLockNotFencedException("fencing agent: ShedLock lock '" + name
          + "': the agent could not take its lock (" + t + "); the task does not run unfenced", t);
    }
    runs.removeLast();
    runs.addLast(entered == null ? NONE : entered);
  }

  /** The run last started on this thread ended (returned, threw, or was refused by {@link #started}). */
  public static void ended() {
    ArrayDeque<Object> runs = RUNS.get();
    if (runs == null || runs.isEmpty()) {
      return;
    }
    Object entered = runs.removeLast();
    if (runs.isEmpty()) {
      RUNS.remove();
    }
    Hook h = hook;
    if (entered != NONE && h != null) {
      try {
        h.exit(entered);
      } catch (Throwable t) {
        // the core logs its own failures; ShedLock's unlock must still run
      }
    }
  }
}
