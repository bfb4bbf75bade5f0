package dev.fencing.agent.bootstrap;

/**
 * A ShedLock task that the agent refused to run (fencing.shedlock.enabled): ShedLock held its lock, but the agent could
 * not take its own lock of the same name within fencing.shedlock.wait (another replica still holds it, the coordinator
 * is unreachable, fencing.capture.max-locks reached). An unchecked exception, thrown where ShedLock starts the task:
 * ShedLock releases its lock as after any failed run, and Spring's scheduler logs it and runs the task again at its
 * next trigger.
 */
public final class ShedLockNotFencedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  public ShedLockNotFencedException(String message) {
    super(message);
  }

  public ShedLockNotFencedException(String message, Throwable cause) {
    super(message, cause);
  }
}
