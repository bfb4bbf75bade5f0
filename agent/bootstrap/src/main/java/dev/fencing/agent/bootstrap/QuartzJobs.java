package dev.fencing.agent.bootstrap;

/**
 * Quartz jobs declared in {@code fencing.quartz.jobs}: what the advice on a job's {@code execute} calls before the
 * job's body ({@link #started}) and after it returned or threw ({@link #ended}). The core's hook decides whether the
 * job is declared, takes the agent's lock it maps to (a campaign with a bounded wait) and puts the thread in that
 * lock's scope; when it cannot, the run fails with {@link QuartzJobNotFencedException} instead of running unfenced.
 * Until the core installs its hook, nothing changes. java.base types only.
 */
public final class QuartzJobs {
  /** Implemented by the agent core. */
  public interface Hook {
    /**
     * The job {@code jobKey} ({@code group.name}) of class {@code jobClass} runs next on this thread: null when it is
     * no declared job; else takes the agent's lock it maps to, enters its scope and returns what {@link #exit} must be
     * given. Throws {@link QuartzJobNotFencedException} when the run must not go on.
     */
    Object enter(String jobKey, String jobClass);

    /** Leaves the scope {@link #enter} entered and gives the agent's lock back. */
    void exit(Object entered);
  }

  /** A run entered on a thread: the hook's value, and the execution context of the run it is nested in. */
  private static final class Run {
    final Object entered;
    final Object outerContext;

    Run(Object entered, Object outerContext) {
      this.entered = entered;
      this.outerContext = outerContext;
    }
  }

  private static volatile Hook hook;
  /**
   * The execution context of the fenced run on this thread: a job whose {@code execute} calls its super class's
   * {@code execute} with the same context is one run, entered once.
   */
  private static final ThreadLocal<Object> CONTEXT = new ThreadLocal<>();

  private QuartzJobs() {}

  public static void install(Hook h) {
    hook = h;
  }

  /**
   * A job's {@code execute(context)} starts on this thread. Returns what {@link #ended} must be given (null: nothing
   * to undo). Throws {@link QuartzJobNotFencedException} (and only that) when a declared job must not run.
   */
  public static Object started(Object context, String jobKey, String jobClass) {
    Hook h = hook;
    if (h == null || context == null || CONTEXT.get() == context) {
      return null;
    }
    Object entered;
    try {
      entered = h.enter(jobKey, jobClass);
    } catch (QuartzJobNotFencedException e) {
      throw e;
    } catch (Throwable t) {
      throw new QuartzJobNotFencedException("fencing agent: Quartz job '" + jobKey
          + "': the agent could not take its lock (" + t + "); the job does not run unfenced", t);
    }
    if (entered == null) {
      return null;
    }
    Run run = new Run(entered, CONTEXT.get());
    CONTEXT.set(context);
    return run;
  }

  /** The run {@link #started} returned {@code run} for ended (returned or threw). */
  public static void ended(Object run) {
    if (!(run instanceof Run)) {
      return;
    }
    Run r = (Run) run;
    if (r.outerContext == null) {
      CONTEXT.remove();
    } else {
      CONTEXT.set(r.outerContext);
    }
    Hook h = hook;
    if (h != null) {
      try {
        h.exit(r.entered);
      } catch (Throwable t) {
        // the core logs its own failures; the job's end must still reach Quartz
      }
    }
  }
}
