package dev.fencing.agent.bootstrap;

/**
 * A Quartz job declared in fencing.quartz.jobs that the agent refused to run: the agent could not take the job's lock
 * within fencing.quartz.wait (another node still holds it, the coordinator is unreachable, fencing.capture.max-locks
 * reached). The advice on the job's {@code execute} hands it to Quartz as the cause of a {@code JobExecutionException}:
 * Quartz ends the run as a failed one (its job listeners see the exception) and fires the job again at its trigger's
 * next time.
 */
public final class QuartzJobNotFencedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  public QuartzJobNotFencedException(String message) {
    super(message);
  }

  public QuartzJobNotFencedException(String message, Throwable cause) {
    super(message, cause);
  }
}
