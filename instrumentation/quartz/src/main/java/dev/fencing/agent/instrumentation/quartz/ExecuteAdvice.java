package dev.fencing.agent.instrumentation.quartz;

import dev.fencing.agent.bootstrap.QuartzJobNotFencedException;
import dev.fencing.agent.bootstrap.QuartzJobs;
import net.bytebuddy.asm.Advice;
import org.quartz.JobDetail;
import org.quartz.JobExecutionContext;
import org.quartz.JobExecutionException;

/**
 * A job's {@code execute(context)}: before the body, the bridge takes the agent's lock of a declared job and enters its
 * scope; after it (returned or threw), it leaves the scope and gives the lock back. A declared job the agent cannot
 * take its lock for leaves here with Quartz's own {@code JobExecutionException} (the refusal its cause), before the
 * body ran: Quartz ends the run as failed and fires the job at its trigger's next time. Not suppressed: that exception
 * is the point (the bridge throws nothing else).
 */
public final class ExecuteAdvice {
  private ExecuteAdvice() {}

  @Advice.OnMethodEnter
  public static Object enter(@Advice.Argument(0) Object context) throws JobExecutionException {
    String key = null;
    String jobClass = null;
    try {
      JobDetail job = ((JobExecutionContext) context).getJobDetail();
      key = job.getKey().toString();
      jobClass = job.getJobClass().getName();
    } catch (RuntimeException e) {
      // a context without a job (execute called by hand, outside a scheduler): nothing to fence
    }
    if (key == null || jobClass == null) {
      return null;
    }
    try {
      return QuartzJobs.started(context, key, jobClass);
    } catch (QuartzJobNotFencedException e) {
      throw new JobExecutionException(e.getMessage(), e, false);
    }
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.Enter Object run) {
    QuartzJobs.ended(run);
  }
}
