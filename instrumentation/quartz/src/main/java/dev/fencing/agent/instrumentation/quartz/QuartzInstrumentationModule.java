package dev.fencing.agent.instrumentation.quartz;

import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import java.util.List;

/**
 * Quartz jobs declared in {@code fencing.quartz.jobs} as scopes of the agent's locks (docs/DESIGN.md section 4,
 * "Quartz"). Every way Quartz runs a job (a trigger firing, a recovery of a failed node's job in a cluster, a refire)
 * calls the job instance's {@code execute(JobExecutionContext)} on the worker thread that runs it, inside
 * {@code JobRunShell.run} and outside the job store's own writes; the advice on every {@code execute} of a
 * {@code Job} class reports the job's key and class to the bootstrap bridge ({@code QuartzJobs}), whose core hook
 * decides whether the job is declared and takes its lock. Nothing without {@code fencing.quartz.jobs}; switch:
 * fencing.instrumentation.quartz.enabled.
 */
public final class QuartzInstrumentationModule implements InstrumentationModule {
  private volatile boolean enabled;

  public QuartzInstrumentationModule() {}

  /** A module whose instrumentation is on without a configuration (the range test). */
  QuartzInstrumentationModule(boolean enabled) {
    this.enabled = enabled;
  }

  @Override
  public String name() {
    return "quartz";
  }

  @Override
  public void install(AgentContext context) {
    enabled = context.config().quartzJobsDeclared();
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return enabled ? List.of(new JobInstrumentation()) : List.of();
  }
}
